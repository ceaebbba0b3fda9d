"""Vectorised measure kernels: every query at once, from the ranks of the judged documents.

Every measure ef computes depends only on, per query: the number of documents retrieved, the
0-based rank and grade of each *judged* document that was retrieved, the ranks of the retrieved
documents the qrels list with a negative grade (trec_eval's "in the pool but unjudged"), and the
grades of all judged documents (for R, the ideal DCG and bpref's non-relevant count). A
:class:`HitTable` holds exactly that, flattened over all queries; each kernel returns one value
per query, computed with ``np.bincount`` and segment scans instead of a Python loop. Sums run in
rank order within each query, as trec_eval's do, so the values are trec_eval's to the last bit.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "HitTable",
    "MeasureParams",
    "average_precision",
    "binary_g",
    "bpref",
    "dcg",
    "dcg_cut",
    "dcg_exp",
    "eleven_point_average",
    "err",
    "f1_cut",
    "g",
    "geometric_mean",
    "hits",
    "ideal_dcg",
    "inferred_ap",
    "iprec_at_recall",
    "judged",
    "ndcg",
    "ndcg_binary",
    "ndcg_exp",
    "ndcg_judged",
    "ndcg_rel",
    "num_nonrel_judged_ret",
    "num_q",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "precision",
    "precision_window",
    "r_ndcg",
    "r_precision",
    "r_precision_multiple",
    "rank_biased_precision",
    "rbp_residual",
    "recall",
    "reciprocal_rank",
    "relative_precision",
    "relstring",
    "set_f",
    "set_map",
    "set_precision",
    "set_recall",
    "set_relative_precision",
    "success",
    "unjudged",
    "utility",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Texts = npt.NDArray[np.object_]


class MeasureParams(Protocol):
    """What a kernel reads of the measure it computes; an :class:`ef.measures.Measure` has it all.

    Said here, not imported: the registry names these kernels, so this module importing the
    registry would tie the two in a circle.
    """

    @property
    def param(self) -> int | float | None: ...
    @property
    def text(self) -> str | None: ...
    @property
    def rel(self) -> int | None: ...
    @property
    def doubles(self) -> tuple[float, ...]: ...
    @property
    def gain_pairs(self) -> tuple[tuple[int, float], ...]: ...
    @property
    def persistence(self) -> float: ...


MIN_GEO_MEAN = 1e-5
"""trec_eval's floor for average precision before a geometric mean (``MIN_GEO_MEAN``)."""

INFAP_EPSILON = 1e-5
"""trec_eval's smoothing constant in infAP (``INFAP_EPSILON``)."""

ERR_MAX_GRADE = 4
"""The grade of certain satisfaction in ERR's ``(2^g - 1) / 2^4``, as gdeval (TREC Web track)."""

_GRID_CELLS = 20_000_000  # above this a segmented scan runs query by query instead of on a padded grid


def _bincount(query: Ints, weights: Floats, n: int) -> Floats:
    """Per-query sums of ``weights``, added in array order (rank order within a query)."""
    return np.bincount(query, weights=weights, minlength=n).astype(np.float64, copy=False)


