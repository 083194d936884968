"""YAML request bodies decoded as kube-apiserver's ``sigs.k8s.io/yaml`` decodes them, with its bounds.

Every YAML body the server reads (create and update bodies, DeleteOptions, apply patches) goes through
:func:`decode`, which turns it into the JSON value ``yaml.YAMLToJSON`` would produce:

- **Aliases are expanded under goyaml.v2's budget** (``goyaml.v2/decode.go``, ``allowedAliasRatio``):
  every node decoded counts, nodes decoded inside an alias count again as alias decodes, and once more
  than 100 alias decodes make up more than the allowed share of more than 1,000 decodes (99% up to
  400,000 decodes, falling to 10% at 4,000,000), the document is refused with ``yaml: document contains
  excessive aliasing``. The count is kept without expanding anything (each anchored node's expanded size
  is known when its alias is met), so a "billion laughs" body is refused after reading it once; within
  the budget an alias becomes a copy of its anchor's value, as in Go.
- **Nesting is capped at 10,000 levels** (goyaml.v2's ``max_flow_level`` / ``max_indents`` and Go's
  JSON ``maxNestingDepth``): ``yaml: line N: exceeded max depth of 10000``.
- Values are what goyaml.v2 decodes into ``interface{}`` and ``YAMLToJSON`` converts: timestamps stay
  strings, map keys become strings (``1`` -> ``"1"``, ``true`` -> ``"true"``), ``<<`` merges mappings
  (later keys win, a list of mappings merged last to first), only the first document counts, and
  ``.inf``/``.nan`` are refused as ``encoding/json`` refuses them.

Parsing is libyaml's C parser (PyYAML's ``CParser``); building the value is an iterative loop over
its events, so no depth recurses. libyaml refuses nesting beyond a process-wide limit, 1,000 levels by
default: :func:`_allow_libyaml_nesting` raises it to Go's 10,000 (PyYAML's C composer, the one
recursive reader of libyaml's events elsewhere in the process, was measured to handle 10,000 levels
on an 8 MiB thread stack; it crashes near 30,000). Where that setting is not available the document
is parsed again by PyYAML's pure-Python parser (also iterative, but quadratic in the nesting depth).
Building is Python work per node: the server runs it off its event loop.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ctypes
import math
from collections.abc import Iterator
from typing import Any

import structlog
import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from framework.meta.field import go_float
from framework.meta.jsoncodec import MAX_DEPTH
from framework.meta.jsoncodec import copy as copy_value
from framework.meta.strconv import quote

__all__ = ["YAMLDecodeError", "decode", "decode_async"]

log = structlog.get_logger(__name__)

_TAG = "tag:yaml.org,2002:"
# goyaml.v2 decode.go: the range over which the allowed share of alias decodes scales down.
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000
_I64_MIN, _U64_MAX = -(1 << 63), (1 << 64) - 1


class YAMLDecodeError(ValueError):
    """A body that is not YAML ``sigs.k8s.io/yaml`` converts to JSON; the text is Go's (``yaml: ...``)."""


class _Resolver(yaml.resolver.Resolver):
    """YAML 1.1's implicit types without timestamps: goyaml.v2 gives a timestamp-like scalar decoded
    into ``interface{}`` as its text."""


_Resolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TAG + "timestamp"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_RESOLVER = _Resolver()
_CONSTRUCTOR = SafeConstructor()


def _allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _unsupported(value: float) -> YAMLDecodeError:
    return YAMLDecodeError(f"json: unsupported value: {go_float(value)}")


