"""Kinds of the `batch` group."""