def _divide(num: Floats, den: npt.NDArray[np.int64] | Floats) -> Floats:
    """``num / den`` with ``0`` where ``den == 0`` (trec_eval's convention, never NaN)."""
    out = np.zeros(len(num), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _starts(query: Ints, n: int) -> Ints:
    """Where each query's segment starts in a query-sorted array."""
    return np.searchsorted(query, np.arange(n + 1)).astype(np.int64)


def _segmented(query: Ints, values: Floats, n: int, *, product: bool = False) -> Floats:
    """Running sum (or product) of ``values`` within each query, in array order.

    Each query is scanned from its own first element, exactly as a per-query loop adds (a global
    cumsum minus an offset would round differently).
    """
    if not len(values):
        return values.astype(np.float64)
    start = _starts(query, n)
    position = np.arange(len(query)) - start[query]
    width = int(position.max()) + 1
    if n * width <= _GRID_CELLS:
        grid = np.full((n, width), 1.0 if product else 0.0)
        grid[query, position] = values
        (np.cumprod if product else np.cumsum)(grid, axis=1, out=grid)
        out: Floats = grid[query, position]
        return out
    out = np.empty(len(values))
    scan = np.cumprod if product else np.cumsum
    for a, b in zip(start[:-1].tolist(), start[1:].tolist(), strict=True):
        if b > a:
            out[a:b] = scan(values[a:b])
    return out


def _in_order(query: Ints, rank: Ints, grade: Floats) -> bool:
    """Whether three 1-D arrays of one length are already sorted by (query, rank), ties allowed:
    where ``np.lexsort((rank, query))``, a stable sort, gives the identity.

    >>> _in_order(np.array([0, 0, 1]), np.array([2, 5, 0]), np.zeros(3))
    True
    >>> _in_order(np.array([0, 0, 1]), np.array([5, 2, 0]), np.zeros(3))
    False
    """
    arrays = (query, rank, grade)
    if not all(type(a) is np.ndarray and a.ndim == 1 and len(a) == len(query) for a in arrays):
        return False
    if len(query) < 2:
        return True
    later, earlier = query[1:], query[:-1]
    return bool(((later > earlier) | ((later == earlier) & (rank[1:] >= rank[:-1]))).all())


def _last_before(query: Ints, rank: Ints, limit_query: Ints, limit: Ints) -> Ints:
    """For each ``(limit_query, limit)``: index of the last entry of that query with rank < limit, or -1."""
    if not len(query):
        return np.full(len(limit_query), -1, dtype=np.int64)
    width = int(max(rank.max(initial=0), limit.max(initial=0))) + 2
    keys = query * width + rank
    found = np.searchsorted(keys, limit_query * width + limit, "left") - 1
    ok = found >= 0
    ok[ok] = query[found[ok]] == limit_query[ok]
    return np.where(ok, found, -1).astype(np.int64)


class Gains:
    """Gains per grade for one gain spec: the retrieved docs' gains and the ideal ranking's."""

    def __init__(self, table: HitTable, hit_gain: Floats, judged_gain: Floats) -> None:
        self.hit_gain = hit_gain
        positive = judged_gain > 0
        query, gain = table.judged_query_sorted[positive], judged_gain[positive]
        order = np.lexsort((-gain, query))
        self.ideal_query = query[order]
        self.ideal_gain = gain[order]
        self.ideal_start = _starts(self.ideal_query, table.n)
        self.ideal_len = np.diff(self.ideal_start)
        self.ideal_position = np.arange(len(self.ideal_query)) - self.ideal_start[self.ideal_query]
        self.ideal_log = np.log2(self.ideal_position + 2.0)

    @cached_property
    def ideal_prefix(self) -> Floats:
        """Running ideal DCG at each ideal position."""
        return _segmented(self.ideal_query, self.ideal_gain / self.ideal_log, len(self.ideal_start) - 1)

    def ideal_total(self, cutoff: int | None = None) -> Floats:
        """The ideal DCG of each query, cut at ``cutoff``."""
        gain = self.ideal_gain if cutoff is None else np.where(self.ideal_position < cutoff, self.ideal_gain, 0.0)
        return _bincount(self.ideal_query, gain / self.ideal_log, len(self.ideal_start) - 1)


def _peak(values: Floats) -> float:
    return float(np.abs(values).max()) if len(values) else 0.0


def _gain_of(grades: Floats, pairs: dict[int, float], exponential: bool) -> Floats:
    if exponential:
        return np.where(grades > 0, np.exp2(grades) - 1.0, 0.0)
    out = grades.copy()
    for level, gain in pairs.items():
        out[grades == level] = gain
    return out


class HitTable:
    """The judged documents a run retrieved, for all evaluated queries, flattened.

    Parameters
    ----------
    num_ret
        Documents retrieved per query (``int64``, one per query).
    hit_query, hit_rank, hit_grade
        One entry per retrieved document that the qrels list: its query index, its 0-based rank
        and its grade. A negative grade marks a document the qrels list but did not judge
        (trec_eval's "in the pool, unjudged", used by ``infAP`` and ``relstring``); all other
        measures treat it as not judged. Any order; the table sorts them by query and rank.
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
        if _in_order(hit_query, hit_rank, hit_grade):
            # The engine gives its hits in (query, rank) order: the stable sort's order is the
            # identity, and lexsort costs 1.5 ms on 12,000 hits. Copies, as indexing made.
            hit_query, hit_rank, hit_grade = hit_query.copy(), hit_rank.copy(), hit_grade.copy()
        else:
            order = np.lexsort((hit_rank, hit_query))
            hit_query, hit_rank, hit_grade = hit_query[order], hit_rank[order], hit_grade[order]
        unjudged = hit_grade < 0
        if unjudged.any():
            self.unjudged_query, self.unjudged_rank = hit_query[unjudged], hit_rank[unjudged]
            kept = ~unjudged
            hit_query, hit_rank, hit_grade = hit_query[kept], hit_rank[kept], hit_grade[kept]
        else:
            self.unjudged_query = self.unjudged_rank = np.zeros(0, dtype=np.int64)
        self.hit_query, self.hit_rank, self.hit_grade = hit_query, hit_rank, hit_grade
        self.judged_query, self.judged_grade = judged_query, judged_grade
        self._by_level: dict[float, HitTable] = {}
        self._gains: dict[tuple[object, ...], Gains] = {}
        self._set_level(relevance_level)

    @classmethod
    def from_rankings(
        cls,
        rankings: Sequence[Sequence[str]],
        qrels: Sequence[Mapping[str, float]],
        *,
        relevance_level: float = 1,
    ) -> HitTable:
        """The table of rankings already made: query ``i`` is ``rankings[i]`` judged by ``qrels[i]``.

        Each ranking is a sequence of distinct str doc ids, best first; each judgement a mapping
        ``{doc_id: grade}`` (a negative grade: in the pool but unjudged, as trec_eval reads it).
        `relevance_level` is trec_eval's ``-l``; ``math.ulp(0.0)`` gives the rule of the per-query
        kernels (:mod:`ef.measures.per_query`), a grade ``> 0`` is relevant, and then every measure
        that has both kernels gives their values to the last bit.
        What ``evaluate_retrieval`` and :func:`~ef.measures.score_ranking` score; a run file goes
        through :func:`~ef.evaluation.evaluate_run`'s faster readers instead.

        >>> from ef.measures import parse_measure
        >>> table = HitTable.from_rankings([["d1", "x", "d2"], ["x"]], [{"d1": 1, "d2": 2}, {"d3": 1}])
        >>> parse_measure("P@2").evaluate(table).tolist(), parse_measure("ndcg@3").evaluate(table).round(4).tolist()
        ([0.5, 0.0], [0.7602, 0.0])
        """
        from ef.measures.per_query import check_ranking

        if len(rankings) != len(qrels):
            raise ValueError(f"'rankings' and 'qrels' must be as long (got {len(rankings)} and {len(qrels)})")
        num_ret: list[int] = []
        hit_query: list[int] = []
        hit_rank: list[int] = []
        hit_grade: list[float] = []
        judged_query: list[int] = []
        judged_grade: list[float] = []
        for i, (ranked, relevant) in enumerate(zip(rankings, qrels, strict=True)):
            ranked, grades = check_ranking(ranked, relevant)
            num_ret.append(len(ranked))
            for rank, doc_id in enumerate(ranked):
                grade = grades.get(doc_id)
                if grade is not None:
                    hit_query.append(i)
                    hit_rank.append(rank)
                    hit_grade.append(grade)
            judged_query.extend([i] * len(grades))
            judged_grade.extend(grades.values())
        return cls(
            np.array(num_ret, dtype=np.int64),
            np.array(hit_query, dtype=np.int64),
            np.array(hit_rank, dtype=np.int64),
            np.array(hit_grade, dtype=np.float64),
            np.array(judged_query, dtype=np.int64),
            np.array(judged_grade, dtype=np.float64),
            float(relevance_level),
        )

    def _set_level(self, relevance_level: float) -> None:
        self.level = relevance_level
        judged_query, judged_grade = self.judged_query, self.judged_grade
        self.num_rel = np.bincount(judged_query[judged_grade >= relevance_level], minlength=self.n)
        nonrel = (judged_grade >= 0) & (judged_grade < relevance_level)
        self.num_nonrel = np.bincount(judged_query[nonrel], minlength=self.n)

    def at_level(self, relevance_level: float) -> HitTable:
        """The same table with another relevance level (ir_measures' ``rel=``), cached."""
        if relevance_level == self.level:
            return self
        if relevance_level not in self._by_level:
            other = object.__new__(HitTable)
            for name in ("n", "num_ret", "hit_query", "hit_rank", "hit_grade", "unjudged_query", "unjudged_rank"):
                setattr(other, name, getattr(self, name))
            other.judged_query, other.judged_grade = self.judged_query, self.judged_grade
            other._by_level, other._gains = {}, self._gains  # gains do not depend on the level
            other._set_level(relevance_level)
            self._by_level[relevance_level] = other
        return self._by_level[relevance_level]

    def judged_only(self) -> HitTable:
        """The table of the rankings with every unjudged document removed (trec_eval ``-J``): the
        judged documents move up, keeping their order, and only they count as retrieved."""
        start = _starts(self.hit_query, self.n)
        rank = np.arange(len(self.hit_query), dtype=np.int64) - start[self.hit_query]
        num_ret = np.bincount(self.hit_query, minlength=self.n).astype(np.int64)
        return HitTable(num_ret, self.hit_query, rank, self.hit_grade, self.judged_query, self.judged_grade, self.level)

    @cached_property
    def judged_query_sorted(self) -> Ints:
        """``judged_query`` (the judgements are given grouped by query)."""
        return self.judged_query

    def gains(
        self, pairs: tuple[tuple[int, float], ...] = (), *, exponential: bool = False, scaled: bool = False
    ) -> Gains:
        """The gains of a gain spec: trec_eval's ``level=gain`` pairs (others gain their grade) or ``2^g - 1``.

        `scaled` multiplies each query's gains by a power of two that brings its largest below 1
        (issue 9): exact, so a ratio of two DCGs (NDCG) keeps every bit, and no DCG sum can
        overflow (three grades of 1e308 gave inf / inf = NaN). Only for ratios.
        """
        key: tuple[object, ...] = (pairs, exponential, scaled)
        if key not in self._gains:
            mapping = dict(pairs)
            judged = self.judged_grade >= 0
            judged_gain = np.where(judged, _gain_of(self.judged_grade, mapping, exponential), 0.0)
            hit_gain = _gain_of(self.hit_grade, mapping, exponential)
            # Below 2**900 no sum of fewer than 2**100 gains can overflow: scaling is then skipped.
            if scaled and max(_peak(judged_gain), _peak(hit_gain)) >= 2.0**900:
                peak = np.zeros(self.n)
                np.maximum.at(peak, self.judged_query, np.abs(judged_gain))
                np.maximum.at(peak, self.hit_query, np.abs(hit_gain))
                shift = np.where((peak > 0) & np.isfinite(peak), -np.frexp(peak)[1], 0)
                judged_gain = np.ldexp(judged_gain, shift[self.judged_query])
                hit_gain = np.ldexp(hit_gain, shift[self.hit_query])
            self._gains[key] = Gains(self, hit_gain, judged_gain)
        return self._gains[key]

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

    def judged_count(self, below: int) -> Floats:
        """Judged documents (grade >= 0) ranked above ``below``, per query."""
        return _bincount(self.hit_query, (self.hit_rank < below).astype(np.float64), self.n)

    def precision_sum(self, cutoff: int | None) -> Floats:
        """Per query, the sum of the precision at each relevant document ranked above ``cutoff``."""
        query, rank, ordinal = self._relevant
        terms = ordinal / (rank + 1.0)
        if cutoff is not None:
            terms = np.where(rank < cutoff, terms, 0.0)
        return _bincount(query, terms, self.n)

    def dcg(self, cutoff: int | None, gains: Gains | None = None) -> Floats:
        """Discounted cumulative gain per query (gain = grade by default, discount ``log2(rank + 2)``)."""
        gain = np.where(self.hit_grade > 0, self.hit_grade, 0.0) if gains is None else gains.hit_gain
        if cutoff is not None:
            gain = np.where(self.hit_rank < cutoff, gain, 0.0)
        terms = gain / np.log2(self.hit_rank + 2.0)
        return _bincount(self.hit_query, terms, self.n)

    def ideal_dcg(self, cutoff: int | None) -> Floats:
        """The DCG of the ideal ranking of every judged grade ``> 0``, cut at ``cutoff``."""
        return self.gains().ideal_total(cutoff)

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

    def interpolated_at(self, need: Ints) -> Floats:
        """Per query, the interpolated precision at the ``need``-th relevant hit (0 if never reached)."""
        found = self.num_rel_ret
        out = np.zeros(self.n)
        ok = (need <= found) & (found > 0)
        start = np.searchsorted(self._relevant[0], np.arange(self.n))
        index = start + np.maximum(need, 1) - 1
        out[ok] = self.interpolated[index[ok]]
        return out


def _cutoff(measure: MeasureParams) -> int | None:
    return None if measure.param is None else int(measure.param)


def num_q(table: HitTable, _: MeasureParams) -> Floats:
    """1 per query; summed it is trec_eval's ``num_q``."""
    return np.ones(table.n)


def num_ret(table: HitTable, _: MeasureParams) -> Floats:
    """Documents retrieved per query."""
    return table.num_ret.astype(np.float64)


def num_rel(table: HitTable, _: MeasureParams) -> Floats:
    """Relevant documents judged per query."""
    return table.num_rel.astype(np.float64)


def num_rel_ret(table: HitTable, _: MeasureParams) -> Floats:
    """Relevant documents retrieved per query."""
    return table.relevant_count()


def num_nonrel_judged_ret(table: HitTable, _: MeasureParams) -> Floats:
    """Judged non-relevant documents retrieved per query."""
    return _bincount(table.hit_query, (table.hit_grade < table.level).astype(np.float64), table.n)


def average_precision(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``map`` (no cutoff) and ``map_cut.k``."""
    return _divide(table.precision_sum(_cutoff(measure)), table.num_rel)


def r_precision(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``Rprec``: relevant in the top R, over R."""
    return _divide(table.relevant_count(below=table.num_rel), table.num_rel)


def reciprocal_rank(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``recip_rank``; with a cutoff, 0 when the first relevant is ranked past it."""
    first = table.first_rank
    found = np.isfinite(first) if measure.param is None else first < measure.param
    out = np.zeros(table.n)
    np.divide(1.0, first + 1.0, out=out, where=found)
    return out


def success(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``success.k``: 1 if a relevant document is in the top k."""
    limit = np.inf if measure.param is None else measure.param
    return (table.first_rank < limit).astype(np.float64)


def precision(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``P.k``: relevant in the top k over k."""
    k = int(measure.param or 0)
    return table.relevant_count(below=k) / k


def recall(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``recall.k``: relevant in the top k over all relevant judged."""
    return _divide(table.relevant_count(below=int(measure.param or 0)), table.num_rel)


def relative_precision(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``relative_P.k``: relevant in the top k over ``min(k, R)``."""
    k = int(measure.param or 0)
    return _divide(table.relevant_count(below=k), np.minimum(table.num_rel, k))


def ndcg(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``ndcg`` (with its ``level=gain`` parameters) and ``ndcg_cut.k``; 0 when the ideal DCG is 0."""
    k = _cutoff(measure)
    gains = table.gains(measure.gain_pairs, scaled=True)  # a ratio: scaled so no sum overflows
    return _divide(table.dcg(k, gains), gains.ideal_total(k))


def _finite(values: Floats, measure: MeasureParams) -> Floats:
    """`values`, unless one is inf or NaN: finite grades whose DCG a float cannot hold (issue 9)."""
    if not np.isfinite(values).all():
        raise ValueError(
            f"measure {str(measure)!r}: a query's value is larger than a float can hold "
            "(its grades are too large for this gain); no finite number can be reported"
        )
    return values


def dcg(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``dcg``: the run's DCG (not normalised)."""
    return _finite(table.dcg(None, table.gains(measure.gain_pairs)), measure)


def ideal_dcg(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``ideal_dcg``: the DCG of the ideal ranking."""
    return _finite(table.gains(measure.gain_pairs).ideal_total(), measure)


def ndcg_exp(table: HitTable, measure: MeasureParams) -> Floats:
    """nDCG with exponential gain ``2^g - 1`` (gdeval, ir_measures' ``dcg='exp-log2'``), optionally cut at k."""
    k = _cutoff(measure)
    with np.errstate(over="ignore", invalid="ignore"):  # 2^g - 1 may overflow: _finite names it
        gains = table.gains(exponential=True, scaled=True)  # a ratio: scaled so no sum overflows
        return _finite(_divide(table.dcg(k, gains), gains.ideal_total(k)), measure)


def _ideal_prefix_at(gains: Gains, query: Ints, position: Ints) -> Floats:
    """The running ideal DCG at ``position`` (past the ideal ranking: its total), per entry."""
    last = np.minimum(position, gains.ideal_len[query] - 1)
    out = np.zeros(len(query))
    ok = last >= 0
    out[ok] = gains.ideal_prefix[gains.ideal_start[query[ok]] + last[ok]]
    return out


def ndcg_rel(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``ndcg_rel``: nDCG averaged over the relevant (gain > 0) documents.

    At each retrieved document of positive gain the running DCG over the running ideal DCG; each
    such document not retrieved adds the final DCG over the final ideal DCG; the sum is divided
    by the number of positive-gain judged documents.
    """
    gains = table.gains(measure.gain_pairs, scaled=True)  # ratios of DCGs: scaled so no sum overflows
    running = _segmented(table.hit_query, gains.hit_gain / np.log2(table.hit_rank + 2.0), table.n)
    positive = gains.hit_gain > 0
    query, rank = table.hit_query[positive], table.hit_rank[positive]
    ideal = _ideal_prefix_at(gains, query, rank)
    terms = np.zeros(len(query))
    np.divide(running[positive], ideal, out=terms, where=ideal > 0)
    total = _bincount(query, terms, table.n)
    final, ideal_final = table.dcg(None, gains), gains.ideal_total()
    missing = gains.ideal_len - np.bincount(query, minlength=table.n)
    total += _divide(missing * final, ideal_final)
    return np.where(total > 0, _divide(total, gains.ideal_len), 0.0)


def r_ndcg(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``Rndcg``: nDCG averaged at the R levels, where the ideal gain changes.

    At each position p where the ideal ranking's gain changes (its end included), the nDCG of the
    top p; plus, when the run is at least two documents longer than the ideal ranking, the final
    nDCG; 0 for a query without relevant documents.
    """
    gains = table.gains(measure.gain_pairs, scaled=True)  # ratios of DCGs: scaled so no sum overflows
    n = table.n
    # Boundaries: ideal positions p >= 1 whose gain differs from position p - 1's, and the end.
    g, q, pos = gains.ideal_gain, gains.ideal_query, gains.ideal_position
    inner = np.flatnonzero((pos[1:] > 0) & (g[1:] != g[:-1])) + 1
    has = gains.ideal_len > 0
    b_query = np.concatenate((q[inner], np.flatnonzero(has)))
    b_pos = np.concatenate((pos[inner], gains.ideal_len[has]))
    # The run's DCG of its top p documents (p past its end: all of it), summed in rank order.
    running = _segmented(table.hit_query, gains.hit_gain / np.log2(table.hit_rank + 2.0), n)
    last = _last_before(table.hit_query, table.hit_rank, b_query, b_pos)
    run_dcg = np.where(last >= 0, running[np.maximum(last, 0)], 0.0) if len(running) else np.zeros(len(last))
    ideal = _ideal_prefix_at(gains, b_query, b_pos - 1)
    terms = np.zeros(len(b_query))
    counted = ideal > 0
    np.divide(run_dcg, ideal, out=terms, where=counted)
    total = _bincount(b_query, terms, n)
    count = np.bincount(b_query[counted], minlength=n).astype(np.float64)
    tail = (table.num_ret >= gains.ideal_len + 2) & has
    ideal_final = gains.ideal_total()
    final_ok = tail & (ideal_final > 0)
    total += np.where(final_ok, _divide(table.dcg(None, gains), ideal_final), 0.0)
    count += final_ok
    return np.where(table.num_rel > 0, _divide(total, count), 0.0)


def g(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``G``: gain over ``log2(2 + ideal cost - gain so far)``, normalised by the ideal gain."""
    gains = table.gains(measure.gain_pairs)
    n = table.n
    gained = _segmented(table.hit_query, gains.hit_gain, n)
    # Cost at position i: the sum of max(ideal gain, 1) over positions 0..i (1 past the ideal).
    cost_prefix = _segmented(gains.ideal_query, np.maximum(gains.ideal_gain, 1.0), n)
    query, rank = table.hit_query, table.hit_rank
    length = gains.ideal_len[query]
    # Past the ideal ranking each position costs 1 (trec_eval adds 1.0 per position: exact for integer gains).
    last = gains.ideal_start[query] + np.minimum(rank, length - 1)
    within = (
        np.where(length > 0, cost_prefix[np.clip(last, 0, max(len(cost_prefix) - 1, 0))], 0.0)
        if len(cost_prefix)
        else np.zeros(len(query))
    )
    cost = np.where(rank < length, within, within + (rank - length + 1))
    nonzero = gains.hit_gain != 0
    terms = np.zeros(len(query))
    terms[nonzero] = gains.hit_gain[nonzero] / np.log2(2.0 + cost[nonzero] - gained[nonzero])
    return _divide(_bincount(query, terms, n), _bincount(gains.ideal_query, gains.ideal_gain, n))


def binary_g(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``binG``: over R, the sum of ``1 / log2(2 + non-relevant ranked above)`` at each relevant."""
    query, rank, ordinal = table._relevant
    terms = 1.0 / np.log2(3.0 + rank - ordinal)
    return _divide(_bincount(query, terms, table.n), table.num_rel)


def _bpref_per_query(table: HitTable) -> Floats:
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


def bpref(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``bpref`` (and ``gm_bpref``'s per-query value).

    Each relevant retrieved document scores ``1 - min(n, R) / min(N, R)``, ``n`` the judged
    non-relevant documents ranked above it, ``N`` all judged non-relevant; the sum is divided by R.
    """
    return _bpref_per_query(table)


def inferred_ap(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``infAP`` (Yilmaz and Aslam): AP estimated from a judged sample of the pool.

    Unpooled documents are skipped; at a relevant document of 0-based rank j > 0 the term is
    ``1/(j+1) + j/(j+1) * (k/j) * (r + eps)/(r + s + 2 eps)``, with k the pooled documents ranked
    above it, r the relevant and s the non-relevant among them; the sum is divided by R.
    """
    n = table.n
    # Judged hits and pooled-unjudged hits, merged in rank order per query.
    query = np.concatenate((table.hit_query, table.unjudged_query))
    rank = np.concatenate((table.hit_rank, table.unjudged_rank))
    kind = np.concatenate(
        (np.where(table.hit_grade >= table.level, 0, 1), np.full(len(table.unjudged_query), 2))
    )  # 0 relevant, 1 judged non-relevant, 2 pooled but unjudged
    order = np.lexsort((rank, query))
    query, rank, kind = query[order], rank[order], kind[order]
    start = _starts(query, n)
    ordinal = np.arange(len(query)) - start[query]  # pooled documents ranked above
    rel = (kind == 0).astype(np.int64)
    nonrel = (kind == 1).astype(np.int64)
    rel_above = np.cumsum(rel) - rel - np.concatenate(([0], np.cumsum(rel)))[start[query]]
    nonrel_above = np.cumsum(nonrel) - nonrel - np.concatenate(([0], np.cumsum(nonrel)))[start[query]]
    hit = kind == 0
    j = rank[hit].astype(np.float64)
    r, s, k = rel_above[hit], nonrel_above[hit], ordinal[hit]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (k / j) * ((r + INFAP_EPSILON) / (r + s + 2 * INFAP_EPSILON))
    terms = np.where(j == 0, 1.0, terms)
    return _divide(_bincount(query[hit], terms, n), table.num_rel)


def r_precision_multiple(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``Rprec_mult.x``: precision at ``(long)(x * R + 0.9)`` documents."""
    x = float(measure.param or 0.0)
    cutoff = np.trunc(x * table.num_rel + 0.9).astype(np.int64)
    return _divide(table.relevant_count(below=cutoff), cutoff)


def utility(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``utility.a,b,c,d``: a per relevant retrieved, b per non-relevant retrieved, c per
    relevant missed, d per non-relevant missed (the collection size is 0: ``-N`` is not read)."""
    p1, p2, p3, p4 = measure.doubles
    rel_ret = table.num_rel_ret.astype(np.float64)
    ret, rel = table.num_ret.astype(np.float64), table.num_rel.astype(np.float64)
    missing = table.num_ret == 0
    if measure.text is not None:
        # trec_eval scores a query missing from the run (-c) as one unjudged document and then
        # clears only the measure named plain "utility".
        ret = np.where(missing, 1.0, ret)
    out: Floats = p1 * rel_ret + p2 * (ret - rel_ret) + p3 * (rel - rel_ret) + p4 * (0.0 + rel_ret - ret - rel)
    if measure.text is None:
        out[missing] = 0.0
    return out


def eleven_point_average(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``11pt_avg``: interpolated precision averaged over recall levels, trec_eval's scan
    included (it expects the levels in increasing order, as the default ``0.0,0.1,...,1.0``)."""
    levels = measure.doubles
    found = table.num_rel_ret
    final = np.zeros(table.n)
    start = np.searchsorted(table._relevant[0], np.arange(table.n))
    has = found > 0
    final[has] = table.interpolated[start[has]]
    cutoffs = [_lround_signed(level * table.num_rel.astype(np.float64)) for level in levels]
    total = np.zeros(table.n)
    position = found.copy()  # trec_eval's rel_so_far when the scan reaches the next cutoff
    stuck = np.zeros(table.n, dtype=bool)
    skipping = np.ones(table.n, dtype=bool)  # its first loop: cutoffs above num_rel_ret add 0
    for cutoff in reversed(cutoffs):
        skipping &= cutoff > found
        active = ~skipping & ~stuck
        matched = active & (cutoff >= 1) & (cutoff <= position)
        total += np.where(matched, table.interpolated_at(np.where(matched, cutoff, 1)), 0.0)
        position = np.where(matched, cutoff, position)
        stuck |= active & ~matched
        total += np.where(stuck & ~skipping & ~matched, final, 0.0)
    return total / len(levels)


def set_precision(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``set_P``: relevant retrieved over retrieved."""
    return _divide(table.num_rel_ret.astype(np.float64), table.num_ret)


def set_relative_precision(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``set_relative_P``: relevant retrieved over ``min(retrieved, R)``."""
    den = np.where(table.num_rel > 0, np.minimum(table.num_ret, table.num_rel), 0)
    return _divide(table.num_rel_ret.astype(np.float64), den)


def set_recall(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``set_recall``: relevant retrieved over R."""
    return _divide(table.num_rel_ret.astype(np.float64), table.num_rel)


def set_map(table: HitTable, _: MeasureParams) -> Floats:
    """trec_eval's ``set_map``: ``rel_ret^2 / (ret * R)``."""
    rel_ret = table.num_rel_ret.astype(np.float64)
    return _divide(rel_ret * rel_ret, table.num_ret.astype(np.float64) * table.num_rel)


def set_f(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``set_F.x``: ``(x + 1) P R / (x P + R)`` on the retrieved set."""
    x = measure.doubles[0]
    rel_ret = table.num_rel_ret.astype(np.float64)
    p = _divide(rel_ret, table.num_ret)
    r = _divide(rel_ret, table.num_rel)
    out = np.zeros(table.n)
    den = x * p + r
    ok = rel_ret > 0
    np.divide((x + 1.0) * p * r, den, out=out, where=ok & (den != 0))
    return out


def _rbp_gains(table: HitTable, measure: MeasureParams) -> Floats:
    """Per judged hit, RBP's gain: trec_eval's gains scaled to [0, 1] per query, or binary at ``rel``."""
    if measure.rel is not None:
        return (table.hit_grade >= measure.rel).astype(np.float64)
    gains = table.gains(measure.gain_pairs)
    # trec_eval scales when a gain of the query's levels 0..max grade (or a parameter) is outside [0, 1].
    n = table.n
    top = np.full(n, -np.inf)
    np.maximum.at(top, table.judged_query, table.judged_grade)
    has_levels = top >= 0
    pairs = dict(measure.gain_pairs)
    low = np.where(has_levels, 0.0, np.inf)
    high = np.where(has_levels, np.floor(np.maximum(top, 0.0)), -np.inf)
    if pairs:
        # Levels given a gain drop out of the defaults; recompute the default range per distinct top level.
        low, high = np.full(n, np.inf), np.full(n, -np.inf)
        for level in np.unique(top[has_levels]).tolist():
            values = [pairs.get(i, float(i)) for i in range(int(level) + 1)]
            values += list(pairs.values())
            at = top == level
            low[at], high[at] = min(values), max(values)
        none = ~has_levels
        low[none], high[none] = min(pairs.values()), max(pairs.values())
    fractional = table.judged_grade[(table.judged_grade >= 0) & (table.judged_grade != np.floor(table.judged_grade))]
    if len(fractional):  # ef accepts fractional grades; their gain is the grade
        frac_query = table.judged_query[
            (table.judged_grade >= 0) & (table.judged_grade != np.floor(table.judged_grade))
        ]
        np.minimum.at(low, frac_query, fractional)
        np.maximum.at(high, frac_query, fractional)
    scale = (low < 0) | (high > 1)
    hit_low, hit_high, hit_scale = low[table.hit_query], high[table.hit_query], scale[table.hit_query]
    gain = gains.hit_gain
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled: Floats = np.where(hit_scale, (gain - hit_low) / (hit_high - hit_low), gain)
    return scaled


def _powers(p: float, n: int) -> Floats:
    """``p^0 .. p^n`` as trec_eval forms them: a running product, not ``pow``."""
    return np.concatenate(([1.0], np.cumprod(np.full(n, p))))


def rank_biased_precision(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``rbp`` (Moffat and Zobel): ``(1 - p) * sum(gain_i * p^i)``, p = 0.9 unless ``rbp.p=X``.

    Gains are trec_eval's (the grade, or ``level=gain`` parameters), scaled per query to [0, 1] when
    one lies outside; with ir_measures' ``rel=N`` the gain is 1 for a grade >= N, else 0.
    """
    p = measure.persistence
    gain = _rbp_gains(table, measure)
    powers = _powers(p, int(table.num_ret.max(initial=0)))
    terms = np.where(gain != 0, gain * powers[table.hit_rank], 0.0)
    return (1.0 - p) * _bincount(table.hit_query, terms, table.n)


def rbp_residual(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``rbp_resid``: how much RBP could still rise if every unjudged retrieved document
    (and every document past the ranking) were relevant, ``p^n + (1 - p) * sum(p^i)`` over unjudged
    ranks i; 0 when every retrieved document is judged, as trec_eval prints it."""
    p = measure.persistence
    n, counts = table.n, table.num_ret
    width = int(counts.max(initial=0))
    powers = _powers(p, width)
    count = counts - np.bincount(table.hit_query, minlength=n)
    if n * width <= _GRID_CELLS:
        # p^i at every rank (0 at judged ranks and past the end), one row per rank, added row by
        # row: every query's sum in rank order, as trec_eval's loop adds (x + 0.0 is x). numpy's
        # own reductions may add pairwise, which rounds differently.
        grid = np.where(np.arange(width)[:, None] < counts[None, :], powers[:width, None], 0.0)
        grid[table.hit_rank, table.hit_query] = 0.0
        total = np.zeros(n)
        for row in grid:
            total += row
    else:
        total = np.zeros(n)
        start = _starts(table.hit_query, n).tolist()
        for q in np.flatnonzero(count).tolist():
            terms = powers[: counts[q]].copy()
            terms[table.hit_rank[start[q] : start[q + 1]]] = 0.0
            total[q] = float(np.cumsum(terms)[-1])
    return np.where(count > 0, powers[counts] + (1.0 - p) * total, 0.0)


def unjudged(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``unj.k``: the share of the top k not judged (k past the ranking: the rest count as judged)."""
    k = int(measure.param or 0)
    return (np.minimum(table.num_ret, k) - table.judged_count(k)) / k


def judged(table: HitTable, measure: MeasureParams) -> Floats:
    """ir_measures' ``Judged@k``: judged documents in the top k over ``min(k, retrieved)``."""
    k = int(measure.param or 0)
    return _divide(table.judged_count(k), np.minimum(table.num_ret, k))


def hits(table: HitTable, measure: MeasureParams) -> Floats:
    """ranx's ``hits@k``: relevant documents in the top k (all retrieved without k)."""
    k = _cutoff(measure)
    return table.relevant_count(below=k)


def f1_cut(table: HitTable, measure: MeasureParams) -> Floats:
    """ranx's ``f1@k``: ``2 P R / (P + R)`` of P@k and recall@k, 0 when both are 0 (computed as ranx does)."""
    k = int(measure.param or 0)
    found = table.relevant_count(below=k)
    p = found / k
    r = _divide(found, table.num_rel)
    return _divide(2 * (p * r), p + r)


def dcg_cut(table: HitTable, measure: MeasureParams) -> Floats:
    """ranx's ``dcg@k``: the DCG of the top k, gain = grade, not normalised."""
    return _finite(table.dcg(_cutoff(measure)), measure)


def dcg_exp(table: HitTable, measure: MeasureParams) -> Floats:
    """ranx's ``dcg_burges@k``: the DCG of the top k with gain ``2^g - 1``, not normalised."""
    with np.errstate(over="ignore", invalid="ignore"):  # 2^g - 1 may overflow: _finite names it
        return _finite(table.dcg(_cutoff(measure), table.gains(exponential=True)), measure)


def ndcg_judged(table: HitTable, measure: MeasureParams) -> Floats:
    """nDCG (cut at k if given) of the ranking with its unjudged documents removed (trec_eval ``-J``)."""
    judged = table.judged_only()
    k = _cutoff(measure)
    gains = judged.gains(scaled=True)
    return _divide(judged.dcg(k, gains), gains.ideal_total(k))


def precision_window(table: HitTable, measure: MeasureParams) -> Floats:
    """fastrag's Precision at k: relevant in the top k over ``min(k, retrieved)`` (0 if none retrieved)."""
    k = int(measure.param or 0)
    return _divide(table.relevant_count(below=k), np.minimum(table.num_ret, k))


def ndcg_binary(table: HitTable, measure: MeasureParams) -> Floats:
    """fastrag's NDCG at k: gain 1 for every relevant document, the ideal over ``min(R, k)`` documents."""
    k = int(measure.param or 0)
    relevant = (table.hit_grade >= table.level) & (table.hit_rank < k)
    dcg = _bincount(table.hit_query, np.where(relevant, 1.0 / np.log2(table.hit_rank + 2.0), 0.0), table.n)
    width = min(k, int(table.num_rel.max(initial=0)))  # no longer than any query's ideal ranking
    ideal = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(width) + 2.0))))
    return _divide(dcg, ideal[np.minimum(table.num_rel, width)])


def err(table: HitTable, measure: MeasureParams) -> Floats:
    """ERR@k (Chapelle et al.), as gdeval computes it: stop probability ``(2^g - 1) / 16`` per grade
    g in (0, 4], ``sum_i R_i / (i + 1) * prod_{j<i} (1 - R_j)`` over the top k."""
    k = _cutoff(measure)
    top = table.hit_grade.max(initial=0.0)
    if top > ERR_MAX_GRADE:
        raise ValueError(
            f"measure {str(measure)!r}: a grade of {top:g} is above {ERR_MAX_GRADE}, the largest ERR's "
            f"(2^g - 1) / 2^{ERR_MAX_GRADE} stop probability allows (gdeval's limit)"
        )
    keep = table.hit_grade > 0
    if k is not None:
        keep &= table.hit_rank < k
    query, rank = table.hit_query[keep], table.hit_rank[keep]
    stop = (np.exp2(table.hit_grade[keep]) - 1.0) / 2.0**ERR_MAX_GRADE
    survive = _segmented(query, 1.0 - stop, table.n, product=True)
    before = np.where(stop < 1.0, survive / (1.0 - stop), 0.0)  # the product over earlier documents only
    terms = stop * before / (rank + 1.0)
    return _bincount(query, terms, table.n)


def relstring(table: HitTable, measure: MeasureParams) -> Texts:
    """trec_eval's ``relstring.N``: the grades of the top N as a string (per query only).

    A digit per judged grade 0-9, ``>`` above 9, ``-`` for a document the qrels do not list,
    ``.`` for one they list with a negative grade (in the pool but unjudged).
    """
    width = int(measure.doubles[0])
    n = table.n
    out = np.empty(n, dtype=object)
    if width <= 0:
        out[:] = ""
        return out
    grid = np.full((n, width), ord("-"), dtype=np.uint8)
    keep = table.hit_rank < width
    grade = np.floor(table.hit_grade[keep]).astype(np.int64)
    grid[table.hit_query[keep], table.hit_rank[keep]] = np.where(grade > 9, ord(">"), ord("0") + np.minimum(grade, 9))
    keep = table.unjudged_rank < width
    grid[table.unjudged_query[keep], table.unjudged_rank[keep]] = ord(".")
    lengths = np.minimum(table.num_ret, width)
    if measure.text is not None:  # trec_eval clears only the plain "relstring" of a query missing from the run
        lengths = np.where(table.num_ret == 0, 1, lengths)
    rows = grid.tobytes()
    for i, length in enumerate(lengths.tolist()):
        out[i] = rows[i * width : i * width + length].decode("ascii")
    return out


def iprec_at_recall(table: HitTable, measure: MeasureParams) -> Floats:
    """trec_eval's ``iprec_at_recall.x``.

    The cutoff is ``lround(x * R)`` relevant documents; the value is the best precision at or
    after the relevant document that reaches it, 0 if the run never reaches it.
    """
    recall_level = float(measure.param or 0.0)
    return table.interpolated_at(_lround(recall_level * table.num_rel.astype(np.float64)))


def _lround(value: Floats) -> Ints:
    """C's ``lround`` for non-negative values: halves round away from zero."""
    whole = np.floor(value)
    return (whole + (value - whole >= 0.5)).astype(np.int64)


def _lround_signed(value: Floats) -> Ints:
    """C's ``lround``: halves round away from zero, for either sign."""
    return (np.sign(value) * _lround(np.abs(value))).astype(np.int64)


def geometric_mean(values: Floats, n: int) -> float:
    """trec_eval's ``gm_map`` / ``gm_bpref`` summary: ``exp(mean(log(max(v, 1e-5))))``."""
    logs = np.log(np.maximum(values, MIN_GEO_MEAN))
    return math.exp(float(np.cumsum(logs)[-1]) / n) if n else 0.0
