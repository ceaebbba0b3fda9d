"""Bulk run evaluation: a whole run against qrels, trec_eval's numbers, every query at once."""

from __future__ import annotations

import functools
import gc
import itertools
import marshal
import math
import numbers
import operator
import os
import struct
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ef.console import format_table
from ef.evaluation._inputs import normalise, refuse_swap
from ef.evaluation._split import in_halves
from ef.io.frames import DataFrameLike, PerQueryFrames
from ef.io.trec import (
    RunColumns,
    big_endian_words,
    hash_ids,
    iter_run_columns,
    one_thread,
    read_qrels,
    read_run,
    read_run_columns,
    shared_prefix,
)
from ef.measures import Measure, resolve
from ef.measures.bulk import HitTable, geometric_mean
from ef.validate import check_choice, check_positive_int, check_positive_number

__all__ = ["RunEvalReport", "evaluate_run"]

Missing = Literal["zero", "skip"]
Run = Mapping[str, Mapping[str, float]]

DEFAULT_MEASURES = ("ndcg@10", "recall@100", "map", "mrr")


@dataclass(frozen=True)
class RunEvalReport(PerQueryFrames):
    """The outcome of :func:`evaluate_run`: each measure over the evaluated queries.

    ``metrics`` maps each measure name, exactly as the caller gave it, to its summary over the
    queries: the mean for scores, the sum for trec_eval's counts (``num_ret``, ``num_rel``,
    ``num_rel_ret``), the number of queries for ``num_q`` and the geometric mean for ``gm_map``.
    ``per_query`` keeps every measure per query id (for ``gm_map`` the query's average
    precision); ``n_queries`` is how many queries were evaluated.

    >>> report = RunEvalReport({'ndcg@10': 0.5, 'mrr': 0.75}, {}, 2)
    >>> print(report)
    Run evaluation over 2 queries
    measure   value
    -------  ------
    ndcg@10  0.5000
    mrr      0.7500
    """

    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    n_queries: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``metrics``, ``per_query`` and ``n_queries``."""
        return {
            "metrics": dict(self.metrics),
            "per_query": {query_id: dict(values) for query_id, values in self.per_query.items()},
            "n_queries": self.n_queries,
        }

    def __str__(self) -> str:
        """The summaries as a two-column table (floats with 4 decimals, counts as integers)."""
        return format_table(
            ["measure", "value"],
            [[name, value] for name, value in self.metrics.items()],
            title=f"Run evaluation over {self.n_queries} queries",
        )


@dataclass(frozen=True)
class _Evaluation:
    """What both :func:`evaluate_run` and ``ef trec-eval`` print from: values per measure."""

    query_ids: list[str]
    values: dict[Measure, npt.NDArray[np.float64]]
    summary: dict[Measure, float]
    skipped: int = 0  # judged queries the run lacks, left out (missing="skip")
    run_id: str = ""  # the run file's last line's run id (trec_eval's runid); "" for a dict


@dataclass(frozen=True)
class _RunFile:
    """A run file to be scored streaming, window by window (see :func:`_from_stream`)."""

    path: str

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The whole run in memory (for a report that shows every ranking)."""
        return read_run(self.path)


def _check_options(missing: str, relevance_level: object, max_docs: object) -> tuple[float, int | None]:
    """The options checked (ef.validate's template: a wrong type is a TypeError), as plain Python
    numbers; numpy scalars are accepted."""
    check_choice(missing, "missing", ("zero", "skip"))
    level = check_positive_number(relevance_level, "relevance_level")
    depth = None if max_docs is None else check_positive_int(max_docs, "max_docs", what="a positive integer or None")
    return (int(level) if isinstance(relevance_level, numbers.Integral) else level), depth


def _not_a_number(values: Mapping[str, object]) -> tuple[str, object] | None:
    """The first ``(key, value)`` whose value is not a real number (bools and None included)."""
    for key, value in values.items():
        if isinstance(value, _BOOLS) or not isinstance(value, int | float | np.integer | np.floating):
            return key, value
    return None


_BOOLS = (bool, np.bool_)


def _has_bool(values: Mapping[str, object]) -> bool:
    """Whether a value is a bool, Python's or numpy's (both are numbers to numpy, neither a grade)."""
    kinds = set(map(type, values.values()))
    return bool in kinds or np.bool_ in kinds


def _grades(query_id: str, judged: Mapping[str, float]) -> npt.NDArray[np.float64]:
    if _has_bool(judged):
        value = next(g for g in judged.values() if isinstance(g, _BOOLS))
        raise ValueError(f"qrels: a grade of query {query_id!r} is not a number (got {value!r})")
    try:
        # sum() refuses str and None in C; np.fromiter alone would quietly parse "1.5".
        sum(judged.values(), 0.0)
        grades = np.fromiter(judged.values(), dtype=np.float64, count=len(judged))
    except (TypeError, ValueError):
        grades = np.array([np.nan])
    except OverflowError:  # an int too large for a double
        grades = np.array([np.inf])
    if not np.isfinite(grades).all():
        bad = _not_a_number(judged)
        if bad is not None:
            raise ValueError(f"qrels: a grade of query {query_id!r} is not a number (got {bad[1]!r})")
        if np.isnan(grades).any():
            raise ValueError(f"qrels: a grade of query {query_id!r} is NaN")
        infinite = next(g for g in judged.values() if not _finite(g))
        raise ValueError(f"qrels: a grade of query {query_id!r} is not finite (got {infinite!r})")
    return grades


def _finite(value: object) -> bool:
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except OverflowError:
        return False


