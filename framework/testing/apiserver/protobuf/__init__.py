"""Protobuf request bodies (spec 1-9, 24-2): ``k8s\\x00`` + ``runtime.Unknown`` → the JSON form of the object.

kubectl's typed-client commands (``create namespace``, ``create configmap``, ``create secret``,
``create serviceaccount``, ``create role`` …, ``auth can-i``) send ``application/vnd.kubernetes.protobuf``
and do not retry in JSON after a 415, so the server decodes these bodies for a fixed set of kinds.

The decoder is hand-written rather than built on the ``protobuf`` package: the wire format subset is
small (varint, length-delimited and fixed32/64 fields; no groups, no packed scalars in these kinds),
the schemas are fixed (a few dozen field numbers copied from ``k8s.io/api`` and
``k8s.io/apimachinery`` ``generated.proto``) and what matters is the mapping onto Go's JSON form —
which generated Python classes would not give us anyway. So: no compiled ``.proto``, no dependency.

Mapping rules (what Go's ``encoding/json`` would have produced from the decoded Go struct, so the rest
of the server sees exactly the dict a JSON request would have carried):

- scalars tagged ``omitempty`` are dropped when zero (go-to-protobuf writes non-pointer scalars even
  when empty, so the wire carries ``name: ""``, ``generation: 0`` …); scalars *without* ``omitempty``
  (``roleRef.apiGroup``, ``subjects[].kind``, ``status.allowed`` …) are always emitted; pointer scalars
  (``immutable``, ``automountServiceAccountToken``, ``deletionGracePeriodSeconds`` …) are emitted when
  present on the wire, whatever their value;
- non-pointer nested structs (``spec``, ``status``, ``roleRef``, ``metadata``) are always emitted, as Go
  emits ``{}`` for them; pointer structs only when present;
- repeated fields and maps are emitted when non-empty; ``bytes`` map values (Secret ``data``,
  ConfigMap ``binaryData``) become base64 strings;
- ``metav1.Time`` ``{seconds, nanos}`` becomes RFC 3339 with seconds precision and ``Z``; a zero time
  (empty message or Go's year-1 instant) is dropped, as Go's ``null``;
- unknown field numbers are skipped (as the generated Go code does); a wrong wire type, a truncated
  field or an overlong varint is a ``400 BadRequest`` phrased like the real server's decode errors;
- ``contentEncoding`` / ``contentType`` of the envelope are ignored, as the Go protobuf serializer does.

A kind outside :data:`KINDS` in the envelope is ``415 UnsupportedMediaType`` (24-2). :func:`encode` is
the inverse, used by the tests to build bodies (optionally with Go's zero-valued fields on the wire).
"""

from __future__ import annotations

from .decoder import decode
from .encoder import encode
from .fields import CONTENT_TYPE
from .messages import KINDS, decodable

__all__ = ["CONTENT_TYPE", "KINDS", "decodable", "decode", "encode"]
