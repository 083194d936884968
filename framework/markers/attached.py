"""Markers kept on the object they decorate (a class or a function), as controller-gen keeps the
``+kubebuilder`` comments of one type or function: the decorators stack, in source order, and a subclass
does not inherit its base's markers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["attach", "attached"]

T = TypeVar("T")


def attach(attribute: str, marker: Any, decorator: str) -> Callable[[T], T]:
    """A decorator adding ``marker`` to the target's own ``attribute`` (before those below it, so the
    tuple reads in source order); ``decorator`` names it in the TypeError for what it cannot decorate."""

    def mark(target: T) -> T:
        own = vars(target).get(attribute) if hasattr(target, "__dict__") else None
        try:
            setattr(target, attribute, (marker, *(own or ())))
        except (AttributeError, TypeError):
            raise TypeError(
                f"{decorator}() decorates a class or a function, not {type(target).__name__}"
            ) from None
        return target

    return mark


def attached(target: Any, attribute: str) -> tuple[Any, ...]:
    """The markers declared on ``target`` itself (in source order), not those of its base classes."""
    if not hasattr(target, "__dict__"):
        return ()
    return tuple(vars(target).get(attribute) or ())
