"""Test support: an in-process Kubernetes API server (our envtest) and its pytest plugin."""

from framework.testing.apiserver import APIServer

__all__ = ["APIServer"]
