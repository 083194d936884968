"""Field ownership for server-side apply: ``metadata.managedFields`` (6-9).

A compact port of what kube-apiserver does with sigs.k8s.io/structured-merge-diff and
k8s.io/apimachinery ``pkg/util/managedfields/internal``, one concept per module: ``fieldpath`` (paths,
sets, FieldsV1), ``schema`` (list and map semantics), ``typed`` (the typed walkers), ``managers`` (the
entries, update and apply), ``last_applied`` (kubectl's annotation bridge, manager names) and
``apply_config`` (the apply body). The names the REST layer uses are exported here.
"""

from framework.apiserver.managed_fields.apply_config import load_apply_config
from framework.apiserver.managed_fields.fieldpath import TypedError, from_fields_v1, path_string, to_fields_v1
from framework.apiserver.managed_fields.last_applied import (
    KUBECTL_MANAGER,
    LAST_APPLIED,
    allowed_by_last_applied,
    last_applied_value,
    manager_from_user_agent,
)
from framework.apiserver.managed_fields.managers import (
    Conflicts,
    Managed,
    apply,
    conflict_error,
    decode,
    diff,
    encode,
    ignore_for,
    is_reset,
    record,
)
from framework.apiserver.managed_fields.schema import Schema, builtin_schema, custom_schema
from framework.apiserver.managed_fields.typed import merge

__all__ = [
    "KUBECTL_MANAGER",
    "LAST_APPLIED",
    "Conflicts",
    "Managed",
    "Schema",
    "TypedError",
    "allowed_by_last_applied",
    "apply",
    "builtin_schema",
    "conflict_error",
    "custom_schema",
    "decode",
    "diff",
    "encode",
    "from_fields_v1",
    "ignore_for",
    "is_reset",
    "last_applied_value",
    "load_apply_config",
    "manager_from_user_agent",
    "merge",
    "path_string",
    "record",
    "to_fields_v1",
]
