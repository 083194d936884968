"""k8s.io/apiserver/pkg/cel/library/urls.go: ``url(string)``, ``isURL``, and on a URL
``getScheme``, ``getHost``, ``getHostname``, ``getPort``, ``getEscapedPath``, ``getQuery``.

A URL is what Go's ``url.ParseRequestURI`` accepts: an absolute URI or an absolute path."""

from __future__ import annotations

import functools
import re
import urllib.parse
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload

TYPE_NAME = "kubernetes.URL"
URL = cel.Type(TYPE_NAME)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


@functools.lru_cache(maxsize=512)
def _parse(text: str) -> urllib.parse.SplitResult:
    def bad(reason: str) -> ValueError:
        return ValueError(f'URL parse error during conversion from string: parse "{text}": {reason}')

    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise bad("net/url: invalid control character in URL")
    if text.startswith("/"):
        return urllib.parse.urlsplit(text.split("#", 1)[0])
    scheme, sep, _ = text.partition(":")
    if not sep or not _SCHEME.fullmatch(scheme):
        raise bad("invalid URI for request")
    parts = urllib.parse.urlsplit(text.split("#", 1)[0])
    if parts.netloc:
        host = parts.netloc.rpartition("@")[2]
        if " " in host:
            raise bad(f"invalid character {chr(34)} {chr(34)} in host name")
        port = host.rpartition("]")[2] if host.startswith("[") else host
        if ":" in port and not port.rpartition(":")[2].isdigit() and port.rpartition(":")[2] != "":
            raise bad(f'invalid port "{port[port.rindex(":") :]}" after host')
    return parts


def to_url(text: str) -> Any:
    _parse(text)
    return objects.make(TYPE_NAME, text)


def is_url(text: str) -> bool:
    try:
        _parse(text)
    except ValueError:
        return False
    return True


def _host(u: Any) -> str:
    return _parse(u.value).netloc.rpartition("@")[2]


def get_scheme(u: Any) -> str:
    return _parse(u.value).scheme


def get_host(u: Any) -> str:
    return _host(u)


def get_hostname(u: Any) -> str:
    host = _host(u)
    if host.startswith("["):
        return host[1 : host.index("]")] if "]" in host else host[1:]
    return host.partition(":")[0]


def get_port(u: Any) -> str:
    host = _host(u)
    rest = host[host.index("]") + 1 :] if host.startswith("[") and "]" in host else host
    return rest.rpartition(":")[2] if ":" in rest else ""


def get_escaped_path(u: Any) -> str:
    # Go's EscapedPath: the path as written when it is a valid encoding, else escaped
    return urllib.parse.quote(_parse(u.value).path, safe="/!$&'()*+,;=:@%-._~")


def get_query(u: Any) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(_parse(u.value).query, keep_blank_values=True)


def declarations() -> list[tuple[str, list[Any]]]:
    s = cel.Type.STRING
    m = True
    return [
        function("url", overload("string_to_url", URL, [s], to_url)),
        function("isURL", overload("is_url_string", cel.Type.BOOL, [s], is_url)),
        function("getScheme", overload("url_get_scheme", s, [URL], get_scheme, member=m)),
        function("getHost", overload("url_get_host", s, [URL], get_host, member=m)),
        function("getHostname", overload("url_get_hostname", s, [URL], get_hostname, member=m)),
        function("getPort", overload("url_get_port", s, [URL], get_port, member=m)),
        function("getEscapedPath", overload("url_get_escaped_path", s, [URL], get_escaped_path, member=m)),
        function(
            "getQuery",
            overload("url_get_query", cel.Type.Map(s, cel.Type.List(s)), [URL], get_query, member=m),
        ),
    ]
