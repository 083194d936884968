"""Which webhooks a request goes to (``ShouldCallHook``): the stored configurations (compiled once per
resourceVersion), their namespace and object selectors, and their rules, with ``matchPolicy:
Equivalent`` trying the other group/versions of the same stored objects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from framework.apiserver.admission.client import admission_request
from framework.apiserver.admission.configuration import (
    GROUP,
    MUTATING,
    VALIDATING,
    Webhook,
    compile_webhooks,
    rule_matches,
)
from framework.apiserver.admission.expressions import (
    WEBHOOK_VARIABLES,
    authorizer,
    authorizing,
    match_conditions,
)
from framework.apiserver.admission.review import Attributes
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.strategy import ResourceType

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


class WebhookMatcher:
    """Finds the webhooks of ``server``'s stored configurations that a request must be sent to."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.storage = server.storage
        self._compiled: dict[tuple[str, str], tuple[str, list[Webhook]]] = {}

    def webhooks(self, mutating: bool) -> list[Webhook]:
        """Every webhook of the stored configurations, ordered by configuration name, then list order."""
        table_name = MUTATING if mutating else VALIDATING
        table = self.storage.tables.get(table_name)  # not storage.table(): that would create it
        objs = table.objects if table is not None else {}
        if not objs:
            return []
        out: list[Webhook] = []
        for key in sorted(objs, key=lambda k: k[1]):
            config = objs[key]
            rv = config["metadata"].get("resourceVersion", "")
            cached = self._compiled.get((table_name, key[1]))
            if cached is None or cached[0] != rv:
                cached = (rv, compile_webhooks(config, mutating))
                self._compiled[(table_name, key[1])] = cached
            out.extend(cached[1])
        live = {(table_name, k[1]) for k in objs}
        for key in [k for k in self._compiled if k[0] == table_name and k not in live]:
            del self._compiled[key]
        return out

    def _equivalents(self, rt: ResourceType) -> list[ResourceType]:
        """The other group/versions serving the same stored objects (CRD versions, events)."""
        return [r for r in self.server.registry.all() if r.storage == rt.storage and r is not rt]

    def _match_rules(
        self, hook: Webhook, operation: str, rt: ResourceType, sub: str, ns: str
    ) -> ResourceType | None:
        if any(rule_matches(r, operation, rt, sub, ns) for r in hook.rules):
            return rt
        if hook.match_policy == "Equivalent":
            equivalents = self._equivalents(rt)
            for rule in hook.rules:
                for eq in equivalents:
                    if (not sub or sub in eq.subresources) and rule_matches(rule, operation, eq, sub, ns):
                        return eq
        return None

    def relevant(self, rt: ResourceType, sub: str | None, operations: tuple[str, ...], ns: str) -> bool:
        """Whether any webhook's rules could match: without one the request skips admission."""
        if rt.group == GROUP and rt.resource in (
            "validatingwebhookconfigurations",
            "mutatingwebhookconfigurations",
        ):
            return False  # never sent to webhooks (21-1)
        hooks = self.webhooks(True) + self.webhooks(False)
        return any(self._match_rules(h, op, rt, sub or "", ns) for h in hooks for op in operations)

    def _namespace_labels(self, a: Attributes) -> dict:
        is_namespace = a.rt.group == "" and a.rt.resource == "namespaces" and not a.subresource
        if is_namespace and a.operation in ("CREATE", "UPDATE") and a.obj is not None:
            return a.obj["metadata"].get("labels") or {}  # the request's own object, not the stored one
        ns = self.storage.get("namespaces", ("", a.namespace))
        if ns is None:
            raise errors.not_found("namespaces", "", a.namespace)
        return ns["metadata"].get("labels") or {}

    def matching(self, a: Attributes, mutating: bool) -> list[tuple[Webhook, ResourceType]]:
        """``ShouldCallHook`` for every webhook: selectors, then rules (with equivalent resources)."""
        out = []
        for hook in self.webhooks(mutating):
            ns_error: StatusError | None = None
            is_namespace = a.rt.group == "" and a.rt.resource == "namespaces"
            sel = hook.namespace_selector
            if sel is None:
                ns_error = errors.internal_error(f"invalid namespaceSelector of webhook {hook.name!r}")
            elif not sel.empty and (a.namespace or is_namespace):
                try:
                    if not sel.matches(self._namespace_labels(a)):
                        continue
                except StatusError as e:
                    ns_error = e
            osel = hook.object_selector
            obj_error: StatusError | None = None
            if osel is None:
                obj_error = errors.internal_error(f"invalid objectSelector of webhook {hook.name!r}")
            elif not osel.empty and not any(
                o is not None and osel.matches(o["metadata"].get("labels")) for o in (a.obj, a.old)
            ):
                continue
            matched = self._match_rules(hook, a.operation, a.rt, a.subresource, a.namespace)
            if matched is None:
                continue
            if ns_error is not None:
                raise ns_error
            if obj_error is not None:
                raise obj_error
            if hook.match_conditions and not self._conditions_match(hook, matched, a):
                continue
            out.append((hook, matched))
        return out

    def _conditions_match(self, hook: Webhook, rt: ResourceType, a: Attributes) -> bool:
        """``matchConditions`` (after the rules and selectors): all true calls the webhook, one false
        skips it; an error skips it under ``failurePolicy: Ignore`` and refuses the request under
        ``Fail`` (``matchconditions.Matcher``, the dispatchers' ``failed calling webhook``)."""
        request = admission_request(self.server.api, rt, a, hook.mutating)
        activation = {
            "object": request["object"],
            "oldObject": request["oldObject"],
            "request": request,
            "authorizer": authorizer(a),
        }
        with authorizing(self.server):
            matches, problem = match_conditions(hook.match_conditions, WEBHOOK_VARIABLES, activation)
        if problem is None:
            return matches
        if hook.failure_policy == "Ignore":
            return False
        raise errors.forbidden_error(
            a.rt.resource, a.rt.group, a.name, f'failed calling webhook "{hook.name}": {problem}'
        )
