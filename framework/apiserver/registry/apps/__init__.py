"""Kinds of the `apps` group."""
