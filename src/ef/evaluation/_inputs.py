"""The inputs of a run evaluation made plain: every peer's form read, and a swapped ``(qrels, run)`` refused.

Besides ``{query_id: {doc_id: value}}`` mappings and paths, :func:`normalise` reads pandas and polars
DataFrames (ef's, ir_measures' and PyTerrier's column names, :mod:`ef.io.frames`), ranx ``Run`` and
``Qrels`` objects, and iterables of ir_measures' ``ScoredDoc`` / ``Qrel`` namedtuples (any namedtuple
with the fields ``query_id``, ``doc_id`` and ``score`` / ``relevance``).

ranx, BEIR and ir_measures take ``(qrels, run)``; ef takes ``(run, qrels)``. A swapped call would
score the judgements as if they were the run and return plausible, wrong numbers, so where the
data shows the swap, :func:`normalise` stops with an error that says so. Where it does not (two
mappings that could be either way round), nothing is guessed: the inputs pass unchanged.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Iterator, Mapping
from numbers import Real
from typing import Any

from ef.io.frames import QRELS_COLUMNS, RUN_COLUMNS, frame_columns, is_frame, qrels_from_frame, run_from_frame
from ef.io.ranked import RankedRun

__all__ = ["normalise", "refuse_swap", "swap_evidence", "warn_unreached_level"]

_HINT = (
    "the arguments look swapped: ef takes (run, qrels), while ranx, BEIR and ir_measures take (qrels, run); "
    "pass them as run=..., qrels=..."
)

# Thresholds of the value rule (see swap_evidence): a share of the "qrels" values, of repeats, and
# the distinct values per query that no grade scale has.
_FRACTIONAL_SHARE = 0.8
_REPEATED_SHARE = 0.1
_DISTINCT_PER_QUERY = 10


def normalise(run: Any, qrels: Any) -> tuple[Any, Any]:
    """`run` and `qrels` with DataFrames, ranx objects and ir_measures iterables read into mappings;
    anything else (a mapping, a path) is passed on unchanged.

    Raises ``ValueError`` when a frame's columns, the peer's own type (a ranx ``Qrels`` as the
    run, an iterable of ``Qrel``), or the values of two mappings show that the two arguments were
    swapped, and for a frame without the columns it needs (see :mod:`ef.io.frames`).

    >>> from ir_measures import Qrel, ScoredDoc
    >>> normalise([ScoredDoc("q1", "d1", 0.5)], iter([Qrel("q1", "d1", 1)]))
    ({'q1': {'d1': 0.5}}, {'q1': {'d1': 1}})
    """
    given = run, qrels
    run, qrels = _peer(run, "run"), _peer(qrels, "qrels")
    # A ranx object, rows or a RankedRun: its type said which it is.
    typed = run is not given[0] or qrels is not given[1] or type(run) is RankedRun
    run_is_frame, qrels_is_frame = is_frame(run), is_frame(qrels)
    if run_is_frame or qrels_is_frame:
        _check_frame_roles(run if run_is_frame else None, qrels if qrels_is_frame else None)
        # Frames name their columns, so the columns, not the values, tell which is which.
        return (run_from_frame(run) if run_is_frame else run), (qrels_from_frame(qrels) if qrels_is_frame else qrels)
    for value, role in ((run, "run"), (qrels, "qrels")):
        if isinstance(value, Mapping):
            _refuse_empty_ids(value, role)
    if isinstance(run, Mapping) and isinstance(qrels, Mapping) and not typed:
        refuse_swap(run, qrels)
    return run, qrels


def _refuse_empty_ids(data: Mapping[Any, Any], role: str) -> None:
    """An empty query or doc id is a key no file can hold (a TREC or BEIR line would lose the
    column): refused, as the readers refuse such a line, rather than scored as a query.

    >>> _refuse_empty_ids({"": {"d1": 1.0}}, "run")
    Traceback (most recent call last):
    ...
    ValueError: 'run' has an empty query id ('')
    """
    if "" in data:
        raise ValueError(f"'{role}' has an empty query id ('')")
    if type(data) is RankedRun and "" not in data.ids:  # its ids, once each, not a mapping a query
        return
    for query_id, docs in data.items():
        if (type(docs) is dict or isinstance(docs, Mapping)) and "" in docs:  # the ABC check costs ~1 us
            raise ValueError(f"'{role}' has an empty doc id ('') in query {query_id!r:.80}")


def refuse_swap(run: Mapping[Any, Any], qrels: Mapping[Any, Any]) -> None:
    """``ValueError`` when the values of two mappings show a swapped ``(qrels, run)`` (see
    :func:`swap_evidence`); also called once a qrels file is read, since a run file given as the
    qrels shows itself only then."""
    reason = swap_evidence(run, qrels)
    if reason is not None:
        # Naming the arguments (run=..., qrels=...) cannot answer this: only the values are seen here.
        raise ValueError(
            "the arguments look swapped: ef takes (run, qrels), while ranx, BEIR and ir_measures take (qrels, run) "
            f"({reason}). If each is already in its place (named or not), say which is which by its type: the run "
            "as a ranx Run, ScoredDoc rows (ir_measures, ef.compat.ir_measures) or a DataFrame with a 'score' column"
        )


_RANX = {"Run": "run", "Qrels": "qrels"}
_FIELDS = {("query_id", "doc_id", "score"): "run", ("query_id", "doc_id", "relevance"): "qrels"}


def _peer(value: Any, role: str) -> Any:
    """A ranx ``Run``/``Qrels`` or an iterable of ir_measures namedtuples as a dict of dicts; an ef
    ``RankedRun`` as it is (refused as the qrels); else `value`."""
    cls = type(value)
    if cls is RankedRun:  # a fused run: scored from its arrays (no dicts made)
        if role != "run":
            raise ValueError(f"{_HINT} (the {role!r} is a run that ef.fusion.fuse returned)")
        return value
    if cls.__module__.partition(".")[0] == "ranx" and cls.__name__ in _RANX:
        if _RANX[cls.__name__] != role:
            raise ValueError(f"{_HINT} (the {role!r} is a ranx {cls.__name__})")
        return {str(q): dict(docs) for q, docs in value.to_dict().items()}
    if not isinstance(value, list | tuple | Iterator):  # a mapping, a path, a frame, a run already read
        return value
    rows = iter(value)
    first = next(rows, None)
    fields = tuple(getattr(type(first), "_fields", ()))
    kind = next((k for names, k in _FIELDS.items() if fields[: len(names)] == names or set(names) <= set(fields)),
                None)
    if kind is None:
        if first is None and not isinstance(value, Iterator):
            return value  # an empty list: the loader says what is wrong with it
        return _refuse_rows(first, role)
    if kind != role:
        raise ValueError(f"{_HINT} (the {role!r} holds {type(first).__name__} rows, with a "
                         f"{'relevance' if kind == 'qrels' else 'score'} field)")
    column = "score" if role == "run" else "relevance"
    out: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(_chain(first, rows)):
        query_id, doc_id, number = row.query_id, row.doc_id, getattr(row, column)
        if not isinstance(query_id, str) or not isinstance(doc_id, str):
            raise TypeError(f"'{role}' row {i} must have str query_id and doc_id (got {query_id!r}, {doc_id!r})")
        docs = out.setdefault(query_id, {})
        if doc_id in docs:
            raise ValueError(f"'{role}' lists doc {doc_id!r} twice for query {query_id!r} (row {i})")
        docs[doc_id] = number
    return out


def _chain(first: Any, rest: Any) -> Iterable[Any]:
    yield first
    yield from rest


def _refuse_rows(first: Any, role: str) -> Any:
    raise TypeError(
        f"'{role}' must be a mapping, a path, a DataFrame, a ranx {role.capitalize()} or rows with the fields "
        f"query_id, doc_id, {'score' if role == 'run' else 'relevance'} (ir_measures' "
        f"{'ScoredDoc' if role == 'run' else 'Qrel'}); got an iterable of {type(first).__name__}"
    )


def _check_frame_roles(run: Any, qrels: Any) -> None:
    """A run frame with a ``relevance`` column, or a qrels frame with a ``score`` column, is a swap."""
    if run is not None and {"relevance", "label"} & set(frame_columns(run)) and "score" not in frame_columns(run):
        raise ValueError(
            f"{_HINT} (the 'run' DataFrame has the columns {frame_columns(run)}, the layout of qrels "
            f"{list(QRELS_COLUMNS)}; a run has {list(RUN_COLUMNS)})"
        )
    if qrels is not None and "score" in frame_columns(qrels) and not {"relevance", "label"} & set(frame_columns(qrels)):
        raise ValueError(
            f"{_HINT} (the 'qrels' DataFrame has the columns {frame_columns(qrels)}, the layout of a run "
            f"{list(RUN_COLUMNS)}; qrels have {list(QRELS_COLUMNS)})"
        )


def _fractional(value: object) -> bool:
    """Whether `value` is a finite real number with a fractional part (a bool or str is not)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return False
    try:
        number = float(value)
    except OverflowError:  # an int beyond a double: an integer
        return False
    return math.isfinite(number) and not number.is_integer()


