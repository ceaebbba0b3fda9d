"""Fusion methods: the registry, the vectorised kernels and :func:`fuse`.

A method turns each run's list for a query into values (normalised scores, or a function of the
rank) and combines the values a document gets from the runs. Everything runs on flat numpy
arrays over all (run, query, doc) entries at once; only Condorcet, whose pairwise votes are
quadratic in a query's documents, loops, once per query.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ef._validate import check_positive_number
from ef.fusion._order import trec_order
from ef.fusion._stack import Stack, stack_inputs, stack_rankings
from ef.fusion.norms import NORMS, Lists, _ListError, normalise, overflow_message
from ef.fusion.trained import BAYES_CUTOFFS, SEGFUSE_BOUNDS, fit_tables
from ef.io.ranked import RankedRun

__all__ = ["METHODS", "Method", "fit", "fuse", "fuse_rankings"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Missing = Literal["zero", "min"]
Kind = Literal["score", "rank", "trained"]

_MIN_ODD = math.log(0.001 / 0.999)  # BayesFuse's log-odds for a doc a run does not list (ranx's)


@dataclass(frozen=True, slots=True)
class Method:
    """A fusion method: how it scores, its parameters and their defaults, and its source.

    ``kind`` is ``"score"`` (combines normalised scores), ``"rank"`` (a function of each list's
    ranks; takes no normalisation) or ``"trained"`` (scores ranks with a table fitted on qrels).
    """

    name: str
    kind: Kind
    formula: str
    reference: str
    defaults: tuple[tuple[str, float], ...] = ()
    weighted: bool = False

    @property
    def default_norm(self) -> str:
        return "min-max" if self.kind == "score" or self.name == "segfuse" else "none"


_FOX = "Fox & Shaw 1993 (TREC-2)"
_WU = "Wu & Crestani 2002 (CIKM)"
_MOURAO = "Mourao, Martins & Magalhaes 2015"

METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("combsum", "score", "sum_r s_r", _FOX),
        Method("combmnz", "score", "sum_r s_r * n(d)", _FOX),
        Method("combanz", "score", "sum_r s_r / m(d)", _FOX),
        Method("combmax", "score", "max_r s_r", _FOX),
        Method("combmin", "score", "min_r s_r", _FOX),
        Method("combmed", "score", "median_r s_r", _FOX),
        Method("combgmnz", "score", "sum_r s_r * n(d)^gamma", "Lee 1997 (SIGIR)", (("gamma", 1.0),)),
        Method("wsum", "score", "sum_r w_r s_r", "Bartell et al. 1994", weighted=True),
        Method("wmnz", "score", "sum_r s_r * sum_{r listing d} w_r", _WU, weighted=True),
        Method("mixed", "score", "sum_r w_r s_r * sqrt(n(d))", _WU, weighted=True),
        Method("rrf", "rank", "sum_r w_r / (k + rank_r)", "Cormack, Clarke & Buettcher 2009 (SIGIR)",
               (("k", 60.0),), weighted=True),
        Method("isr", "rank", "sum_r 1 / rank_r^2 * n(d)", _MOURAO),
        Method("log_isr", "rank", "sum_r 1 / rank_r^2 * log n(d)", _MOURAO),
        Method("logn_isr", "rank", "sum_r 1 / rank_r^2 * log(n(d) + sigma)", _MOURAO,
               (("sigma", 0.01),)),
        Method("rbc", "rank", "sum_r (1 - phi) phi^(rank_r - 1)", "Bailey et al. 2017 (SIGIR)", (("phi", 0.8),)),
        Method("borda", "rank", "sum_r (c - rank_r + 1); unlisted (c - n_r + 1) / 2", "Aslam & Montague 2001 (SIGIR)"),
        Method("wborda", "rank", "sum_r w_r (c - rank_r + 1); unlisted (c - n_r + 1) / 2",
               "Aslam & Montague 2001 (SIGIR)", weighted=True),
        Method("condorcet", "rank", "Copeland: pairwise majority wins + draws / 2",
               "Montague & Aslam 2002 (CIKM)"),
        Method("wcondorcet", "rank", "Copeland over votes weighted by w_r", "Montague & Aslam 2002 (CIKM)",
               weighted=True),
        Method("bayesfuse", "trained", "sum_r log-odds(relevant given rank segment of d in r)",
               "Aslam & Montague 2001 (SIGIR)"),
        Method("posfuse", "trained", "sum_r P(relevant given rank_r)", "Lillis et al. 2008"),
        Method("probfuse", "trained", "sum_r P(relevant given segment k of r) / k", "Lillis et al. 2006 (SIGIR)",
               (("segments", 10.0),)),
        Method("segfuse", "trained", "sum_r P(relevant given segment of r) * (s_r + 1)", "Shokouhi 2007 (ECIR)"),
        Method("slidefuse", "trained", "sum_r mean P(relevant given rank in rank_r +/- w)", "Lillis et al. 2009",
               (("w", 2.0),)),
        Method("mapfuse", "trained", "sum_r MAP_r / rank_r", "Lillis et al. 2010"),
    )
}


def _names(runs: Any) -> tuple[list[Any], list[str]]:
    if isinstance(runs, Mapping):
        return list(runs.values()), [f"runs[{name!r}]" for name in runs]
    if isinstance(runs, str) or not isinstance(runs, Sequence):
        raise TypeError(f"'runs' must be a list of runs or a {{name: run}} mapping (got {type(runs).__name__})")
    return list(runs), [f"runs[{i}]" for i in range(len(runs))]


def _check_number(value: object, name: str, low: float | None, high: float | None, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be {rule} (got {value!r})")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range (10**400)
        number = math.inf
    if not math.isfinite(number) or (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name} must be {rule} (got {value!r:.80})")
    return number


def resolve(
    method: str, norm: str | None, weights: Sequence[float] | None, params: Mapping[str, Any] | None, n_runs: int
) -> tuple[Method, str, Floats, dict[str, Any]]:
    """The method, norm, weights and parameters checked and completed with defaults."""
    if method not in METHODS:
        raise ValueError(f"'method' must be one of {', '.join(map(repr, METHODS))} (got {method!r})")
    spec = METHODS[method]
    chosen = spec.default_norm if norm is None else norm
    if chosen not in NORMS:
        raise ValueError(f"'norm' must be one of {', '.join(map(repr, NORMS))} (got {norm!r})")
    if spec.kind != "score" and spec.name != "segfuse" and chosen != "none":
        if chosen == "min-max-inverted":  # ranx ranks by the inverted scores; here ranks are by score, highest first
            raise ValueError(f"'norm' does not apply to method {method!r}, which uses ranks, highest score first (got "
                             f"{norm!r}; pass none, and negate the scores of a run where lower is better)")
        raise ValueError(f"'norm' does not apply to method {method!r}, which uses ranks (got {norm!r}; pass none)")
    if spec.name == "segfuse" and chosen == "min-max-inverted":  # its ranks would be read from the worst end
        raise ValueError("'norm' 'min-max-inverted' does not apply to method 'segfuse', whose segments are of the "
                         "ranks, highest score first: negate the scores of a run where lower is better instead")
    if weights is None:
        w = np.ones(n_runs)
    else:
        if not spec.weighted:
            raise ValueError(f"'weights' do not apply to method {method!r} (weighted methods: "
                             f"{', '.join(repr(m.name) for m in METHODS.values() if m.weighted)})")
        if isinstance(weights, str | bytes) or not isinstance(weights, Iterable):  # a str: each character a weight
            raise TypeError(f"'weights' must be a sequence of numbers, one per run (got {type(weights).__name__})")
        values = [_check_number(x, f"'weights[{i}]'", None, None, "a finite number") for i, x in enumerate(weights)]
        if len(values) != n_runs:
            raise ValueError(f"'weights' must hold one weight per run ({n_runs}) (got {len(values)})")
        w = np.array(values)
    if params is not None and not isinstance(params, Mapping):  # dict() would take a list of pairs
        raise TypeError(f"'params' must be a mapping {{name: value}} (got {type(params).__name__})")
    given = dict(params or {})
    known = {name for name, _ in spec.defaults} | ({"tables"} if spec.kind == "trained" else set())
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(f"'params' of method {method!r} are {sorted(known) or 'none'} (got {unknown[0]!r})")
    out: dict[str, Any] = dict(spec.defaults)
    out.update(given)
    rules = {
        "k": (0.0, None, "a finite number >= 0"),
        "gamma": (None, None, "a finite number"),
        "sigma": (0.0, None, "a finite number >= 0"),
        "phi": (0.0, 1.0, "a number in (0, 1)"),
        "segments": (1.0, None, "an integer >= 1"),
        "w": (0.0, None, "an integer >= 0"),
    }
    for name, (low, high, rule) in rules.items():
        if name in out:
            out[name] = _check_number(out[name], f"'params[{name!r}]'", low, high, rule)
            if name == "phi" and out[name] in (0.0, 1.0):
                raise ValueError(f"'params['phi']' must be {rule} (got {out[name]!r})")
            if name in ("segments", "w"):
                if not out[name].is_integer():
                    raise ValueError(f"'params[{name!r}]' must be {rule} (got {given[name]!r})")
                out[name] = int(out[name])
    return spec, chosen, w, out


def check_missing(spec: Method, missing: str) -> None:
    """`missing` ``"min"`` imputes a list's lowest normalised score: a method of ranks or of fitted
    tables has none (RRF took the list's last ``1 / (k + rank)``, Borda and Condorcet ignored it)."""
    if missing == "min" and spec.kind != "score":
        kind = "rank-based" if spec.kind == "rank" else spec.kind
        raise ValueError(f"'missing' 'min' imputes a normalised score, for score-based methods; method "
                         f"{spec.name!r} is {kind}: leave it out")


@dataclass(frozen=True, slots=True)
class Fused:
    """The fused (query, doc, score) entries in trec_eval's order, as codes into the stack's ids."""

    query: Ints
    doc: Ints
    score: Floats


def _entry_values(stack: Stack, spec: Method, norm: str, params: Mapping[str, Any], per_query: Ints,
                  names: Sequence[str]) -> Floats:
    rank = stack.rank.astype(np.float64)
    name = spec.name
    if spec.kind == "score" or name == "segfuse":
        try:
            values = normalise(Lists(stack.score, stack.rank, stack.starts, stack.counts, stack.query, per_query), norm)
        except _ListError as error:
            r, q = int(stack.list_run[error.index]), int(stack.list_query[error.index])
            raise ValueError(f"{names[r]}, query {stack.queries[q]!r}: {error}") from None
        if not np.isfinite(values).all():  # finite scores whose spread overflows (1.7e308 - -1.7e308)
            at = int(np.searchsorted(stack.starts, np.flatnonzero(~np.isfinite(values))[0], side="right")) - 1
            r, q = int(stack.list_run[at]), int(stack.list_query[at])
            raise ValueError(f"{names[r]}, query {stack.queries[q]!r}: {overflow_message(norm)}")
        if name != "segfuse":
            return values
    k, phi = float(params.get("k", 0.0)), float(params.get("phi", 0.5))
    if name == "rrf":
        return 1.0 / (k + rank)
    if name in ("isr", "log_isr", "logn_isr"):
        return 1.0 / (rank * rank)
    if name == "rbc":
        return (1.0 - phi) * phi ** (rank - 1)
    if name in ("borda", "wborda"):
        return per_query[stack.query] - rank + 1
    if name in ("condorcet", "wcondorcet"):
        return rank
    tables = params["tables"]
    out = np.zeros(len(rank))
    for r, table in enumerate(tables):
        mine = stack.run == r
        ranks = stack.rank[mine] - 1
        if name in ("posfuse",):
            table = np.asarray(table, dtype=np.float64)
            inside = ranks < len(table)
            out[np.flatnonzero(mine)[inside]] = table[ranks[inside]]
        elif name == "slidefuse":
            length = np.repeat(stack.counts, stack.counts)[mine]
            low = np.maximum(ranks - params["w"], 0)
            high = np.minimum(ranks + params["w"], length - 1)
            padded = np.zeros(int(length.max()) + 1 if len(length) else 1)
            table = np.asarray(table, dtype=np.float64)[: len(padded)]
            padded[: len(table)] = table
            cumulative = np.concatenate(([0.0], np.cumsum(padded)))
            out[mine] = (cumulative[high + 1] - cumulative[low]) / (high - low + 1)
        elif name == "probfuse":
            length = np.repeat(stack.counts, stack.counts)[mine]
            size = -(-length // params["segments"])
            segment = ranks // size
            out[mine] = np.asarray(table)[segment] / (segment + 1)
        elif name == "segfuse":
            inside = ranks < SEGFUSE_BOUNDS[-1]
            segment = np.searchsorted(np.array(SEGFUSE_BOUNDS), ranks[inside], side="right") - 1
            where = np.flatnonzero(mine)[inside]
            out[where] = np.asarray(table)[segment] * (values[where] + 1)
        elif name == "bayesfuse":
            inside = ranks < BAYES_CUTOFFS[-1]
            segment = np.searchsorted(np.array(BAYES_CUTOFFS), ranks[inside], side="right") - 1
            odds = np.full(len(ranks), _MIN_ODD)
            odds[inside] = np.asarray(table)[segment]
            out[mine] = odds
        elif name == "mapfuse":
            out[mine] = float(table) / (ranks + 1)
    return out


def _wmnz_sum(total: Floats, listed: Ints, stack: Stack, pair_of: Ints, values: Floats, weights: Floats,
              params: Mapping[str, Any], n: int) -> Floats:
    listed_weight = np.asarray(np.bincount(pair_of, weights=weights[stack.run], minlength=n), dtype=np.float64)
    out: Floats = np.bincount(pair_of, weights=values, minlength=n) * listed_weight
    return out


# Methods that are a sum over the runs listing a doc (times a factor of how many list it), when
# nothing is imputed: (weighted total, listed count, ...) -> fused; the plain sums need no count.
_PLAIN_SUMS = ("combsum", "wsum", "rrf", "rbc", "posfuse", "probfuse", "segfuse", "slidefuse", "mapfuse")
_SUMS: dict[str, Any] = {
    **dict.fromkeys(_PLAIN_SUMS, lambda total, listed, *_: total),
    "combmnz": lambda total, listed, *_: total * listed,
    "isr": lambda total, listed, *_: total * listed,
    "combgmnz": lambda total, listed, stack, pair_of, values, weights, params, n: (
        total * listed.astype(np.float64) ** params["gamma"]),
    "mixed": lambda total, listed, *_: total * np.sqrt(listed),
    "log_isr": lambda total, listed, *_: total * np.log(listed),
    "logn_isr": lambda total, listed, stack, pair_of, values, weights, params, n: (
        total * np.log(listed + params["sigma"])),
    "wmnz": _wmnz_sum,
}


@np.errstate(over="ignore", invalid="ignore")  # an overflow is found, and named, where it surfaces
def fuse_stack(
    stack: Stack, spec: Method, norm: str, weights: Floats, params: Mapping[str, Any], missing: Missing,
    names: Sequence[str],
) -> Fused:
    """Fuse the lists of `stack`; the result is in trec_eval's order, query by query.

    Raises ``ValueError`` where finite scores overflow a float once normalised or combined.
    """
    n_runs, n_queries = stack.n_runs, max(len(stack.queries), 1)
    pair_of, pair_query = stack.doc, stack.pair_query
    n_pairs = len(pair_query)
    # Each query's candidates: the distinct docs that any run lists for it.
    per_query = np.bincount(pair_query, minlength=n_queries)
    values = _entry_values(stack, spec, norm, params, per_query, names)
    if spec.name in ("condorcet", "wcondorcet"):
        return _condorcet(stack, pair_of, pair_query, weights)
    # What a run gives a doc it does not list, per (run, query); NaN: nothing (the doc is unscored there).
    fill = np.full((n_runs, n_queries), np.nan)
    length = np.zeros((n_runs, n_queries))
    length[stack.list_run, stack.list_query] = stack.counts
    if spec.name in ("borda", "wborda"):
        fill[:] = (per_query[None, :] - length + 1) / 2
    elif norm == "borda" and spec.name != "segfuse":
        # SegFuse scores a segment of the run's ranks, which an unlisted doc has none of: it gets nothing
        # (the norm's fill is a normalised score, not a SegFuse value, and outranked the run's own top).
        fill[:] = 0.5 - (length - 1) / (2 * np.maximum(per_query, 1)[None, :])  # a query of empty lists fills none
    elif spec.name == "bayesfuse":
        fill[:] = _MIN_ODD
    elif missing == "min":
        fill[stack.list_run, stack.list_query] = np.minimum.reduceat(values, stack.starts) if len(values) else 0
    name = spec.name
    if np.isnan(fill).all() and name in _SUMS:
        # Nothing imputed and a plain sum: add each entry to its pair, no (runs x pairs) matrix.
        weighted = name in ("wsum", "rrf", "wborda", "mixed") and not (weights == 1).all()
        total = np.bincount(pair_of, weights=values * weights[stack.run] if weighted else values, minlength=n_pairs)
        listed = np.bincount(pair_of, minlength=n_pairs) if name not in _PLAIN_SUMS else None
        fused = _SUMS[name](total, listed, stack, pair_of, values, weights, params, n_pairs)
        fused = fused + 0.0  # -0.0 prints as 0.0 in a run file
        return _ranked(stack, _finite(stack, fused, name, norm))
    matrix = np.zeros((n_runs, n_pairs))
    present = np.zeros((n_runs, n_pairs), dtype=bool)
    matrix[stack.run, pair_of] = values
    present[stack.run, pair_of] = True
    imputed = fill[:, pair_query]
    filled = ~present & ~np.isnan(imputed)
    matrix[filled] = imputed[filled]
    scored = present | filled
    if norm == "borda":  # Borda places every candidate in every list: all count as listed (as in ranx)
        present = scored
    listed = present.sum(axis=0)
    w = weights[:, None]
    total = matrix.sum(axis=0)
    if name in ("combsum", "isr", "rbc", "borda", "bayesfuse", "posfuse", "probfuse", "segfuse", "slidefuse",
                "mapfuse"):
        fused = total if name != "isr" else total * listed
    elif name == "combmnz":
        fused = total * listed
    elif name == "combanz":
        fused = total / scored.sum(axis=0)
    elif name == "combmax":
        fused = np.where(scored, matrix, -np.inf).max(axis=0)
    elif name == "combmin":
        fused = np.where(scored, matrix, np.inf).min(axis=0)
    elif name == "combmed":
        fused = _median(matrix, scored)
    elif name == "combgmnz":
        fused = total * listed.astype(np.float64) ** params["gamma"]
    elif name in ("wsum", "rrf", "wborda"):
        fused = (w * matrix).sum(axis=0)
    elif name == "wmnz":
        fused = total * (w * present).sum(axis=0)
    elif name == "mixed":
        fused = (w * matrix).sum(axis=0) * np.sqrt(listed)
    elif name == "log_isr":
        fused = total * np.log(listed)
    elif name == "logn_isr":
        fused = total * np.log(listed + params["sigma"])
    else:  # pragma: no cover - every registered method is handled above
        raise AssertionError(name)
    fused = fused + 0.0  # -0.0 prints as 0.0 in a run file
    return _ranked(stack, _finite(stack, fused, name, norm))


def _finite(stack: Stack, fused: Floats, method: str, norm: str) -> Floats:
    """`fused`, if every score is finite: a sum of scores near the largest float is not."""
    if np.isfinite(fused).all():
        return fused
    pair = int(np.flatnonzero(~np.isfinite(fused))[0])
    doc = stack.docs[pair] if stack.docs else pair
    raise ValueError(f"method={method!r} with norm={norm!r} overflows a float: the fused score of doc {doc!r} in "
                     f"query {stack.queries[int(stack.pair_query[pair])]!r} is beyond about 1.8e308; normalise the "
                     "scores (norm='min-max') or scale them down")


def _ranked(stack: Stack, fused: Floats) -> Fused:
    """Each pair's fused score, the pairs in trec_eval's order query by query (``doc``: the pair)."""
    pairs = np.arange(len(fused), dtype=np.int64)
    order = trec_order(stack.pair_query, fused, pairs, stack.pair_head, stack.docs or None)
    # Pairs are numbered query by query, so the order keeps each query's block where it was.
    return Fused(stack.pair_query, order, fused[order])


def _median(matrix: Floats, scored: npt.NDArray[np.bool_]) -> Floats:
    """The median of each column's scored values (a mean of the middle two for an even count)."""
    values = np.sort(np.where(scored, matrix, np.inf), axis=0)
    count = scored.sum(axis=0)
    columns = np.arange(matrix.shape[1])
    low = values[(count - 1) // 2, columns]
    high = values[count // 2, columns]
    middle: Floats = (low + high) / 2
    return middle


def _condorcet(stack: Stack, pair_of: Ints, pair_query: Ints, weights: Floats) -> Fused:
    """Copeland scores: per query, each doc's pairwise majority wins plus half its draws.

    A run ranks the docs it lists by rank, ahead of those it does not list; a run that lists
    neither doc of a pair (or gives both one rank) abstains. Where the majorities are transitive,
    the Copeland order is the Condorcet order that Montague & Aslam's sort finds.
    """
    rank = np.full((stack.n_runs, len(pair_query)), np.inf)
    rank[stack.run, pair_of] = stack.rank
    fused = np.zeros(len(pair_query))
    bounds = np.flatnonzero(np.r_[True, pair_query[1:] != pair_query[:-1], True])
    w = weights[:, None, None]
    for lo, hi in itertools.pairwise(bounds):
        block = rank[:, lo:hi]
        ahead = (w * (block[:, :, None] < block[:, None, :])).sum(axis=0)  # votes for i over j
        wins = (ahead > ahead.T).sum(axis=1)
        draws = (ahead == ahead.T).sum(axis=1) - 1  # a doc draws with itself
        fused[lo:hi] = wins + draws / 2
    return _ranked(stack, fused)


def _check_depth(depth: object) -> int | None:
    """`depth` as a Python ``int`` (a numpy integer is one: ``np.int64(10)`` was refused as "not a
    positive integer"), or ``None``; anything else is named (a ValueError, as fuse has always said)."""
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1):
        raise ValueError(f"'depth' must be a positive integer or None (got {depth!r})")
    return None if depth is None else int(depth)


def _prepare(runs: Any, depth: int | None) -> tuple[Stack, list[str]]:
    values, names = _names(runs)
    if not values:
        raise ValueError("'runs' must hold at least one run (got none)")
    depth = _check_depth(depth)  # before any file is read
    stack = stack_inputs(values, names)
    if depth is not None:
        stack = stack.cut(depth)
    return stack, names


def to_run(stack: Stack, fused: Fused) -> RankedRun:
    """The fused entries as a run (no dict made yet), queries in first-appearance order."""
    starts = np.r_[True, fused.query[1:] != fused.query[:-1], True] if len(fused.doc) else np.ones(1, bool)
    bounds = np.flatnonzero(starts)
    queries = tuple(stack.queries[q] for q in fused.query[bounds[:-1]].tolist())
    return RankedRun(queries, bounds, stack.docs, fused.doc, fused.score, True)  # in order, each doc once


def fit(
    runs: Any, qrels: Any, *, method: str, params: Mapping[str, Any] | None = None, depth: int | None = None,
    relevance_level: float = 1,
) -> dict[str, Any]:
    """Fit a trained method on `qrels`: its parameters, with ``"tables"`` (one per run) added.

    Pass the result as ``params=`` to :func:`fuse` to fuse other queries with what these taught.
    A judged document is relevant when its grade is ``>= relevance_level`` (trec_eval ``-l``).

    >>> run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "d": 1.0}}
    >>> fit([run], {"q1": {"a": 1}, "q2": {"d": 1}}, method="posfuse")["tables"][0].tolist()
    [0.5, 0.5]
    """
    if method not in METHODS or METHODS[method].kind != "trained":
        trained = [m.name for m in METHODS.values() if m.kind == "trained"]
        raise ValueError(f"'method' must be a trained method, one of {', '.join(map(repr, trained))} (got {method!r})")
    level = check_positive_number(relevance_level, "relevance_level")
    stack, _ = _prepare(runs, depth)
    _, _, _, checked = resolve(method, None, None, params, stack.n_runs)
    checked["tables"] = _fit_on(stack, qrels, method, checked, level)
    return checked


def _qrels(qrels: Any) -> Mapping[str, Mapping[str, Any]]:
    from ef.io.frames import is_frame, qrels_from_frame

    if isinstance(qrels, str) or hasattr(qrels, "__fspath__"):
        from ef.trec import read_qrels

        return read_qrels(qrels)
    if is_frame(qrels):
        return qrels_from_frame(qrels)
    if isinstance(qrels, Mapping):
        return _checked_qrels(qrels)
    raise TypeError(f"'qrels' must be a mapping, a qrels file or a DataFrame (got {type(qrels).__name__})")


def _checked_qrels(qrels: Mapping[Any, Any]) -> Mapping[str, Mapping[str, Any]]:
    """`qrels` as given, each id, judgement list and grade checked: a grade that is NaN, a str or
    None, or judgements that are not a mapping, failed inside the fit or were read as "not relevant"."""
    for query_id, judged in qrels.items():
        if not isinstance(query_id, str):
            raise TypeError(f"'qrels' must have str query ids (got {query_id!r})")
        if not isinstance(judged, Mapping):
            raise TypeError(f"'qrels'[{query_id!r}] must be a mapping {{doc_id: grade}} (got {type(judged).__name__})")
        for doc_id, grade in judged.items():
            if not isinstance(doc_id, str):
                raise TypeError(f"'qrels'[{query_id!r}] must have str doc ids (got {doc_id!r})")
            _check_number(grade, f"'qrels'[{query_id!r}][{doc_id!r}]", None, None, "a finite number")
    return qrels


def _fit_on(stack: Stack, qrels: Any, method: str, params: Mapping[str, Any], level: float) -> list[Any]:
    """The tables of a trained method fitted on `qrels`, which must judge one of the runs' queries:
    qrels of none fitted all-zero tables, and every fused score was 0, silently."""
    judged = _qrels(qrels)
    if not judged:
        raise ValueError(f"'qrels' judge no query: method {method!r} has nothing to fit on")
    if stack.queries and not any(query_id in judged for query_id in stack.queries):
        raise ValueError(
            f"'qrels' judge none of the runs' queries (they judge {len(judged)}, first {next(iter(judged))!r}): "
            f"method {method!r} has nothing to fit on"
        )
    # A level above every grade of the runs' queries fits all-zero tables as well: every fused score 0.
    grades = [grade for query_id in stack.queries for grade in (judged.get(query_id) or {}).values()]
    if grades and max(grades) < level:
        raise ValueError(
            f"'qrels' grade no document of the runs' queries relevant at relevance_level {level:g} (their highest "
            f"grade is {max(grades):g}): method {method!r} has nothing to fit on"
        )
    return fit_tables(stack, judged, method, params, level)


def fuse(
    runs: Any,
    *,
    method: str = "rrf",
    norm: str | None = None,
    weights: Sequence[float] | None = None,
    params: Mapping[str, Any] | None = None,
    depth: int | None = None,
    missing: Missing = "zero",
    qrels: Any = None,
    relevance_level: float = 1,
) -> RankedRun:
    """Fuse runs into one run.

    Parameters
    ----------
    runs
        A list of runs, or a ``{name: run}`` mapping (names appear in errors). A run is a
        ``{query_id: {doc_id: score}}`` mapping, the path of a TREC run file or a pandas/polars
        DataFrame (``query_id``, ``doc_id``, ``score``). Inputs are never modified.
    method
        A key of :data:`METHODS` (``docs/fusion.md`` gives each formula and reference).
    norm
        A key of :data:`~ef.fusion.norms.NORMS`, applied to each list before a score-based
        method (and SegFuse); ``None``: ``"min-max"`` for those, ``"none"`` for rank-based ones,
        which refuse any other.
    weights
        One number per run, for the weighted methods (``wsum``, ``wmnz``, ``mixed``, ``rrf``,
        ``wborda``, ``wcondorcet``); ``None``: all 1.
    params
        The method's parameters (``k`` of RRF, ``gamma``, ``sigma``, ``phi``, ``segments``, ``w``);
        unnamed ones take their defaults. A trained method's ``tables`` come from :func:`fit`.
    depth
        Fuse each run's top `depth` documents per query (trec_eval's order) only.
    missing
        What a score-based method gives a document a run does not list for a query it does:
        ``"zero"`` (nothing: CombSUM adds 0, CombMAX/MIN/MED/ANZ ignore the run) or ``"min"``
        (the list's lowest normalised score, which then counts as scored).
    qrels
        Training judgements for a trained method given no ``tables``.
    relevance_level
        The lowest grade of `qrels` that counts as relevant in that training (trec_eval ``-l``).

    Returns
    -------
    RankedRun
        The fused run, a read-only ``{query_id: {doc_id: score}}`` mapping held as arrays
        (:class:`~ef.io.ranked.RankedRun`): every query some run lists a document for, in order
        of first appearance over the runs; each query's documents in trec_eval's order. Its
        ``to_dict()`` is a plain dict of dicts; ``write_run`` writes it without making one.

    Examples
    --------
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d3": 0.9, "d1": 0.5}}
    >>> fuse([a, b], method="rrf", params={"k": 0})
    RankedRun({'q1': {'d1': 1.5, 'd3': 1.3333333333333333, 'd2': 0.5}})
    >>> fuse([a, b], method="combsum", norm="min-max")["q1"]
    mappingproxy({'d3': 1.0, 'd1': 1.0, 'd2': 0.5})
    """
    return to_run(*_fused(runs, method, norm, weights, params, depth, missing, qrels, relevance_level))


def _fused(runs: Any, method: str, norm: str | None, weights: Sequence[float] | None,
           params: Mapping[str, Any] | None, depth: int | None, missing: Missing, qrels: Any,
           relevance_level: float = 1) -> tuple[Stack, Fused]:
    if missing not in ("zero", "min"):
        raise ValueError(f"'missing' must be one of 'zero', 'min' (got {missing!r})")
    level = check_positive_number(relevance_level, "relevance_level")
    if weights is not None and isinstance(weights, Iterable) and not isinstance(weights, str | bytes):
        weights = list(weights)  # read twice below: a generator would be empty the second time
    n_given = len(runs) if isinstance(runs, Mapping | Sequence) and not isinstance(runs, str) else 0
    check_missing(resolve(method, norm, weights if n_given else None, params, n_given)[0], missing)  # before any read
    stack, names = _prepare(runs, depth)
    spec, chosen, w, checked = resolve(method, norm, weights, params, stack.n_runs)
    fits = spec.kind == "trained" and "tables" not in checked
    if level != 1 and not (fits and qrels is not None):  # it would be ignored
        why = ("has its tables (params['tables'])" if spec.kind == "trained" and not fits
               else "fits nothing" if not fits else "is given no qrels")
        raise ValueError(f"'relevance_level' is what a trained method fitted on qrels= counts as relevant; method "
                         f"{method!r} {why}: leave it out")
    if fits:
        if qrels is None:
            raise ValueError(f"method {method!r} is trained: pass qrels= (or params from ef.fusion.fit)")
        checked["tables"] = _fit_on(stack, qrels, method, checked, level)
    if spec.kind == "trained" and len(checked["tables"]) != stack.n_runs:
        raise ValueError(f"'params['tables']' must hold one table per run ({stack.n_runs}) "
                         f"(got {len(checked['tables'])})")
    return stack, fuse_stack(stack, spec, chosen, w, checked, missing, names)


def fuse_rankings(
    rankings: Sequence[Sequence[Ints]], *, limit: int, method: str = "rrf", params: Mapping[str, Any] | None = None,
    weights: Sequence[float] | None = None,
) -> list[tuple[Ints, npt.NDArray[np.float32]]]:
    """Fuse ranked lists of positions (``rankings[run][query]``, best first) with a rank-based method.

    Per query, the top `limit` positions and their fused scores (float32); on a tie the earlier
    position comes first. This is the fusion of ``embedder="hybrid"``.

    >>> [p.tolist() for p, _ in fuse_rankings([[np.array([3, 1])], [np.array([1, 2])]], limit=3)]
    [[1, 3, 2]]
    """
    spec, norm, w, checked = resolve(method, None, weights, params, len(rankings))
    if spec.kind != "rank":
        raise ValueError(f"'method' must be rank-based to fuse rankings (got {method!r})")
    stack, top = stack_rankings(rankings)
    fused = fuse_stack(stack, spec, norm, w, checked, "zero", [f"rankings[{r}]" for r in range(len(rankings))])
    bounds = np.searchsorted(fused.query, np.arange(len(stack.queries) + 1))
    return [
        (top - stack.pair_head[fused.doc[lo:hi][:limit]].astype(np.int64),
         fused.score[lo:hi][:limit].astype(np.float32))
        for lo, hi in itertools.pairwise(bounds)
    ]
