"""Kinds of the core (legacy, `v1`) group."""