class _Builder:
    """Accumulates the flat arrays of a :class:`HitTable`, query by query."""

    def __init__(self, qrels: Run) -> None:
        self.qrels = qrels
        self.query_ids: list[str] = []
        self.num_ret: list[int] = []
        self.hit_counts: list[int] = []
        self.hit_rank: list[int] = []
        self.hit_grade: list[float] = []
        self.arrays: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]] | None = None

    def add(self, query_id: str, num_ret: int) -> int:
        self.query_ids.append(query_id)
        self.num_ret.append(num_ret)
        self.hit_counts.append(0)
        return len(self.query_ids) - 1

    def set_hits(
        self, query: npt.NDArray[np.int64], rank: npt.NDArray[np.int64], grade: npt.NDArray[np.float64]
    ) -> None:
        self.arrays = (query, rank, grade)

    def judged_grades(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Query index and grade of every judgement of the evaluated queries, validated."""
        judged = [self.qrels[q] for q in self.query_ids]
        sizes = [len(j) for j in judged]
        query = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        plain = _plain_numbers(list(itertools.chain.from_iterable(j.values() for j in judged)))
        if plain is not None and np.isfinite(plain).all():  # all ints (or all floats), no bool: checked
            return query, np.array(plain)  # a writeable copy, never the marshal dump's view
        try:
            for j in judged:  # refuses str and None, which np.fromiter would parse or choke on unnamed
                sum(j.values(), 0.0)
            grades = np.fromiter(
                itertools.chain.from_iterable(j.values() for j in judged), dtype=np.float64, count=sum(sizes)
            )
        except (TypeError, ValueError, OverflowError):
            grades = np.array([np.nan])
        if not np.isfinite(grades).all() or any(map(_has_bool, judged)):
            for query_id in self.query_ids:
                _grades(query_id, self.qrels[query_id])  # raises, naming the query
        return query, grades

    def table(self, relevance_level: float) -> HitTable:
        judged_query, judged_grade = self.judged_grades()
        query, rank, grade = self.arrays or (
            np.repeat(np.arange(len(self.hit_counts), dtype=np.int64), self.hit_counts),
            np.array(self.hit_rank, dtype=np.int64),
            np.array(self.hit_grade, dtype=np.float64),
        )
        return HitTable(
            num_ret=np.array(self.num_ret, dtype=np.int64),
            hit_query=query,
            hit_rank=rank,
            hit_grade=grade,
            judged_query=judged_query,
            judged_grade=judged_grade,
            relevance_level=float(relevance_level),
        )


# marshal (format version 2, which writes no back-references) lays a list out as b"[", a 4-byte
# count, then each item: a float as b"g" + 8 bytes little-endian, an int of 32 bits as b"i" + 4.
# A bool is b"T" or b"F", a str or a larger int longer: a list is all floats (or all such ints)
# exactly when its dump has that length and every item's type byte (by induction) is b"g" (b"i").
_DOUBLE, _INT32 = np.dtype("<f8"), np.dtype("<i4")


def _plain_numbers(values: Collection[object]) -> npt.NDArray[np.float64] | None:
    """`values` as doubles when all are floats or all are 32-bit ints, proven and read in one C
    pass (marshal); ``None`` for anything else (numpy scalars, bools, a mix), left to the checks."""
    try:
        dump = marshal.dumps(list(values), 2)
    except ValueError:  # an object marshal cannot write, such as a numpy scalar
        return None
    n = len(values)
    if not n:
        return np.zeros(0)
    # The doubles are read in place (unaligned, strided, read-only): np.sort copies them anyway.
    if len(dump) == 5 + 9 * n and dump[5::9].count(b"g") == n:
        return np.ndarray((n,), _DOUBLE, dump, 6, (9,))
    if len(dump) == 5 + 5 * n and dump[5::5].count(b"i") == n:
        return np.ndarray((n,), _INT32, dump, 6, (5,)).astype(np.float64)
    return None


def _scores(
    query_id: str, ranking: Mapping[str, float], typed: bool, ordering: bool = False
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.intp] | None, bool]:
    """One query's scores as given and sorted, the order that sorts them when `ordering` asks
    for it (else ``None``), and whether they hold 0.0 or 1.0 (what a bool, refused, reads as);
    ``ValueError`` naming the doc if a score is not a number, is NaN or is beyond a double's range.

    Any number converts (int, float, numpy's, ``Decimal``, ``Fraction``) to its nearest double,
    as ``struct`` packs them: the fastest C pass over a dict's values. It reads a bool as 0 or 1,
    so scores holding 0.0 or 1.0 have their types checked too; once a query shows them, `typed`
    asks for marshal's pass, which proves floats (or 32-bit ints: no bool) and reads them at once.
    """
    if typed:
        raw = _plain_numbers(ranking.values())
        if raw is not None:  # floats, or small ints: only NaN is left to refuse
            order, ordered = _sorted(raw, ordering)
            if len(ordered) and ordered[-1] != ordered[-1]:  # NaN sorts last
                raise _nan_error(query_id, ranking)
            return raw, ordered, order, True
    try:
        raw = np.frombuffer(struct.pack(f"{len(ranking)}d", *ranking.values()))
    except (struct.error, ArithmeticError, TypeError, ValueError):  # what __float__ may raise
        error = _score_error(query_id, ranking) or ValueError(f"run: a score of query {query_id!r} is not a number")
        raise error from None
    order, ordered = _sorted(raw, ordering)
    zero_or_one = _has_zero_or_one(ordered)
    if len(ordered) and (
        ordered[-1] != ordered[-1]  # NaN
        or (zero_or_one and _bool_at_zero_or_one(ranking, raw))
        # An infinity: is it one, or a number beyond a double? Floats' are themselves (marshal tells).
        or ((ordered[0] == -math.inf or ordered[-1] == math.inf) and _plain_numbers(ranking.values()) is None)
    ):
        refused = _score_error(query_id, ranking)
        if refused is not None:
            raise refused
    return raw, ordered, order, typed or zero_or_one


def _proven_scores(query_id: str, ranking: Mapping[str, float]) -> npt.NDArray[np.float64] | None:
    """One query's scores as given, unsorted, when marshal proves them all floats (or 32-bit ints)
    and there is one at least; ``None`` when it cannot (then :func:`_scores` checks them, sorting).
    ``ValueError`` naming the doc if one is NaN."""
    raw = _plain_numbers(ranking.values())
    if raw is None or not len(raw):
        return None
    top = np.maximum.reduce(raw)  # NaN if any score is
    if top != top:
        raise _nan_error(query_id, ranking)
    return raw


def _few_values(ranking: Mapping[str, float]) -> bool:
    """Whether the first _SAMPLE scores of `ranking` take at most half as many values: the scores
    of a few values (integer grades) that dense ranking suits, seen in ~1.5 us."""
    try:
        return 2 * len(set(itertools.islice(ranking.values(), _SAMPLE))) <= _SAMPLE
    except TypeError:  # an unhashable score: refused the usual way
        return False


def _nan_error(query_id: str, ranking: Mapping[str, float]) -> ValueError:
    return _score_error(query_id, ranking) or ValueError(f"run: a score of query {query_id!r} is NaN")


def _sorted(
    raw: npt.NDArray[np.float64], ordering: bool
) -> tuple[npt.NDArray[np.intp] | None, npt.NDArray[np.float64]]:
    """The order that sorts `raw` (if `ordering`, else ``None``) and `raw` sorted."""
    if ordering:  # one argsort and a gather, not a sort and then an argsort (~11 us less of 1,000 docs)
        order = raw.argsort()
        return order, raw[order]
    ordered = raw.copy()  # np.sort's own wrapper costs a microsecond more a query
    ordered.sort()
    return None, ordered


def _score_error(query_id: str, ranking: Mapping[str, float]) -> ValueError | None:
    """The error naming the first score of `ranking` that is refused, if one is (see _score_problem)."""
    for doc_id, score in ranking.items():
        problem = _score_problem(score)
        if problem is not None:
            return ValueError(f"run: score of doc {doc_id!r} in query {query_id!r} {problem}")
    return None


def _score_problem(score: object) -> str | None:
    """Why `score` is refused, or ``None``: a bool, or what ``struct`` cannot pack as a double;
    NaN; a finite number whose nearest double is infinite (an infinity is taken as itself)."""
    if isinstance(score, _BOOLS):
        return f"is not a number (got {score!r})"
    try:
        (value,) = struct.unpack("d", struct.pack("d", score))
    except (struct.error, ArithmeticError, TypeError, ValueError):
        if isinstance(score, numbers.Number):
            try:
                float(score)  # type: ignore[arg-type]
            except OverflowError:
                return "is beyond the range of a double"
            except (ArithmeticError, TypeError, ValueError):
                pass
        return f"is not a number (got {score!r})"
    if value != value:
        return "is NaN"
    if math.isinf(value) and score != value:  # a Decimal, a long double ... that overflowed
        return "is beyond the range of a double"
    return None


def _bool_at_zero_or_one(ranking: Mapping[str, float], raw: npt.NDArray[np.float64]) -> bool:
    """Whether a value of `ranking` that reads as 0 or 1 is a bool (only those can be)."""
    at = np.flatnonzero((raw == 0.0) | (raw == 1.0)).tolist()
    if 4 * len(at) > len(raw):
        return _has_bool(ranking)
    picked = operator.itemgetter(*at)(list(ranking.values()))
    kinds = set(map(type, picked)) if len(at) > 1 else {type(picked)}
    return bool in kinds or np.bool_ in kinds


def _has_zero_or_one(ordered: npt.NDArray[np.float64]) -> bool:
    """Whether sorted ``ordered`` holds 0.0 or 1.0: the values a bool (refused) would give."""
    at = ordered.searchsorted((0.0, 1.0)).tolist()
    n = len(ordered)
    return bool((at[0] < n and ordered[at[0]] == 0.0) or (at[1] < n and ordered[at[1]] == 1.0))


def _from_mapping(run: Run, qrels: Run, query_ids: list[str], missing: Missing, max_docs: int | None) -> _Builder:
    out = _Builder(qrels)
    hit_rank, hit_grade, hit_counts = out.hit_rank, out.hit_grade, out.hit_counts
    # Ties are resolved a chunk of queries at a time, all at once (see _TieBatch).
    ties = _TieBatch()
    typed = False  # see _scores
    # Whether the last query whose ties went to _rank_ties ranked them in Python, which wants
    # their order: the next one likely will too (a run's scores are alike), so its order is found
    # while it is sorted (a wrong guess costs ~9 us of 1,000 docs, a right one saves ~11).
    ordering = False
    # Queries left to rank "densely": when a query's ties took every doc into the batch (scores
    # of a few values, such as integer grades), the next ones likely will too, so they go there
    # at once, unsorted: each judged doc counts the docs ahead of it by score, then id, in the
    # batch's broadcasts. After _DENSE_RUN of them, one is ranked the usual way, which decides
    # whether the next ones go on so. Of 1,000 docs and 6 judged, a right guess saves ~10 us
    # (no sort, no binary search) and a wrong one costs ~28 (the ids joined and compared): a
    # query whose first scores are not of a few values (_few_values), or with more than
    # _DENSE_JUDGED judged docs, is ranked the usual way at once.
    dense = 0
    for query_id in query_ids:
        ranking = run.get(query_id)
        if ranking is None:
            if missing == "zero":
                out.add(query_id, 0)
            continue
        n = len(ranking)
        index = out.add(query_id, n if max_docs is None else min(n, max_docs))
        judged = qrels[query_id]
        dense_now = dense and len(judged) <= _DENSE_JUDGED and _few_values(ranking)
        proven = _proven_scores(query_id, ranking) if dense_now else None
        if proven is None:
            raw, ordered, order, typed = _scores(query_id, ranking, typed, ordering)
            dense = 0
        else:
            raw, dense = proven, dense - 1
        # In C: the scores of the judged docs, None where a judged doc is not in the ranking.
        found: list[Any] = list(map(ranking.get, judged))  # no None left once filtered below
        present = None
        if None in found:
            present = [s is not None for s in found]
            found = list(itertools.compress(found, present))
            if not found:
                continue
        one_score = proven is None and n > 1 and ordered[0] == ordered[-1]  # every doc ties: ids alone rank
        if proven is not None or one_score:
            rank, scores, tied_at = [0] * len(found), found, list(range(len(found)))
        else:
            values = np.array(found, dtype=np.float64)
            # A judged doc's equals sort at [left, right): it ties when there are two or more.
            right, left, scores = (
                ordered.searchsorted(values, "right").tolist(),
                ordered.searchsorted(values, "left").tolist(),
                values.tolist(),
            )
            rank = [n - r for r in right]  # the docs with a greater score
            tied_at = [i for i, (lo, hi) in enumerate(zip(left, right, strict=True)) if hi - lo > 1]
        if tied_at:  # ties go to the greater doc id (byte-wise: str order is UTF-8 byte order)
            doc_ids = list(judged) if present is None else list(itertools.compress(judged, present))
            try:
                if proven is not None:
                    ties.add(len(hit_rank), tied_at, scores, doc_ids, raw, ranking, n, False, True)
                elif one_score:
                    ties.add(len(hit_rank), tied_at, scores, doc_ids, raw, ranking, n, True)
                else:
                    every = len(tied_at) == len(right)
                    lows = left if every else [left[i] for i in tied_at]
                    highs = right if every else [right[i] for i in tied_at]
                    way = _rank_ties(
                        raw, order, ranking, ties, len(hit_rank), rank, lows, highs, scores, tied_at, doc_ids
                    )
                    ordering, dense = way == "python", _DENSE_RUN if way == "every doc" else 0
            except TypeError:  # a doc id that is not a str (only each query's first is checked up front)
                _check_nested({query_id: ranking}, "run", "score", every_doc=True)
                raise
        hit_rank.extend(rank)
        hit_grade.extend(judged.values() if present is None else itertools.compress(judged.values(), present))
        hit_counts[index] = len(found)
    if ties or max_docs is not None:
        query = np.repeat(np.arange(len(hit_counts), dtype=np.int64), hit_counts)
        ranks = np.array(hit_rank, dtype=np.int64)
        grade = np.array(hit_grade, dtype=np.float64)
        if ties:
            at, ahead = ties.ranked()
            ranks[at] += ahead
        keep = ranks < max_docs if max_docs is not None else slice(None)
        out.set_hits(query[keep], ranks[keep], grade[keep])
    return out


def _rank_ties(
    raw: npt.NDArray[np.float64],
    order: npt.NDArray[np.intp] | None,
    ranking: Mapping[str, float],
    ties: _TieBatch,
    offset: int,
    rank: list[int],
    lows: list[int],
    highs: list[int],
    scores: list[float],
    tied_at: list[int],
    doc_ids: list[str],
) -> Literal["python", "members", "every doc"]:
    """One query's tied judged docs (at `tied_at`) ranked among their equals: here, one pass over
    each group's ids (adding to `rank`), or later in `ties` (the cost model decides), with their
    members or every doc of the query; which of the three. `order` sorts `raw`, if known."""
    n = len(raw)
    # Each tied judged doc's equals sort at [low, high); a group is known by its low.
    groups = dict(zip(lows, highs, strict=True))
    pairs = sum(highs) - sum(lows)
    n_members = sum(groups.values()) - sum(groups)
    if _batch_is_cheaper(pairs, len(tied_at), n_members, n):
        whole = n_members == n and len(groups) == 1
        # Every judged doc tied, most docs with them: ranked densely, as the next queries may be.
        dense = len(tied_at) == len(rank) and not whole and n_members > _GATHER_BELOW * n
        if dense:  # the batch counts the docs of greater scores too
            rank[:] = [0] * len(rank)
        ties.add(offset, tied_at, scores, doc_ids, raw, ranking, n_members, whole, dense)
        return "every doc" if dense else "members"
    spans = list(zip(lows, highs, strict=True))
    ahead = _ahead_in_groups(ranking, raw.argsort() if order is None else order, spans, [doc_ids[i] for i in tied_at])
    for i, extra in zip(tied_at, ahead, strict=True):
        rank[i] += extra
    return "python"


def _ahead_in_groups(
    ranking: Mapping[str, float], order: npt.NDArray[np.intp], spans: list[tuple[int, int]], doc_ids: Sequence[str]
) -> list[int]:
    """For each tied judged doc, how many docs share its score and have a greater id.

    ``spans[i]`` is where doc i's group of equal scores lies in ``order``, the argsort of the
    scores, so a group's ids are gathered with no mask; each judged doc is compared with its
    group's ids in one pass. Python's str order is code point order, i.e. UTF-8 byte order, as
    trec_eval's ``strcmp`` compares them.
    """
    keys = list(ranking)
    members: dict[tuple[int, int], Sequence[str]] = {}
    ahead = []
    for (lo, hi), doc_id in zip(spans, doc_ids, strict=True):
        group = members.get((lo, hi))
        if group is None:
            group = members[lo, hi] = operator.itemgetter(*order[lo:hi].tolist())(keys)
        ahead.append(len([d for d in group if d > doc_id]))
    return ahead


# What tie ranking costs, in ns (measured on the development machine): in Python, a comparison
# per (tied judged doc, equal doc) pair after an argsort; in _TieBatch, a query's numpy calls, its
# ids joined (or, when few, its members found and gathered) and a broadcast comparison per (tied
# judged doc, id) pair.
_PYTHON_PAIR, _ARGSORT = 35, 10_000
_BATCH_QUERY, _JOIN_ID, _SCAN_ID, _GATHER_ID, _BROADCAST_PAIR = 5_000, 15, 10, 25, 1
_GATHER_BELOW = 0.2  # _TieBatch gathers a query's members when they are fewer than this share of its docs
_DENSE_RUN = 16  # queries ranked densely (see _from_mapping) before one is ranked the usual way
_DENSE_JUDGED = 32  # the most judged docs of a query ranked densely
_SAMPLE = 32  # scores _few_values looks at


def _batch_is_cheaper(pairs: int, k: int, n_members: int, n: int) -> bool:
    """Whether a query's `k` tied judged docs (`pairs` comparisons in Python) rank faster in the batch."""
    if n_members <= _GATHER_BELOW * n:
        batch = _SCAN_ID * n + (_GATHER_ID + _BROADCAST_PAIR * k) * n_members
    else:
        batch = (_JOIN_ID + _BROADCAST_PAIR * k) * n
    return _BATCH_QUERY + batch < _ARGSORT + _PYTHON_PAIR * pairs


class _TieBatch:
    """The tied judged docs of every query, ranked among their equals in a few vectorised steps.

    A judged doc's rank counts the docs with a greater score (a binary search) plus the docs with
    an equal score and a greater id; a query ranked densely counts both here, its judged docs
    against every doc by score, then id (see _from_mapping). Each query with ties keeps its
    members (the docs sharing one of their scores, or all its docs), the members' ids NUL-joined.
    The ids are then cut into big-endian words, a chunk of queries at a time, so comparing word
    tuples compares bytes, as trec_eval's ``strcmp`` does, and each query's judged docs are
    compared with its members in broadcasts: no sort, no Python comparison per doc. A chunk is
    ranked as soon as it is full, while its bytes and scores are still in cache.
    """

    def __init__(self) -> None:
        self.settled: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = []  # (hit_at, ahead) of ranked chunks
        self._empty()

    def _empty(self) -> None:
        """No query waiting to be ranked."""
        self.n_ids = 0  # member ids waiting
        # Per tied judged doc: where it sits in the hit lists, its id and its score.
        self.hit_at: list[int] = []
        self.judged_ids: list[str] = []
        self.judged_scores: list[float] = []
        # Per query: how many tied judged docs, its members and their scores (None: every doc
        # has the one score), the members' ids NUL-joined as UTF-8, whether it is ranked densely.
        self.ks: list[int] = []
        self.members: list[Collection[str]] = []
        self.member_scores: list[npt.NDArray[np.float64] | None] = []
        self.member_bytes: list[bytes] = []
        self.dense: list[bool] = []

    def __bool__(self) -> bool:
        return bool(self.ks or self.settled)

    def add(
        self,
        offset: int,
        tied_at: list[int],
        found: list[float],
        doc_ids: Sequence[str],
        raw: npt.NDArray[np.float64],
        ranking: Mapping[str, float],
        n_members: int,
        whole: bool,
        dense: bool = False,
    ) -> None:
        """A query's judged docs `doc_ids` with scores `found`, those at `tied_at` tied, its first
        in the hit lists at `offset`; `n_members`: the docs sharing a score with a tied judged
        doc; `whole`: every doc of the query has the tied judged docs' one score; `dense`: every
        judged doc, unsorted, to count every doc ahead of it (by score, then id), not only its
        equals: the caller's ranks of them are 0."""
        ids: Collection[str]
        member_scores: npt.NDArray[np.float64] | None = None
        every = len(tied_at) == len(found)  # often so: no picking
        tied_scores = found if every else [found[i] for i in tied_at]
        if whole:
            ids = ranking.keys()
        elif n_members > _GATHER_BELOW * len(raw):  # most docs are members (all, when dense): keep them all
            ids, member_scores = ranking.keys(), raw
        else:  # a tied judged doc has at least one equal: two members or more
            members = np.flatnonzero(np.isin(raw, tied_scores))
            ids = operator.itemgetter(*members.tolist())(list(ranking))
            member_scores = raw[members]
        if self.n_ids + len(ids) > _CHUNK_IDS:  # a full chunk waits: ranked now, while in cache
            self._settle()
        # Joined query by query, while the ids are in cache: one join of millions costs 2x per id.
        self.member_bytes.append("\x00".join(ids).encode("utf-8", "surrogatepass"))
        self.n_ids += len(ids)
        self.members.append(ids)
        self.member_scores.append(member_scores)
        self.dense.append(dense)
        self.ks.append(len(tied_at))
        self.hit_at.extend(range(offset, offset + len(found)) if every else [offset + i for i in tied_at])
        self.judged_ids.extend(doc_ids if every else [doc_ids[i] for i in tied_at])
        self.judged_scores.extend(tied_scores)

    def ranked(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Where each tied judged doc sits in the hit lists, and how many equals with a greater id it
        has (a densely ranked one: how many docs are ahead of it)."""
        self._settle()
        at, ahead = zip(*self.settled, strict=True)
        return np.concatenate(at), np.concatenate(ahead)

    def _settle(self) -> None:
        """Ranks the waiting queries' tied judged docs and lets their ids go."""
        if self.ks:
            self.settled.append((np.array(self.hit_at, dtype=np.int64), self._ahead()))
            self._empty()

    def _ahead(self) -> npt.NDArray[np.int64]:
        """How many equals with a greater id (docs ahead, if dense) each waiting tied judged doc
        has, in order. What waits is one chunk (see :meth:`add`): at most ``_CHUNK_IDS`` member
        ids, or one query."""
        stop, sizes = len(self.ks), [len(ids) for ids in self.members]
        scores = np.array(self.judged_scores, dtype=np.float64)
        words = self._words(0, stop, self.n_ids, self.judged_ids)
        counts = self._by_str(0, stop, 0, scores) if words is None else self._counts(0, stop, sizes, scores, *words)
        return np.concatenate(list(counts))

    def _words(
        self, q: int, stop: int, n_members: int, judged_ids: list[str]
    ) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]] | None:
        """The member and judged ids of queries ``q:stop`` as word columns of one width after
        the bytes all share; ``None`` if an id holds NUL (the separator)."""
        # The last id's NUL and 8 zero bytes end the buffer (see _fixed_width_words).
        member_bytes = b"\x00".join([*self.member_bytes[q:stop], bytes(8)])
        judged_bytes = "\x00".join(judged_ids).encode("utf-8", "surrogatepass") + bytes(9)
        fixed_m = _fixed_width_words(member_bytes, n_members)
        # Judged docs are members: they share the members' leading bytes too.
        fixed_j = _fixed_width_words(judged_bytes, len(judged_ids), fixed_m[1]) if fixed_m else None
        if fixed_m and fixed_j and fixed_m[2] == fixed_j[2]:
            return fixed_m[0], fixed_j[0]
        found_m = _id_words(member_bytes, n_members)  # ids of several lengths
        found_j = _id_words(judged_bytes, len(judged_ids), found_m[1]) if found_m else None
        if found_m is None or found_j is None:
            return None
        return _padded(found_m[0], found_j[0], n_members, len(judged_ids))

    def _counts(
        self,
        q: int,
        stop: int,
        sizes: list[int],
        judged_scores: npt.NDArray[np.float64],
        member_words: list[npt.NDArray[np.uint64]],
        judged_words: list[npt.NDArray[np.uint64]],
    ) -> Iterator[npt.NDArray[np.int64]]:
        """Each judged id of queries ``q:stop`` against its members' ids (`sizes` per query), in
        order. Queries of one size are stacked into blocks of at most ``_BLOCK_PAIRS`` pairs (a few numpy calls
        for many queries), their judged docs padded to the block's most."""
        ks, scored, dense = self.ks, self.member_scores, self.dense
        m0 = j0 = 0
        while q < stop:
            m, has_scores, by_score = sizes[q], scored[q] is not None, dense[q]
            end, most = q + 1, ks[q]
            while (
                end < stop
                and sizes[end] == m
                and (scored[end] is not None) == has_scores
                and dense[end] == by_score
                and (end + 1 - q) * max(most, ks[end]) * m <= _BLOCK_PAIRS
            ):
                most = max(most, ks[end])
                end += 1
            g, n_judged = end - q, sum(ks[q:end])
            if g == 1:  # judged docs in broadcasts of at most _PAIRS_AT_ONCE pairs (bounded temporaries)
                member_scores = scored[q]
                a = [w[m0 : m0 + m] for w in member_words]
                step = max(1, _PAIRS_AT_ONCE // m)
                for r in range(j0, j0 + n_judged, step):
                    rows = slice(r, min(j0 + n_judged, r + step))
                    b = [w[rows, None] for w in judged_words]
                    equal = above = None
                    if member_scores is not None:
                        equal = member_scores == judged_scores[rows, None]
                        above = member_scores > judged_scores[rows, None] if by_score else None
                    yield _greater_counts(a, b, equal, above)
            else:
                a = [w[m0 : m0 + g * m].reshape(g, 1, m) for w in member_words]
                counts = np.array(ks[q:end])
                at, valid = _padded_rows(j0 + np.cumsum(counts) - counts, counts, most)
                b = [w[at][..., None] for w in judged_words]
                equal = above = None
                if has_scores:
                    block = np.concatenate([x for x in scored[q:end] if x is not None]).reshape(g, 1, m)  # none is None
                    judged = judged_scores[at][..., None]
                    equal = block == judged
                    above = block > judged if by_score else None
                yield _greater_counts(a, b, equal, above)[valid]
            m0 += g * m
            j0 += n_judged
            q = end

    def _by_str(
        self, q: int, stop: int, j0: int, judged_scores: npt.NDArray[np.float64]
    ) -> Iterator[npt.NDArray[np.int64]]:
        """As :meth:`_counts`, comparing the ids as UTF-8 bytes in Python (an id holds NUL)."""
        row = 0
        for k, ids, member_scores, by_score in zip(
            self.ks[q:stop], self.members[q:stop], self.member_scores[q:stop], self.dense[q:stop], strict=True
        ):
            members = [_key(d) for d in ids]
            counts = []
            for doc_id in self.judged_ids[j0 + row : j0 + row + k]:
                key = _key(doc_id)
                equal = np.ones(len(ids), dtype=bool) if member_scores is None else member_scores == judged_scores[row]
                above = int(np.count_nonzero(member_scores > judged_scores[row])) if by_score else 0
                counts.append(above + sum(1 for col in np.flatnonzero(equal).tolist() if members[col] > key))
                row += 1
            yield np.array(counts, dtype=np.int64)


def _key(doc_id: str) -> bytes:
    return doc_id.encode("utf-8", "surrogatepass")


def _fixed_width_words(
    joined: bytes, count: int, skip: int | None = None
) -> tuple[list[npt.NDArray[np.uint64]], int, int] | None:
    """`count` NUL-joined ids as big-endian 8-byte words from byte `skip` on, with `skip` and
    the ids' width, when all have one length and none holds NUL; ``None`` otherwise. `joined`
    ends with the last id's NUL, then 8 zero bytes (room for its last 8-byte window).

    By default `skip` is the leading bytes that every id shares (``doc00`` of ``doc0001234``):
    they decide no comparison, and the rest often fits one word.
    """
    stride, rest = divmod(len(joined) - 8, count) if count else (0, 1)
    width = stride - 1
    if rest:
        return None
    table = np.frombuffer(joined, dtype=np.uint8, count=count * stride).reshape(count, stride)
    # Each row ends in a NUL and there is no other: every id has `width` bytes.
    if not (table[:, -1] == 0).all() or np.count_nonzero(table) != count * width:
        return None

    def word(offset: int) -> npt.NDArray[np.uint64]:  # the 8 bytes from `offset` of every id, zero past its end
        window = np.ndarray((count,), dtype=">u8", buffer=joined, offset=offset, strides=(stride,)).astype(np.uint64)
        if width - offset < 8:
            window &= np.uint64(((1 << 64) - 1) ^ ((1 << (8 * (8 - (width - offset)))) - 1))
        return window

    if skip is None:  # shared_prefix's way, on strided windows: no gather (5 ms, not 32, for 2M ids)
        skip = 0
        while skip < width:
            first = word(skip)
            # Big-endian words: the bytes all share are the ones the least and the greatest share.
            differs = int(first.min()) ^ int(first.max())
            if differs:  # big-endian: the highest set bit is in the first byte that differs
                skip += (64 - differs.bit_length()) // 8
                break
            skip += 8
        skip = min(skip, width)
    if width - skip <= 4:  # one 4-byte word: half the bytes to compare
        short = np.ndarray((count,), dtype=">u4", buffer=joined, offset=skip, strides=(stride,)).astype(np.uint32)
        if width - skip < 4:
            short &= np.uint32(((1 << 32) - 1) ^ ((1 << (8 * (4 - (width - skip)))) - 1))
        return [short], skip, width  # type: ignore[list-item]  # compared as the 8-byte words are
    words = [word(offset) for offset in range(skip, width, 8)]
    return words, skip, width


def _id_words(joined: bytes, count: int, skip: int | None = None) -> tuple[list[npt.NDArray[np.uint64]], int] | None:
    """`count` NUL-joined ids of any lengths, ending as :func:`_fixed_width_words` wants them, as
    big-endian words (see :func:`big_endian_words`) from byte `skip` on (by default the bytes all
    share), with `skip`; ``None`` if an id holds NUL."""
    data = bytearray(joined)
    data += bytes(16)
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8)[: len(joined) - 8] == 0)
    if len(ends) != count:
        return None
    starts = np.zeros(count, dtype=np.int64)
    starts[1:] = ends[:-1] + 1
    if skip is None:
        skip = shared_prefix(data, starts, ends)
    return big_endian_words(data, starts + skip, ends), skip


