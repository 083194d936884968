"""In-process admission plugins: the steps every write passes before it is stored, as
kube-apiserver's compiled-in admission plugins (``k8s.io/apiserver/pkg/admission``'s ``Interface``,
enabled with ``--enable-admission-plugins``).

The server always runs its built-in plugins (:func:`default_plugins`: RBAC's escalation prevention
for roles and bindings, 19-2, which kube-apiserver runs in the RBAC REST storage); an application adds
its own with ``APIServer(admission_plugins=[...])`` or ``python -m framework.apiserver
--admission-plugin MODULE:FACTORY``, the way an aggregated API server compiles in the rules of the kinds
it serves. A plugin refuses a write by raising a ``StatusError`` (``machinery.errors``); mutations it
makes to ``new`` are stored. The admission webhooks of ``admission/chain.py`` run beside these.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from framework.apiserver.auth import rbac_escalation
from framework.apiserver.auth.authenticator import RBAC_GROUP
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.strategy import ResourceType

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


class AdmissionPlugin:
    """One in-process admission plugin; both hooks admit by default, a plugin overrides what it checks."""

    #: The plugin's name, as ``--enable-admission-plugins`` spells one (e.g. ``ProjectValidator``).
    name: str = ""

    def mutate(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        """Fill in or refuse a create (``old`` is None) or an update before it is validated: the
        mutating phase, before the mutating webhooks."""

    def admit(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        """Mutate or refuse a create (``old`` is None) or an update of ``rt`` before it is stored."""

    def admit_delete(self, server: APIServer, rt: ResourceType, obj: dict) -> None:
        """Refuse the deletion of the stored ``obj`` (raise); called for each object a delete removes."""


class RBACEscalation(AdmissionPlugin):
    """RBAC's escalation prevention on role and binding writes (19-2), with RBAC authorization only."""

    name = "RBACEscalation"

    def admit(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        user = opts.user
        if server.authorization != "RBAC" or user is None or rt.group != RBAC_GROUP:
            return
        request = rbac_escalation.REQUEST_NAME.get()
        rbac_escalation.check(server.authorizer, rt.resource, new, old, user, request)


def default_plugins() -> list[AdmissionPlugin]:
    """The plugins every server runs, before the ones it is built with: kube-apiserver's default
    Pod plugins in its order, RBAC's escalation check, then ValidatingAdmissionPolicies."""
    # They build on this module.
    from framework.apiserver.admission import pod_defaults, validating_policy

    return [
        pod_defaults.ServiceAccount(),
        pod_defaults.Priority(),
        pod_defaults.DefaultTolerationSeconds(),
        RBACEscalation(),
        validating_policy.ValidatingAdmissionPolicy(),
    ]


def mutate(server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions) -> None:
    """Run every enabled plugin's ``mutate`` in order; the first refusal answers the request."""
    for plugin in server.admission_plugins:
        plugin.mutate(server, rt, new, old, opts)


def admit(server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions) -> None:
    """Run every enabled plugin's ``admit`` in order; the first refusal answers the request."""
    for plugin in server.admission_plugins:
        plugin.admit(server, rt, new, old, opts)


def admit_delete(server: APIServer, rt: ResourceType, obj: dict) -> None:
    """Run every enabled plugin's ``admit_delete`` in order."""
    for plugin in server.admission_plugins:
        plugin.admit_delete(server, rt, obj)


def load(spec: str) -> Sequence[AdmissionPlugin]:
    """The plugins ``MODULE:FACTORY`` names: ``FACTORY()`` returns one plugin or an iterable of them.

    Raises ``ValueError`` with a message for the command line when the spec does not name one.
    """
    module_name, sep, attr = spec.partition(":")
    if not (sep and module_name and attr):
        raise ValueError(f"{spec!r}: expected MODULE:FACTORY")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"{spec!r}: {e}") from None
    try:
        made = factory()
    except Exception as e:  # a factory's own failure, for the command line's one line
        raise ValueError(f"{spec!r}: {attr}() failed: {e}") from None
    plugins = (
        [made] if isinstance(made, AdmissionPlugin) else list(made) if isinstance(made, Iterable) else None
    )
    if not plugins or not all(isinstance(p, AdmissionPlugin) for p in plugins):
        raise ValueError(f"{spec!r}: {attr}() returned no AdmissionPlugin")
    return plugins
