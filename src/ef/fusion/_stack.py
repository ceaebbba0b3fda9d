"""Runs made into one set of flat arrays: every (run, query, doc, score) entry, ranked per list.

A run is a ``{query_id: {doc_id: score}}`` mapping, the path of a TREC run file (read with
:func:`ef.trec.read_run`) or a pandas/polars frame (read with :func:`ef.io.frames.run_from_frame`,
as :func:`ef.evaluation.evaluate_run` reads them). Inputs are read, never modified.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import numpy.typing as npt

from ef.fusion._order import trec_order
from ef.io.frames import is_frame, run_from_frame

__all__ = ["Stack", "load_run", "stack_rankings", "stack_runs"]

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]


def load_run(run: object, name: str) -> Mapping[str, Mapping[str, Any]]:
    """`run` as a mapping: a path is read, a frame converted, a mapping passed on (not copied)."""
    if isinstance(run, str | os.PathLike):
        from ef.trec import read_run

        return read_run(os.fspath(run))
    if is_frame(run):
        return run_from_frame(run)
    if isinstance(run, Mapping):
        return run
    raise TypeError(
        f"{name} must be a {{query_id: {{doc_id: score}}}} mapping, the path of a TREC run file or a "
        f"DataFrame (got {type(run).__name__})"
    )


@dataclass(frozen=True, slots=True)
class Stack:
    """The entries of `n_runs` runs, ordered by run, then query, then trec_eval's order.

    ``queries`` are the query ids in first-appearance order (run by run), ``docs`` the doc ids in
    byte order; ``query`` and ``doc`` index them. ``starts``/``counts`` delimit each (run, query)
    list, ``list_run``/``list_query`` say whose it is; ``rank`` counts from 1 within a list.
    """

    n_runs: int
    queries: list[str]
    docs: list[str]
    n_docs: int
    run: Ints
    query: Ints
    doc: Ints
    score: Floats
    rank: Ints
    starts: Ints
    counts: Ints
    list_run: Ints
    list_query: Ints

    def cut(self, depth: int) -> Stack:
        """Each list's top `depth` entries."""
        keep = self.rank <= depth
        if keep.all():
            return self
        counts = np.minimum(self.counts, depth)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        return Stack(
            self.n_runs, self.queries, self.docs, self.n_docs, self.run[keep], self.query[keep], self.doc[keep],
            self.score[keep], self.rank[keep], starts, counts, self.list_run, self.list_query,
        )


def _code_short_ids(ids: list[str]) -> tuple[Ints, list[str]] | None:
    """:func:`_code_docs` for ASCII ids of at most 8 bytes (most corpora's), without a hash lookup per id.

    Each id, zero-padded to 8 bytes and read as a big-endian integer, orders as its bytes do (a
    shorter id first on a shared prefix, as strcmp); one integer sort then codes them all.
    ``None`` for anything else: a non-str (``join`` refuses it), a non-ASCII or NUL char, a longer id.
    """
    try:
        joined = "".join(ids)
    except TypeError:
        return None
    if not joined.isascii() or "\x00" in joined:
        return None
    raw = np.array(ids, dtype="S")
    if raw.dtype.itemsize > 8:
        return None
    keys = raw.astype("S8").view(">u8")
    distinct, code = np.unique(keys, return_inverse=True)
    names = [name.decode("ascii") for name in distinct.view("S8").tolist()]
    return code.reshape(-1).astype(np.int64, copy=False), names


def _code_docs(ids: list[str]) -> tuple[Ints, list[str]]:
    """Each id's code, and the distinct ids in byte order (a code is a position in that list).

    Only the distinct ids are type-checked: a mix of types cannot be sorted, one type shows in any.
    """
    if ids:
        short = _code_short_ids(ids)
        if short is not None:
            return short
    unique = set(ids)
    bad = [i for i in unique if not isinstance(i, str)][:1] if set(map(type, unique)) - {str} else []
    if bad:
        raise TypeError(f"a run must have str doc ids (got {bad[0]!r})")
    distinct = sorted(unique)
    code = dict(zip(distinct, range(len(distinct)), strict=True))
    return np.fromiter(map(code.__getitem__, ids), np.int64, count=len(ids)), distinct


def _check_entries(run: Mapping[str, Mapping[str, Any]], name: str, scores: Floats) -> None:
    """``TypeError``/``ValueError`` naming the query and doc of the first id or score that cannot rank."""
    for query_id, docs in run.items():
        if not isinstance(query_id, str):
            raise TypeError(f"{name} must have str query ids (got {query_id!r})")
        if not isinstance(docs, Mapping):
            raise TypeError(f"{name}[{query_id!r}] must be a {{doc_id: score}} mapping (got {type(docs).__name__})")
    for docs in run.values():
        if docs and not isinstance(next(iter(docs)), str):
            raise TypeError(f"{name} must have str doc ids (got {next(iter(docs))!r})")
    if not np.isfinite(scores).all():
        for query_id, docs in run.items():
            for doc_id, value in docs.items():
                if not math.isfinite(float(value)):
                    raise ValueError(
                        f"{name}[{query_id!r}][{doc_id!r}]: a score must be a finite number (got {value!r})"
                    )


