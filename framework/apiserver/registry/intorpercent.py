"""``intstr.IntOrString`` values that are counts or percentages (``ValidatePositiveIntOrPercent``,
``IsValidPercent``), as PodDisruptionBudgets and rolling updates use them."""

from __future__ import annotations

import re
from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import is_int
from framework.meta import field

_PERCENT = re.compile(r"[0-9]+%")
PERCENT_DETAIL = (
    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
    "regex used for validation is '[0-9]+%')"
)


def validate_positive_int_or_percent(value: Any, path: str) -> list[FieldError]:
    """A non-negative integer or a percentage string of at most 100%."""
    if value is None:
        return []
    if isinstance(value, str):
        if not _PERCENT.fullmatch(value):
            return [field.invalid(path, value, PERCENT_DETAIL)]
        if int(value[:-1]) > 100:
            return [field.invalid(path, value, "must not be greater than 100%")]
        return []
    if not is_int(value) or value < 0:
        return [field.invalid(path, value, "must be greater than or equal to 0")]
    return []


def scaled_value(value: Any, total: int, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an integer as is, a percentage of ``total`` rounded up or
    down (a rolling update's surge rounds up, its unavailability down); 0 for anything else."""
    if is_int(value):
        return value
    if isinstance(value, str) and _PERCENT.fullmatch(value):
        scaled = int(value[:-1]) * total
        return -(-scaled // 100) if round_up else scaled // 100
    return 0
