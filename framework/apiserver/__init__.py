"""A pure-Python Kubernetes API server that kubectl, the official client and kopf accept.

See ``docs/apiserver.md`` for what it implements and where it knowingly deviates from kube-apiserver.
"""

from framework.apiserver.server import APIServer

__all__ = ["APIServer"]
