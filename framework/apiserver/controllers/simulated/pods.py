"""Pod facts the simulated controllers share: activity, readiness and availability as
``k8s.io/kubernetes/pkg/api/v1/pod`` and ``pkg/controller`` judge them, Pods made from a template,
and the template hash workload controllers label their Pods with."""

from __future__ import annotations

from datetime import datetime

from framework.apiserver.encoding import timefmt
from framework.apiserver.registry.rest.objects import deep_copy
from framework.meta import jsoncodec
from framework.meta.time import parse_time

# rand.SafeEncodeString's alphabet: no vowels, no look-alikes, so a hash never spells a word.
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: object, collision_count: int | None = None) -> str:
    """A pod template's hash in the form ``pod-template-hash`` and ``controller-revision-hash`` take
    (32-bit FNV-1a, then SafeEncodeString); over the template's JSON, not Go's struct dump, so the
    value differs from a real cluster's for the same template."""
    h = 0x811C9DC5
    data = jsoncodec.dumps(template, sort_keys=True)
    if collision_count:
        data += str(collision_count).encode()
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in str(h))


def phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def is_terminal(pod: dict) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: dict) -> bool:
    """``controller.IsPodActive``: neither finished nor being deleted."""
    return not is_terminal(pod) and not pod["metadata"].get("deletionTimestamp")


def condition(pod: dict, ctype: str) -> dict | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def is_ready(pod: dict) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def available_in(pod: dict, min_ready_seconds: int, now: datetime) -> float | None:
    """0 when ``pod`` is available (ready for ``minReadySeconds``), the seconds until it will be when
    only time is missing, None when it is not ready."""
    c = condition(pod, "Ready")
    if c is None or c.get("status") != "True":
        return None
    if not min_ready_seconds:
        return 0
    since = parse_time(c.get("lastTransitionTime"))
    if since is None:
        return 0
    left = min_ready_seconds - (now - since).total_seconds()
    return max(left, 0)


def pod_from_template(template: dict, owner_ref: dict, namespace: str) -> dict:
    """A Pod as ``controller.GetPodFromTemplate`` makes it: the template's labels, annotations,
    finalizers and spec, owned by ``owner_ref``."""
    tmeta = template.get("metadata") or {}
    meta: dict = {"namespace": namespace, "ownerReferences": [owner_ref]}
    for key in ("labels", "annotations", "finalizers"):
        if tmeta.get(key):
            meta[key] = deep_copy(tmeta[key])
    return {"metadata": meta, "spec": deep_copy(template.get("spec") or {})}


def set_pod_condition(status: dict, ctype: str, value: str, reason: str, message: str) -> bool:
    """Set a Pod condition as the kubelet and scheduler write them (``lastProbeTime: null``, the
    transition time kept while the status stays); True if anything changed."""
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == ctype:
            if (c.get("status"), c.get("reason") or "", c.get("message") or "") == (value, reason, message):
                return False
            if c.get("status") != value:
                c["lastTransitionTime"] = timefmt.now_time()
            c["status"] = value
            for key, text in (("reason", reason), ("message", message)):
                if text:
                    c[key] = text
                else:
                    c.pop(key, None)
            return True
    new = {"type": ctype, "status": value, "lastProbeTime": None, "lastTransitionTime": timefmt.now_time()}
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    conditions.append(new)
    return True
