"""core/v1 Namespace: the ``kubernetes.io/metadata.name`` label, the ``kubernetes`` finalizer and the
Active phase (``pkg/registry/core/namespace/strategy.go``), no deletecollection; validation in
:func:`validate_namespace` (``pkg/apis/core/validation``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError, invalid_value
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry import printing
from framework.apiserver.registry.strategy import PERSISTED_VERBS, ResourceType
from framework.meta.validation import is_qualified_name

STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
# The namespaces a DELETE is refused for: the NamespaceLifecycle admission plugin's immortal namespaces
# (``plugin/pkg/admission/namespace/lifecycle/admission.go``).
IMMORTAL = ("default", "kube-system", "kube-public")


def validate_namespace(obj: dict) -> list[FieldError]:
    """``ValidateNamespace`` beyond metadata: ``spec.finalizers`` are qualified or standard names."""
    errs: list[FieldError] = []
    for name in (obj.get("spec") or {}).get("finalizers") or []:
        errs.extend(invalid_value("spec.finalizers", name, m) for m in is_qualified_name(name))
        if "/" not in name and name not in STANDARD_FINALIZERS:
            errs.append(
                invalid_value(
                    "spec.finalizers",
                    name,
                    "name is neither a standard finalizer name nor is it fully qualified",
                )
            )
    return errs


def normalize(obj: dict, old: dict | None) -> None:
    meta = obj["metadata"]
    labels = meta.setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = meta["name"]  # 6-11
    if old is None:
        spec = as_dict(obj.get("spec"))
        fins = list(spec.get("finalizers") or [])
        if "kubernetes" not in fins:
            fins.append("kubernetes")
        obj["spec"] = {**spec, "finalizers": fins}
        obj["status"] = {"phase": "Active"}
    elif not isinstance(obj.get("status"), dict) or not obj["status"].get("phase"):
        # SetDefaults_NamespaceStatus: the status is a struct, its empty phase defaults to Active
        # (a /status update with ``status: null`` or ``{}``).
        obj["status"] = {**(obj.get("status") or {}), "phase": "Active"}


def mark_terminating(obj: dict) -> None:
    """A deleted namespace is Terminating until its content is gone and its finalizers removed."""
    obj.setdefault("status", {})["phase"] = "Terminating"


def fields(obj: dict) -> dict[str, str]:
    return {"status.phase": obj.get("status", {}).get("phase", ""), "name": obj["metadata"]["name"]}


NULLS = decoding.shape(
    {**decoding.strings("spec.finalizers[]"), **decoding.CONDITIONS}, keep=decoding.TRANSITION_TIME
)


PRINTER: printing.Printer = (
    [printing.NAME, printing.col("Status", "The status of the namespace"), printing.AGE],
    lambda o, now: [printing.name(o), as_dict(o.get("status")).get("phase", ""), printing.age(o, now)],
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "namespaces",
        "Namespace",
        False,
        "namespace",
        null_shape=NULLS,
        short_names=("ns",),
        subresources=("status", "finalize"),
        name_rule="label",
        # No deletecollection: kube-apiserver's namespace storage does not implement it.
        verbs=tuple(v for v in PERSISTED_VERBS if v != "deletecollection"),
        normalize=normalize,
        validate=lambda o, old: validate_namespace(o),
        fields=fields,
        field_names=("status.phase", "name"),
        own_field_labels=True,
        printer=PRINTER,
        time_fields=("status.conditions[].lastTransitionTime",),
        undeletable_names=IMMORTAL,
        on_deletion=mark_terminating,
        spec_finalizers=True,
    ),
]
