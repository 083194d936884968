"""k8s.io/apiserver/pkg/cel/library/semver.go (version 1): ``semver(string)``,
``semver(string, normalize)``, ``isSemver``, and on a Semver ``major``, ``minor``, ``patch``,
``isGreaterThan``, ``isLessThan``, ``compareTo`` (Semantic Versioning 2.0.0 precedence)."""

from __future__ import annotations

import functools
import re
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload

TYPE_NAME = "kubernetes.Semver"
SEMVER = cel.Type(TYPE_NAME)

_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"({_NUM})\.({_NUM})\.({_NUM})(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)

Version = tuple[int, int, int, tuple[str, ...]]


def normalize(text: str) -> str:
    """Kubernetes' normalization: a leading ``v`` dropped, missing minor/patch added as 0,
    leading zeros removed."""
    text = text.removeprefix("v")
    core, sep, rest = text.partition("-") if "-" in text.partition("+")[0] else text.partition("+")
    parts = core.split(".")
    while len(parts) < 3:
        parts.append("0")
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    return ".".join(parts) + (sep + rest if sep else "")


@functools.lru_cache(maxsize=512)
def parse(text: str) -> Version:
    m = _SEMVER.fullmatch(text)
    if not m:
        raise ValueError("could not parse semver: " + text)
    pre = tuple(m.group(4).split(".")) if m.group(4) else ()
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), pre


def to_semver(text: str, norm: bool = False) -> Any:
    if norm:
        text = normalize(text)
    parse(text)
    return objects.make(TYPE_NAME, text)


def is_semver(text: str, norm: bool = False) -> bool:
    try:
        parse(normalize(text) if norm else text)
    except ValueError:
        return False
    return True


def _cmp_pre(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    if not a or not b:
        return (not a) - (not b)
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return 1 if int(x) > int(y) else -1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return 1 if x > y else -1
    return (len(a) > len(b)) - (len(a) < len(b))


def compare(a: Version, b: Version) -> int:
    if a[:3] != b[:3]:
        return 1 if a[:3] > b[:3] else -1
    return _cmp_pre(a[3], b[3])


def compare_to(a: Any, b: Any) -> int:
    return compare(parse(a.value), parse(b.value))


def declarations() -> list[tuple[str, list[Any]]]:
    s, b, i = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT
    m = True
    return [
        function(
            "semver",
            overload("string_to_semver", SEMVER, [s], to_semver),
            overload("string_bool_to_semver", SEMVER, [s, b], to_semver),
        ),
        function(
            "isSemver",
            overload("is_semver_string", b, [s], is_semver),
            overload("is_semver_string_bool", b, [s, b], is_semver),
        ),
        function("major", overload("semver_major", i, [SEMVER], lambda v: parse(v.value)[0], member=m)),
        function("minor", overload("semver_minor", i, [SEMVER], lambda v: parse(v.value)[1], member=m)),
        function("patch", overload("semver_patch", i, [SEMVER], lambda v: parse(v.value)[2], member=m)),
        function(
            "isGreaterThan",
            overload(
                "semver_is_greater_than", b, [SEMVER, SEMVER], lambda x, y: compare_to(x, y) == 1, member=m
            ),
        ),
        function(
            "isLessThan",
            overload(
                "semver_is_less_than", b, [SEMVER, SEMVER], lambda x, y: compare_to(x, y) == -1, member=m
            ),
        ),
        function("compareTo", overload("semver_compare_to", i, [SEMVER, SEMVER], compare_to, member=m)),
    ]
