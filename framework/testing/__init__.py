"""Test support: an in-process Kubernetes API server (our envtest) and its pytest plugin."""

from framework.testing.apiserver import APIServer
from framework.testing.kubectl import Kubectl
from framework.testing.polling import consistently, eventually

__all__ = ["APIServer", "Kubectl", "consistently", "eventually"]
