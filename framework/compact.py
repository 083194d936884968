"""Give back the tables of emptied dicts and sets.

CPython never shrinks a dict or a set as entries are removed, so one burst (an informer's initial list
of a million Events passing through the DeltaFIFO and the work queue) would pin its peak-size hash
table for the life of the process: tens of bytes per item of the burst, in memory nobody uses. Queues
swap such a container for a fresh one once it is empty again.
"""

from __future__ import annotations

import sys
from collections.abc import Sized

__all__ = ["oversized"]

# Below this a table is not worth reallocating (a dict of ~2,000 entries).
SHRINK_BYTES = 64 * 1024


def oversized(container: Sized) -> bool:
    """True when ``container`` is empty but still holds a table larger than ``SHRINK_BYTES``."""
    return not container and sys.getsizeof(container) > SHRINK_BYTES
