"""apiextensions.k8s.io/v1 CustomResourceDefinition: defaults, initial status and validation
(``apiextensions-apiserver/pkg/registry/customresourcedefinition/strategy.go``); the schema rules live in
the ``crd`` package."""

from __future__ import annotations

from framework.apiserver.crd.definition import add_stored_version, default_crd
from framework.apiserver.crd.definition_validation import validate_crd
from framework.apiserver.encoding import decoding
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.conditions import set_status_condition

# The finalizer a CRD's DELETE adds; the CRD finalizer controller removes it once every instance is gone
# (``customresourcedefinition/etcd.go``, ``pkg/controller/finalizer``).
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def normalize(obj: dict, old: dict | None) -> None:
    default_crd(obj)
    if old is None:
        obj["status"] = {
            "acceptedNames": {"kind": "", "plural": ""},
            "conditions": [],
            "storedVersions": [],
        }
    if old is None or obj.get("spec") != old.get("spec"):
        # PrepareForCreate / PrepareForUpdate: the storage version joins status.storedVersions with the
        # write that makes it the storage version (a status write leaves spec, and this, alone).
        add_stored_version(obj)


def mark_terminating(obj: dict) -> None:
    """A deleted CRD waits for its instances' deletion (the store's Delete sets this condition)."""
    conds = obj.setdefault("status", {}).setdefault("conditions", [])
    set_status_condition(
        conds,
        {
            "type": "Terminating",
            "status": "True",
            "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; instance deletion pending",
        },
    )


NULLS = decoding.shape(
    {
        **decoding.structs(
            "spec.versions[]",
            "spec.versions[].additionalPrinterColumns[]",
            "spec.versions[].selectableFields[]",
            "status.conditions[]",
        ),
        **decoding.strings("spec.names.shortNames[]", "spec.names.categories[]", "status.storedVersions[]"),
        **decoding.strings("status.acceptedNames.shortNames[]", "status.acceptedNames.categories[]"),
    },
    keep=decoding.TRANSITION_TIME,
    schemas=("spec.versions[].schema.openAPIV3Schema",),
)


STRATEGIES = [
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        "customresourcedefinition",
        null_shape=NULLS,
        apply_lists={"status.conditions": ("map", ("type",))},
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        subresources=("status",),
        tracks_generation=True,
        generation_keys=("spec",),
        put_requires_rv=True,
        normalize=normalize,
        validate=validate_crd,
        time_fields=("status.conditions[].lastTransitionTime",),
        # Its status is written by the API server's own apiextensions controllers.
        in_process_manager="kube-apiserver",
        deletion_finalizers=(CLEANUP_FINALIZER,),
        on_deletion=mark_terminating,
    ),
]
