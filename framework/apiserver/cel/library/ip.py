"""k8s.io/apiserver/pkg/cel/library/ip.go and cidr.go: ``ip(string)``, ``isIP``, ``ip.isCanonical``,
on an IP ``family``, ``isUnspecified``, ``isLoopback``, ``isLinkLocalMulticast``,
``isLinkLocalUnicast``, ``isGlobalUnicast``; ``cidr(string)``, ``isCIDR``, on a CIDR ``containsIP``,
``containsCIDR``, ``ip``, ``masked``, ``prefixLength``. As Kubernetes, zones and IPv4-mapped IPv6
addresses are refused. ``string(ip)`` and ``string(cidr)`` need overloads of ``string``, which
cel-expr-python cannot add: a compile that fails only for want of them is retried with those calls
renamed to ``__kube_string`` (``string_conversions``)."""

from __future__ import annotations

import functools
import ipaddress
import re
from typing import Any

from cel_expr_python import cel

from framework.apiserver.cel.library import objects
from framework.apiserver.cel.library.common import function, overload

IP_NAME = "net.IP"
CIDR_NAME = "net.CIDR"
IP = cel.Type(IP_NAME)
CIDR = cel.Type(CIDR_NAME)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@functools.lru_cache(maxsize=512)
def parse_ip(text: str) -> Address:
    if "%" in text:
        raise ValueError(f"IP address with zone value is not allowed: {text}")
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        detail = f"ParseAddr({text!r}): unable to parse IP"
        raise ValueError(f"IP Address {text!r} parse error during conversion from string: {detail}") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {text}")
    return addr


@functools.lru_cache(maxsize=512)
def parse_cidr(text: str) -> tuple[Address, Network]:
    addr_text, sep, _ = text.partition("/")
    if "%" in addr_text:
        raise ValueError(f"CIDR with zone value is not allowed: {text}")
    try:
        iface = ipaddress.ip_interface(text) if sep else None
    except ValueError:
        iface = None
    if iface is None or not _plain_prefix(text):
        detail = f"netip.ParsePrefix({text!r}): invalid"
        raise ValueError(f"network address {text!r} parse error during conversion from string: {detail}")
    if isinstance(iface.ip, ipaddress.IPv6Address) and iface.ip.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address is not allowed: {text}")
    return iface.ip, iface.network


def _plain_prefix(text: str) -> bool:
    bits = text.rpartition("/")[2]
    return bits.isdigit() and (bits == "0" or not bits.startswith("0"))


def _ip(v: Any) -> Address:
    return parse_ip(v.value)


def to_ip(text: str) -> Any:
    return objects.make(IP_NAME, str(parse_ip(text)))


def is_ip(text: str) -> bool:
    try:
        parse_ip(text)
    except ValueError:
        return False
    return True


def is_canonical(text: str) -> bool:
    return str(parse_ip(text)) == text


def family(v: Any) -> int:
    return _ip(v).version


def is_unspecified(v: Any) -> bool:
    return _ip(v).is_unspecified


def is_loopback(v: Any) -> bool:
    return _ip(v).is_loopback


def is_link_local_multicast(v: Any) -> bool:
    a = _ip(v)
    if a.version == 4:
        return a in ipaddress.ip_network("224.0.0.0/24")
    return a.is_multicast and (int(a) >> 112) & 0xF == 2


def is_link_local_unicast(v: Any) -> bool:
    a = _ip(v)
    if a.version == 4:
        return a in ipaddress.ip_network("169.254.0.0/16")
    return a in ipaddress.ip_network("fe80::/10")


def is_global_unicast(v: Any) -> bool:
    """Go's netip.Addr.IsGlobalUnicast: not unspecified, loopback, multicast, link-local or the
    IPv4 broadcast address (private ranges count as global)."""
    a = _ip(v)
    if a.is_unspecified or a.is_loopback or a.is_multicast:
        return False
    if is_link_local_unicast(v):
        return False
    return not (a.version == 4 and str(a) == "255.255.255.255")


def to_cidr(text: str) -> Any:
    parse_cidr(text)
    return objects.make(CIDR_NAME, text)


