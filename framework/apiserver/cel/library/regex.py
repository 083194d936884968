"""k8s.io/apiserver/pkg/cel/library/regex.go: ``find`` and ``findAll`` on strings.

Patterns are RE2 in Kubernetes; Python's ``re`` runs them here (the common subset agrees)."""

from __future__ import annotations

import functools
import re
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library.common import function, overload

_S = cel.Type.STRING


@functools.lru_cache(maxsize=256)
def compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(f"error parsing regexp: {e}") from None


def find(s: str, pattern: str) -> str:
    m = compile_regex(pattern).search(s)
    return m.group(0) if m else ""


def find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    out = [m.group(0) for m in compile_regex(pattern).finditer(s)]
    return out if limit < 0 else out[:limit]


def declarations() -> list[tuple[str, list[Any]]]:
    return [
        function("find", overload("string_find_string", _S, [_S, _S], find, member=True)),
        function(
            "findAll",
            overload("string_find_all_string", cel.Type.List(_S), [_S, _S], find_all, member=True),
            overload(
                "string_find_all_string_int", cel.Type.List(_S), [_S, _S, cel.Type.INT], find_all, member=True
            ),
        ),
    ]
