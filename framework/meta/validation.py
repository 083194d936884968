"""Kubernetes name and label rules: ``k8s.io/apimachinery/pkg/util/validation`` (and
``pkg/api/validation/path``), with upstream's exact message texts.

Each ``is_*`` function returns the list of problems with a value, empty when it is valid, worded
exactly as kube-apiserver words them (double spaces in :func:`regex_error` included). Extension code
such as admission webhooks can therefore produce errors indistinguishable from the API server's, and
the test API server (:mod:`framework.apiserver`) uses the same functions.

Lengths are counted in characters where Go counts UTF-8 bytes. The patterns accept only ASCII, so a
value is valid here exactly when it is valid upstream; only a long non-ASCII value can miss
upstream's extra "must be no more than N characters".
"""

from __future__ import annotations

import re

__all__ = [
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_path_segment_name",
    "is_path_segment_prefix",
    "is_qualified_name",
    "is_valid_label_value",
    "is_valid_port_name",
    "max_len_error",
    "regex_error",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_CONFIG_MAP_KEY_FMT = "[-._a-zA-Z0-9]+"

_DNS1123_LABEL_RE = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = re.compile(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_CONFIG_MAP_KEY_RE = re.compile(_CONFIG_MAP_KEY_FMT)


def _full(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.fullmatch(value) is not None


def max_len_error(length: int) -> str:
    """``validation.MaxLenError``."""
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError`` (the double spaces between examples are upstream's)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples)
    return text + f"regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    """``IsDNS1123Label``: ≤63 characters of ``[a-z0-9-]``, alphanumeric at both ends."""
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _full(_DNS1123_LABEL_RE, value):
        if _full(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(
                regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def is_dns1123_subdomain(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: ≤253 characters, dot-separated DNS-1123 labels."""
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _full(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(
            regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def is_dns1035_label(value: str) -> list[str]:
    """``IsDNS1035Label``: like a DNS-1123 label but starting with a letter."""
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _full(_DNS1035_LABEL_RE, value):
        errs.append(
            regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def is_path_segment_name(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``: not ``.``/``..`` and without ``/`` or ``%``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return is_path_segment_prefix(value)


def is_path_segment_prefix(value: str) -> list[str]:
    """``path.IsValidPathSegmentPrefix``: the generateName form of the path-segment rule."""
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


_QUALIFIED_NAME_ERROR = regex_error(
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character",
    _QUALIFIED_NAME_FMT,
    "MyName",
    "my.name",
    "123-abc",
)


def is_qualified_name(value: str) -> list[str]:
    """``IsQualifiedName`` (label and annotation keys): an optional DNS-subdomain prefix and ``/``,
    then a ≤63-character name."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return [
            "a qualified name "
            + _QUALIFIED_NAME_ERROR
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _full(_QUALIFIED_NAME_RE, name):
        errs.append("name part " + _QUALIFIED_NAME_ERROR)
    return errs


def is_valid_label_value(value: str) -> list[str]:
    """``IsValidLabelValue``: empty, or ≤63 characters of ``[A-Za-z0-9._-]`` alphanumeric at both ends."""
    errs = []
    if len(value) > 63:
        errs.append(max_len_error(63))
    if not _full(_LABEL_VALUE_RE, value):
        errs.append(
            regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def is_config_map_key(value: str) -> list[str]:
    """``IsConfigMapKey``: ConfigMap and Secret data keys."""
    errs = []
    if len(value) > 253:
        errs.append(max_len_error(253))
    if not _full(_CONFIG_MAP_KEY_RE, value):
        errs.append(
            regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                _CONFIG_MAP_KEY_FMT,
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if value == ".":
        errs.append("must not be '.'")
    elif value == "..":
        errs.append("must not be '..'")
    elif value.startswith(".."):
        errs.append("must not start with '..'")
    return errs


_PORT_NAME_CHARS = re.compile(r"[-a-z0-9]+")
_PORT_NAME_LETTER = re.compile(r".*[a-z].*")


def is_valid_port_name(value: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME, at most 15 characters of ``[-a-z0-9]`` with a letter,
    no double or edge hyphens."""
    errs = []
    if len(value) > 15:
        errs.append(max_len_error(15))
    if not _full(_PORT_NAME_CHARS, value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if not _full(_PORT_NAME_LETTER, value):
        errs.append("must contain at least one letter (a-z)")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs
