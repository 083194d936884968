"""``free_port``: a loopback port for a server that something else binds later.

A test that writes a port into a config, or passes it to a subprocess, cannot keep the port bound
until the server takes it. The usual trick (bind to port 0, read the port, close) races: the kernel
hands out ports from the ephemeral range (``net.ipv4.ip_local_port_range``) to every later bind to
port 0 *and* to every outgoing connection, so a port just released often comes back at once (CI
failed this way: ``gcm --embedded`` bound its API server to port 0 and got the port the test had
just picked for the webhook server).

``free_port`` therefore picks ports *outside* the ephemeral range, which the kernel never hands out
on its own, never hands the same port out twice in a process, and checks that the port can be bound
now. Another process choosing the same port in the moment before the server binds it is still
possible but rare (a random pick from thousands of ports).
"""

from __future__ import annotations

import random
import socket
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["free_offset", "free_port"]

_LOWEST = 10000  # well above the ports system services and developer tools like to take
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_given: set[int] = set()
_lock = threading.Lock()


def _candidates() -> range:
    """The non-ephemeral unprivileged ports: below the ephemeral range, or above it if that is small."""
    try:
        low, high = (int(p) for p in _EPHEMERAL.read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999  # Linux's default; other systems have no file to read
    below, above = range(_LOWEST, low), range(high + 1, 65536)
    best = below if len(below) >= len(above) else above
    # An ephemeral range that spans (nearly) everything leaves nothing outside it: then the ports are
    # at least never handed out twice by this process.
    return best if len(best) >= 1000 else range(_LOWEST, 65536)


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:  # in use (or in TIME_WAIT)
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port on ``host`` that is free now, outside the kernel's ephemeral range and new to this process."""
    candidates = _candidates()
    with _lock:
        for _ in range(1000):
            port = random.choice(candidates)
            if port not in _given and _bindable(host, port):
                _given.add(port)
                return port
    raise RuntimeError(f"no free port on {host} in {candidates.start}-{candidates.stop - 1}")


def free_offset(bases: Iterable[int], host: str = "127.0.0.1") -> int:
    """An offset that makes each of ``bases`` plus it a port as :func:`free_port` would pick (for a
    program that moves all its default ports by one offset, like ``gcm --embedded-port-offset``).

    Random, not the first that fits: two test runs side by side would otherwise both pick it.
    """
    bases = sorted(set(bases))
    candidates = _candidates()
    offsets = range(candidates.start - bases[0], candidates.stop - bases[-1])
    with _lock:
        for _ in range(1000):
            offset = random.choice(offsets)
            ports = {base + offset for base in bases}
            if not ports & _given and all(_bindable(host, port) for port in ports):
                _given.update(ports)
                return offset
    raise RuntimeError(f"no offset on {host} that makes {bases} free ports")
