"""The mutating admission plugins kube-apiserver enables by default that fill in a new Pod:
``ServiceAccount``, ``Priority`` and ``DefaultTolerationSeconds`` (``plugin/pkg/admission/
serviceaccount``, ``.../priority``, ``.../defaulttolerationseconds``), in that order, as kube-apiserver
runs them before the mutating webhooks.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.machinery import errors
from framework.apiserver.machinery.jsonvalues import as_dict, as_list
from framework.apiserver.registry.rest.create import GENERATE_ALPHABET
from framework.apiserver.registry.rest.objects import object_key
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.scheduling.priorityclass import SYSTEM_PRIORITY_CLASSES
from framework.apiserver.registry.strategy import ResourceType

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: an hour and seven seconds, so the kubelet's
# refresh is seen as the legacy-token warning window by the token authenticator.
TOKEN_EXPIRATION_SECONDS = 3607
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
PRIORITY_CLASSES = "priorityclasses.scheduling.k8s.io"
# scheduling.DefaultPriorityWhenNoDefaultClassExists
DEFAULT_PRIORITY = 0


def _is_pod(rt: ResourceType) -> bool:
    return rt.group == "" and rt.resource == "pods"


def _forbidden(name: str, why: str) -> errors.StatusError:
    """``admission.NewForbidden`` for a Pod: the name the request gave (none for ``generateName``)."""
    return errors.forbidden_error("pods", "", name, why)


def _request_name(pod: dict, opts: WriteOptions) -> str:
    del opts
    meta = as_dict(pod.get("metadata"))
    return "" if meta.get("generateName") else meta.get("name") or ""


def token_volume(name: str) -> dict:
    """The projected volume of the bound token, the cluster CA and the namespace (``TokenVolumeSource``)."""
    return {
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
            "defaultMode": 420,
        },
    }


class ServiceAccount(AdmissionPlugin):
    """``serviceAccountName`` defaults to ``default``; the account must exist; its token, the cluster CA
    and the namespace are mounted into every container unless automounting is turned off; the
    account's ``imagePullSecrets`` are copied to a Pod that has none."""

    name = "ServiceAccount"

    def mutate(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        if old is not None or not _is_pod(rt):
            return
        meta, spec = as_dict(new.get("metadata")), new.get("spec")
        if not isinstance(spec, dict) or MIRROR_POD_ANNOTATION in as_dict(meta.get("annotations")):
            return
        if not spec.get("serviceAccountName"):
            spec["serviceAccountName"] = spec["serviceAccount"] = "default"
        ns, sa_name = meta.get("namespace") or "", spec["serviceAccountName"]
        account = server.storage.get("serviceaccounts", object_key(ns, sa_name))
        if account is None:
            if sa_name != "default":
                raise _forbidden(
                    _request_name(new, opts),
                    f'error looking up service account {ns}/{sa_name}: serviceaccount "{sa_name}" not found',
                )
            # The ServiceAccount controller keeps `default` in every active namespace (kube-apiserver
            # retries a missing one until the controller has made it); ours may not have run yet.
            account = {}
        if _automount(account, spec):
            _mount_token(spec)
        if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
            spec["imagePullSecrets"] = [dict(s) for s in account["imagePullSecrets"] if isinstance(s, dict)]


def _automount(account: dict, spec: dict) -> bool:
    """The Pod's ``automountServiceAccountToken`` wins, then the account's; true by default."""
    if isinstance(spec.get("automountServiceAccountToken"), bool):
        return bool(spec["automountServiceAccountToken"])
    if isinstance(account.get("automountServiceAccountToken"), bool):
        return bool(account["automountServiceAccountToken"])
    return True


def _mount_token(spec: dict) -> None:
    volumes = as_list(spec.get("volumes"))
    names = {as_dict(v).get("name") for v in volumes}
    volume_name = next(
        (n for n in names if isinstance(n, str) and n.startswith(TOKEN_VOLUME_PREFIX)),
        TOKEN_VOLUME_PREFIX + "".join(random.choices(GENERATE_ALPHABET, k=5)),
    )
    needed = False
    for key in ("initContainers", "containers"):
        for c in as_list(spec.get(key)):
            if not isinstance(c, dict):
                continue
            mounts = as_list(c.get("volumeMounts"))
            if any(as_dict(m).get("mountPath") == TOKEN_MOUNT_PATH for m in mounts):
                continue  # a mount at the token path prevents the token's
            c["volumeMounts"] = [
                *mounts,
                {"name": volume_name, "readOnly": True, "mountPath": TOKEN_MOUNT_PATH},
            ]
            needed = True
    if needed and volume_name not in names:
        spec["volumes"] = [*volumes, token_volume(volume_name)]


class Priority(AdmissionPlugin):
    """A new Pod's ``priority`` and ``preemptionPolicy`` from its PriorityClass, the global default
    class, or 0 and ``PreemptLowerPriority``; an update keeps the values the create computed."""

    name = "Priority"

    def mutate(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        spec = new.get("spec")
        if not _is_pod(rt) or not isinstance(spec, dict):
            return
        if old is not None:
            old_spec = as_dict(old.get("spec"))
            for key in ("priority", "preemptionPolicy"):
                if spec.get(key) is None and old_spec.get(key) is not None:
                    spec[key] = old_spec[key]
            return
        class_name = spec.get("priorityClassName") or ""
        policy: str | None
        if not class_name:
            class_name, priority, policy = self._default(server)
            if class_name:
                spec["priorityClassName"] = class_name
        else:
            pc = self._lookup(server, class_name)
            if pc is None:
                raise _forbidden(
                    _request_name(new, opts), f"no PriorityClass with name {class_name} was found"
                )
            priority, policy = pc.get("value", 0), pc.get("preemptionPolicy")
        given = spec.get("priority")
        if given is not None and given != priority:
            raise _forbidden(
                _request_name(new, opts),
                f"the integer value of priority ({given}) must not be provided in pod spec; "
                f"priority admission controller computed {priority} from the given PriorityClass name",
            )
        spec["priority"] = priority
        if policy is not None:
            given_policy = spec.get("preemptionPolicy")
            if given_policy is not None and given_policy != policy:
                raise _forbidden(
                    _request_name(new, opts),
                    f"the string value of PreemptionPolicy ({given_policy}) must not be provided in pod "
                    f"spec; priority admission controller computed {policy} from the given PriorityClass "
                    "name",
                )
            spec["preemptionPolicy"] = policy

    @staticmethod
    def _lookup(server: APIServer, name: str) -> dict | None:
        pc = server.storage.get(PRIORITY_CLASSES, object_key(None, name))
        if pc is None and name in SYSTEM_PRIORITY_CLASSES:
            # kube-apiserver creates the two system classes at start-up; a cluster always has them.
            return {"value": SYSTEM_PRIORITY_CLASSES[name], "preemptionPolicy": "PreemptLowerPriority"}
        return pc

    @staticmethod
    def _default(server: APIServer) -> tuple[str, int, str | None]:
        """The global default class with the lowest value, or none: 0 and ``PreemptLowerPriority``."""
        defaults = [
            pc for pc in server.storage.table(PRIORITY_CLASSES).objects.values() if pc.get("globalDefault")
        ]
        if not defaults:
            return "", DEFAULT_PRIORITY, "PreemptLowerPriority"
        pc = min(defaults, key=lambda p: p.get("value", 0))
        return pc["metadata"]["name"], pc.get("value", 0), pc.get("preemptionPolicy")


NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300


class DefaultTolerationSeconds(AdmissionPlugin):
    """A Pod that does not tolerate the not-ready and unreachable ``NoExecute`` taints tolerates them for
    300 s (on create and update)."""

    name = "DefaultTolerationSeconds"

    def mutate(
        self, server: APIServer, rt: ResourceType, new: dict, old: dict | None, opts: WriteOptions
    ) -> None:
        spec = new.get("spec")
        if not _is_pod(rt) or not isinstance(spec, dict):
            return
        tolerations = as_list(spec.get("tolerations"))

        def tolerates(key: str) -> bool:
            return any(
                as_dict(t).get("key", "") in (key, "") and as_dict(t).get("effect", "") in ("NoExecute", "")
                for t in tolerations
            )

        added = [
            {
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
            }
            for key in (NOT_READY, UNREACHABLE)
            if not tolerates(key)
        ]
        if added:
            spec["tolerations"] = [*tolerations, *added]
