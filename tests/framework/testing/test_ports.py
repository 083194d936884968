"""free_port: bindable, new each time, and never a port the kernel would pick for a bind to port 0."""

import socket
from pathlib import Path

import pytest

from framework.testing import free_offset, free_port


def ephemeral_range() -> range:
    """The kernel's ephemeral ports; empty where they leave too few others to pick from (free_port then
    only promises ports new to the process)."""
    low, high = (int(p) for p in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    if max(low - 10000, 65535 - high) < 1000:
        return range(0)
    return range(low, high + 1)


def test_ports_are_distinct_bindable_and_outside_the_ephemeral_range():
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    ephemeral = ephemeral_range()
    assert not [p for p in ports if p in ephemeral or p < 1024]
    for port in ports[:5]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
            s.listen()


def test_a_bind_to_port_zero_never_returns_a_port_handed_out():
    if not ephemeral_range():
        pytest.skip("the ephemeral range leaves no ports outside it on this machine")
    given = {free_port() for _ in range(20)}
    held = []
    try:
        for _ in range(200):  # the kernel picks from the ephemeral range only
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", 0))
            assert s.getsockname()[1] not in given
    finally:
        for s in held:
            s.close()


def test_an_offset_makes_every_base_a_free_port_outside_the_ephemeral_range():
    bases = (6443, 2718, 2719, 2721)
    offsets = [free_offset(bases) for _ in range(5)]
    ephemeral = ephemeral_range()
    ports = [base + offset for offset in offsets for base in bases]
    assert len(set(ports)) == len(ports)
    assert not [p for p in ports if p in ephemeral or p < 1024]
    held = []
    try:
        for base in bases:
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", base + offsets[0]))
    finally:
        for s in held:
            s.close()
