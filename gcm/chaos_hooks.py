"""Hooks a chaos run (``bench/chaos.py``) drives from outside the process; each is off unless its
environment variable is set, and nothing sets them outside chaos runs (``manifests/deploy`` does not).

``GCM_CLOCK_OFFSET_FILE=FILE``: the stale controller's clock (built by ``gcm.cmd`` with
:func:`stale_clock`, and handed to the controller) is the wall clock plus the seconds written in FILE
(a float; re-read when the file changes; missing or empty: 0). A chaos run jumps it forwards and
backwards to check that no Project is auto-deleted before its timestamp on that clock. Only ``now()``
moves: a wall-clock jump never moves the monotonic clock, so sleeps, timers and requeues are unaffected.

``GCM_THREADS_FILE=FILE``: on SIGUSR1 the names of the process's live threads are written to FILE (a
JSON list, replaced atomically), so a chaos run compares them at the end against the start (every
framework thread is named).
"""

from __future__ import annotations

import json
import os
import signal
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import structlog

from framework.clock import RealClock

__all__ = ["CLOCK_OFFSET_ENV", "THREADS_ENV", "OffsetClock", "install_threads_dump", "stale_clock"]

log = structlog.get_logger("gcm.chaos_hooks")

CLOCK_OFFSET_ENV = "GCM_CLOCK_OFFSET_FILE"
THREADS_ENV = "GCM_THREADS_FILE"


class OffsetClock(RealClock):
    """The system clocks, with ``now()`` moved by the seconds written in ``path``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file last read
        self._offset = 0.0

    def offset(self) -> float:
        """The offset in seconds (0 while the file is missing, empty or not a number)."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return 0.0
        with self._lock:
            if self._seen != (st.st_mtime_ns, st.st_size):
                text = self.path.read_text().strip()
                try:
                    offset = float(text) if text else 0.0
                except ValueError:
                    log.error("clock offset file is not a number of seconds", file=str(self.path), text=text)
                    offset = 0.0
                if offset != self._offset:
                    log.info("stale clock offset changed", file=str(self.path), offset_s=offset)
                self._seen, self._offset = (st.st_mtime_ns, st.st_size), offset
            return self._offset

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.offset())


def stale_clock() -> OffsetClock | None:
    """The stale controller's clock when ``GCM_CLOCK_OFFSET_FILE`` is set, else None (the manager's)."""
    path = os.environ.get(CLOCK_OFFSET_ENV)
    if not path:
        return None
    log.warning("stale controller clock follows an offset file (chaos runs only)", file=path)
    return OffsetClock(path)


def thread_names() -> list[str]:
    return sorted(t.name for t in threading.enumerate())


def install_threads_dump() -> bool:
    """With ``GCM_THREADS_FILE`` set, SIGUSR1 writes the live thread names there; True if installed.

    Call from the main thread (signal handlers are installed and run there)."""
    path = os.environ.get(THREADS_ENV)
    if not path:
        return False
    target = Path(path)

    def dump(*_: Any) -> None:
        tmp = target.with_name(target.name + ".tmp")
        try:
            tmp.write_text(json.dumps(thread_names()))
            tmp.replace(target)
        except OSError as e:  # the driver's directory is gone: say so, keep running
            log.error("cannot write thread names", file=path, error=str(e))

    signal.signal(signal.SIGUSR1, dump)
    log.warning("SIGUSR1 writes thread names (chaos runs only)", file=path)
    return True
