"""Test support: an in-process Kubernetes API server (our envtest) and its pytest plugin."""

from framework.apiserver import APIServer
from framework.testing.kubectl import Kubectl
from framework.testing.polling import consistently, eventually
from framework.testing.ports import free_offset, free_port

__all__ = ["APIServer", "Kubectl", "consistently", "eventually", "free_offset", "free_port"]
