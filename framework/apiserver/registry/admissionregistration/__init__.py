"""Kinds of the `admissionregistration.k8s.io` group."""
