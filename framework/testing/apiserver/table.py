"""Server-side printing: ``meta.k8s.io/v1`` Table output for ``kubectl get`` (spec 4-2, 4-3).

kubectl asks for ``application/json;as=Table;v=v1;g=meta.k8s.io`` on get, list and watch and prints
the columns the server chooses. Custom resources get ``Name``, then their version's
``additionalPrinterColumns`` (a JSONPath per column, evaluated per row), then ``Age`` unless a column
of that name exists. Built-in kinds with a kube-apiserver printer that matters here (Namespace,
ConfigMap, Secret, ServiceAccount, Service, Event, Deployment, Lease, RoleBinding, ClusterRoleBinding,
ResourceQuota, webhook configurations) get its columns (``pkg/printers/internalversion``; the server
always prints "wide", kubectl hides priority-1 columns unless ``-o wide``); every other kind gets
apiserver's default columns (``Name``, ``Created At``). Row objects are
PartialObjectMetadata unless ``includeObject`` asks for ``Object`` or ``None``. On a watch only the
first event carries the column definitions, as in kube-apiserver.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from framework.meta.labels import label_selector_as_selector
from framework.meta.object import get_creation_timestamp, get_metadata, get_name
from framework.meta.time import parse_time

from . import errors

__all__ = ["BUILTIN_PRINTERS", "TableConverter", "human_duration", "parse_include_object", "partial_metadata"]

# metav1.ObjectMeta's swagger descriptions, which apiserver uses for the default columns.
_NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name automatically. Name "
    "is primarily intended for creation idempotence and configuration definition. Cannot be updated. "
    "More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
_CREATED_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is "
    "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
    "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
    "Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_NAME_COLUMN = {
    "name": "Name",
    "type": "string",
    "format": "name",
    "description": _NAME_DESCRIPTION,
    "priority": 0,
}
_CREATED_COLUMN = {
    "name": "Created At",
    "type": "date",
    "format": "",
    "description": _CREATED_DESCRIPTION,
    "priority": 0,
}
_AGE_COLUMN = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

INCLUDE_OBJECT = ("None", "Object", "Metadata")


def partial_metadata(obj: dict) -> dict:
    """The metadata-only view of an object (``meta.k8s.io/v1`` PartialObjectMetadata): a Table row's
    default object, and what metadata-only get, list and watch responses carry."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj.get("metadata", {}),
    }


def parse_include_object(value: str | None) -> str:
    """The ``includeObject`` query parameter (default ``Metadata``); 400 for anything else."""
    if value in (None, ""):
        return "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{value}": supported values: "Metadata", "None", "Object"'
        )
    return value


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``5h12m``, ``3d4h``, ``2y30d``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        rest = hours % 24
        return f"{days}d" if rest == 0 else f"{days}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{days}d"
    years = days // 365
    if hours < 24 * 365 * 8:
        rest = days % 365
        return f"{years}y" if rest == 0 else f"{years}y{rest}d"
    return f"{years}y"


def _parse_time(value: Any) -> datetime | None:
    """A printed time column's value; unparsable ones are printed as unknown, as kubectl does."""
    try:
        return parse_time(value)
    except ValueError:
        return None


# --- the JSONPath subset of printer columns: .a.b, ['a.b'], [N], [*], [?(@.k=="v")] ---------------

_STEP = re.compile(
    r"""\.(?P<field>[A-Za-z0-9_$-]+)            # .field
      | \[\s*'(?P<quoted>[^']*)'\s*\]              # ['field.with.dots']
      | \[\s*(?P<index>-?\d+)\s*\]                 # [0], [-1]
      | \[\s*\*\s*\]                               # [*]
      | \[\s*\?\(\s*@\.(?P<fkey>[A-Za-z0-9_.-]+)\s*==\s*(?:"(?P<fdq>[^"]*)"|'(?P<fsq>[^']*)')\s*\)\s*\]
    """,
    re.VERBOSE,
)


