"""Score normalisations: each list (one run's documents for one query) mapped onto a common scale.

Every normalisation works on one list at a time, vectorised over all lists of all runs. A list
whose formula would divide by zero (one document, or all scores equal) gets a defined value, never
NaN: see each entry of :data:`NORMS` and ``docs/fusion.md``.

>>> sorted(NORMS)
['borda', 'dbsf', 'l2', 'max', 'min-max', 'min-max-inverted', 'none', 'rank', 'sigmoid', 'sum', 'z-score']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["NORMS", "Norm", "normalise"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Lists:
    """Entries grouped into lists (``starts``/``counts``), ranked from 1 in trec_eval's order;
    ``query`` is each entry's query, ``per_query`` how many distinct docs a query has over all runs."""

    score: Floats
    rank: Ints
    starts: Ints
    counts: Ints
    query: Ints
    per_query: Ints

    @property
    def candidates(self) -> Ints:
        """Per entry, how many distinct docs its query has over all runs (made when a norm asks)."""
        out: Ints = self.per_query[self.query]
        return out


@dataclass(frozen=True, slots=True)
class Norm:
    """A normalisation: its formula, what a degenerate list gets, and where it comes from."""

    name: str
    formula: str
    degenerate: str
    reference: str
    kernel: Callable[[Lists], Floats]


def _each(lists: Lists, values: Floats) -> Floats:
    """A per-list value repeated for each of the list's entries."""
    return np.repeat(values, lists.counts)


def _min(lists: Lists) -> Floats:
    return np.minimum.reduceat(lists.score, lists.starts) if len(lists.starts) else np.zeros(0)


def _max(lists: Lists) -> Floats:
    return np.maximum.reduceat(lists.score, lists.starts) if len(lists.starts) else np.zeros(0)


def _sum(lists: Lists, values: Floats) -> Floats:
    return np.add.reduceat(values, lists.starts) if len(lists.starts) else np.zeros(0)


def _ratio(top: Floats, bottom: Floats, degenerate: float) -> Floats:
    """``top / bottom``, and `degenerate` where `bottom` is 0."""
    out = np.full(len(top), degenerate)
    np.divide(top, bottom, out=out, where=bottom != 0)
    return out


def _none(lists: Lists) -> Floats:
    return lists.score.copy()


def _finite(per_list: Floats, norm: str) -> None:
    """A per-list quantity of `norm` (a spread, a length) must be finite: finite scores near the
    largest float can overflow it, and dividing by infinity would map every score to 0 silently."""
    bad = np.flatnonzero(~np.isfinite(per_list))
    if len(bad):
        raise _ListError(int(bad[0]), overflow_message(norm))


def overflow_message(norm: str) -> str:
    """What a normalisation that overflows says (after the run and query)."""
    return (f"norm={norm!r} overflows a float on these scores (they lie beyond what it can compute with, "
            "about 1.8e308); scale them down first")


def _min_max(lists: Lists) -> Floats:
    low, high = _min(lists), _max(lists)
    _finite(high - low, "min-max")
    low = _each(lists, low)
    return _ratio(lists.score - low, _each(lists, high) - low, 1.0)


def _min_max_inverted(lists: Lists) -> Floats:
    low, high = _min(lists), _max(lists)
    _finite(high - low, "min-max-inverted")
    high = _each(lists, high)
    return _ratio(high - lists.score, high - _each(lists, low), 1.0)


def _max_norm(lists: Lists) -> Floats:
    top = _max(lists)
    bad = np.flatnonzero(top <= 0)
    if len(bad):
        raise _ListError(int(bad[0]), f"norm='max' needs a positive top score (got {float(top[bad[0]])!r}); "
                         "use 'min-max' for scores that can be zero or negative")
    return lists.score / _each(lists, top)


def _sum_norm(lists: Lists) -> Floats:
    shifted = lists.score - _each(lists, _min(lists))
    total = _sum(lists, shifted)
    _finite(total, "sum")
    total = _each(lists, total)
    return np.where(total == 0, 1.0 / np.repeat(lists.counts, lists.counts), _ratio(shifted, total, 0.0))


