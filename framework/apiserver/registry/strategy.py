"""A kind's strategy: everything the server knows about one resource in one group/version.

A :class:`ResourceType` holds what kube-apiserver spreads over a kind's ``pkg/registry/<group>/<kind>/
strategy.go`` and ``storage``, and ``pkg/apis/<group>/validation``: scope, subresources, generation
tracking, PUT semantics, deletion rules, name rules, field selectors, strategic-merge strategies, printer
columns and the kind's own defaulting and validation hooks. The generic REST, patch, watch, table and
admission code asks it and knows no kind by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.catalog.strategic_merge import merge_keys
from framework.apiserver.encoding import timefmt
from framework.apiserver.encoding.decoding import META, Shape
from framework.apiserver.endpoints.table import Printer
from framework.apiserver.machinery.errors import FieldError

PERSISTED_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


CREATE_ONLY = ("create",)


Hook = Callable[[dict, dict | None], None]


Validator = Callable[[dict, dict | None], list[FieldError]]


Review = Callable[[Any, dict, Any, str | None], dict]
"""A create-only kind's evaluation: ``review(server, body, requester, namespace)`` → the object answered
(``server`` the APIServer, ``requester`` the caller's ``auth.UserInfo``, ``namespace`` the URL's)."""


@dataclass(eq=False)
class ResourceType:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    singular: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    tracks_generation: bool = False
    # Top-level keys whose change bumps generation; None means everything but metadata (6-4).
    generation_keys: tuple[str, ...] | None = None
    put_requires_rv: bool = False
    put_creates: bool = False
    name_rule: str = "subdomain"
    verbs: tuple[str, ...] = PERSISTED_VERBS
    storage: str = ""  # key of the shared storage table; two views (events) share one
    supports_gc: bool = True
    time_fields: tuple[str, ...] = ()
    microtime_fields: tuple[str, ...] = ()
    normalize: Hook | None = None  # defaulting/normalising on create (old None) and update
    validate: Validator | None = None
    fields: Callable[[dict], dict[str, str]] | None = None  # extra field-selector values
    field_names: tuple[str, ...] = ()
    # Strategic-merge keys (``patch.MergeStrategy`` by dotted path). A built-in kind that declares none
    # gets its Go structs' tags (``catalog/strategic_merge.json``); None stays for custom resources
    # (strategic merge patch not supported) and create-only kinds.
    smp: dict[str, Any] | None = None
    # kubectl's columns (``pkg/printers/internalversion/printers.go``); None: apiserver's defaults.
    printer: Printer | None = None
    crd: dict | None = None  # the CRD a custom resource type comes from
    # Conversion between this view and the stored form (events.k8s.io ↔ core/v1 Event).
    to_storage: Callable[[dict], dict] | None = None
    from_storage: Callable[[dict], dict] | None = None
    persisted: bool = True
    # The kind registers its own field-label conversion (core Event, Namespace, Secret, Service; every
    # custom resource): unknown fields say "field label not supported" instead of the default text.
    own_field_labels: bool = False
    # A create-only kind answered at once and never stored (the review APIs).
    review: Review | None = None
    # Values the registry allocates from what is stored (Service cluster IPs and node ports):
    # ``allocate(stored objects, key, new, old)`` → field errors.
    allocate: Callable[[dict, Any, dict, dict | None], list[FieldError]] | None = None
    # An immediate DELETE answers the deleted object, not a Status (the store's ReturnDeletedObject).
    returns_deleted_object: bool = False
    # What a JSON null becomes in the kind's Go struct (``decoding``): the kind's own zeros and kept nulls.
    null_shape: Shape = META
    # The same for the bodies its subresources take (the ServiceAccount ``token``: a TokenRequest).
    subresource_null_shapes: dict[str, Shape] = field(default_factory=dict)
    # Server-side apply facts its strategic-merge strategies do not carry (structured-merge-diff's
    # schema, ``managed_fields.schema``): map-typed fields (their keys are not struct fields), atomic
    # structs/maps, and list types the merge strategies leave undeclared.
    apply_maps: frozenset[str] = frozenset()
    apply_atomic: frozenset[str] = frozenset()
    apply_lists: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    # A ``map[string][]byte`` field (Secret ``data``, ConfigMap ``binaryData``): the JSON decoder
    # base64-decodes its values, so bad data fails decoding (400).
    bytes_field: str | None = None
    # The Go package of the kind's internal type when it is not the group's first label ("core" for the
    # core group; events.k8s.io Events are core Events inside): what a ``converting (v1.X) to
    # (<package>.Y)`` decode error names.
    internal_group: str = ""
    # The field manager of the kind's in-process updates (the controllers' writes; creates are always
    # kube-apiserver's).
    in_process_manager: str = "kube-controller-manager"
    # Deletion as the kind's own storage does it (kube-apiserver's ``pkg/registry/<group>/<kind>/
    # storage``): names a DELETE refuses (403), finalizers every DELETE adds, and a hook marking an
    # object its DELETE leaves in place (after ``deletionTimestamp`` and the finalizers are set).
    undeletable_names: tuple[str, ...] = ()
    deletion_finalizers: tuple[str, ...] = ()
    on_deletion: Callable[[dict], None] | None = None
    # The kind finalizes itself through ``spec.finalizers`` (Namespace): only the ``/finalize``
    # subresource changes them, the object is not purged while any remain (a repeated DELETE answers 409),
    # a DELETE always leaves it in place without a grace period, and a repeated DELETE purges it once
    # no ``metadata.finalizers`` remain.
    spec_finalizers: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.storage:
            self.storage = self.qualified
        if self.smp is None and self.crd is None and self.persisted:
            self.smp = merge_keys(self.api_version, self.kind)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``plural`` for the core group, ``plural.group`` otherwise (the ``RES`` of spec 5-3)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        if self.crd:
            return self.crd["spec"]["names"].get("listKind") or self.kind + "List"
        return self.kind + "List"

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    @property
    def is_custom(self) -> bool:
        return self.crd is not None

    def selectable_fields(self) -> tuple[str, ...]:
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        if not self.is_custom and not (self.own_field_labels and not self.namespaced):
            base = ("metadata.name", "metadata.namespace")
        return base + self.field_names

    def field_set(self, obj: dict) -> dict[str, str]:
        meta = obj.get("metadata", {})
        out = {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}
        if self.fields:
            out.update(self.fields(obj))
        return out


def review_strategy(
    group: str, resource: str, kind: str, namespaced: bool, review: Review, null_shape: Shape = META
) -> ResourceType:
    """A create-only review kind, answered at once by ``review`` and never stored."""
    return ResourceType(
        group,
        "v1",
        resource,
        kind,
        namespaced,
        kind.lower(),
        verbs=CREATE_ONLY,
        persisted=False,
        supports_gc=False,
        null_shape=null_shape,
        review=review,
    )


def normalize_times(rt: ResourceType, obj: dict) -> None:
    """Normalise Time / MicroTime fields of the kind (6-12); raises 400 for undecodable values."""
    if rt.time_fields or rt.microtime_fields:
        timefmt.normalize_object_times(
            obj, rt.time_fields, rt.microtime_fields, kind=rt.kind, version=rt.version
        )
