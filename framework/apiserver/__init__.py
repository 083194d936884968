"""A pure-Python Kubernetes API server that kubectl, the official client and kopf accept: our envtest
(``framework.testing``'s fixture) and ``gcm --embedded``'s garden. ``python -m framework.apiserver``
runs it from a shell.

The public face: :class:`APIServer`; :class:`AdmissionPlugin` for the in-process admission an
application brings (``APIServer(admission_plugins=[...])``); :class:`StatusError` and the
``machinery.errors`` constructors a plugin refuses a write with; :class:`ConnectionLimits`.
See ``docs/apiserver.md`` for what it implements and where it knowingly deviates from kube-apiserver.
"""

from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.controllers.simulated import SimulationPolicy
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.server import APIServer
from framework.server.connections import ConnectionLimits

__all__ = ["APIServer", "AdmissionPlugin", "ConnectionLimits", "SimulationPolicy", "StatusError"]
