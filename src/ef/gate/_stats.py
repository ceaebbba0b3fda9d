"""The non-inferiority test of :func:`ef.gate.gate`: pure functions of per-query differences.

Differences are *oriented*: ``d = candidate - baseline`` for a measure where higher is better,
``baseline - candidate`` where lower is, so a positive difference is always an improvement and a
regression larger than the margin ``delta`` is a mean below ``-delta``. Two one-sided tests per
column, on the differences shifted by the margin (``e = d + delta``, mean 0 exactly at the margin):

- *pass* rejects ``H0: mean(d) <= -delta`` (the candidate is worse by the margin or more);
- *fail* rejects ``H0: mean(d) >= -delta`` (the candidate is not worse by more than the margin).

Each is a paired randomization test (sign flips of ``e``, seeded, exact enumeration when ``2**n
<= resamples``), with the resampling machinery of :mod:`ef.comparison._stats` that ``ef
compare`` uses; the paired bootstrap gives each column's one-sided bounds at the level the
caller asks (Holm's, see :func:`holm_levels`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

from ef.comparison._stats import (
    _TIE_TOLERANCE,
    _all_sign_bits,
    _blocks,
    _counts,
    _map_blocks,
    _sign_bits,
    adjust_p_values,
)

__all__ = ["OneSided", "detectable_difference", "holm_levels", "one_sided_tests", "queries_needed"]

Matrix = npt.NDArray[np.float64]

POWER = 0.8
"""The power at which the detectable difference and the queries needed are stated."""


@dataclass(frozen=True)
class OneSided:
    """Per column: the two one-sided p-values, and whether they were exact (every sign flip)."""

    p_pass: Matrix
    p_fail: Matrix
    exact: bool


def one_sided_tests(diffs: Matrix, margins: Matrix, *, resamples: int, seed: int) -> OneSided:
    """Randomization p-values of the pass and fail hypotheses of every column of `diffs` ``(n, C)``.

    >>> d = np.array([[0.1], [0.2], [0.3], [0.0]])
    >>> t = one_sided_tests(d, np.array([0.0]), resamples=1000, seed=0)
    >>> t.p_pass.tolist(), t.p_fail.tolist(), t.exact  # 2 of 16 flips reach 0.6; all 16 stay at or below
    ([0.125], [1.0], True)
    """
    n = diffs.shape[0]
    shifted = diffs + margins[None, :]
    total = shifted.sum(axis=0)
    tolerance = _TIE_TOLERANCE * np.abs(shifted).sum(axis=0)
    exact = n < 63 and (1 << n) <= resamples

    def hits(block: int, start: int, rows: int) -> npt.NDArray[np.int64]:
        bits = _all_sign_bits(n, start, rows) if exact else _sign_bits(n, seed, block, rows)
        flipped = total - 2.0 * (bits @ shifted)
        up = (flipped >= total - tolerance).sum(axis=0)
        down = (flipped <= total + tolerance).sum(axis=0)
        return np.stack([up, down])

    count = sum(_map_blocks(hits, _blocks(1 << n if exact else resamples, n)), np.zeros((2, diffs.shape[1]), np.int64))
    p = count / float(1 << n) if exact else (count + 1) / (resamples + 1)
    return OneSided(np.minimum(p[0], 1.0), np.minimum(p[1], 1.0), exact)


def bootstrap_means(diffs: Matrix, *, resamples: int, seed: int) -> Matrix:
    """``(resamples, C)`` paired-bootstrap means of every column (``ef compare``'s resamples)."""
    n = diffs.shape[0]

    def means(block: int, start: int, rows: int) -> Matrix:
        resampled: Matrix = (_counts(n, seed, block, rows) @ diffs) / n
        return resampled

    return np.concatenate(_map_blocks(means, _blocks(resamples, n)))


def holm_levels(p_values: Matrix, alpha: float) -> Matrix:
    """The level Holm's step-down tests each hypothesis at: ``alpha / (k - rank)``, rank 0 the smallest p.

    A hypothesis is rejected by Holm exactly when its adjusted p-value is below `alpha`; its
    one-sided bound at this level is the interval that goes with that decision.

    >>> holm_levels(np.array([0.03, 0.01, 0.2]), 0.05).tolist()
    [0.025, 0.016666666666666666, 0.05]
    """
    k = len(p_values)
    order = np.argsort(p_values, kind="stable")
    levels = np.empty(k)
    levels[order] = alpha / (k - np.arange(k))
    return levels


def holm(p_values: Matrix) -> Matrix:
    """Holm-adjusted p-values (``ef compare``'s :func:`~ef.comparison._stats.adjust_p_values`)."""
    return adjust_p_values(p_values, "holm")


def detectable_difference(sd: float, n: int, level: float, power: float = POWER) -> float:
    """The smallest distance from the margin a paired test of `n` queries detects with `power`.

    Normal approximation: ``(z(1 - level) + z(power)) * sd / sqrt(n)``.

    >>> round(detectable_difference(0.2, 100, 0.05), 4)
    0.0497
    """
    z = NormalDist().inv_cdf
    return (z(1.0 - level) + z(power)) * sd / math.sqrt(n)


def queries_needed(sd: float, distance: float, level: float, power: float = POWER) -> int | None:
    """Queries a paired test needs to tell a mean `distance` from the margin apart with `power`;
    ``None`` when the distance is 0 (no number of queries can).

    >>> queries_needed(0.2, 0.0497, 0.05)
    101
    """
    if distance == 0.0 or not math.isfinite(distance):
        return None
    z = NormalDist().inv_cdf
    return max(2, math.ceil(((z(1.0 - level) + z(power)) * sd / abs(distance)) ** 2))


@dataclass(frozen=True)
class Decision:
    """Per column: the verdict and what it rests on (oriented units; see :func:`decide`)."""

    verdict: npt.NDArray[np.str_]
    p_pass: Matrix
    p_fail: Matrix
    p_pass_holm: Matrix
    p_fail_holm: Matrix
    level_pass: Matrix
    level_fail: Matrix
    worst: Matrix
    best: Matrix
    exact: bool


def decide(
    diffs: Matrix, margins: Matrix, *, alpha: float, resamples: int, seed: int, correct: bool = True
) -> Decision:
    """The gate's verdict on every column of oriented `diffs` ``(n, C)`` with `margins` ``(C,)``.

    ``"pass"`` when Holm's p of the pass test is below `alpha` and the bootstrap bound on the worse
    side (at the column's Holm level) lies above ``-margin``; ``"fail"`` when Holm's p of the fail
    test is below `alpha` and the bound on the better side lies below ``-margin``;
    ``"inconclusive"`` otherwise. ``correct=False`` treats each column as its own family (no
    Holm): what the gate of one measure does, for simulations of many at once.

    >>> d = np.array([[0.0], [0.0], [0.0], [0.0], [0.0]])
    >>> decide(d, np.array([0.01]), alpha=0.05, resamples=1000, seed=0).verdict.tolist()  # p = 1/32
    ['pass']
    >>> decide(d[:4], np.array([0.01]), alpha=0.05, resamples=1000, seed=0).verdict.tolist()  # p = 1/16
    ['inconclusive']
    """
    tests = one_sided_tests(diffs, margins, resamples=resamples, seed=seed)
    if correct:
        p_pass_holm, p_fail_holm = holm(tests.p_pass), holm(tests.p_fail)
        level_pass, level_fail = holm_levels(tests.p_pass, alpha), holm_levels(tests.p_fail, alpha)
    else:
        p_pass_holm, p_fail_holm = tests.p_pass, tests.p_fail
        level_pass = level_fail = np.full(diffs.shape[1], float(alpha))
    means = bootstrap_means(diffs, resamples=resamples, seed=seed)
    if np.all(level_pass == level_pass[0]) and np.all(level_fail == level_fail[0]):
        worst = np.quantile(means, level_pass[0], axis=0)
        best = np.quantile(means, 1.0 - level_fail[0], axis=0)
    else:
        worst = np.array([np.quantile(means[:, j], level_pass[j]) for j in range(diffs.shape[1])])
        best = np.array([np.quantile(means[:, j], 1.0 - level_fail[j]) for j in range(diffs.shape[1])])
    passed = (p_pass_holm < alpha) & (worst > -margins)
    failed = (p_fail_holm < alpha) & (best < -margins) & ~passed
    verdict = np.where(passed, "pass", np.where(failed, "fail", "inconclusive"))
    return Decision(
        verdict, tests.p_pass, tests.p_fail, p_pass_holm, p_fail_holm, level_pass, level_fail,
        np.asarray(worst, dtype=np.float64), np.asarray(best, dtype=np.float64), tests.exact,
    )
