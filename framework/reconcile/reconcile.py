"""``Request``, ``Result``, ``TerminalError``, the ``Reconciler`` protocol and ``Func``."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple, Protocol, runtime_checkable


class Request(NamedTuple):
    """The object to reconcile: its name and, for namespaced kinds, its namespace.

    An immutable value, as controller-runtime's ``reconcile.Request``. A named tuple: the work queue
    hashes each request about a dozen times per reconcile (its sets and timing maps), and a tuple's
    hash and equality run in C where a dataclass's run a Python method each time.
    """

    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True, init=False)
class Result:
    """What to do after a successful reconcile: nothing, requeue with backoff, or requeue after a delay.

    ``requeue_after`` takes seconds or a ``timedelta`` and is kept as seconds (``float``); zero or less
    means "no delayed requeue", as controller-runtime's ``RequeueAfter``. ``requeue=True`` (deprecated
    in controller-runtime too) requeues with the rate limiter's backoff.
    """

    requeue: bool
    requeue_after: float | None

    def __init__(self, requeue: bool = False, requeue_after: float | timedelta | None = None) -> None:
        if not isinstance(requeue, bool):
            raise TypeError(f"Result.requeue must be a bool, not {type(requeue).__name__}")
        seconds: float | None
        if requeue_after is None:
            seconds = None
        elif isinstance(requeue_after, timedelta):
            seconds = requeue_after.total_seconds()
        elif isinstance(requeue_after, int | float) and not isinstance(requeue_after, bool):
            seconds = float(requeue_after)
        else:
            raise TypeError(
                "Result.requeue_after must be seconds (int or float) or a timedelta, "
                f"not {type(requeue_after).__name__}"
            )
        if seconds is not None and not math.isfinite(seconds):
            raise ValueError(f"Result.requeue_after must be finite, not {seconds}")
        object.__setattr__(self, "requeue", requeue)
        object.__setattr__(self, "requeue_after", seconds)


class TerminalError(Exception):
    """A reconcile error that retrying cannot fix: logged and counted, never requeued."""


@runtime_checkable
class Reconciler(Protocol):
    """Anything with ``reconcile(request) -> Result | None``."""

    def reconcile(self, request: Request) -> Result | None: ...


def is_async_callable(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine or async generator instead of running it."""
    for f in (fn, getattr(fn, "__call__", None)):  # noqa: B004 -- an object's async __call__ too
        if f is not None and (inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f)):
            return True
    return False


def close_if_coroutine(value: Any) -> None:
    """Close ``value`` if it is a coroutine (an async function called from a sync wrapper), so the
    "coroutine was never awaited" warning does not pile on the error that reports it."""
    if inspect.iscoroutine(value):
        value.close()


def check_sync_callable(fn: Any, what: str) -> None:
    """Raise ``TypeError`` unless ``fn`` is a plain (not ``async``) callable; ``what`` names it.

    Controller machinery runs on threads: an ``async def`` would only return an un-awaited coroutine.
    """
    if not callable(fn):
        raise TypeError(f"{what} must be callable, got {type(fn).__name__}: {fn!r}")
    if is_async_callable(fn):
        raise TypeError(
            f"{what} {callable_name(fn)} is async; controllers run on threads, so it must be a plain "
            "function (def, not async def)"
        )


def callable_name(fn: Any) -> str:
    """A function's qualified name, or its type's for other callables (for messages)."""
    return getattr(fn, "__qualname__", None) or type(fn).__qualname__


class Func:
    """A plain function ``fn(request) -> Result | None`` as a :class:`Reconciler` (``reconcile.Func``)."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[Request], Result | None]) -> None:
        check_sync_callable(fn, "reconcile function")
        self.fn = fn

    def reconcile(self, request: Request) -> Result | None:
        return self.fn(request)

    def __repr__(self) -> str:
        return f"Func({callable_name(self.fn)})"


def as_reconciler(obj: Any) -> Reconciler:
    """``obj`` if it has a plain ``reconcile`` method, a plain function wrapped in :class:`Func`;
    ``TypeError`` for anything that can never reconcile (async, not callable)."""
    method = getattr(obj, "reconcile", None)
    if method is not None:
        check_sync_callable(method, f"{type(obj).__qualname__}.reconcile")
        return obj
    if callable(obj):
        return Func(obj)
    raise TypeError(
        f"a reconciler must have a reconcile(request) method or be a function, got {type(obj).__name__}"
    )
