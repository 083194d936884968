"""k8s.io/apiserver/pkg/cel/library/format.go: named string formats, ``format.<name>()``,
``format.named(name)`` (an optional Format) and ``<Format>.validate(string)`` (optional.none when
the string is valid, else the list of problems).

cel-expr-python cannot return an optional from a Python function, so both are declared returning
the plain value and ``rewrite`` wraps their calls in ``optional.ofNonZeroValue(...)`` before
compiling (an empty list and an unknown format's empty message are the zero values)."""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from collections.abc import Callable
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload
from framework.apiserver.cel.library.urls import is_url, to_url
from framework.meta import validation as v

TYPE_NAME = "kubernetes.NamedFormat"
FORMAT = cel.Type(TYPE_NAME)


def _mask_trailing_dash(s: str) -> str:
    return s[:-1] + "a" if len(s) > 1 and s.endswith("-") else s


def _name_is(check: Callable[[str], list[str]], prefix: bool) -> Callable[[str], list[str]]:
    return lambda s: check(_mask_trailing_dash(s) if prefix else s)


def _uri(s: str) -> list[str]:
    if is_url(s):
        return []
    try:
        to_url(s)
    except ValueError as e:
        return [str(e).removeprefix("URL parse error during conversion from string: ")]
    return []


_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
_DATE_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _is_date(s: str) -> bool:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        return False
    try:
        datetime.date.fromisoformat(s)
    except ValueError:
        return False
    return True


def _is_datetime(s: str) -> bool:
    m = _DATE_TIME.match(s)
    if m is None:
        return False
    return _is_date(m.group(1)) and m.group(2) <= "23" and m.group(3) <= "59" and m.group(4) <= "60"


def _is_base64(s: str) -> bool:
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": _name_is(v.is_dns1123_label, False),
    "dns1123Subdomain": _name_is(v.is_dns1123_subdomain, False),
    "dns1035Label": _name_is(v.is_dns1035_label, False),
    "qualifiedName": v.is_qualified_name,
    "portName": v.is_valid_port_name,
    "dns1123LabelPrefix": _name_is(v.is_dns1123_label, True),
    "dns1123SubdomainPrefix": _name_is(v.is_dns1123_subdomain, True),
    "dns1035LabelPrefix": _name_is(v.is_dns1035_label, True),
    "labelValue": v.is_valid_label_value,
    "uri": _uri,
    "uuid": lambda s: [] if _UUID.match(s) else ["does not match the UUID format"],
    "byte": lambda s: [] if _is_base64(s) else ["invalid base64"],
    "date": lambda s: [] if _is_date(s) else ["invalid date"],
    "datetime": lambda s: [] if _is_datetime(s) else ["invalid datetime"],
}


def named(name: str) -> Any:
    return objects.make(TYPE_NAME, name if name in FORMATS else "")


def validate(fmt: Any, s: str) -> list[str]:
    return FORMATS[fmt.value](s)


def declarations() -> list[tuple[str, list[Any]]]:
    decls = [
        function("format.named", overload("format-named", FORMAT, [cel.Type.STRING], named)),
        function(
            "validate",
            overload(
                "format-validate",
                cel.Type.List(cel.Type.STRING),
                [FORMAT, cel.Type.STRING],
                validate,
                member=True,
            ),
        ),
    ]
    for name in FORMATS:
        decls.append(
            function(f"format.{name}", overload(f"format.{name}", FORMAT, [], lambda n=name: named(n)))
        )
    return decls


# --- the optional wrapping ------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""(?P<s>[rRbB]*(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<ws>\s+)|(?P<p>\.\?|[()\[\]{}.,])|(?P<o>.)",
    re.S,
)
_PAIRS = {")": "(", "]": "[", "}": "{"}


def _tokens(src: str) -> list[tuple[str, str, int]]:
    out = []
    for m in _TOKEN.finditer(src):
        kind = m.lastgroup or "o"
        if kind != "ws":
            out.append((kind, m.group(), m.start()))
    return out


def _match_back(toks: list[tuple[str, str, int]], j: int) -> int:
    close = toks[j][1]
    depth = 0
    while j >= 0:
        t = toks[j][1]
        if t == close:
            depth += 1
        elif t == _PAIRS[close]:
            depth -= 1
            if depth == 0:
                return j
        j -= 1
    return 0


def _match_forward(toks: list[tuple[str, str, int]], j: int) -> int:
    depth = 0
    while j < len(toks):
        t = toks[j][1]
        if t in "([{" and toks[j][0] == "p":
            depth += 1
        elif t in ")]}" and toks[j][0] == "p":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(toks) - 1


def _receiver_start(toks: list[tuple[str, str, int]], j: int) -> int:
    """The first token of the postfix expression that ends at token ``j``."""
    while j >= 0:
        t = toks[j][1]
        if t in (")", "]") and toks[j][0] == "p":
            k = _match_back(toks, j)
            if k > 0 and (toks[k - 1][0] == "id" or toks[k - 1][1] in (")", "]")):
                j = k - 1
                continue
            j = k
        if j > 0 and toks[j - 1][1] in (".", ".?"):
            j -= 2
            continue
        return j
    return 0


def rewrite(src: str) -> str:
    """``src`` with ``X.validate(...)`` and ``format.named(...)`` made optional-valued."""
    if "validate" not in src and "format.named" not in src:
        return src
    toks = _tokens(src)
    spans: list[tuple[int, int]] = []  # (start, end) character spans to wrap
    for i, (kind, text, _pos) in enumerate(toks):
        if kind != "id" or i + 1 >= len(toks) or toks[i + 1][1] != "(" or i == 0 or toks[i - 1][1] != ".":
            continue
        if text == "validate":
            start = toks[_receiver_start(toks, i - 2)][2]
        elif text == "named" and i >= 2 and toks[i - 2][1] == "format":
            start = toks[i - 2][2]
        else:
            continue
        end_tok = toks[_match_forward(toks, i + 1)]
        spans.append((start, end_tok[2] + 1))
    inserts: list[tuple[int, str]] = []
    for start, end in spans:
        inserts.append((start, "optional.ofNonZeroValue("))
        inserts.append((end, ")"))
    out = src
    # from the end backwards; at one position closings go before openings
    for pos, text in sorted(inserts, key=lambda p: (p[0], p[1] == ")"), reverse=True):
        out = out[:pos] + text + out[pos:]
    return out
