"""Kinds of the `authentication.k8s.io` group."""
