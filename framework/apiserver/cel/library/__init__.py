"""The Kubernetes CEL libraries (k8s.io/apiserver/pkg/cel/library), declared for the cel-cpp
checker and implemented in Python. cel-cpp brings the CEL standard library, the strings extension
(charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim, join,
quote, format), optional types and ``cel.bind``; this package adds what Kubernetes adds on top:
lists, sets, regex, urls, quantity, IP/CIDR, semver and named formats.

Library objects (a Quantity, a URL, ...) are protobuf messages of a small descriptor pool so that
the checker knows their types (``type(quantity('1'))`` is ``kubernetes.Quantity``)."""

from __future__ import annotations

import functools
from typing import Any

from framework.apiserver.cel.library import lists, regex, sets


@functools.cache
def descriptor_pool() -> Any:
    from framework.apiserver.cel.library import objects

    return objects.pool()


@functools.cache
def function_decls() -> list[Any]:
    decls: list[Any] = []
    for lib in (lists, sets, regex):
        decls.extend(lib.declarations())
    for name in ("quantity", "urls", "ip", "semver", "format"):
        mod = _optional_library(name)
        if mod is not None:
            decls.extend(mod.declarations())
    return decls


def _optional_library(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(f"framework.apiserver.cel.library.{name}")
    except ModuleNotFoundError:
        return None


def to_python(value: Any) -> Any:
    """A result as plain Python (cel-cpp hands bytes as bytearray)."""
    if isinstance(value, bytearray):
        return bytes(value)
    return value