def compile_json_path(path: str) -> Callable[[Any], list[Any]]:
    """A function returning every value ``path`` selects in an object; ValueError if unsupported."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    steps: list[Callable[[list[Any]], list[Any]]] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise ValueError(f"unsupported JSONPath {path!r} at {text[pos:]!r}")
        pos = m.end()
        if m.group("field") is not None or m.group("quoted") is not None:
            name = m.group("field") if m.group("field") is not None else m.group("quoted")

            def member(vs: list[Any], n: str = name) -> list[Any]:
                return [v[n] for v in vs if isinstance(v, dict) and n in v]

            steps.append(member)
        elif m.group("index") is not None:

            def element(vs: list[Any], i: int = int(m.group("index"))) -> list[Any]:
                return [v[i] for v in vs if isinstance(v, list) and -len(v) <= i < len(v)]

            steps.append(element)
        elif m.group("fkey") is not None:
            keys = m.group("fkey").split(".")
            want = m.group("fdq") if m.group("fdq") is not None else m.group("fsq")

            def select(vs: list[Any], keys: list[str] = keys, want: str | None = want) -> list[Any]:
                out = []
                for v in vs:
                    for item in v if isinstance(v, list) else []:
                        got: Any = item
                        for k in keys:
                            got = got.get(k) if isinstance(got, dict) else None
                        if got == want:
                            out.append(item)
                return out

            steps.append(select)
        else:  # [*]
            steps.append(
                lambda vs: [
                    x
                    for v in vs
                    for x in (v if isinstance(v, list) else v.values() if isinstance(v, dict) else [])
                ]
            )

    def evaluate(obj: Any) -> list[Any]:
        values = [obj]
        for step in steps:
            values = step(values)
            if not values:
                break
        return values

    return evaluate


def _text(value: Any) -> str:
    """How the JSONPath printer renders one value as text (strings bare, the rest as JSON)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value).decode()


# --- built-in printers (kubernetes pkg/printers/internalversion/printers.go) -------------------------


def _since(value: Any, now: datetime) -> str:
    """``translateTimestampSince``: the age of a timestamp, ``<unknown>`` when unset."""
    when = _parse_time(value) if isinstance(value, str) and value else None
    return "<unknown>" if when is None else human_duration((now - when).total_seconds())


def _age(obj: dict, now: datetime) -> str:
    return _since(get_creation_timestamp(obj), now)


def _name(obj: dict) -> str:
    return get_name(obj)


def _col(name: str, description: str, col_type: str = "string", priority: int = 0, fmt: str = "") -> dict:
    return {"name": name, "type": col_type, "format": fmt, "description": description, "priority": priority}


_AGE = _col("Age", _CREATED_DESCRIPTION)


def _event_cells(ev: dict, now: datetime) -> list[Any]:
    """``printEvent`` for both APIs (events.k8s.io names the legacy fields ``deprecated*``)."""
    legacy = "involvedObject" in ev or "regarding" not in ev
    first_ts = ev.get("firstTimestamp" if legacy else "deprecatedFirstTimestamp")
    last_ts = ev.get("lastTimestamp" if legacy else "deprecatedLastTimestamp")
    first = _since(first_ts, now) if first_ts else _since(ev.get("eventTime"), now)
    last = _since(last_ts, now) if last_ts else first
    count = ev.get("count" if legacy else "deprecatedCount") or 0
    series = ev.get("series")
    if isinstance(series, dict):
        last = _since(series.get("lastObservedTime"), now)
        count = series.get("count") or 0
    elif not count:
        count = 1  # singleton events carry no count in the new API
    ref = ev.get("involvedObject" if legacy else "regarding") or {}
    kind = str(ref.get("kind") or "").lower()
    target = f"{kind}/{ref['name']}" if ref.get("name") else kind
    source = ev.get("source" if legacy else "deprecatedSource") or {}
    parts = [source.get("component") or ev.get("reportingController") or ev.get("reportingComponent") or ""]
    host = source.get("host") or ev.get("reportingInstance") or ""
    if host:
        parts.append(host)
    message = (ev.get("message") if legacy else ev.get("note")) or ""
    return [
        last,
        ev.get("type") or "",
        ev.get("reason") or "",
        target,
        ref.get("fieldPath") or "",
        ", ".join(parts),
        message.strip(),
        first,
        int(count),
        _name(ev),
    ]


_EVENT_COLUMNS = [
    _col("Last Seen", "Time of the last occurrence"),
    _col("Type", "Type of this event (Normal, Warning)"),
    _col("Reason", "Short, machine understandable string that gives the reason for the transition"),
    _col("Object", "The object that this event is about"),
    _col("Subobject", "The field of the object that this event is about", priority=1),
    _col("Source", "The component reporting this event", priority=1),
    _col("Message", "A human-readable description of the status of this operation"),
    _col("First Seen", "Time of the first occurrence", priority=1),
    _col("Count", "The number of times this event has occurred", priority=1),
    _col("Name", _NAME_DESCRIPTION, priority=1, fmt="name"),
]


def _binding_cells(rb: dict, now: datetime) -> list[Any]:
    ref = rb.get("roleRef") or {}
    subjects = [s for s in rb.get("subjects") or [] if isinstance(s, dict)]
    users = ", ".join(s.get("name", "") for s in subjects if s.get("kind") == "User")
    groups = ", ".join(s.get("name", "") for s in subjects if s.get("kind") == "Group")
    sas = ", ".join(
        f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects if s.get("kind") == "ServiceAccount"
    )
    return [_name(rb), f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(rb, now), users, groups, sas]