_PAIRS_AT_ONCE = 1 << 20  # (judged, member) comparisons per block: bounds the temporary arrays (~40 MB)
_BLOCK_PAIRS = 1 << 17  # pairs per block of queries stacked together: its temporaries stay in cache
# Member ids per chunk of queries cut into words at once. A chunk's bytes and words (~250 KB of
# 10-byte ids) stay in cache and come from the heap; at 1 << 16 (~1 MB) malloc mapped each
# chunk's arrays afresh: ~10,000 page faults for 2,000 queries x 1,000 docs of integer grades.
_CHUNK_IDS = 1 << 14


def _padded_rows(
    first: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], most: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Rows ``first[g] .. first[g] + counts[g] - 1`` of each group as one ``(groups, most)`` matrix
    (a group's last row repeated where it has fewer), and which entries are real: the padding's
    counts are dropped."""
    column = np.arange(most)
    return first[:, None] + np.minimum(column, counts[:, None] - 1), column < counts[:, None]


def _padded(
    member_words: list[npt.NDArray[np.uint64]],
    judged_words: list[npt.NDArray[np.uint64]],
    n_members: int,
    n_judged: int,
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """Both word lists at one width, at least one: zero words after the shorter (zero sorts
    first, as a shorter id does)."""
    width = max(len(member_words), len(judged_words), 1)
    return (
        member_words + [np.zeros(n_members, np.uint64)] * (width - len(member_words)),
        judged_words + [np.zeros(n_judged, np.uint64)] * (width - len(judged_words)),
    )


# A run of equal scores met by many judged docs (every doc tied) is compared in one broadcast,
# judged docs x members (~1 ns a pair); a smaller one pair by pair, all at once (~30 ns a pair).
_BROADCAST_PAIRS = 4096


def _greater_counts(
    members: list[npt.NDArray[np.uint64]],
    judged: list[npt.NDArray[np.uint64]],
    equal: npt.NDArray[np.bool_] | None = None,
    above: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.int64]:
    """For each judged id (word columns of shape ``(k, 1)``), how many member ids (``(m,)``;
    only where `equal`, if given) are greater, plus the members where `above` is: all k x m
    pairs in one broadcast."""
    # Lexicographic over the words: a word decides where all the words before it are equal.
    greater = members[-1] > judged[-1]
    for x, y in zip(members[-2::-1], judged[-2::-1], strict=True):
        greater = (x > y) | ((x == y) & greater)
    if equal is not None:
        greater &= equal
    if above is not None:
        greater |= above
    # Summed as bytes into 32-bit counts: 4x faster than summing bools (which widens to int64).
    counts: npt.NDArray[np.uint32] = np.add.reduce(greater.view(np.uint8), axis=-1, dtype=np.uint32)
    return counts.astype(np.int64)


def _ahead_in_spans(
    member_words: list[npt.NDArray[np.uint64]],
    judged_words: list[npt.NDArray[np.uint64]],
    lo: npt.NDArray[np.int64],
    hi: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """For each judged doc, how many members in ``[lo, hi)`` (its equals; a span is known by its
    ``lo``) have a greater id. Ids are word tuples of one width (see :func:`_padded`)."""
    ahead = np.zeros(len(lo), dtype=np.int64)
    starts, where, counts = np.unique(lo, return_inverse=True, return_counts=True)
    stops = np.zeros(len(starts), dtype=np.int64)
    stops[where] = hi  # the judged docs of a span agree on its end
    pairs = counts * (stops - starts)
    broadcast = np.flatnonzero((pairs >= _BROADCAST_PAIRS) & (pairs <= _PAIRS_AT_ONCE))
    paired = np.ones(len(lo), dtype=bool)
    if len(broadcast):
        by_span = np.argsort(where, kind="stable")
        bounds = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(counts, out=bounds[1:])
        spans, first, size, n_judged = broadcast.tolist(), starts.tolist(), (stops - starts).tolist(), counts.tolist()
        i = 0
        while i < len(spans):
            # Spans of one size that follow one another (every doc of a query tied: one a query)
            # stack into one broadcast of at most _BLOCK_PAIRS pairs, their judged docs padded.
            m, most, j = size[spans[i]], n_judged[spans[i]], i + 1
            while (
                j < len(spans)
                and size[spans[j]] == m
                and first[spans[j]] == first[spans[j - 1]] + m
                and (j + 1 - i) * max(most, n_judged[spans[j]]) * m <= _BLOCK_PAIRS
            ):
                most = max(most, n_judged[spans[j]])
                j += 1
            block = broadcast[i:j]
            rows, valid = _padded_rows(bounds[block], counts[block], most)
            at = by_span[rows]
            a = [w[first[spans[i]] : first[spans[i]] + (j - i) * m].reshape(j - i, 1, m) for w in member_words]
            judged = at[valid]
            ahead[judged] = _greater_counts(a, [w[at][..., None] for w in judged_words])[valid]
            paired[judged] = False
            i = j
    rest = np.flatnonzero(paired)
    if len(rest):
        ahead[rest] = _count_ahead(member_words, [w[rest] for w in judged_words], lo[rest], hi[rest])
    return ahead


def _count_ahead(
    member_words: list[npt.NDArray[np.uint64]],
    judged_words: list[npt.NDArray[np.uint64]],
    lo: npt.NDArray[np.int64],
    hi: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """For each judged doc, how many members in ``[lo, hi)`` have a greater id, pair by pair:
    all pairs at once, a block of them at a time (word tuples of one width)."""
    sizes = hi - lo
    total = np.cumsum(sizes)
    ahead = np.zeros(len(lo), dtype=np.int64)
    start = 0
    while start < len(sizes):
        # As many judged docs as fit the block (at least one).
        limit = total[start] - sizes[start] + _PAIRS_AT_ONCE
        stop = max(start + 1, int(np.searchsorted(total, limit, "right")))
        block = np.arange(start, stop)
        size = sizes[block]
        judged = np.repeat(block, size)
        first = np.cumsum(size) - size
        member = np.arange(len(judged)) - np.repeat(first - lo[block], size)
        greater = np.zeros(len(judged), dtype=bool)
        equal = np.ones(len(judged), dtype=bool)
        for m_word, j_word in zip(member_words, judged_words, strict=True):
            mw, jw = m_word[member], j_word[judged]
            greater |= equal & (mw > jw)
            equal &= mw == jw
            if not equal.any():
                break
        ahead += np.bincount(judged, weights=greater, minlength=len(ahead)).astype(np.int64)
        start = stop
    return ahead


def _from_columns(
    run: RunColumns, qrels: Run, query_ids: list[str], missing: Missing, max_docs: int | None
) -> _Builder:
    """The hit table of a tokenised run file: judged docs are matched for all rows at once."""
    if len(run.scores) < _ROWS_FOR_A_THREAD or one_thread.get():
        out = _match_columns(run, qrels, query_ids, missing, max_docs)
        run.find_duplicate()
        return out
    from concurrent.futures import ThreadPoolExecutor

    _ = run.doc_hash  # hashed once, here, before both threads read the hashes
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The duplicate check sorts every row's hash; numpy sorts without the GIL, so it runs on
        # the other core while this thread matches and ranks.
        duplicates = pool.submit(run.find_duplicate)
        out = _match_columns(run, qrels, query_ids, missing, max_docs)
        duplicates.result()
    return out


# Below these sizes a second thread costs more than it saves (starting one takes 0.1-10 ms).
_ROWS_FOR_A_THREAD = 1 << 16
_BYTES_FOR_A_THREAD = 1 << 22


def _read_ahead(windows: Iterator[RunColumns]) -> Iterator[RunColumns]:
    """`windows`, the next one read and tokenised on another thread while this one is scored."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        coming = pool.submit(next, windows, None)
        while (window := coming.result()) is not None:
            coming = pool.submit(next, windows, None)
            yield window


_Part = tuple[list[str], list[int], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class _Streamed:
    """What a stretch of a run file gives: each window's hits, the query ids seen, the run id."""

    parts: list[_Part]
    seen: set[bytes]
    run_id: str


def _stream_part(
    path: str, qrels: Run, max_docs: int | None, span: tuple[int, int] | None = None
) -> _Streamed | None:
    """The windows of `path` (its bytes in `span`, or all) matched and ranked one by one; ``None``
    when a query comes back after another one's lines (not grouped by query)."""
    seen: set[bytes] = set()
    parts: list[_Part] = []
    run_id = ""
    windows = iter_run_columns(path, span=span)
    big = os.path.getsize(path) > _BYTES_FOR_A_THREAD or path.lower().endswith(".gz")  # gzip: bigger inside
    for columns in _read_ahead(windows) if big and not one_thread.get() else windows:
        if not seen.isdisjoint(columns.segments):
            return None
        seen.update(columns.segments)
        run_id = columns.run_id or run_id
        judged = sorted(q for q in map(bytes.decode, columns.segments) if q in qrels)
        built = _from_columns(columns, qrels, judged, "skip", max_docs)
        arrays = built.arrays
        if arrays is not None:  # else no judged query in this window
            parts.append((built.query_ids, built.num_ret, *arrays))
    return _Streamed(parts, seen, run_id)


def _from_stream(
    path: str, qrels: Run, query_ids: list[str], missing: Missing, max_docs: int | None
) -> tuple[_Builder, str] | None:
    """The hit table of a run file grouped by query, read window by window; ``None`` if not grouped.

    Each window holds whole query groups (:func:`~ef.io.trec.iter_run_columns`) and is matched
    and ranked on its own, so memory holds one window and the hits, however long the file. A file
    over 16 MiB is read in two processes at once, a half each (:func:`~ef.evaluation._split.in_halves`).
    A query whose lines come back after another query's (a file not grouped by query) cannot be
    ranked that way: the caller then reads the whole file (:func:`_from_columns`).
    """
    halves = in_halves(path, functools.partial(_stream_part, path, qrels, max_docs))
    if halves is None:
        whole = _stream_part(path, qrels, max_docs)
        if whole is None:
            return None
        parts, run_id = whole.parts, whole.run_id
    else:
        first, second = halves
        if first is None or second is None or not first.seen.isdisjoint(second.seen):
            return None  # a query in both halves: not grouped either
        parts, run_id = first.parts + second.parts, second.run_id or first.run_id
    out = _Builder(qrels)
    where = {q: (p, i) for p, part in enumerate(parts) for i, q in enumerate(part[0])}
    new_index = [np.full(len(part[0]), -1, dtype=np.int64) for part in parts]
    for query_id in query_ids:
        found = where.get(query_id)
        if found is not None:
            p, i = found
            new_index[p][i] = out.add(query_id, parts[p][1][i])
        elif missing == "zero":
            out.add(query_id, 0)
    if parts:
        query = np.concatenate([index[part[2]] for index, part in zip(new_index, parts, strict=True)])
        out.set_hits(query, np.concatenate([part[3] for part in parts]), np.concatenate([part[4] for part in parts]))
    else:
        empty = np.zeros(0, dtype=np.int64)
        out.set_hits(empty, empty, np.zeros(0))
    return out, run_id


# The matcher's prefilter: one flag per value of the low bits of a (query, doc) key. Every judged
# key sets its flag, so a row whose flag is clear cannot match and skips the binary search. 64 to
# 128 flags a judged key (at most 2^22, 4 MB, for ~1e5 judged pairs) leave ~98% of rows stopped
# after one lookup; a window of a streamed file, with a few hundred, gets a table that stays in cache.
_PREFILTER_BITS = 22
_PREFILTER_BITS_A_KEY = 6


def _pair_keys(doc_hash: npt.NDArray[np.uint64], query: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    """A key per (query index, doc hash): equal pairs give equal keys; a match is checked exactly."""
    return doc_hash ^ ((query.astype(np.uint64) + np.uint64(1)) * np.uint64(0xC2B2AE3D27D4EB4F))


def _match_columns(
    run: RunColumns, qrels: Run, query_ids: list[str], missing: Missing, max_docs: int | None
) -> _Builder:
    out = _Builder(qrels)
    present: list[tuple[int, npt.NDArray[np.int64] | slice]] = []
    for query_id in query_ids:
        # A lone surrogate (possible in a str, never in a file, which must be UTF-8) matches nothing.
        key = query_id.encode("utf-8", "surrogatepass")
        if key in run.segments:
            rows = run.rows(key)
            n = (rows.stop - rows.start) if isinstance(rows, slice) else len(rows)
            present.append((out.add(query_id, n if max_docs is None else min(n, max_docs)), rows))
        elif missing == "zero":
            out.add(query_id, 0)
    row_query = np.full(len(run), -1, dtype=np.int64)  # -1: a row of a query not evaluated
    for index, rows in present:
        row_query[rows] = index
    # Judged docs of the queries the run has, keyed like the run's rows.
    judged_query: list[int] = []
    judged_doc: list[bytes] = []
    judged_grade: list[float] = []
    for index, _ in present:
        for doc_id, grade in qrels[out.query_ids[index]].items():
            if grade >= -math.inf:  # negative grades too: HitTable counts them as pooled but unjudged
                judged_query.append(index)
                judged_doc.append(doc_id.encode("utf-8", "surrogatepass"))
                judged_grade.append(grade)
    judged_key = _pair_keys(hash_ids(judged_doc), np.array(judged_query, dtype=np.int64))
    order = np.argsort(judged_key)
    sorted_key = judged_key[order]
    bits = min(_PREFILTER_BITS, max(10, (len(sorted_key) << _PREFILTER_BITS_A_KEY).bit_length()))
    mask = np.uint64((1 << bits) - 1)
    prefilter = np.zeros(1 << bits, dtype=bool)
    prefilter[(sorted_key & mask).view(np.int64)] = True
    row_key = _pair_keys(run.doc_hash, row_query)
    candidates = np.flatnonzero(prefilter[(row_key & mask).view(np.int64)])
    candidate_key = row_key[candidates]
    at = np.minimum(np.searchsorted(sorted_key, candidate_key), max(len(sorted_key) - 1, 0))
    hit = sorted_key[at] == candidate_key if len(sorted_key) else np.zeros(0, dtype=bool)
    rows_hit, judged_hit = candidates[hit], order[at[hit]]
    # Exact check: the doc ids and queries must really be equal (a hash says only "probably").
    data = run.data
    row_query_hit = row_query[rows_hit].tolist()
    starts, stops = run.doc_start[rows_hit].tolist(), run.doc_stop[rows_hit].tolist()
    exact = [
        q == judged_query[j] and data[a:b] == judged_doc[j]
        for a, b, q, j in zip(starts, stops, row_query_hit, judged_hit.tolist(), strict=True)
    ]
    rows_hit, judged_hit = rows_hit[exact], judged_hit[exact]
    hit_query = row_query[rows_hit]
    by_query = np.argsort(hit_query, kind="stable")
    rows_hit, judged_hit, hit_query = rows_hit[by_query], judged_hit[by_query], hit_query[by_query]
    ranks = _ranks_of_sorted(run, rows_hit)
    if ranks is None:
        ranks = _ranks_by_query(run, out, present, rows_hit, hit_query)
    keep = ranks < max_docs if max_docs is not None else slice(None)
    try:
        grades = np.array(judged_grade, dtype=np.float64)
    except OverflowError:  # an int grade too large for a double: raises, naming the query
        out.judged_grades()
        raise
    out.set_hits(hit_query[keep], ranks[keep], grades[judged_hit][keep])
    return out


def _ranks_of_sorted(run: RunColumns, rows_hit: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
    """The ranks of the matched rows when each query is one run of rows with scores descending
    (as trec_eval, Anserini, Pyserini and ef write runs): found for all rows at once. ``None``
    for any other file, which :func:`_ranks_by_query` ranks query by query.

    In such a file a row's rank is the rows before its score's run of equal scores in its query,
    plus the rows of that run with a greater id.
    """
    if any(len(parts) != 1 for parts in run.segments.values()):
        return None
    scores = run.scores
    n = len(scores)
    query_start = np.zeros(n, dtype=bool)
    query_start[[parts[0].start for parts in run.segments.values()]] = True
    rising = scores[1:] > scores[:-1]
    if n > 1 and (rising & ~query_start[1:]).any():
        return None
    # A run of equal scores begins at a query's first row or where the score drops.
    begins = query_start.copy()
    begins[1:] |= scores[1:] != scores[:-1]
    tie_starts = np.flatnonzero(begins)
    query_starts = np.flatnonzero(query_start)
    at = tie_starts.searchsorted(rows_hit, "right") - 1
    first = tie_starts[at]
    stop = np.append(tie_starts, n)[at + 1]
    ranks = first - query_starts[query_starts.searchsorted(rows_hit, "right") - 1]
    tied = np.flatnonzero(stop - first > 1)
    if len(tied):  # ties go to the greater doc id (byte-wise), within each run of equal scores
        groups, where = np.unique(at[tied], return_inverse=True)
        lo, hi = tie_starts[groups], np.append(tie_starts, n)[groups + 1]
        sizes = hi - lo
        offsets = np.zeros(len(groups), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        members = np.repeat(lo - offsets, sizes) + np.arange(int(sizes.sum()))
        judged = rows_hit[tied]
        ranks[tied] += _ahead_in_spans(
            *_member_and_judged_words(run, members, judged), offsets[where], offsets[where] + sizes[where]
        )
    return ranks


def _member_and_judged_words(
    run: RunColumns, members: npt.NDArray[np.int64], judged: npt.NDArray[np.int64]
) -> tuple[list[npt.NDArray[np.uint64]], list[npt.NDArray[np.uint64]]]:
    """The doc ids of the rows `members` and `judged` (among them) as big-endian words, after
    the bytes all members share (``doc00`` of ``doc0001234``): often one word instead of two."""
    skip = shared_prefix(run.data, run.doc_start[members], run.doc_stop[members])
    return _padded(
        big_endian_words(run.data, run.doc_start[members] + skip, run.doc_stop[members]),
        big_endian_words(run.data, run.doc_start[judged] + skip, run.doc_stop[judged]),
        len(members),
        len(judged),
    )


def _ranks_by_query(
    run: RunColumns,
    out: _Builder,
    present: list[tuple[int, npt.NDArray[np.int64] | slice]],
    rows_hit: npt.NDArray[np.int64],
    hit_query: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """The ranks of the matched rows (grouped by query), each query's scores sorted apart."""
    bounds = np.searchsorted(hit_query, np.arange(len(out.query_ids) + 1)).tolist()
    ranks = np.zeros(len(rows_hit), dtype=np.int64)
    all_scores = run.scores
    # Per query: the ranks of its matched docs (method calls: less overhead than np.* functions);
    # tied ones are finished after the loop, all queries at once.
    tied_at: list[npt.NDArray[np.int64]] = []  # positions in ranks
    tied_rows: list[npt.NDArray[np.int64]] = []  # their rows
    member_rows: list[npt.NDArray[np.int64]] = []  # each query's tied rows, by score
    spans: list[npt.NDArray[np.int64]] = []  # each tied judged row's members, [lo, hi)
    n_members = 0
    for index, rows in present:
        a, b = bounds[index], bounds[index + 1]
        if a == b:
            continue
        scores = all_scores[rows]
        ordered = scores.copy()
        ordered.sort()
        found = all_scores[rows_hit[a:b]]
        right = ordered.searchsorted(found, "right")
        greater = len(ordered) - right
        tied = np.flatnonzero(ordered.searchsorted(found, "left") < right - 1)
        if len(tied):  # ties go to the greater doc id (byte-wise)
            row_of = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
            members = row_of[np.isin(scores, found[tied])]
            members = members[np.argsort(all_scores[members], kind="stable")]
            member_scores = all_scores[members]
            tied_at.append(a + tied)
            tied_rows.append(rows_hit[a:b][tied])
            member_rows.append(members)
            bounds_of = np.stack(
                [member_scores.searchsorted(found[tied], "left"), member_scores.searchsorted(found[tied], "right")],
                axis=1,
            )
            spans.append(bounds_of + n_members)
            n_members += len(members)
        ranks[a:b] = greater
    if tied_at:
        members, judged = np.concatenate(member_rows), np.concatenate(tied_rows)
        span = np.concatenate(spans)
        ranks[np.concatenate(tied_at)] += _ahead_in_spans(
            *_member_and_judged_words(run, members, judged), span[:, 0], span[:, 1]
        )
    return ranks


def _summary(measure: Measure, values: npt.NDArray[np.float64]) -> float:
    n = len(values)
    aggregate = measure.spec.aggregate
    if aggregate == "count":
        return float(n)
    if aggregate == "sum":
        return float(values.sum())
    if aggregate == "geometric":
        return geometric_mean(values, n)
    # A running sum, query after query, as trec_eval accumulates (not numpy's pairwise sum).
    return float(np.cumsum(values)[-1]) / n


def _evaluate(
    run: Run | RunColumns | _RunFile,
    qrels: Run,
    measures: Sequence[Measure],
    *,
    missing: Missing,
    relevance_level: float,
    max_docs: int | None,
) -> _Evaluation:
    # trec_eval's query order: ids compared byte-wise (str order is UTF-8 byte order).
    query_ids = sorted(qrels)
    # No reference cycles are made here, so the cyclic GC would only rescan the caller's (maybe
    # millions of) objects while the hit lists grow.
    collecting = gc.isenabled()
    gc.disable()
    try:
        run_id = ""
        if isinstance(run, _RunFile):
            streamed = _from_stream(run.path, qrels, query_ids, missing, max_docs)
            if streamed is None:  # not grouped by query: the whole file at once
                run = read_run_columns(run.path)
            else:
                built, run_id = streamed
        if isinstance(run, RunColumns):
            built = _from_columns(run, qrels, query_ids, missing, max_docs)
            run_id = run.run_id
        elif not isinstance(run, _RunFile):
            built = _from_mapping(run, qrels, query_ids, missing, max_docs)
    finally:
        if collecting:
            gc.enable()
    if not built.query_ids:
        raise ValueError(
            "no query to evaluate: 'qrels' is empty"
            if not qrels
            else "no query to evaluate: no query of the run is judged in 'qrels' (missing='skip')"
        )
    table = built.table(relevance_level)
    values = {m: m.evaluate(table) for m in dict.fromkeys(measures)}
    summary = {m: _summary(m, v) for m, v in values.items() if m.spec.aggregate != "none"}
    if missing == "zero":
        # trec_eval 10.0 with -c sums num_rel over the qrels itself: every grade > 0 of every
        # judged query, whatever -l says (m_num_rel.c, te_calc_avg_num_rel).
        everything = sum(1 for judged in qrels.values() for grade in judged.values() if grade > 0)
        summary.update({m: float(everything) for m in values if m.family == "num_rel"})
    return _Evaluation(built.query_ids, values, summary, skipped=len(query_ids) - len(built.query_ids), run_id=run_id)


def _load_qrels(qrels: Run | str | os.PathLike[str]) -> Run:
    if isinstance(qrels, str | os.PathLike):
        return read_qrels(qrels)
    if not isinstance(qrels, Mapping):
        raise TypeError(f"'qrels' must be a mapping or a path (got {type(qrels).__name__})")
    _check_nested(qrels, "qrels", "grade", every_doc=True)
    return qrels


def _check_nested(value: Run, name: str, what: str, *, every_doc: bool) -> None:
    """Ids are str and each query maps doc ids to values: an int id would silently match nothing.

    Every query id is checked, and every doc id of the qrels; of a run (millions of entries) the
    first doc id of each query, which catches a run keyed by ints without a pass over it all.
    """
    for query_id, docs in value.items():
        if not isinstance(query_id, str):
            raise TypeError(f"'{name}' has a query id that is not a str: {query_id!r} ({type(query_id).__name__})")
        if type(docs) is not dict and not isinstance(docs, Mapping):  # the ABC check costs ~1 us
            raise TypeError(f"'{name}[{query_id!r}]' must be a mapping of doc id -> {what} (got {type(docs).__name__})")
        if every_doc:
            doc_ids: Collection[object] = docs
        else:
            first = next(iter(docs), "")
            doc_ids = () if isinstance(first, str) else (first,)
        for doc_id in doc_ids:
            if not isinstance(doc_id, str):
                raise TypeError(
                    f"'{name}[{query_id!r}]' has a doc id that is not a str: {doc_id!r} ({type(doc_id).__name__})"
                )


def _load(
    run: Run | str | os.PathLike[str], qrels: Run | str | os.PathLike[str]
) -> tuple[Run | RunColumns | _RunFile, Run]:
    """Both inputs; a piped run is tokenised on other threads while the qrels are read here."""
    if not isinstance(run, str | os.PathLike):
        loaded = _load_run(run)
        judged = _load_qrels(qrels)
        if isinstance(qrels, str | os.PathLike) and isinstance(loaded, Mapping):
            refuse_swap(loaded, judged)  # a run file given as the qrels shows itself once read
        return loaded, judged
    if _is_file(run):  # a regular file is only opened now (streamed later)
        judged = _load_qrels(qrels)  # first, as below: a bad qrels file is the error reported
        return _load_run(run), judged
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        loading = pool.submit(_load_run, run)
        try:
            judged = _load_qrels(qrels)
        except BaseException:
            loading.cancel()
            raise
        return loading.result(), judged


def _is_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names a regular file (streamed, window by window) rather than ``-`` or a pipe."""
    return os.fspath(path) != "-" and os.path.isfile(path)


def _load_run(run: Run | str | os.PathLike[str]) -> Run | RunColumns | _RunFile:
    if isinstance(run, str | os.PathLike):
        path = os.fspath(run)
        # A regular file is streamed (and read again if it is not grouped by query); a pipe or
        # stdin is read once, whole.
        return _RunFile(path) if _is_file(path) else read_run_columns(path)
    if not isinstance(run, Mapping):
        raise TypeError(f"'run' must be a mapping or a path (got {type(run).__name__})")
    _check_nested(run, "run", "score", every_doc=False)
    return run


def evaluate_run(
    run: Run | str | os.PathLike[str] | DataFrameLike,
    qrels: Run | str | os.PathLike[str] | DataFrameLike,
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    missing: Missing = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
) -> RunEvalReport:
    """Evaluate a whole run against qrels with trec_eval's semantics, all queries at once.

    Documents are ranked by score descending, ties broken by doc id descending (byte-wise); the
    file's rank column is ignored. A document is relevant when its grade is
    ``>= relevance_level``; a negative grade counts as unjudged; nDCG's gain is the grade.
    Queries are those judged in `qrels`; a run query without judgements is ignored, and a judged
    query without a relevant document scores 0 and counts.

    Parameters
    ----------
    run
        ``{query_id: {doc_id: score}}``, the path of a TREC run file (plain or ``.gz``), or a
        pandas or polars DataFrame with the columns ``query_id``, ``doc_id``, ``score``.
    qrels
        ``{query_id: {doc_id: grade}}``, the path of a TREC qrels file or a BEIR qrels TSV, or a
        DataFrame with the columns ``query_id``, ``doc_id``, ``relevance``. ranx, BEIR and
        ir_measures take ``(qrels, run)``: pass ``run=`` and ``qrels=`` by keyword to be safe; a
        swap that the data shows (frame columns, or integer "run" values against distinct
        fractional "qrels" values) is a ``ValueError`` saying so.
    measures
        Measure names in ef's spelling (``ndcg@10``, ``recall@100``, ``precision@5``, ``mrr``,
        ``mrr@10``, ``map``, ``map@100``, ``hit_rate@10``) or trec_eval's (``ndcg_cut_10``,
        ``P_5``, ``recip_rank``, ``Rprec``, ``bpref``, ``gm_map``, ``iprec_at_recall_0.50``,
        ``num_rel`` …), ir_measures' (``nDCG@10``, ``P(rel=2)@5``, ``AP``) or trec_eval's ``-m``
        forms (``P.5,10``, ``official``, ``all_trec``); see ``ef.measures.resolve``.
    missing
        A judged query absent from the run: ``"zero"`` counts it with zeros (trec_eval ``-c``,
        ir-measures), ``"skip"`` leaves it out (pytrec_eval, BEIR).
    relevance_level
        The lowest grade that counts as relevant (trec_eval ``-l``).
    max_docs
        Evaluate only the top ``max_docs`` documents of each query (trec_eval ``-M``).

    Returns
    -------
    RunEvalReport
        Keyed by the measure names exactly as given; the measures of a trec_eval ``-m`` form
        (``official``, ``P.5,10``) by their canonical names (``P_5``, ``P_10``).

    Raises
    ------
    ValueError
        For an unknown measure name (the message lists the valid forms), a bad option, a score
        or grade that is not a number or is NaN, a malformed file (``file:line: ...``), a
        DataFrame with other columns, arguments that look swapped, or when no query can be
        evaluated.

    Examples
    --------
    >>> run = {'q1': {'d1': 0.9, 'd2': 0.8, 'd3': 0.1}, 'q2': {'d4': 0.5, 'd5': 0.4}}
    >>> qrels = {'q1': {'d1': 1, 'd3': 2}, 'q2': {'d5': 1}, 'q3': {'d6': 1}}
    >>> report = evaluate_run(run, qrels, ['P_2', 'mrr', 'num_rel_ret'])
    >>> report.metrics['mrr'], report.metrics['num_rel_ret'], report.n_queries
    (0.5, 3, 3)
    >>> evaluate_run(run, qrels, ['mrr'], missing='skip').metrics['mrr']  # q3 not in the run
    0.75
    >>> report.per_query['q2']
    {'P_2': 0.5, 'mrr': 0.5, 'num_rel_ret': 1}
    """
    if isinstance(measures, str):
        raise TypeError(f"'measures' must be a sequence of measure names, not a str (got {measures!r})")
    names = resolve(measures)  # (the name as given, its Measure): official, P.5,10 ... expanded
    textual = [name for name, m in names if m.spec.aggregate == "none"]
    if textual:
        raise ValueError(
            f"'measures': {textual[0]!r} is a string per query, printed by `ef trec-eval -q`, not a number"
        )
    if not names:
        raise ValueError("'measures' must name at least one measure")
    relevance_level, max_docs = _check_options(missing, relevance_level, max_docs)
    plain_run, plain_qrels = normalise(run, qrels)  # DataFrames read; a swapped (qrels, run) refused
    loaded_run, loaded_qrels = _load(plain_run, plain_qrels)
    result = _evaluate(
        loaded_run,
        loaded_qrels,
        [m for _, m in names],
        missing=missing,
        relevance_level=relevance_level,
        max_docs=max_docs,
    )

    def typed(measure: Measure, value: float) -> float:
        return int(value) if measure.spec.integer else value

    metrics = {name: typed(m, result.summary[m]) for name, m in names}
    # Counts become ints column by column; then one dict per query, built in C by zip.
    columns = [
        result.values[m].astype(np.int64).tolist() if m.spec.integer else result.values[m].tolist() for _, m in names
    ]
    keys = [name for name, _ in names]
    rows = zip(*columns, strict=True)
    per_query = {q: dict(zip(keys, row, strict=True)) for q, row in zip(result.query_ids, rows, strict=True)}
    return RunEvalReport(metrics=metrics, per_query=per_query, n_queries=len(result.query_ids))
