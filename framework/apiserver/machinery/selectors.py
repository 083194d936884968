"""Label and field selectors of list and watch requests (spec 14-1, 14-2).

Label selectors are :mod:`framework.meta.labels`' (``pkg/labels``), field selectors
:mod:`framework.meta.fields`' (``pkg/fields``). Parse errors are ``400 BadRequest``.
"""

from __future__ import annotations

from collections.abc import Collection

from framework.apiserver.machinery.errors import bad_request
from framework.meta import fields, labels
from framework.meta.labels import Selector

# --- label selectors: framework.meta.labels, answered as 400 --------------------------------------


def parse_label_selector(text: str | None) -> Selector:
    """Parse a ``labelSelector`` query parameter; syntax or validation errors are 400 BadRequest."""
    try:
        return labels.parse(text)
    except ValueError as e:
        raise bad_request(str(e)) from None


# --- field selectors: framework.meta.fields, answered as 400 --------------------------------------

FieldSelector = fields.Selector


def parse_field_selector(text: str | None, allowed: Collection[str], own_rules: bool = True) -> FieldSelector:
    """Parse a ``fieldSelector`` query parameter; terms are sorted, as upstream does.

    Syntax errors and fields not in ``allowed`` are 400 BadRequest. ``own_rules``: the kind has its
    own field-label conversion (``field label not supported: F``); kinds without one get apimachinery's
    ``DefaultMetaV1FieldSelectorConversion`` message.
    """
    try:
        selector = fields.parse(text)
    except ValueError as e:
        raise bad_request(str(e)) from None
    for field, _, _ in selector.requirements:
        if field not in allowed:
            if own_rules:
                raise bad_request(f"field label not supported: {field}")
            raise bad_request(
                f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"'
            )
    return selector


def single_name(selector: FieldSelector) -> str | None:
    """The name a selector pins with ``metadata.name=X`` (``RequiresExactMatch``), if any."""
    return selector.requires_exact_match("metadata.name")
