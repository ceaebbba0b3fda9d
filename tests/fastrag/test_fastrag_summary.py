"""DistributionSummary: exact statistics, missing values, a deterministic bootstrap CI."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastrag.benchmark import DistributionSummary
from fastrag.benchmark.summary import _bootstrap_ci


def test_hand_computed_statistics() -> None:
    s = DistributionSummary.from_scores([1.0, None, 3.0, 2.0, None, 4.0])
    assert (s.count, s.missing) == (4, 2)
    assert (s.mean, s.min, s.max) == (2.5, 1.0, 4.0)
    assert s.std == pytest.approx(math.sqrt(5 / 3))  # squared deviations 2.25+0.25+0.25+2.25 over n-1=3
    assert s.p50 == 2.5  # halfway between 2 and 3
    assert s.p90 == pytest.approx(3.7)  # type 7: 1 + 0.9*3 = position 3.7 -> 3 + 0.7*(4-3)
    assert s.p95 == pytest.approx(3.85)
    assert s.p99 == pytest.approx(3.97)


def test_all_missing_gives_none_not_nan() -> None:
    s = DistributionSummary.from_scores([None, None, None])
    assert s == DistributionSummary(0, 3, None, None, None, None, None, None, None, None, None, None)
    assert DistributionSummary.from_scores([]).missing == 0


def test_single_value_has_no_spread_or_interval() -> None:
    s = DistributionSummary.from_scores([0.25, None])
    assert (s.count, s.missing, s.mean, s.min, s.p50, s.p99, s.max) == (1, 1, 0.25, 0.25, 0.25, 0.25, 0.25)
    assert (s.std, s.ci_low, s.ci_high) == (None, None, None)


def test_constant_scores_have_a_zero_width_interval() -> None:
    s = DistributionSummary.from_scores([0.5] * 10)
    assert (s.std, s.ci_low, s.ci_high) == (0.0, 0.5, 0.5)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_scores_are_refused(bad: float) -> None:
    with pytest.raises(ValueError) as error:
        DistributionSummary.from_scores([1.0, None, bad])
    assert str(error.value) == f"'scores'[2] must be finite (got {bad!r})"


def test_non_numbers_are_refused() -> None:
    with pytest.raises(TypeError, match=r"^'scores'\[0\] must be a float or None \(got '1'\)$"):
        DistributionSummary.from_scores(["1"])  # type: ignore[list-item]


def test_bootstrap_is_deterministic_and_brackets_the_mean() -> None:
    rng = np.random.default_rng(7)
    scores = [float(x) for x in rng.exponential(size=500)]
    first = DistributionSummary.from_scores(scores)
    assert first == DistributionSummary.from_scores(scores)
    assert first.ci_low is not None
    assert first.ci_high is not None
    assert first.mean is not None
    assert first.ci_low < first.mean < first.ci_high
    # The bootstrap interval of a mean is close to the normal one, mean ± 1.96 s/√n.
    half = 1.96 * np.std(scores, ddof=1) / math.sqrt(len(scores))
    assert first.ci_high - first.ci_low == pytest.approx(2 * half, rel=0.1)


def test_counts_resampling_matches_index_resampling() -> None:
    # Binary scores take the multinomial-counts path; its interval must match plain index
    # resampling of the same data up to Monte Carlo error.
    data = np.array([1.0] * 300 + [0.0] * 700)
    low, high = _bootstrap_ci(data)
    rng = np.random.default_rng(123)
    means = data[rng.integers(0, data.size, size=(4000, data.size))].mean(axis=1)
    ref_low, ref_high = np.percentile(means, [2.5, 97.5])
    assert low == pytest.approx(ref_low, abs=0.006)
    assert high == pytest.approx(ref_high, abs=0.006)
    assert (low, high) == _bootstrap_ci(data)


def test_to_dict_round_trips() -> None:
    s = DistributionSummary.from_scores([0.0, 1.0])
    assert DistributionSummary(**s.to_dict()) == s
    assert list(s.to_dict()) == [
        "count",
        "missing",
        "mean",
        "std",
        "min",
        "p50",
        "p90",
        "p95",
        "p99",
        "max",
        "ci_low",
        "ci_high",
    ]
