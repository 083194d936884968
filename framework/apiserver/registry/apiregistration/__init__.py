"""Kinds of the `apiregistration.k8s.io` group."""
