"""What a write is asked to do (:class:`WriteOptions`) and what an operation answers (:class:`Result`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.encoding import envelope
from framework.apiserver.endpoints.negotiation import YAML_DUPLICATES
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
    # A patch's result, when the write is a JSON, merge or strategic merge patch under Strict: its strict
    # decoding errors are the patch handler's 422 quoting it (k8s.io/apiserver handlers/patch.go).
    patched: Any = None
    # What a patch under Strict found in itself (repeated keys): reported with the first strict decoding
    # errors of its result, or alone by :meth:`strict_decoding` called with none, as upstream joins them.
    pending_strict: list[str] = field(default_factory=list)
    # Keys an apply body repeats, in goyaml.v2's words (``line 10: key "a" already set in map``): the
    # apply patcher's warnings, or under Strict its 400 once the apply itself has succeeded.
    apply_duplicates: list[str] = field(default_factory=list)
    # Warnings the in-process admission plugins add (a ValidatingAdmissionPolicy's ``Warn``); the
    # operation moves them into its answer.
    admission_warnings: list[str] = field(default_factory=list)

    def strict_decoding(self, texts: list[str], warnings: list[str] | None = None) -> None:
        """What the body's strict decoder found (``unknown field "x"``, ``duplicate field "x"``):
        under Strict a 400 ``strict decoding error: ...``, or for a patch (:attr:`patched`) the patch
        handler's 422 ``patch: Invalid value: "...": strict decoding error: ...`` naming what the patch
        itself repeats first (:attr:`pending_strict`); under Warn, warnings (``warnings``, else
        :attr:`decode_warnings`); nothing under Ignore (4-5)."""
        if self.field_validation == "Strict" and self.pending_strict:
            texts, self.pending_strict = [*self.pending_strict, *texts], []
        if not texts or self.field_validation == "Ignore":
            return
        if self.field_validation == "Strict":
            text = "strict decoding error: " + ", ".join(texts)
            if self.patched is not None:
                raise envelope.patch_invalid(self.patched, text)
            raise errors.bad_request(text)
        out = self.decode_warnings if warnings is None else warnings
        for t in texts:
            # goyaml.v2's one error for a YAML body's repeated keys warns once per key, as the handlers'
            # parseYAMLWarnings splits it
            out.extend(
                t.removeprefix(YAML_DUPLICATES).split("\n  ") if t.startswith(YAML_DUPLICATES) else [t]
            )


@dataclass
class Result:
    """An operation's answer: HTTP status code, body and warnings."""

    code: int
    body: dict
    warnings: list[str] = field(default_factory=list)
