"""A request log for chaos runs: who wrote what, when, as which identity (JSON lines, appended).

``python -m framework.testing.apiserver --request-log FILE`` appends one line per write request
(create, update, patch, delete, deletecollection) after it was answered, and survives server restarts
(the file is appended to). Fields: ``t`` (wall-clock seconds when the request arrived), ``end`` (when it
was answered), ``user``, ``verb``, ``resource`` (``plural[.group][/subresource]``), ``ns``, ``name``,
``code`` and ``rv`` (of the answered object). Lease writes also carry ``holder`` and ``duration``
(``spec.holderIdentity`` / ``spec.leaseDurationSeconds`` of the stored Lease); Namespace writes carry
the stored ``labels``; Project writes carry the stored ``staleAutoDelete`` timestamp.
"""

from __future__ import annotations

import os
from typing import IO, Any

import orjson

from framework.meta import jsoncodec

from .gardener import GROUP as GARDENER_CORE_GROUP
from .jsonvalues import as_dict

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})


class RequestLog:
    def __init__(self, path: str | os.PathLike) -> None:
        self.path = path
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
            resource = info.resource.split("/")[0]
            spec = as_dict(obj.get("spec"))
            if resource == "leases.coordination.k8s.io":
                entry["holder"] = spec.get("holderIdentity") or ""
                entry["duration"] = spec.get("leaseDurationSeconds")
            elif resource == "namespaces":
                entry["labels"] = meta.get("labels") or {}
            elif resource == f"projects.{GARDENER_CORE_GROUP}":
                entry["staleAutoDelete"] = as_dict(obj.get("status")).get("staleAutoDeleteTimestamp")
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