def _moments(lists: Lists) -> tuple[Floats, Floats]:
    n = lists.counts.astype(np.float64)
    mean = _sum(lists, lists.score) / n
    centred = lists.score - _each(lists, mean)
    std = np.sqrt(_sum(lists, centred * centred) / n)  # population deviation, as ranx's np.std
    _finite(std, "z-score")  # an infinite mean makes it NaN
    return _each(lists, mean), _each(lists, std)


def _z_score(lists: Lists) -> Floats:
    mean, std = _moments(lists)
    return _ratio(lists.score - mean, std, 0.0)


def _rank(lists: Lists) -> Floats:
    return 1.0 - (lists.rank - 1) / np.repeat(lists.counts, lists.counts)


def _borda(lists: Lists) -> Floats:
    return 1.0 - (lists.rank - 1) / lists.candidates


def _l2(lists: Lists) -> Floats:
    length = np.sqrt(_sum(lists, lists.score * lists.score))
    _finite(length, "l2")
    return _ratio(lists.score, _each(lists, length), 0.0)


def _dbsf(lists: Lists) -> Floats:
    # Qdrant's distr_norm: the sample deviation (n - 1), limits mean -/+ 3 std, not clipped; a list
    # with no spread (one doc, all equal) sits at its mean, which DBSF maps to 0.5.
    n = lists.counts.astype(np.float64)
    mean = _each(lists, _sum(lists, lists.score) / n)
    centred = lists.score - mean
    spread = _sum(lists, centred * centred)
    _finite(spread, "dbsf")
    std = _each(lists, np.sqrt(_ratio(spread, n - 1, 0.0)))
    return _ratio(lists.score - (mean - 3 * std), 6 * std, 0.5)


def _sigmoid(lists: Lists) -> Floats:
    # exp of a large negative score overflows to inf, and 1 / (1 + inf) is the right 0.0.
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-lists.score))


class _ListError(ValueError):
    """A list that a normalisation cannot map; the caller names its run and query."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


_RANX = "ranx (Bassani 2022, 'ranx.fuse')"

NORMS: dict[str, Norm] = {
    norm.name: norm
    for norm in (
        Norm("none", "s", "s", "-", _none),
        Norm("min-max", "(s - min) / (max - min)", "1", f"Lee 1997; {_RANX}", _min_max),
        Norm("min-max-inverted", "(max - s) / (max - min)", "1", _RANX, _min_max_inverted),
        Norm("max", "s / max", "ValueError when max <= 0", f"Lee 1997; {_RANX}", _max_norm),
        Norm("sum", "(s - min) / sum(s - min)", "1 / n", f"Montague & Aslam 2001; {_RANX}", _sum_norm),
        Norm("z-score", "(s - mean) / std (population std)", "0", "Montague & Aslam 2001 (ranx 'zmuv')", _z_score),
        Norm("rank", "1 - (rank - 1) / n", "-", _RANX, _rank),
        Norm("borda", "1 - (rank - 1) / c; an unlisted doc 0.5 - (n - 1) / (2c)", "-",
             f"Aslam & Montague 2001; {_RANX}", _borda),
        Norm("l2", "s / sqrt(sum(s^2))", "0 (all scores 0)", "unit length, as dense embeddings", _l2),
        Norm("dbsf", "(s - (mean - 3 std)) / (6 std), std with n - 1, not clipped", "0.5",
             "Mazzeschi 2023 (distribution-based score fusion); Qdrant's DBSF (distr_norm)", _dbsf),
        Norm("sigmoid", "1 / (1 + exp(-s))", "-", "MongoDB $scoreFusion's sigmoid normalisation", _sigmoid),
    )
}


def normalise(lists: Lists, norm: str) -> Floats:
    """Each entry's normalised score under `norm` (a key of :data:`NORMS`)."""
    return NORMS[norm].kernel(lists)
