"""Values a reconciler receives and returns (controller-runtime's ``reconcile`` package)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Request:
    """The object to reconcile: its name and, for namespaced kinds, its namespace."""

    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Result:
    """What to do after a successful reconcile: nothing, requeue with backoff, or requeue after a delay."""

    requeue: bool = False
    requeue_after: float | None = None


class TerminalError(Exception):
    """A reconcile error that retrying cannot fix: logged and counted, never requeued."""


class Reconciler(Protocol):
    def reconcile(self, request: Request) -> Result | None: ...
