"""Kinds of the `apiextensions.k8s.io` group."""
