"""``BucketHistogram``: the numbers of a Prometheus histogram, for collectors that build their metric
families when scraped.

A ``prometheus_client.Histogram`` child takes a lock per bucket update and walks its bounds in a
Python loop on every ``observe``; with controller-runtime's 40 reconcile-time buckets that costs
more than the rest of a controller's bookkeeping per reconcile. Here ``observe`` is one ``bisect``
and two additions; the caller holds whatever lock guards the numbers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from prometheus_client.utils import floatToGoString

__all__ = ["BucketHistogram"]


class BucketHistogram:
    """Counts per bucket (upper bounds inclusive, as Prometheus' ``le``) and the sum of observations.

    Not thread-safe on its own: guard ``observe`` and ``snapshot`` with one lock.
    """

    __slots__ = ("_bounds", "_labels", "counts", "sum")

    def __init__(self, bounds: Sequence[float]) -> None:
        self._bounds = tuple(float(b) for b in bounds)
        if list(self._bounds) != sorted(set(self._bounds)):
            raise ValueError(f"histogram bounds must be strictly increasing, got {list(bounds)}")
        self._labels = [floatToGoString(b) for b in self._bounds]
        self.counts = [0] * (len(self._bounds) + 1)  # last slot: above every bound (+Inf only)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self._bounds, value)] += 1
        self.sum += value

    def snapshot(self) -> tuple[list[tuple[str, float]], float]:
        """``(cumulative buckets as (le, count) ending with +Inf, sum)``, as ``HistogramMetricFamily``
        takes them."""
        buckets = []
        cumulative = 0
        for label, count in zip(self._labels, self.counts, strict=False):
            cumulative += count
            buckets.append((label, float(cumulative)))
        buckets.append(("+Inf", float(cumulative + self.counts[-1])))
        return buckets, self.sum
