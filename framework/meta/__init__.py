"""What apimachinery gives Go, once, for ``framework``, ``framework.testing`` and applications.

- :mod:`framework.meta.time` — ``metav1.Time`` / ``MicroTime`` parse and format;
- :mod:`framework.meta.labels` — label selectors (string and ``LabelSelector`` forms), validation;
- :mod:`framework.meta.quantity` — ``resource.Quantity``;
- :mod:`framework.meta.field` — field paths and field errors with Go's messages;
- :mod:`framework.meta.schema` — GroupVersion / GroupVersionKind / GroupVersionResource;
- :mod:`framework.meta.validation` — name and label rules (``pkg/util/validation``);
- :mod:`framework.meta.object` — accessors for objects as dicts (``get_name``, ``get_labels``, ...);
- :mod:`framework.meta.conditions` — ``SetStatusCondition`` and friends.

The accessors and condition helpers are re-exported here: ``from framework import meta;
meta.get_name(obj)``, ``meta.set_status_condition(conditions, {...})``.
"""

from framework.meta.conditions import (
    find_status_condition,
    is_status_condition_false,
    is_status_condition_present_and_equal,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)
from framework.meta.object import (
    ensure_metadata,
    get_annotations,
    get_controller_of,
    get_creation_timestamp,
    get_deletion_timestamp,
    get_finalizers,
    get_generation,
    get_gvk,
    get_labels,
    get_metadata,
    get_name,
    get_namespace,
    get_owner_references,
    get_resource_version,
    get_uid,
    is_being_deleted,
    object_key,
    set_annotation,
    set_label,
)

__all__ = [
    "ensure_metadata",
    "find_status_condition",
    "get_annotations",
    "get_controller_of",
    "get_creation_timestamp",
    "get_deletion_timestamp",
    "get_finalizers",
    "get_generation",
    "get_gvk",
    "get_labels",
    "get_metadata",
    "get_name",
    "get_namespace",
    "get_owner_references",
    "get_resource_version",
    "get_uid",
    "is_being_deleted",
    "is_status_condition_false",
    "is_status_condition_present_and_equal",
    "is_status_condition_true",
    "object_key",
    "remove_status_condition",
    "set_annotation",
    "set_label",
    "set_status_condition",
]
