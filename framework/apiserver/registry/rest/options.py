"""What a write is asked to do (:class:`WriteOptions`) and what an operation answers (:class:`Result`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.machinery import errors


@dataclass
class WriteOptions:
    """How a write runs: dry run, field validation and manager, requester, admission webhooks."""

    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str | None = None
    user: Any = None  # the authenticated requester (auth.UserInfo); None for in-process controllers
    # The request's User-Agent ("" when absent); None for in-process writes. Names the field manager
    # of writes without ``fieldManager`` (9-3).
    user_agent: str | None = None
    force: bool = False  # apply only: take over conflicting fields (9-3 b)
    # Admission webhooks of this request (``admission.Review``): ``mutate`` runs before validation,
    # ``validate`` after it, just before persistence (21-1). None for in-process writes.
    admission: Any = None
    # Unknown fields the decoder dropped from this request's body, as warnings (fieldValidation=Warn).
    decode_warnings: list[str] = field(default_factory=list)
    # A custom resource's unknown metadata fields: reported with the fields its schema prunes, as the
    # CR handler's decoder reports them together (one strict decoding error, or warnings in order).
    unknown_metadata: list[str] = field(default_factory=list)
    # The subresource written ("status", "scale", ...; "" for the object itself), for admission.
    subresource: str = ""
    # Warnings the in-process admission plugins add (a ValidatingAdmissionPolicy's ``Warn``); the
    # operation moves them into its answer.
    admission_warnings: list[str] = field(default_factory=list)

    def strict_decoding(self, texts: list[str], warnings: list[str] | None = None) -> None:
        """What the body's strict decoder found (``unknown field "x"``, ``duplicate field "x"``):
        a 400 ``strict decoding error: ...`` under Strict; under Warn, warnings (``warnings``, else
        :attr:`decode_warnings`); nothing under Ignore (4-5)."""
        if not texts or self.field_validation == "Ignore":
            return
        if self.field_validation == "Strict":
            raise errors.bad_request("strict decoding error: " + ", ".join(texts))
        (self.decode_warnings if warnings is None else warnings).extend(texts)


@dataclass
class Result:
    """An operation's answer: HTTP status code, body and warnings."""

    code: int
    body: dict
    warnings: list[str] = field(default_factory=list)
