"""Kinds of the `policy` group."""