def _scores(run: Mapping[str, Mapping[str, Any]], name: str, values: list[Any]) -> Floats:
    """`values` (the run's scores, list by list) as floats; ``TypeError`` naming the first that is not real."""
    kinds = set(map(type, values))
    if kinds <= {float}:  # the common case (read_run's): no per-score check beyond the type set
        return np.array(values, dtype=np.float64) if values else np.zeros(0)
    for kind in kinds:
        if kind is bool or not issubclass(kind, Real | np.integer | np.floating):
            for query_id, docs in run.items():
                for doc_id, value in docs.items():
                    if type(value) is kind:
                        raise TypeError(
                            f"{name}[{query_id!r}][{doc_id!r}]: a score must be a real number "
                            f"(got {value!r} of type {kind.__name__})"
                        )
    return np.fromiter(values, np.float64, count=len(values))


def stack_runs(runs: Sequence[Mapping[str, Mapping[str, Any]]], names: Sequence[str]) -> Stack:
    """The entries of `runs` (mappings, see :func:`load_run`) as one :class:`Stack`.

    Raises ``TypeError``/``ValueError`` naming the run, query and doc of an id that is not a str or
    a score that is not a finite real number.
    """
    query_code: dict[str, int] = {}
    ids: list[str] = []
    parts_q: list[Ints] = []
    parts_s: list[Floats] = []
    parts_r: list[Ints] = []
    for r, (run, name) in enumerate(zip(runs, names, strict=True)):
        lists = list(run.values())
        if not all(isinstance(docs, Mapping) for docs in lists):
            _check_entries(run, name, np.zeros(0))
        sizes = np.fromiter(map(len, lists), np.int64, count=len(lists))
        # One extend per list, not a generator per entry: ids and scores are copied at C speed.
        values: list[Any] = []
        for docs in lists:
            ids.extend(docs)
            values.extend(docs.values())
        scores = _scores(run, name, values)
        del values
        _check_entries(run, name, scores)
        codes = np.fromiter((query_code.setdefault(q, len(query_code)) for q in run), np.int64, count=len(run))
        parts_q.append(np.repeat(codes, sizes))
        parts_s.append(scores)
        parts_r.append(np.full(len(scores), r, dtype=np.int64))
    doc, distinct = _code_docs(ids)
    query = np.concatenate(parts_q) if parts_q else np.zeros(0, np.int64)
    score = np.concatenate(parts_s) if parts_s else np.zeros(0)
    run_of = np.concatenate(parts_r) if parts_r else np.zeros(0, np.int64)
    return _build(len(runs), list(query_code), distinct, len(distinct), run_of, query, doc, score)


def stack_rankings(rankings: Sequence[Sequence[Ints]]) -> tuple[Stack, int]:
    """Ranked lists of positions (``rankings[run][query]``, best first) as a :class:`Stack`.

    A position's code is ``top - position`` (``top`` is returned), so that on a tie, where
    trec_eval's order takes the larger code, the earlier position comes first.
    """
    n_queries = max((len(lists) for lists in rankings), default=0)
    parts = [(r, q, np.asarray(p, dtype=np.int64)) for r, lists in enumerate(rankings) for q, p in enumerate(lists)]
    sizes = np.array([len(p) for _, _, p in parts], dtype=np.int64)
    positions = np.concatenate([p for _, _, p in parts]) if parts else np.zeros(0, np.int64)
    top = int(positions.max()) if len(positions) else 0
    run_of = np.repeat(np.array([r for r, _, _ in parts], dtype=np.int64), sizes)
    query = np.repeat(np.array([q for _, q, _ in parts], dtype=np.int64), sizes)
    rank = np.arange(len(positions)) - np.repeat(np.cumsum(sizes) - sizes, sizes) + 1
    queries = [str(q) for q in range(n_queries)]
    stack = _build(len(rankings), queries, [], top + 1, run_of, query, top - positions, -rank.astype(np.float64))
    return stack, top


def _build(n_runs: int, queries: list[str], docs: list[str], n_docs: int, run_of: Ints, query: Ints, doc: Ints,
           score: Floats) -> Stack:
    n_queries = max(len(queries), 1)
    group = run_of * n_queries + query
    order = trec_order(group, score, doc)
    group, query, doc, score, run_of = group[order], query[order], doc[order], score[order], run_of[order]
    new = np.ones(len(group), dtype=bool)
    new[1:] = group[1:] != group[:-1]
    starts = np.flatnonzero(new).astype(np.int64)
    counts = np.diff(np.append(starts, len(group))).astype(np.int64)
    rank = np.arange(len(group), dtype=np.int64) - np.repeat(starts, counts) + 1
    return Stack(
        n_runs, queries, docs, n_docs, run_of, query, doc, score, rank, starts, counts, run_of[starts], query[starts]
    )
