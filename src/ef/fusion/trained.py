"""The trained methods' tables, fitted on training qrels: probabilities (or odds, or MAP) by rank.

A document is relevant when its grade is at least the relevance level (1 by default, ranx's
``rel_lvl=1``; 2 for TREC DL's passage qrels). The training queries
are those judged in the qrels; a run lacking one of them contributes an empty list (ranx's
``make_comparable``), which counts in the averages of ProbFuse, SegFuse and BayesFuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from ef.fusion._stack import Stack

__all__ = ["BAYES_CUTOFFS", "SEGFUSE_BOUNDS", "fit_tables", "hits"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

# BayesFuse's rank segments (Aslam & Montague 2001, as ranx): [0, 5), [5, 10), ... [500, 1000).
BAYES_CUTOFFS = (0, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
# SegFuse's segments grow exponentially (Shokouhi 2007): size 10 * 2^(k-1) - 5 at the end of segment k.
SEGFUSE_BOUNDS = (0, *(10 * 2 ** (k - 1) - 5 for k in range(1, 11)))
_FLOOR = 0.001  # BayesFuse's floor for a probability of 0 or 1


def hits(
    stack: Stack, qrels: Mapping[str, Mapping[str, Any]], level: float
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], int]:
    """Per entry: whether its doc is relevant, whether its query is a training query; and how many training queries."""
    judged = [qrels.get(q) for q in stack.queries]
    relevant = np.fromiter(
        ((judged[q] or {}).get(d, 0) >= level for q, d in zip(stack.pair_query.tolist(), stack.docs, strict=True)),
        dtype=bool, count=len(stack.docs),
    )
    training = np.array([j is not None for j in judged] or [False], dtype=bool)
    return relevant[stack.doc], training[stack.query], len(qrels)


def _positions(
    stack: Stack, hit: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_], r: int, n_queries: int
) -> Floats:
    """PosFuse's P(relevant | rank) of run `r`: hits at each rank over the training lists that reach it."""
    mine = keep & (stack.run == r)
    if not mine.any():
        return np.zeros(0)
    ranks = stack.rank[mine] - 1
    longest = int(ranks.max()) + 1
    hits_at = np.bincount(ranks, weights=hit[mine].astype(np.float64), minlength=longest)
    lists = (stack.list_run == r) & keep[stack.starts]
    reach = np.bincount(stack.counts[lists], minlength=longest + 1)[::-1].cumsum()[::-1][1:]  # lists longer than i
    out: Floats = hits_at / reach[:longest]
    return out


def _segments(stack: Stack, hit: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_], r: int, n_segments: int,
              n_queries: int) -> Floats:
    """ProbFuse: each training list cut into `n_segments` of ceil(length / n) docs; the mean hit share per segment."""
    mine = keep & (stack.run == r)
    length = np.repeat(stack.counts, stack.counts)[mine]
    size = -(-length // n_segments)
    segment = (stack.rank[mine] - 1) // size
    seg_len = np.minimum(size, length - segment * size)
    share = np.bincount(segment, weights=hit[mine] / seg_len, minlength=n_segments)
    return share / max(n_queries, 1)


def _fixed_segments(stack: Stack, hit: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_], r: int,
                    bounds: tuple[int, ...], n_queries: int) -> Floats:
    """The mean share of hits in each fixed segment [bounds[k], bounds[k+1]) over the training queries."""
    mine = keep & (stack.run == r)
    ranks = stack.rank[mine] - 1
    inside = ranks < bounds[-1]
    segment = np.searchsorted(np.array(bounds), ranks[inside], side="right") - 1
    counts = np.bincount(segment, weights=hit[mine][inside].astype(np.float64), minlength=len(bounds) - 1)
    return counts / np.diff(bounds) / max(n_queries, 1)


def _average_precision(stack: Stack, hit: npt.NDArray[np.bool_], keep: npt.NDArray[np.bool_], r: int,
                       relevant: Mapping[int, int], n_queries: int) -> float:
    """MAP of run `r` over the training queries (trec_eval's, at the relevance level of `relevant`)."""
    mine = keep & (stack.run == r)
    h = hit[mine].astype(np.float64)
    query = stack.query[mine]
    cum = np.cumsum(h)
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if len(query) else np.zeros(0, np.int64)
    before = np.repeat(np.r_[0.0, cum][starts], np.diff(np.r_[starts, len(query)]))
    precision = (cum - before) / stack.rank[mine]
    total = np.bincount(query, weights=precision * h, minlength=max(len(stack.queries), 1))
    ap = [total[q] / n for q, n in relevant.items() if n > 0]
    return float(sum(ap) / max(n_queries, 1))


def fit_tables(
    stack: Stack, qrels: Mapping[str, Mapping[str, Any]], method: str, params: Mapping[str, Any], level: float
) -> list[Any]:
    """Per run, the table `method` scores ranks with, fitted on `qrels` (relevant: a grade >= `level`)."""
    hit, keep, n_queries = hits(stack, qrels, level)
    tables: list[Any] = []
    for r in range(stack.n_runs):
        if method in ("posfuse", "slidefuse"):
            tables.append(_positions(stack, hit, keep, r, n_queries))
        elif method == "probfuse":
            tables.append(_segments(stack, hit, keep, r, int(params["segments"]), n_queries))
        elif method == "segfuse":
            tables.append(_fixed_segments(stack, hit, keep, r, SEGFUSE_BOUNDS, n_queries))
        elif method == "bayesfuse":
            p = _fixed_segments(stack, hit, keep, r, BAYES_CUTOFFS, n_queries)
            p = np.where(p == 0, _FLOOR, p)
            tables.append(np.log(p / np.where(p == 1, _FLOOR, 1 - p)))
        elif method == "mapfuse":
            query_code = {query: i for i, query in enumerate(stack.queries)}
            relevant = {query_code[q]: sum(1 for g in judged.values() if g >= level)
                        for q, judged in qrels.items() if q in query_code}
            tables.append(_average_precision(stack, hit, keep, r, relevant, n_queries))
        else:  # pragma: no cover - the registry lists only these
            raise ValueError(f"method {method!r} is not trained")
    return tables
