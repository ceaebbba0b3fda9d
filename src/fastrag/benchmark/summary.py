"""A metric's per-sample scores summarised as a distribution, with a bootstrap CI of the mean."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Any

from ef._validate import check_finite_number, check_non_negative_int, describe, finite_float

__all__ = ["DistributionSummary"]

_BOOTSTRAP_SEED = 0
_BOOTSTRAP_RESAMPLES = 2000
_CONFIDENCE = 0.95
# Rows of resample indices drawn at once: bounds memory to ~32 MB whatever the sample count.
_MAX_DRAW = 4_000_000
_STATISTICS = ("mean", "std", "min", "p50", "p90", "p95", "p99", "max", "ci_low", "ci_high")


@dataclass(frozen=True, slots=True)
class DistributionSummary:
    """How one metric's scores are distributed over the samples it could score.

    ``count`` scores were measured and ``missing`` were ``None`` (not measurable, or the sample
    failed). With ``count == 0`` every statistic is ``None`` — never NaN. ``std`` is the sample
    standard deviation (``ddof=1``) and, like the confidence interval, is ``None`` below two
    scores, where neither is defined. Percentiles interpolate linearly between order statistics
    (numpy's default, "type 7").

    ``ci_low``/``ci_high`` bound a 95% percentile-bootstrap confidence interval of the mean: 2,000
    resamples drawn with ``numpy.random.default_rng(0)``, so the same scores always give the same
    interval. A resample is drawn as multinomial counts over the distinct score values when those
    are few (ranking metrics at small k take a handful of values), which has exactly the
    distribution of resampling the scores one by one but costs O(distinct values) instead of
    O(scores) per resample; otherwise indices are drawn directly.

    Examples
    --------
    >>> s = DistributionSummary.from_scores([1.0, 0.0, None, 0.5, 1.0])
    >>> s.count, s.missing, s.mean, s.min, s.p50, s.max
    (4, 1, 0.625, 0.0, 0.75, 1.0)
    >>> round(s.std, 4)
    0.4787
    >>> s.ci_low <= s.mean <= s.ci_high
    True
    >>> DistributionSummary.from_scores([None, None]).mean is None  # nothing measured
    True
    """

    count: int
    missing: int
    mean: float | None
    std: float | None
    min: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    p99: float | None
    max: float | None
    ci_low: float | None
    ci_high: float | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", check_non_negative_int(self.count, "count"))
        object.__setattr__(self, "missing", check_non_negative_int(self.missing, "missing"))
        for name in _STATISTICS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check_finite_number(value, name))
        # None exactly where a statistic is undefined: all of them without scores, std and CI below two.
        undefined = _STATISTICS if self.count == 0 else ("std", "ci_low", "ci_high") if self.count == 1 else ()
        for name in _STATISTICS:
            if (getattr(self, name) is None) != (name in undefined):
                rule = "None" if name in undefined else "a finite number"
                raise ValueError(f"'{name}' must be {rule} with count={self.count} (got {getattr(self, name)!r})")

    @classmethod
    def from_scores(cls, scores: Iterable[float | None]) -> DistributionSummary:
        """Summarise `scores`; ``None`` entries count as missing, NaN or infinity is an error.

        Any real number counts (``numpy.float32`` too); `scores` may be any iterable, read once.

        Raises
        ------
        TypeError
            If a score is not a number (naming its position), or `scores` not an iterable.
        ValueError
            If a score is NaN or infinite (naming its position).
        """
        given: object = scores
        if isinstance(given, str | bytes) or not isinstance(given, Iterable):
            raise TypeError(f"'scores' must be a sequence of floats or None (got {type(given).__name__})")
        given_scores: list[object] = list(scores)  # a generator or a numpy array: read once
        values: list[float] = []
        for position, score in enumerate(given_scores):
            if score is None:
                continue
            if type(score) is float and math.isfinite(score):  # the common case, without the ABC check
                values.append(score)
                continue
            if isinstance(score, bool) or not isinstance(score, Real):
                raise TypeError(f"'scores'[{position}] must be a float or None (got {describe(score)})")
            value = finite_float(score)
            if value is None:
                raise ValueError(f"'scores'[{position}] must be finite (got {describe(score)})")
            values.append(value)
        missing = len(given_scores) - len(values)
        if not values:
            return cls(0, missing, None, None, None, None, None, None, None, None, None, None)

        import numpy as np  # deferred: only summaries need it

        data = np.asarray(values, dtype=np.float64)
        n = data.size
        # Every statistic is computed on the scores scaled by a power of two into [-1, 1], then
        # scaled back: exact (same bits as unscaled) yet no sum can overflow, so two scores of
        # 1e308 have mean 1e308 instead of inf, and their bounds are not NaN.
        peak = float(np.max(np.abs(data)))
        shift = math.frexp(peak)[1] if peak > 0 else 0
        scaled = np.ldexp(data, -shift)

        def back(value: Any) -> float:
            return math.ldexp(float(value), shift)

        p50, p90, p95, p99 = (back(q) for q in np.percentile(scaled, [50, 90, 95, 99]))
        mean = back(scaled.mean())
        if n < 2:
            return cls(n, missing, mean, None, float(data[0]), p50, p90, p95, p99, float(data[0]), None, None)
        low, high = _bootstrap_ci(scaled)
        try:
            std = back(scaled.std(ddof=1))
        except OverflowError:
            raise ValueError(
                f"'scores' spread too widely: their standard deviation is larger than a float can hold "
                f"(scores from {float(data.min())!r} to {float(data.max())!r})"
            ) from None
        return cls(
            n,
            missing,
            mean,
            std,
            float(data.min()),
            p50,
            p90,
            p95,
            p99,
            float(data.max()),
            back(low),
            back(high),
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict (``None`` stays ``None``)."""
        return asdict(self)


def _bootstrap_ci(data: Any) -> tuple[float, float]:
    import numpy as np

    n = data.size
    rng = np.random.default_rng(_BOOTSTRAP_SEED)
    values, counts = np.unique(data, return_counts=True)
    if values.size * 3 <= n:
        # A resample's mean depends only on how often each distinct value is drawn.
        draws = rng.multinomial(n, counts / n, size=_BOOTSTRAP_RESAMPLES)
        means = draws @ values / n
    else:
        rows = max(1, _MAX_DRAW // n)
        parts = []
        for start in range(0, _BOOTSTRAP_RESAMPLES, rows):
            size = min(rows, _BOOTSTRAP_RESAMPLES - start)
            parts.append(data[rng.integers(0, n, size=(size, n))].mean(axis=1))
        means = np.concatenate(parts)
    tail = (1 - _CONFIDENCE) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    # Floating-point summation can put a bound a hair outside [min, max]; clamp to the data range.
    return float(max(low, data.min())), float(min(high, data.max()))
