"""How a reconciler writes an error into an Event note or a status message."""

from __future__ import annotations

__all__ = ["error_text"]


def error_text(e: BaseException) -> str:
    """An error as Go's ``err.Error()`` reads: an API error's message (a ``StatusError``'s
    ``ErrStatus.Message``), else the exception's text."""
    message = getattr(e, "message", None)
    return message if isinstance(message, str) and message else str(e)
