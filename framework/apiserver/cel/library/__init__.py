"""The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library), declared for the cel-cpp
checker and implemented in Python. cel-cpp brings the CEL standard library, the strings extension
(charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join,
quote, format), optional types and ``cel.bind``; this package adds what Kubernetes adds on top:
lists, sets, regex, urls, quantity, IP/CIDR, semver, named formats and the authorizer of admission.

Library objects (a Quantity, a URL, ...) are protobuf messages of a small descriptor pool so that
the checker knows their types (``type(quantity('1'))`` is ``kubernetes.Quantity``)."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library.common import Overload


@functools.cache
def descriptor_pool() -> Any:
    from framework.apiserver.cel.library import objects

    return objects.pool()


_LIBRARIES = ("strings", "lists", "sets", "regex", "quantity", "urls", "ip", "semver", "format", "authz")


@functools.cache
def function_decls() -> list[Any]:
    """The declarations of every library's functions, one per name."""
    overloads: dict[str, list[Overload]] = {}
    for name in _LIBRARIES:
        mod = importlib.import_module(f"framework.apiserver.cel.library.{name}")
        for fname, ovs in mod.declarations():
            overloads.setdefault(fname, []).extend(ovs)
    return [cel.FunctionDecl(name, _runtime_overloads(ovs)) for name, ovs in overloads.items()]


def _runtime_overloads(ovs: list[Overload]) -> list[Any]:
    """cel-cpp's runtime tells library objects apart only as messages: overloads that differ only
    in which message they take (Quantity's and Semver's ``compareTo``) share one implementation,
    which picks by the receiver's message type."""
    groups: dict[tuple[Any, ...], list[Overload]] = {}
    for o in ovs:
        key = (o.member, *("message" if p.is_message() else p.name() for p in o.params))
        groups.setdefault(key, []).append(o)
    out = []
    for group in groups.values():
        impl = group[0].impl if len(group) == 1 else _dispatcher(group)
        out.append(
            cel.Overload(group[0].oid, group[0].result, group[0].params, is_member=group[0].member, impl=impl)
        )
        out.extend(cel.Overload(o.oid, o.result, o.params, is_member=o.member) for o in group[1:])
    return out


def _dispatcher(group: list[Overload]) -> Any:
    by_type = {}
    for o in group:
        first_message = next(p for p in o.params if p.is_message())
        by_type[first_message.name()] = o.impl

    def dispatch(*args: Any) -> Any:
        receiver = next(a for a in args if hasattr(a, "DESCRIPTOR"))
        return by_type[receiver.DESCRIPTOR.full_name](*args)

    return dispatch


def to_python(result: Any) -> Any:
    """A result as plain Python: nested lists and maps as ``list``/``dict``, bytes as ``bytes``."""
    try:
        value = result.plain_value()
    except TypeError:
        return None  # an optional: cel-expr-python has no Python form for it
    return bytes(value) if isinstance(value, bytearray) else value
