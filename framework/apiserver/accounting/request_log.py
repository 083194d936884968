"""A request log for chaos runs: who wrote what, when, as which identity (JSON lines, appended).

``python -m framework.apiserver --request-log FILE`` appends one line per write request
(create, update, patch, delete, deletecollection) after it was answered, and survives server restarts
(the file is appended to). Fields: ``t`` (wall-clock seconds when the request arrived), ``end`` (when it
was answered), ``user``, ``verb``, ``resource`` (``plural[.group][/subresource]``), ``ns``, ``name``,
``code`` and ``rv`` (of the answered object). What else a line carries is the run's choice: per
resource, fields taken from the answered object by a dotted path (``request_log_fields``, on the
command line ``--request-log-field RESOURCE:NAME=PATH``, e.g.
``leases.coordination.k8s.io:holder=spec.holderIdentity``); absent values are ``null``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

import orjson

from framework.apiserver.machinery.jsonvalues import as_dict
from framework.meta import jsoncodec

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class RequestLog:
    """An append-only JSON-lines log of answered writes; ``fields``: resource -> {name: dotted path}."""

    def __init__(
        self, path: str | os.PathLike, fields: Mapping[str, Mapping[str, str]] | None = None
    ) -> None:
        self.path = path
        self.fields = {resource: dict(named) for resource, named in (fields or {}).items()}
        self._file: IO[bytes] = open(path, "ab")  # noqa: SIM115 (closed in close())

    def record(self, info: Any, code: int, body: bytes | None, started: float, ended: float) -> None:
        """Log one answered request if it was a write to a resource."""
        if info.verb not in WRITE_VERBS or info.resource.startswith("/"):  # a path, not a resource
            return
        entry: dict[str, Any] = {
            "t": round(started, 6),
            "end": round(ended, 6),
            "user": info.user.name if info.user is not None else "",
            "verb": info.verb,
            "resource": info.resource,
            "ns": getattr(info, "namespace", None),
            "name": getattr(info, "name", None),
            "code": code,
        }
        obj = _load(body) if body else None
        if obj is not None and obj.get("kind") == "Status" and entry["name"] is None:
            entry["name"] = as_dict(obj.get("details")).get("name")  # a refused create names its object
        if obj is not None and code < 300 and obj.get("kind") != "Status":
            meta = obj.get("metadata") or {}
            entry["rv"] = meta.get("resourceVersion")
            if entry["name"] is None and info.verb == "create":  # POST to the collection
                entry["name"] = meta.get("name")
            for name, path in self.fields.get(info.resource.split("/")[0], {}).items():
                entry[name] = _at(obj, path)
        self._file.write(orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
        self._file.flush()  # a SIGKILLed server keeps what it answered

    def close(self) -> None:
        self._file.close()


def _load(body: bytes) -> dict | None:
    try:
        obj = jsoncodec.loads(body)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _at(obj: Any, path: str) -> Any:
    """The value at a dotted path (``spec.holderIdentity``), None where any step is absent."""
    for key in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def parse_field(spec: str) -> tuple[str, str, str]:
    """``RESOURCE:NAME=PATH`` -> (resource, name, path); ValueError for anything else."""
    resource, colon, rest = spec.partition(":")
    name, eq, path = rest.partition("=")
    if not (colon and eq and resource and name and path) or "" in path.split("."):
        raise ValueError(
            f"{spec!r}: expected RESOURCE:NAME=PATH"
            " (e.g. leases.coordination.k8s.io:holder=spec.holderIdentity)"
        )
    return resource, name, path
