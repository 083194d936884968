"""Kinds of the `events.k8s.io` group."""
