"""Vectorised measure kernels: every query at once, from the ranks of the judged documents.

Every measure ef computes depends only on, per query: the number of documents retrieved, the
0-based rank and grade of each *judged* document that was retrieved, and the grades of all
judged documents (for R, the ideal DCG and bpref's non-relevant count). A :class:`HitTable` holds
exactly that, flattened over all queries; each kernel returns one float per query, computed
with ``np.bincount`` and segment scans instead of a Python loop. Sums run in rank order, as
trec_eval's do.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import numpy.typing as npt

__all__ = [
    "HitTable",
    "average_precision",
    "bpref",
    "iprec_at_recall",
    "ndcg",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "precision",
    "r_precision",
    "recall",
    "reciprocal_rank",
    "success",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

MIN_GEO_MEAN = 1e-5
"""trec_eval's floor for average precision before a geometric mean (``MIN_GEO_MEAN``)."""


def _bincount(query: Ints, weights: Floats, n: int) -> Floats:
    """Per-query sums of ``weights``, added in array order (rank order within a query)."""
    return np.bincount(query, weights=weights, minlength=n).astype(np.float64, copy=False)


def _divide(num: Floats, den: npt.NDArray[np.int64] | Floats) -> Floats:
    """``num / den`` with ``0`` where ``den == 0`` (trec_eval's convention, never NaN)."""
    out = np.zeros(len(num), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


class HitTable:
    """The judged documents a run retrieved, for all evaluated queries, flattened.

    Parameters
    ----------
    num_ret
        Documents retrieved per query (``int64``, one per query).
    hit_query, hit_rank, hit_grade
        One entry per retrieved judged document with a grade ``>= 0``: its query index, its
        0-based rank and its grade. Any order; the table sorts them by query and rank.
    judged_query, judged_grade
        One entry per judgement in the qrels of the evaluated queries (retrieved or not).
    relevance_level
        A document is relevant when its grade is ``>= relevance_level`` (trec_eval ``-l``).
    """

    def __init__(
        self,
        num_ret: Ints,
        hit_query: Ints,
        hit_rank: Ints,
        hit_grade: Floats,
        judged_query: Ints,
        judged_grade: Floats,
        relevance_level: float,
    ) -> None:
        self.n = len(num_ret)
        self.num_ret = num_ret
        order = np.lexsort((hit_rank, hit_query))
        self.hit_query = hit_query[order]
        self.hit_rank = hit_rank[order]
        self.hit_grade = hit_grade[order]
        self.level = relevance_level
        self.num_rel = np.bincount(judged_query[judged_grade >= relevance_level], minlength=self.n)
        nonrel = (judged_grade >= 0) & (judged_grade < relevance_level)
        self.num_nonrel = np.bincount(judged_query[nonrel], minlength=self.n)
        positive = judged_grade > 0
        ideal_query, ideal_gain = judged_query[positive], judged_grade[positive]
        order = np.lexsort((-ideal_gain, ideal_query))
        self.ideal_query = ideal_query[order]
        self.ideal_gain = ideal_gain[order]

    @cached_property
    def _relevant(self) -> tuple[Ints, Ints, Ints]:
        """Query, rank and 1-based ordinal among relevant hits, of each relevant hit."""
        rel = self.hit_grade >= self.level
        query, rank = self.hit_query[rel], self.hit_rank[rel]
        start = np.searchsorted(query, np.arange(self.n))
        ordinal = np.arange(1, len(query) + 1) - start[query]
        return query, rank, ordinal

    @cached_property
    def num_rel_ret(self) -> Ints:
        """Relevant documents retrieved, per query."""
        return np.bincount(self._relevant[0], minlength=self.n)

    @cached_property
    def first_rank(self) -> Floats:
        """0-based rank of the first relevant document per query (``inf`` if none)."""
        query, rank, ordinal = self._relevant
        out = np.full(self.n, np.inf)
        first = ordinal == 1
        out[query[first]] = rank[first]
        return out

    def relevant_count(self, *, below: int | Ints | None = None) -> Floats:
        """Relevant documents per query, optionally only those ranked above ``below``."""
        query, rank, _ = self._relevant
        if below is None:
            return self.num_rel_ret.astype(np.float64)
        limit = below if isinstance(below, int) else below[query]
        return _bincount(query, (rank < limit).astype(np.float64), self.n)

    def precision_sum(self, cutoff: int | None) -> Floats:
        """Per query, the sum of the precision at each relevant document ranked above ``cutoff``."""
        query, rank, ordinal = self._relevant
        terms = ordinal / (rank + 1.0)
        if cutoff is not None:
            terms = np.where(rank < cutoff, terms, 0.0)
        return _bincount(query, terms, self.n)

    @cached_property
    def gain_shift(self) -> Ints:
        """Per query, ``-e`` where ``2**e`` bounds its largest grade: ``ldexp(grade, shift) < 1``.

        Scaling a query's gains by this power of two is exact, so NDCG is unchanged to the last
        bit, and no DCG sum can overflow (three grades of 1e308 would, giving inf / inf = NaN).
        """
        shift = np.zeros(self.n, dtype=np.int64)
        first = np.searchsorted(self.ideal_query, np.arange(self.n))  # gains sorted descending
        has = first < len(self.ideal_query)
        has[has] = self.ideal_query[first[has]] == np.arange(self.n)[has]
        shift[has] = -np.frexp(self.ideal_gain[first[has]])[1]
        return shift

    def dcg(self, cutoff: int | None, *, scaled: bool = False) -> Floats:
        """Discounted cumulative gain per query (gain = grade, discount ``log2(rank + 2)``).

        `scaled` multiplies each query's gains by ``2**gain_shift`` (for NDCG, a ratio).
        """
        gain = np.where(self.hit_grade > 0, self.hit_grade, 0.0)
        if scaled:
            gain = np.ldexp(gain, self.gain_shift[self.hit_query])
        if cutoff is not None:
            gain = np.where(self.hit_rank < cutoff, gain, 0.0)
        terms = gain / np.log2(self.hit_rank + 2.0)
        return _bincount(self.hit_query, terms, self.n)

    def ideal_dcg(self, cutoff: int | None, *, scaled: bool = False) -> Floats:
        """The DCG of the ideal ranking of every judged grade ``> 0``, cut at ``cutoff``."""
        start = np.searchsorted(self.ideal_query, np.arange(self.n))
        position = np.arange(len(self.ideal_query)) - start[self.ideal_query]
        gain = self.ideal_gain
        if scaled:
            gain = np.ldexp(gain, self.gain_shift[self.ideal_query])
        if cutoff is not None:
            gain = np.where(position < cutoff, gain, 0.0)
        terms = gain / np.log2(position + 2.0)
        return _bincount(self.ideal_query, terms, self.n)

    @cached_property
    def interpolated(self) -> Floats:
        """For each relevant hit, the best precision at it or at any later relevant hit."""
        query, rank, ordinal = self._relevant
        best = ordinal / (rank + 1.0)
        step = 1
        # Segmented suffix maximum by doubling: exact, O(n log longest) and loop-free per query.
        while step < len(best):
            same = query[step:] == query[:-step]
            if not same.any():
                break
            best[:-step] = np.where(same, np.maximum(best[:-step], best[step:]), best[:-step])
            step *= 2
        return best


Param = int | float | None


def num_q(table: HitTable, _: Param) -> Floats:
    """1 per query; summed it is trec_eval's ``num_q``."""
    return np.ones(table.n)


def num_ret(table: HitTable, _: Param) -> Floats:
    """Documents retrieved per query."""
    return table.num_ret.astype(np.float64)


def num_rel(table: HitTable, _: Param) -> Floats:
    """Relevant documents judged per query."""
    return table.num_rel.astype(np.float64)


def num_rel_ret(table: HitTable, _: Param) -> Floats:
    """Relevant documents retrieved per query."""
    return table.relevant_count()


def average_precision(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``map`` (``cutoff=None``) and ``map_cut.k``."""
    return _divide(table.precision_sum(None if cutoff is None else int(cutoff)), table.num_rel)


def r_precision(table: HitTable, _: Param) -> Floats:
    """trec_eval's ``Rprec``: relevant in the top R, over R."""
    return _divide(table.relevant_count(below=table.num_rel), table.num_rel)


def reciprocal_rank(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``recip_rank``; with a cutoff, 0 when the first relevant is ranked past it."""
    first = table.first_rank
    found = np.isfinite(first) if cutoff is None else first < cutoff
    out = np.zeros(table.n)
    np.divide(1.0, first + 1.0, out=out, where=found)
    return out


def success(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``success.k``: 1 if a relevant document is in the top k."""
    limit = np.inf if cutoff is None else cutoff
    return (table.first_rank < limit).astype(np.float64)


def precision(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``P.k``: relevant in the top k over k."""
    k = int(cutoff or 0)
    return table.relevant_count(below=k) / k


def recall(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``recall.k``: relevant in the top k over all relevant judged."""
    return _divide(table.relevant_count(below=int(cutoff or 0)), table.num_rel)


def ndcg(table: HitTable, cutoff: Param) -> Floats:
    """trec_eval's ``ndcg`` (``cutoff=None``) and ``ndcg_cut.k``; 0 when the ideal DCG is 0."""
    k = None if cutoff is None else int(cutoff)
    return _divide(table.dcg(k, scaled=True), table.ideal_dcg(k, scaled=True))


def bpref(table: HitTable, _: Param) -> Floats:
    """trec_eval's ``bpref``.

    Each relevant retrieved document scores ``1 - min(n, R) / min(N, R)``, ``n`` the judged
    non-relevant documents ranked above it, ``N`` all judged non-relevant; the sum is divided by R.
    """
    nonrel = ((table.hit_grade >= 0) & (table.hit_grade < table.level)).astype(np.int64)
    total = np.cumsum(nonrel)
    start = np.searchsorted(table.hit_query, np.arange(table.n))
    before_segment = np.concatenate(([0], total))[start]
    above = total - nonrel - before_segment[table.hit_query]
    rel = table.hit_grade >= table.level
    query, n_above = table.hit_query[rel], above[rel]
    big_r, big_n = table.num_rel[query], table.num_nonrel[query]
    denominator = np.maximum(np.minimum(big_n, big_r), 1)  # n_above > 0 implies N >= 1
    terms = np.where(n_above > 0, 1.0 - np.minimum(n_above, big_r) / denominator, 1.0)
    return _divide(_bincount(query, terms, table.n), table.num_rel)


def _lround(value: Floats) -> Ints:
    """C's ``lround`` for non-negative values: halves round away from zero."""
    whole = np.floor(value)
    return (whole + (value - whole >= 0.5)).astype(np.int64)


def iprec_at_recall(table: HitTable, level: Param) -> Floats:
    """trec_eval's ``iprec_at_recall.x``.

    The cutoff is ``lround(x * R)`` relevant documents; the value is the best precision at or
    after the relevant document that reaches it, 0 if the run never reaches it.
    """
    recall_level = float(level or 0.0)
    need = _lround(recall_level * table.num_rel.astype(np.float64))
    found = table.num_rel_ret
    out = np.zeros(table.n)
    ok = (need <= found) & (found > 0)
    start = np.searchsorted(table._relevant[0], np.arange(table.n))
    index = start + np.maximum(need, 1) - 1
    out[ok] = table.interpolated[index[ok]]
    return out


def geometric_mean(values: Floats, n: int) -> float:
    """trec_eval's ``gm_map`` summary: ``exp(mean(log(max(v, 1e-5))))``."""
    logs = np.log(np.maximum(values, MIN_GEO_MEAN))
    return math.exp(float(np.cumsum(logs)[-1]) / n) if n else 0.0
