"""The kinds the server knows more about than the catalog's generic strategy: one module per kind."""

from __future__ import annotations

from ..resources import BUILTIN, ResourceType


def builtin_strategies() -> list[ResourceType]:
    """Every kind with its own strategy, in registration order (the generic catalog fills in the rest)."""
    return [*BUILTIN]