def swap_evidence(run: Mapping[Any, Any], qrels: Mapping[Any, Any]) -> str | None:
    """Why `run` and `qrels` look swapped, or ``None`` when the data does not show it.

    All four must hold, so that a legitimate run is never refused:

    1. most values of `qrels` (80%) have a fractional part: retrieval scores do (one-decimal ones
       too), grades (TREC's and BEIR's are integers) do not;
    2. within each query those values are nearly all distinct (at most 10% repeats), or more than
       10 distinct values per query on average: a retriever scores documents apart, judgements
       repeat a few grades, fractional ones included;
    3. every value of `run` is an integer: grades are;
    4. `run` lists no more documents per query than `qrels`: qrels judge a few, runs rank many.

    A run of integer scores (a reranker's 0-10, rank-derived scores) against integer qrels fails
    rule 1 and passes; rule 1 stops at the first integer grades, so real qrels cost little. A
    swapped run of integer scores cannot be told from qrels by its values: it passes.

    >>> swap_evidence({"q1": {"d1": 1}}, {"q1": {"d1": 0.82, "d9": 0.51}})
    "the 'run' holds only integers and 1 doc per query, the 'qrels' distinct fractional values and 2 docs per query"
    >>> swap_evidence({"q1": {"d1": 3, "d9": 2}}, {"q1": {"d1": 1}}) is None  # an integer run: fine
    True
    """
    n_judged = 0
    integral = 0
    repeats = 0
    distinct = 0
    for docs in qrels.values():
        if not isinstance(docs, Mapping):
            return None  # not qrels at all: the loader names the problem
        values = list(docs.values())
        n_judged += len(values)
        integral += sum(1 for value in values if not _fractional(value))
        if integral > (1 - _FRACTIONAL_SHARE) * max(n_judged, 10):
            return None  # grades, not scores: the common case stops here
        try:
            different = len(set(values))
        except TypeError:  # an unhashable value: not a number, the loader names it
            return None
        repeats += len(values) - different
        distinct += different
    many = distinct > _DISTINCT_PER_QUERY * len(qrels)
    if n_judged < 2 or integral > (1 - _FRACTIONAL_SHARE) * n_judged or (
        repeats > _REPEATED_SHARE * n_judged and not many
    ):
        return None
    n_run = 0
    for docs in run.values():
        if not isinstance(docs, Mapping):
            return None
        for value in docs.values():
            if _fractional(value) or not _number(value):
                return None
        n_run += len(docs)
    if not run or n_run / len(run) > n_judged / len(qrels):
        return None
    per_run = n_run / len(run)
    per_qrels = n_judged / len(qrels)
    return (
        f"the 'run' holds only integers and {per_run:.3g} doc{'s' if per_run != 1 else ''} per query, "
        f"the 'qrels' distinct fractional values and {per_qrels:.3g} docs per query"
    )


def _number(value: object) -> bool:
    """Whether `value` is a real number (not a bool): an int beyond a double's range counts."""
    return not isinstance(value, bool) and isinstance(value, Real)


def warn_unreached_level(top: float | None, level: float, *, stacklevel: int) -> None:
    """Warn when no judgement reaches `level` (`top` is the highest grade judged, ``None`` for none):
    nothing counts as relevant, so every measure that counts relevant documents is 0 on every query
    (`stacklevel`: the caller's frame, counted as ``warnings.warn`` counts).
    trec_eval prints those zeros without a word; scikit-learn warns the same way when a measure is
    undefined (``UndefinedMetricWarning``).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unreached_level(1, 2, stacklevel=1)
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    relevance_level=2: no judgement reaches it (the highest grade is 1), so no document counts as relevant: P, ...
    """
    if top is not None and top < level:
        warnings.warn(
            f"relevance_level={level:g}: no judgement reaches it (the highest grade is {top:g}), so no document "
            "counts as relevant: P, recall, map, recip_rank and every other measure that counts relevant documents "
            "is 0 on every query",
            UserWarning,
            stacklevel=stacklevel + 1,  # the line of the public call the caller names
        )
