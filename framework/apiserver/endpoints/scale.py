"""The ``/scale`` subresource: an ``autoscaling/v1`` Scale view of a workload (spec 10-5).

Built-in kinds with a scale subresource (Deployment, ReplicaSet, StatefulSet, ReplicationController:
``pkg/registry/apps/*/storage.ScaleREST``) map ``spec.replicas``, ``status.replicas`` and the label
selector of ``spec.selector``; a custom resource maps the paths its CRD names
(``specReplicasPath``, ``statusReplicasPath``, ``labelSelectorPath``). Reading gives a Scale; writing
one (PUT or any patch of the Scale) changes only the object's replica count, through the object's own
update (its strategy, generation and managedFields), and answers the Scale of the result.
"""

from __future__ import annotations

from typing import Any

from framework.apiserver.crd.definition import version_entry
from framework.apiserver.machinery import errors
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import field
from framework.meta.labels import label_selector_as_selector

_SCALE_META = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


def _paths(rt: ResourceType) -> tuple[str, str, str | None]:
    """(spec replicas, status replicas, selector) as dotted paths; the built-ins' selector is ``None``
    (it is computed from ``spec.selector``)."""
    if rt.crd is None:
        return "spec.replicas", "status.replicas", None
    entry = version_entry(rt.crd, rt.version) or {}
    scale = (entry.get("subresources") or {}).get("scale") or {}
    return (
        str(scale.get("specReplicasPath", ".spec.replicas")).lstrip("."),
        str(scale.get("statusReplicasPath", ".status.replicas")).lstrip("."),
        str(scale["labelSelectorPath"]).lstrip(".") if scale.get("labelSelectorPath") else None,
    )


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _set(obj: dict, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        child = obj.get(part)
        if not isinstance(child, dict):
            child = obj[part] = {}
        obj = child
    obj[last] = value


def _selector(rt: ResourceType, obj: dict, path: str | None) -> str:
    if path is not None:
        value = _get(obj, path)
        return value if isinstance(value, str) else ""
    selector = _get(obj, "spec.selector")
    if not isinstance(selector, dict) or not selector:
        return ""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        selector = {"matchLabels": selector}  # a ReplicationController's selector is a plain map
    try:
        return str(label_selector_as_selector(selector))
    except ValueError:
        return ""


def to_scale(rt: ResourceType, obj: dict) -> dict:
    """The Scale of ``obj`` (its metadata's identity, spec and status replicas, selector)."""
    spec_path, status_path, selector_path = _paths(rt)
    meta = obj.get("metadata") or {}
    status: dict[str, Any] = {"replicas": _get(obj, status_path) or 0}
    selector = _selector(rt, obj, selector_path)
    if selector:
        status["selector"] = selector
    spec_replicas = _get(obj, spec_path)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in _SCALE_META if k in meta},
        "spec": {"replicas": spec_replicas} if spec_replicas else {},
        "status": status,
    }


def apply_scale(rt: ResourceType, name: str, current: dict, scale: Any) -> dict:
    """``current`` with the replica count (and resourceVersion precondition) of the Scale ``scale``;
    raises 422 for a Scale ``ValidateScale`` refuses and 400 for one that is not an object."""
    if not isinstance(scale, dict):
        raise errors.bad_request("Scale must be a JSON object")
    replicas = (scale.get("spec") or {}).get("replicas", 0) if isinstance(scale.get("spec"), dict) else 0
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        problem = field.invalid("spec.replicas", replicas, "must be greater than or equal to 0")
        raise errors.invalid("Scale", "autoscaling", name, [problem])
    out = dict(current)
    out["metadata"] = dict(current.get("metadata") or {})
    rv = (
        (scale.get("metadata") or {}).get("resourceVersion")
        if isinstance(scale.get("metadata"), dict)
        else None
    )
    if rv:
        out["metadata"]["resourceVersion"] = rv
    else:
        out["metadata"].pop("resourceVersion", None)
    spec_path = _paths(rt)[0]
    _set(out, spec_path, replicas)
    return out
