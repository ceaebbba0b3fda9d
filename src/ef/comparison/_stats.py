"""The statistics core of :func:`ef.compare.compare`: paired tests, bootstrap intervals, corrections.

Pure functions of per-query differences, no I/O. Each function takes a matrix ``diffs`` of shape
``(n, C)``: ``n`` queries (paired observations) by ``C`` columns, one column per (pair, measure)
comparison, the values ``system - baseline`` per query. Every column is tested at once.

Resampling is seeded and reproducible. The sign flips of the randomization test and the index
draws of the bootstrap come from :class:`numpy.random.SeedSequence` ``(seed, n, kind, block)``
alone, so they are the same matrices for every column: a column's p-value depends on its own
differences, the seed and the number of resamples, never on the other columns, their order, the
order of the runs or the number of threads. The resamples are drawn once, in blocks of rows
(memory stays bounded, each block from its own seeded stream, on a few threads), and each block
is multiplied with all columns in one matrix product.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

# The option names and checks live without numpy, for `ef compare --help`; re-exported here.
from ef.comparison._options import CORRECTIONS, TESTS, Correction, Test, check_options

__all__ = [
    "CORRECTIONS",
    "TESTS",
    "Correction",
    "PairedStatistics",
    "Test",
    "adjust_p_values",
    "check_options",
    "equal_but_for_rounding",
    "paired_statistics",
    "seed_mean",
]

Matrix = npt.NDArray[np.float64]
_T = TypeVar("_T")

# Rows of resamples drawn at once: about 2**21 cells (16 MB as doubles) whatever n is.
_BLOCK_CELLS = 1 << 21
# Threads drawing and multiplying blocks; the results do not depend on how many.
_WORKERS = max(1, min(4, os.cpu_count() or 1))
_SIGNS, _BOOTSTRAP = 1, 2
# Two resampled statistics closer than this (relative to sum |d|) are equal: the same sum taken
# in another order (BLAS blocking, threads) differs in its last bits, and a tie must count.
_TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class PairedStatistics:
    """Per-column results of :func:`paired_statistics`; every array has one entry per column.

    ``effect_size`` is paired Cohen's d (the mean difference over the standard deviation of the
    differences, ``ddof=1``); NaN marks the one undefined case, differences that are all equal
    and not zero (an infinite effect), which the report shows as ``None``. ``exact`` says the
    randomization test enumerated every sign flip instead of sampling them.
    """

    mean_diff: Matrix
    ci_low: Matrix
    ci_high: Matrix
    effect_size: Matrix
    p_value: Matrix
    exact: bool


def _blocks(total: int, n: int) -> list[tuple[int, int, int]]:
    """``(index, first_row, rows)`` of each block of a ``(total, n)`` resample matrix."""
    size = max(1, _BLOCK_CELLS // max(n, 1))
    return [(index, start, min(size, total - start)) for index, start in enumerate(range(0, total, size))]


def _generator(seed: int, n: int, kind: int, block: int) -> np.random.Generator:
    # Each block has its own stream: the blocks can be drawn in any order, on any thread.
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, n, kind, block])))


def _map_blocks(work: Callable[[int, int, int], _T], blocks: list[tuple[int, int, int]]) -> list[_T]:
    """``work(index, first_row, rows)`` for every block, in order; blocks run on a few threads
    (numpy's generators, ufuncs and BLAS release the GIL)."""
    if len(blocks) == 1 or _WORKERS == 1:
        return [work(*block) for block in blocks]
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        return list(pool.map(lambda block: work(*block), blocks))


def _sign_bits(n: int, seed: int, block: int, rows: int) -> Matrix:
    """One block of a ``(resamples, n)`` 0/1 matrix; a 1 flips the sign of that query's difference."""
    raw = np.frombuffer(_generator(seed, n, _SIGNS, block).bytes((rows * n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw, count=rows * n).reshape(rows, n).astype(np.float64)


def _all_sign_bits(n: int, start: int, rows: int) -> Matrix:
    """Rows ``start ..`` of the ``2**n`` sign patterns: row ``i`` holds the bits of ``i``."""
    codes = np.arange(start, start + rows, dtype=np.int64)[:, None]
    return ((codes >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)


def _counts(n: int, seed: int, block: int, rows: int) -> Matrix:
    """One block of a ``(resamples, n)`` matrix: how often each query is drawn in each resample."""
    # 32-bit draws are cheaper; the row offsets make one bincount count every row at once, and
    # unit weights make it count in doubles directly (4x faster than counting, then converting).
    drawn = _generator(seed, n, _BOOTSTRAP, block).integers(0, n, size=(rows, n), dtype=np.int32)
    flat = (drawn + (np.arange(rows, dtype=np.int64) * n)[:, None]).ravel()
    counts = np.bincount(flat, weights=np.ones(rows * n), minlength=rows * n)
    return counts.reshape(rows, n).astype(np.float64, copy=False)  # already doubles: no copy


def _bootstrap_counts(n: int, resamples: int, seed: int) -> Iterator[Matrix]:
    """The blocks of the bootstrap count matrix, in order (for checking them)."""
    for block, _, rows in _blocks(resamples, n):
        yield _counts(n, seed, block, rows)


def _randomization_p(diffs: Matrix, resamples: int, seed: int) -> tuple[Matrix, bool]:
    """Two-sided: the share of sign flips whose |sum| reaches the observed |sum|.

    With ``2**n <= resamples`` every flip is enumerated and the p-value is exact (the identity
    is one of them); otherwise ``(b + 1) / (B + 1)`` over ``B`` random flips, never 0.
    """
    n = diffs.shape[0]
    total = diffs.sum(axis=0)
    observed = np.abs(total) - _TIE_TOLERANCE * np.abs(diffs).sum(axis=0)
    exact = n < 63 and (1 << n) <= resamples

    def hits(block: int, start: int, rows: int) -> npt.NDArray[np.int64]:
        bits = _all_sign_bits(n, start, rows) if exact else _sign_bits(n, seed, block, rows)
        flipped = total - 2.0 * (bits @ diffs)  # sum of s * d with s = 1 - 2 * bit
        reached: npt.NDArray[np.int64] = (np.abs(flipped) >= observed).sum(axis=0)
        return reached

    count = sum(_map_blocks(hits, _blocks(1 << n if exact else resamples, n)), np.zeros(diffs.shape[1], np.int64))
    if exact:
        return count / float(1 << n), True
    return (count + 1) / (resamples + 1), False


def _bootstrap(diffs: Matrix, resamples: int, seed: int, confidence: float) -> tuple[Matrix, Matrix, Matrix]:
    """The percentile interval of the mean difference and the shift-method bootstrap p-value.

    Under the null hypothesis the differences are shifted to mean 0; the p-value is the share of
    resampled means of the shifted differences at least as far from 0 as the observed mean,
    ``(b + 1) / (B + 1)``. Both use the same resamples.
    """
    n = diffs.shape[0]
    mean = diffs.mean(axis=0)
    observed = np.abs(mean) - _TIE_TOLERANCE * np.abs(diffs).mean(axis=0)

    def means(block: int, start: int, rows: int) -> Matrix:
        resampled: Matrix = (_counts(n, seed, block, rows) @ diffs) / n
        return resampled

    resampled = np.concatenate(_map_blocks(means, _blocks(resamples, n)))
    hits = (np.abs(resampled - mean) >= observed).sum(axis=0)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled, [tail, 1.0 - tail], axis=0)
    return low, high, (hits + 1) / (resamples + 1)


def seed_mean(values: npt.ArrayLike) -> Matrix:
    """The mean over axis 0 (one system's seeds), correctly rounded: the double nearest the exact mean
    of the seeds' doubles. numpy's sum-then-divide lands an ulp off: three seeds of P_5 0.2 averaged
    to 0.20000000000000004, and seeds 0.7, 0.8 and 0.9 to 0.7999999999999999, a difference from a
    baseline's 0.8 on every query that the paired tests called significant (p < 0.0001, every query
    lost). The exact sum is an integer over the largest of the doubles' power-of-two denominators.

    >>> seed_mean([[0.2, 0.7], [0.2, 0.8], [0.2, 0.9]]).tolist()
    [0.2, 0.8]
    """
    array: Matrix = np.asarray(values, dtype=np.float64)
    if array.shape[0] == 1:
        one: Matrix = array[0].copy()
        return one
    columns = array.reshape(array.shape[0], -1).T
    same = (columns == columns[:, :1]).all(axis=1)  # equal seeds: their value, no arithmetic
    mean = columns[:, 0].copy()
    k = array.shape[0]
    for i in np.flatnonzero(~same).tolist():
        ratios = [value.as_integer_ratio() for value in columns[i].tolist()]
        denominator = max(d for _, d in ratios)  # powers of two: each divides the largest
        mean[i] = sum(n * (denominator // d) for n, d in ratios) / (denominator * k)  # int / int rounds correctly
    exact: Matrix = mean.reshape(array.shape[1:])
    return exact


def _t_p(diffs: Matrix, constant: npt.NDArray[np.bool_]) -> Matrix:
    """scipy's paired t-test (``ttest_rel``: a one-sample test of the differences), in scipy's own
    arithmetic (``ttest_1samp``: the mean, the variance as the mean squared deviation times
    n / (n - 1), t's survival function ``stdtr``), so the p-values are scipy's to the bit. Only
    ``scipy.special`` is imported: ``scipy.stats`` takes about a second to import, most of a
    small ``ef compare``."""
    from scipy import special  # type: ignore[import-untyped, unused-ignore]

    p = np.where(diffs[0] == 0.0, 1.0, 0.0)  # all differences equal: 0 -> p 1, else an infinite t
    varying = ~constant
    if varying.any():
        d = diffs[:, varying]
        n = d.shape[0]
        variance = ((d - d.mean(axis=0, keepdims=True)) ** 2).mean(axis=0) * (n / (n - 1))
        with np.errstate(divide="ignore", invalid="ignore"):  # as scipy: a variance that underflows gives an infinite t
            t = d.mean(axis=0) / np.sqrt(variance / n)
        p[varying] = 2 * special.stdtr(np.float64(n - 1), -np.abs(t))
    return p


def _wilcoxon_p(diffs: Matrix) -> Matrix:
    """scipy's Wilcoxon signed-rank test with its defaults (zero differences dropped)."""
    from scipy import stats  # type: ignore[import-untyped, unused-ignore]

    p = np.ones(diffs.shape[1])
    for column in range(diffs.shape[1]):
        if np.any(diffs[:, column] != 0.0):  # all zero: no evidence at all, p = 1
            p[column] = stats.wilcoxon(diffs[:, column]).pvalue
    return p


def equal_but_for_rounding(diffs: Matrix) -> npt.NDArray[np.bool_]:
    """Per column, whether the differences are equal but for rounding: within 1e-12 of the largest
    (0.6 - 0.1 and 0.7 - 0.2 have an sd of ~1e-17, so any statistic divided by it is meaningless).

    >>> equal_but_for_rounding(np.array([[0.6 - 0.1, 0.0, 0.1], [0.7 - 0.2, 0.0, 0.2]])).tolist()
    [True, True, False]
    """
    return np.ptp(diffs, axis=0) <= 1e-12 * np.abs(diffs).max(axis=0)  # type: ignore[no-any-return]


def paired_statistics(
    diffs: Matrix,
    *,
    test: Test,
    resamples: int,
    seed: int,
    confidence: float,
) -> PairedStatistics:
    """Mean difference, bootstrap interval, Cohen's d and the p-value of every column of `diffs`.

    >>> d = np.array([[0.1, 0.0], [0.2, 0.0], [0.3, 0.0], [0.0, 0.0]])
    >>> s = paired_statistics(d, test="randomization", resamples=1000, seed=0, confidence=0.95)
    >>> s.p_value.tolist(), s.exact  # 2**4 flips <= 1000: enumerated; 4 of 16 reach |0.6|
    ([0.25, 1.0], True)
    >>> round(float(s.effect_size[0]), 4), float(s.effect_size[1])
    (1.1619, 0.0)
    >>> rounded = np.array([[0.6 - 0.1], [0.7 - 0.2], [0.8 - 0.3]])  # 0.5, 0.49999999999999994, 0.5
    >>> paired_statistics(rounded, test="t", resamples=10, seed=0, confidence=0.95).effect_size.tolist()
    [nan]
    """
    n, columns = diffs.shape
    if n < 2:
        raise ValueError(f"a paired test needs at least 2 queries (got {n})")
    mean = diffs.mean(axis=0)
    constant = np.ptp(diffs, axis=0) == 0.0 if columns else np.zeros(0, dtype=bool)
    sd = diffs.std(axis=0, ddof=1)
    # d is as infinite for differences equal but for rounding as for equal ones, not 7.6e15. The tests
    # keep `constant`, exact: their p-values are scipy's.
    equal = equal_but_for_rounding(diffs)
    with np.errstate(divide="ignore", invalid="ignore"):
        effect = np.where(equal, np.where(mean == 0.0, 0.0, np.nan), mean / np.where(equal, 1.0, sd))
    low, high, bootstrap_p = _bootstrap(diffs, resamples, seed, confidence)
    exact = False
    if test == "t":
        p = _t_p(diffs, constant)
    elif test == "wilcoxon":
        p = _wilcoxon_p(diffs)
    elif test == "randomization":
        p, exact = _randomization_p(diffs, resamples, seed)
    else:
        p = bootstrap_p
    return PairedStatistics(mean, low, high, effect, np.minimum(p, 1.0), exact)


def adjust_p_values(p_values: Matrix, correction: Correction) -> Matrix:
    """p-values adjusted for multiple testing over the whole family `p_values`.

    Holm's step-down and Bonferroni control the family-wise error rate, Benjamini-Hochberg's
    step-up the false discovery rate; every adjusted value is capped at 1.

    >>> p = np.array([0.01, 0.04, 0.03, 0.20])
    >>> [round(float(x), 4) for x in adjust_p_values(p, "holm")]
    [0.04, 0.09, 0.09, 0.2]
    >>> [round(float(x), 4) for x in adjust_p_values(p, "bh")]
    [0.04, 0.0533, 0.0533, 0.2]
    >>> [round(float(x), 4) for x in adjust_p_values(p, "bonferroni")]
    [0.04, 0.16, 0.12, 0.8]
    """
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    if correction == "none" or m == 0:
        return p.copy()
    if correction == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if correction == "holm":
        stepped = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    elif correction == "bh":
        stepped = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    else:
        raise ValueError(f"'correction' must be one of {', '.join(CORRECTIONS)} (got {correction!r})")
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
