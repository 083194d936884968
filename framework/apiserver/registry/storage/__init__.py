"""Kinds of the `storage.k8s.io` group."""