_BINDING_COLUMNS = [
    _NAME_COLUMN,
    _col("Role", "RoleRef is the reference to the role the binding points to"),
    _AGE,
    _col("Users", "Users in the binding", priority=1),
    _col("Groups", "Groups in the binding", priority=1),
    _col("ServiceAccounts", "ServiceAccounts in the binding", priority=1),
]


def _quota_cells(rq: dict, now: datetime) -> list[Any]:
    """Request and limit columns from ``status.hard``/``status.used`` (sorted, ``limits.*`` apart)."""
    status = rq.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    requests: list[str] = []
    limits: list[str] = []
    for resource in sorted(hard):
        text = f"{resource}: {used.get(resource, '0')}/{hard[resource]}"
        (limits if resource.startswith("limits.") else requests).append(text)
    return [_name(rq), _age(rq, now), ", ".join(requests), ", ".join(limits)]


def _count_printer(column: str, description: str, field: str) -> Printer:
    return (
        [_NAME_COLUMN, _col(column, description, "integer"), _AGE],
        lambda o, now: [_name(o), len(o.get(field) or []), _age(o, now)],
    )


def _selector_text(selector: Any) -> str:
    """``metav1.LabelSelectorAsSelector(...).String()``: requirements sorted by key."""
    try:
        return str(label_selector_as_selector(selector if isinstance(selector, dict) else None))
    except (ValueError, AttributeError, TypeError):
        return "<invalid>"


def _deployment_cells(d: dict, now: datetime) -> list[Any]:
    spec, status = d.get("spec") or {}, d.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    return [
        _name(d),
        f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        _age(d, now),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
        _selector_text(spec.get("selector")),
    ]


def _service_cells(svc: dict, now: datetime) -> list[Any]:
    spec = svc.get("spec") or {}
    cluster_ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    ports = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol", "TCP")
        node = f":{port['nodePort']}" if port.get("nodePort") else ""
        ports.append(f"{port.get('port', '')}{node}/{protocol}")
    selector = spec.get("selector") or {}
    return [
        _name(svc),
        spec.get("type", ""),
        cluster_ips[0] if cluster_ips else "<none>",
        ",".join(spec.get("externalIPs") or []) or "<none>",
        ",".join(ports) or "<none>",
        _age(svc, now),
        ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
    ]


Printer = tuple[list[dict], Callable[[dict, datetime], list[Any]]]

_WEBHOOKS = "Webhooks indicates the number of webhooks in the configuration"
BUILTIN_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Namespace"): (
        [_NAME_COLUMN, _col("Status", "The status of the namespace"), _AGE],
        lambda o, now: [_name(o), (o.get("status") or {}).get("phase", ""), _age(o, now)],
    ),
    ("", "ConfigMap"): (
        [_NAME_COLUMN, _col("Data", "Number of data in configmap", "integer"), _AGE],
        lambda o, now: [_name(o), len(o.get("data") or {}) + len(o.get("binaryData") or {}), _age(o, now)],
    ),
    ("", "Secret"): (
        [_NAME_COLUMN, _col("Type", "The type of the secret"), _col("Data", "Number of data keys"), _AGE],
        lambda o, now: [_name(o), o.get("type", ""), len(o.get("data") or {}), _age(o, now)],
    ),
    ("", "ServiceAccount"): (
        [_NAME_COLUMN, _col("Secrets", "Number of secrets of the service account"), _AGE],
        lambda o, now: [_name(o), len(o.get("secrets") or []), _age(o, now)],
    ),
    ("", "ResourceQuota"): (
        [
            _NAME_COLUMN,
            _AGE,
            _col("Request", "Requests: used/hard of each resource"),
            _col("Limit", "Limits: used/hard of each limits.* resource"),
        ],
        _quota_cells,
    ),
    ("", "Event"): (_EVENT_COLUMNS, _event_cells),
    ("events.k8s.io", "Event"): (_EVENT_COLUMNS, _event_cells),
    ("coordination.k8s.io", "Lease"): (
        [_NAME_COLUMN, _col("Holder", "The holder of the lease"), _AGE],
        lambda o, now: [_name(o), (o.get("spec") or {}).get("holderIdentity") or "", _age(o, now)],
    ),
    ("", "Service"): (
        [
            _NAME_COLUMN,
            _col("Type", "The type of the service"),
            _col("Cluster-IP", "The cluster IP of the service"),
            _col("External-IP", "The external IPs of the service"),
            _col("Port(s)", "The ports of the service"),
            _AGE,
            _col("Selector", "The label selector of the service", priority=1),
        ],
        _service_cells,
    ),
    ("apps", "Deployment"): (
        [
            _NAME_COLUMN,
            _col("Ready", "Number of the pod with ready state"),
            _col(
                "Up-to-date",
                "Pods targeted by this deployment that have the desired template spec",
                "integer",
            ),
            _col(
                "Available",
                "Available pods (ready for at least minReadySeconds) targeted by this deployment",
                "integer",
            ),
            _AGE,
            _col("Containers", "Names of each container in the template.", priority=1),
            _col("Images", "Images referenced by each container in the template.", priority=1),
            _col("Selector", "Label selector for pods.", priority=1),
        ],
        _deployment_cells,
    ),
    ("rbac.authorization.k8s.io", "RoleBinding"): (_BINDING_COLUMNS, _binding_cells),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): (_BINDING_COLUMNS, _binding_cells),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): _count_printer(
        "Webhooks", _WEBHOOKS, "webhooks"
    ),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): _count_printer(
        "Webhooks", _WEBHOOKS, "webhooks"
    ),
}
"""kube-apiserver's printer per built-in ``(group, kind)``: its columns and a function of the object and
the current time giving the cells."""