def _number(tag: str, text: str) -> Any:
    try:
        value = SafeConstructor.yaml_constructors[tag](_CONSTRUCTOR, ScalarNode(tag, text))
    except (ValueError, TypeError, KeyError):
        kind = tag.removeprefix(_TAG)
        raise YAMLDecodeError(f"yaml: cannot decode !!str `{text}` as a !!{kind}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise _unsupported(value)  # YAMLToJSON's json.Marshal refuses it
    if isinstance(value, int) and not isinstance(value, bool) and not _I64_MIN <= value <= _U64_MAX:
        return float(value)  # no Go integer holds it: goyaml.v2 falls back to float64
    return value


def _scalar(event: ScalarEvent) -> Any:
    """A scalar's value: plain scalars are resolved, quoted ones and unknown tags are strings."""
    tag = event.tag
    if tag is None or tag == "!":
        if tag is not None or not event.implicit[0]:
            return event.value
        tag = _RESOLVER.resolve(ScalarNode, event.value, (True, False))
    if tag in (_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"):
        return _number(tag, event.value)
    if tag == _TAG + "binary":
        try:
            return base64.b64decode(event.value, validate=False).decode(errors="replace")
        except (ValueError, binascii.Error):
            raise YAMLDecodeError("yaml: !!binary value contains invalid base64 data") from None
    return event.value  # str, timestamp (kept as text) and tags goyaml.v2 does not know


def _key_text(key: Any) -> str:
    """A map key as ``YAMLToJSON`` writes it."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return go_float(key)
    raise YAMLDecodeError(f"unsupported map key: {key!r}")


def _go_value(key: Any) -> str:
    """A decoded map key as Go's ``%#v`` prints it in goyaml.v2's errors."""
    if isinstance(key, str):
        return quote(key)
    if key is None:
        return "<nil>"
    return _key_text(key)


def _is_merge(event: ScalarEvent) -> bool:
    return event.value == "<<" and (event.implicit[0] or event.tag == _TAG + "merge")


def _merge_error() -> YAMLDecodeError:
    return YAMLDecodeError("yaml: map merge requires map or sequence of maps as the value")


class _Frame:
    """A mapping or sequence being built. ``decodes``: the nodes goyaml.v2 decodes for it, itself and
    everything in it with aliases expanded (what an alias to it adds)."""

    __slots__ = ("anchor", "decodes", "key", "key_value", "line", "merge", "merge_list", "value")

    def __init__(
        self, value: dict | list, anchor: str | None, merge_list: bool = False, line: int = 0
    ) -> None:
        self.value = value
        self.line = line  # where the node starts (1-based), as goyaml.v2 reports a node's line
        self.anchor = anchor
        # A sequence that is the value of ``<<`` is not decoded as a node, only its mappings are.
        self.decodes = 0 if merge_list else 1
        self.merge_list = merge_list
        self.key: str | None = None  # a mapping's key waiting for its value
        self.key_value: Any = None  # that key as decoded (named in a duplicate key's error)
        self.merge = False  # a mapping's ``<<`` waiting for its value


_OPEN = object()  # an anchor whose node is still being read (an alias to it would contain itself)


class _Builder:
    """One document's value from its parse events, with goyaml.v2's alias budget and the depth cap."""

    def __init__(self, duplicates: list[str] | None = None) -> None:
        # Keys a mapping repeats, as goyaml.v2's strict mode words them (``line 3: key "a" already set
        # in map``, the line of the repeated key's value); None: not looked for.
        self.duplicates = duplicates
        self.decodes = 0
        self.alias_decodes = 0
        self.anchors: dict[str, Any] = {}
        self.stack: list[_Frame] = []
        self.root: Any = None

    def _count(self, decodes: int, aliased: bool) -> None:
        """goyaml.v2's ``unmarshal`` check, for ``decodes`` more nodes (inside an alias if
        ``aliased``). Within one alias both counts grow together, so the share only rises: checking
        once at its end decides as checking at each node would."""
        self.decodes += decodes
        if aliased:
            self.alias_decodes += decodes
        if (
            self.alias_decodes > 100
            and self.decodes > 1000
            and self.alias_decodes / self.decodes > _allowed_alias_ratio(self.decodes)
        ):
            raise YAMLDecodeError("yaml: document contains excessive aliasing")

    def build(self, events: Iterator[Event]) -> Any:
        for event in events:
            if isinstance(event, ScalarEvent):
                self._on_scalar(event)
            elif isinstance(event, MappingStartEvent | SequenceStartEvent):
                self._on_start(event)
            elif isinstance(event, AliasEvent):
                self._on_alias(event)
            elif isinstance(event, DocumentStartEvent):
                self._count(1, False)  # the document node
            elif isinstance(event, DocumentEndEvent | StreamEndEvent):
                break  # goyaml.v2 decodes the first document only
            elif isinstance(event, MappingEndEvent | SequenceEndEvent):
                frame = self.stack.pop()
                if frame.anchor is not None:
                    self.anchors[frame.anchor] = (frame.value, frame.decodes)
                self._add(frame.value, frame.decodes, isinstance(frame.value, dict), frame.line)
        return self.root

    def _on_scalar(self, event: ScalarEvent) -> None:
        top = self.stack[-1] if self.stack else None
        expects_key = top is not None and isinstance(top.value, dict) and top.key is None and not top.merge
        if expects_key and _is_merge(event):
            assert top is not None
            top.merge = True  # the ``<<`` key itself is never decoded
            return
        self._count(1, False)
        value = _scalar(event)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        self._add(value, 1, False, event.start_mark.line + 1)

    def _on_start(self, event: MappingStartEvent | SequenceStartEvent) -> None:
        top = self.stack[-1] if self.stack else None
        mapping = isinstance(event, MappingStartEvent)
        merge_list = False
        if top is not None and isinstance(top.value, dict):
            if top.merge:
                merge_list = not mapping
            elif top.key is None:
                raise YAMLDecodeError("yaml: invalid map key: a " + ("map" if mapping else "sequence"))
        elif top is not None and top.merge_list and not mapping:
            raise _merge_error()
        if len(self.stack) >= MAX_DEPTH:
            where = f"line {event.start_mark.line + 1}: " if event.start_mark.line else ""
            raise YAMLDecodeError(f"yaml: {where}exceeded max depth of {MAX_DEPTH}")
        if not merge_list:
            self._count(1, False)
        if event.anchor is not None:
            self.anchors[event.anchor] = _OPEN
        self.stack.append(_Frame({} if mapping else [], event.anchor, merge_list, event.start_mark.line + 1))

    def _on_alias(self, event: AliasEvent) -> None:
        name = event.anchor
        target = self.anchors.get(name)
        if target is None:
            raise YAMLDecodeError(f"yaml: unknown anchor '{name}' referenced")
        if target is _OPEN:
            raise YAMLDecodeError(f"yaml: anchor '{name}' value contains itself")
        value, decodes = target
        self._count(1, False)  # the alias node
        self._count(decodes, True)  # its target, decoded again
        if isinstance(value, dict | list):
            value = copy_value(value)
        self._add(value, 1 + decodes, isinstance(value, dict), event.start_mark.line + 1)

    def _add(self, value: Any, decodes: int, is_mapping: bool, line: int) -> None:
        """Put a finished value (starting on ``line``) where it belongs: the root, a list, a key, a
        value or a merge."""
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        top.decodes += decodes
        if isinstance(top.value, list):
            if top.merge_list and not is_mapping:
                raise _merge_error()
            top.value.append(value)
            return
        if top.merge:
            top.merge = False
            if is_mapping:
                top.value.update(value)
            elif isinstance(value, list) and all(isinstance(m, dict) for m in value):
                for m in reversed(value):  # earlier mappings take precedence
                    top.value.update(m)
            else:
                raise _merge_error()
        elif top.key is None:
            if isinstance(value, dict | list):  # an alias to a collection used as a key
                raise YAMLDecodeError("yaml: invalid map key")
            top.key = _key_text(value)
            top.key_value = value
        else:
            if self.duplicates is not None and top.key in top.value:
                self.duplicates.append(f"line {line}: key {_go_value(top.key_value)} already set in map")
            top.value[top.key] = value
            top.key = None


def _events(raw: bytes, loader: type) -> Iterator[Event]:
    parser = loader(raw)
    try:
        while parser.check_event():
            yield parser.get_event()
    finally:
        parser.dispose()


def _go_text(e: yaml.YAMLError) -> str:
    """A PyYAML parse error as goyaml.v2 words its own (``yaml: line N: problem``)."""
    if isinstance(e, yaml.MarkedYAMLError) and e.problem:
        mark = e.problem_mark or e.context_mark
        return f"yaml: line {mark.line + 1}: {e.problem}" if mark is not None else f"yaml: {e.problem}"
    return f"yaml: {e}"


_libyaml_nesting: bool | None = None  # whether libyaml's limit is raised (None: not tried yet)


def _allow_libyaml_nesting() -> bool:
    """Raise libyaml's nesting limit to :data:`MAX_DEPTH` (once); False where it cannot be set."""
    global _libyaml_nesting
    if _libyaml_nesting is None:
        try:
            from yaml import _yaml  # the C extension, with libyaml linked in or loaded

            lib = ctypes.CDLL(_yaml.__file__)
            # One more than Go: libyaml counts a block level more than goyaml.v2 does; the builder
            # enforces the limit exactly.
            lib.yaml_set_max_nest_level(ctypes.c_int(MAX_DEPTH + 1))
            _libyaml_nesting = True
        except (ImportError, OSError, AttributeError):
            log.warning("libyaml's nesting limit cannot be raised: deep YAML is parsed in Python")
            _libyaml_nesting = False
    return _libyaml_nesting


def decode(raw: bytes, duplicates: list[str] | None = None) -> Any:
    """The JSON value of a YAML document (None for an empty one). Raises :class:`YAMLDecodeError`.
    Keys a mapping repeats (the last value wins) are appended to ``duplicates`` when it is given."""
    deep_in_c = _allow_libyaml_nesting()
    try:
        return _Builder(duplicates).build(_events(raw, yaml.CSafeLoader))
    except yaml.YAMLError as e:
        if getattr(e, "problem", None) != "exceeded maximum nesting depth":
            raise YAMLDecodeError(_go_text(e)) from None
        if deep_in_c:  # libyaml counts block and flow levels apart: each is beyond Go's limit
            line = e.problem_mark.line + 1 if e.problem_mark is not None else 0
            where = f"line {line}: " if line > 1 else ""
            raise YAMLDecodeError(f"yaml: {where}exceeded max depth of {MAX_DEPTH}") from None
    # libyaml's default limit (1,000 levels) is below Go's: read it again with the Python parser.
    try:
        if duplicates is not None:
            del duplicates[:]  # found again by the second reading
        return _Builder(duplicates).build(_events(raw, yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise YAMLDecodeError(_go_text(e)) from None


async def decode_async(raw: bytes) -> Any:
    """:func:`decode` on the loop's executor, so a large body never stalls the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, decode, raw)