def is_cidr(text: str) -> bool:
    try:
        parse_cidr(text)
    except ValueError:
        return False
    return True


def _cidr(v: Any) -> tuple[Address, Network]:
    return parse_cidr(v.value)


def contains_ip(c: Any, other: Any) -> bool:
    addr = parse_ip(other) if isinstance(other, str) else _ip(other)
    net = _cidr(c)[1]
    return addr.version == net.version and addr in net


def contains_cidr(c: Any, other: Any) -> bool:
    inner = parse_cidr(other)[1] if isinstance(other, str) else _cidr(other)[1]
    net = _cidr(c)[1]
    return inner.version == net.version and inner.subnet_of(net)  # type: ignore[arg-type]


def cidr_ip(c: Any) -> Any:
    return objects.make(IP_NAME, str(_cidr(c)[0]))


def masked(c: Any) -> Any:
    return objects.make(CIDR_NAME, str(_cidr(c)[1]))


def prefix_length(c: Any) -> int:
    return _cidr(c)[1].prefixlen


_STRING_OF = re.compile(
    r"^ERROR: <input>:(\d+):(\d+): found no matching overload for 'string' applied to "
    r"'\((net\.IP|net\.CIDR)\)'",
    re.M,
)
_ANY_ERROR = re.compile(r"^ERROR: ", re.M)


def string_conversions(source: str, report: str) -> str | None:
    """``source`` with the ``string(...)`` calls the checker refused on an IP or CIDR renamed, or
    None when the report has other errors too."""
    found = _STRING_OF.findall(report)
    if not found or len(found) != len(_ANY_ERROR.findall(report)):
        return None
    starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]
    out = source
    for line, column, _type in sorted(found, key=lambda f: (int(f[0]), int(f[1])), reverse=True):
        paren = starts[int(line) - 1] + int(column) - 1
        name_start = paren - len("string")
        if out[name_start:paren] != "string":
            return None
        out = out[:name_start] + "__kube_string" + out[paren:]
    return out


def declarations() -> list[tuple[str, list[Any]]]:
    s, b, i = cel.Type.STRING, cel.Type.BOOL, cel.Type.INT
    m = True
    return [
        function(
            "ip", overload("string_to_ip", IP, [s], to_ip), overload("cidr_ip", IP, [CIDR], cidr_ip, member=m)
        ),
        function("isIP", overload("is_ip", b, [s], is_ip)),
        function("ip.isCanonical", overload("ip_is_canonical", b, [s], is_canonical)),
        function("family", overload("ip_family", i, [IP], family, member=m)),
        function("isUnspecified", overload("ip_is_unspecified", b, [IP], is_unspecified, member=m)),
        function("isLoopback", overload("ip_is_loopback", b, [IP], is_loopback, member=m)),
        function(
            "isLinkLocalMulticast",
            overload("ip_is_link_local_multicast", b, [IP], is_link_local_multicast, member=m),
        ),
        function(
            "isLinkLocalUnicast",
            overload("ip_is_link_local_unicast", b, [IP], is_link_local_unicast, member=m),
        ),
        function("isGlobalUnicast", overload("ip_is_global_unicast", b, [IP], is_global_unicast, member=m)),
        function("cidr", overload("string_to_cidr", CIDR, [s], to_cidr)),
        function("isCIDR", overload("is_cidr", b, [s], is_cidr)),
        function(
            "containsIP",
            overload("cidr_contains_ip_string", b, [CIDR, s], contains_ip, member=m),
            overload("cidr_contains_ip_ip", b, [CIDR, IP], contains_ip, member=m),
        ),
        function(
            "containsCIDR",
            overload("cidr_contains_cidr_string", b, [CIDR, s], contains_cidr, member=m),
            overload("cidr_contains_cidr", b, [CIDR, CIDR], contains_cidr, member=m),
        ),
        function("masked", overload("cidr_masked", CIDR, [CIDR], masked, member=m)),
        function("prefixLength", overload("cidr_prefix_length", i, [CIDR], prefix_length, member=m)),
        function(
            "__kube_string",
            overload("ip_to_string", s, [IP], lambda v: v.value),
            overload("cidr_to_string", s, [CIDR], lambda v: v.value),
        ),
    ]