class TableConverter:
    """Builds Tables for one resource type: a custom resource's printer columns, a built-in printer,
    or apiserver's default columns."""

    def __init__(
        self,
        printer_columns: list[dict] | None = None,
        now: Callable[[], datetime] | None = None,
        printer: Printer | None = None,
    ) -> None:
        self._now = now or (lambda: datetime.now(UTC))
        self._custom = printer_columns is not None
        self._printer = printer
        self._columns: list[dict] = [_NAME_COLUMN]
        self._paths: list[tuple[str, Callable[[Any], list[Any]] | None]] = []
        if printer is not None:
            self._columns = list(printer[0])
            return
        if not self._custom:
            self._columns.append(_CREATED_COLUMN)
            return
        columns = list(printer_columns or [])
        if not any(c.get("name") == "Age" for c in columns):
            columns.append(_AGE_COLUMN)
        for col in columns:
            json_path = col.get("jsonPath", "")
            try:
                evaluate: Callable[[Any], list[Any]] | None = compile_json_path(json_path)
            except ValueError:
                evaluate = None  # an unsupported path prints an empty cell, never fails the request
            self._paths.append((col.get("type", "string"), evaluate))
            self._columns.append(
                {
                    "name": col.get("name", ""),
                    "type": col.get("type", "string"),
                    "format": col.get("format", ""),
                    "description": col.get("description")
                    or f"Custom resource definition column (in JSONPath format): {json_path}",
                    "priority": int(col.get("priority", 0) or 0),
                }
            )

    def _cells(self, obj: dict) -> list[Any]:
        meta = get_metadata(obj)
        if self._printer is not None:
            return self._printer[1](obj, self._now())
        if not self._custom:
            return [meta.get("name", ""), meta.get("creationTimestamp")]
        cells: list[Any] = [meta.get("name", "")]
        for col_type, evaluate in self._paths:
            values = evaluate(obj) if evaluate is not None else []
            if not values:
                cells.append(None)
            else:
                cells.append(self._cell(col_type, values[0]))
        return cells

    def _cell(self, col_type: str, value: Any) -> Any:
        """apiextensions' ``cellForJSONValue`` (and text for string columns)."""
        if col_type == "string":
            return _text(value)
        if col_type == "integer":
            return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        if col_type == "number":
            return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        if col_type == "boolean":
            return value if isinstance(value, bool) else None
        if col_type == "date":
            if not isinstance(value, str):
                return None
            when = _parse_time(value)
            if when is None:
                return "<invalid>"
            return human_duration((self._now() - when).total_seconds())
        return None

    def _row(self, obj: dict, include_object: str) -> dict:
        row: dict[str, Any] = {"cells": self._cells(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object == "Metadata":
            row["object"] = partial_metadata(obj)
        else:
            row["object"] = None
        return row

    def table(self, objs: list[dict], list_meta: dict, include_object: str, headers: bool = True) -> dict:
        """A Table of ``objs``; ``list_meta`` gives resourceVersion/continue/remainingItemCount."""
        meta = {
            k: list_meta[k] for k in ("resourceVersion", "continue", "remainingItemCount") if list_meta.get(k)
        }
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": meta,
            "columnDefinitions": [dict(c) for c in self._columns] if headers else None,
            "rows": [self._row(o, include_object) for o in objs],
        }
