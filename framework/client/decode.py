"""JSON decoding with the cyclic GC paused for big bodies, for objects nested as deep as the API server
accepts (``jsoncodec.loads``: orjson, and beyond its 1,024 levels the ``json`` module).

Decoding a large LIST allocates hundreds of thousands of dicts at once. With the GC running, those
allocations trigger many young collections and, once enough objects were promoted, full collections
that walk the whole heap — including an informer cache of every object already held. Pausing the GC
for the duration of one ``orjson.loads`` removes that cost and its variance (see
``bench/client_bench.py``); the objects are examined once when the GC is re-enabled.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from framework.meta import jsoncodec

__all__ = ["DEFAULT_GC_PAUSE_BYTES", "gc_paused", "loads"]

DEFAULT_GC_PAUSE_BYTES = 1 << 20
"""Bodies at least this large are decoded with the GC paused."""

_lock = threading.Lock()
_depth = 0
_disabled_by_us = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC inside the block; nestable and thread-safe (reference counted).

    The GC is re-enabled when the last concurrent block exits, and only if it was enabled before the
    first one started.
    """
    global _depth, _disabled_by_us
    with _lock:
        if _depth == 0:
            _disabled_by_us = gc.isenabled()
            if _disabled_by_us:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _disabled_by_us:
                _disabled_by_us = False
                gc.enable()


def loads(data: bytes, pause_gc_above: int | None = DEFAULT_GC_PAUSE_BYTES) -> Any:
    """``orjson.loads`` (deeper documents too: up to ``jsoncodec.WRAPPED_MAX_DEPTH`` levels), with the
    GC paused when ``len(data) >= pause_gc_above`` (``None``: never)."""
    if pause_gc_above is not None and len(data) >= pause_gc_above:
        with gc_paused():
            return jsoncodec.loads(data, jsoncodec.WRAPPED_MAX_DEPTH)
    return jsoncodec.loads(data, jsoncodec.WRAPPED_MAX_DEPTH)
