"""The tombstone of a deletion the watch missed (client-go's ``DeletedFinalStateUnknown``).

client-go declares it in ``tools/cache/delta_fifo.go``, beside the DeltaFIFO that makes it; here it
stands alone because both the DeltaFIFO and the key functions (``DeletionHandlingMetaNamespaceKeyFunc``
in ``tools/cache/controller.go`` keys a tombstone by its recorded key) need it, and the DeltaFIFO
already imports the key functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Tombstone for an object deleted while the watch was down (seen missing on relist).

    ``obj`` is the last state this process knew and may be stale, or ``None`` if unknown.
    """

    key: str
    obj: Any
