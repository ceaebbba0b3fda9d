"""Tuning without leaks: parameters chosen on training folds, judged on the queries held out.

:func:`tune` splits the judged queries into folds; for each fold it picks, among every candidate
(method, norm, parameters), the one with the best mean on the other folds' queries, and scores
that candidate on the fold's own queries. Every query's held-out score thus comes from a choice
made without it; :mod:`ef.compare` then tests the held-out fused run against every input run on
the same queries (paired, corrected over the family).
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ef._validate import check_non_negative_int, check_positive_number
from ef.comparison._options import check_options
from ef.fusion._stack import load_run, stack_runs
from ef.fusion.methods import METHODS, Missing, _check_depth, _names, _qrels, check_missing, fuse_stack, resolve, to_run
from ef.fusion.trained import fit_tables
from ef.io.ranked import RankedRun

if TYPE_CHECKING:
    from ef.comparison._report import ComparisonReport

__all__ = ["MAX_WEIGHT_VECTORS", "Candidate", "TuneReport", "grid", "tune", "weight_grid"]

Floats = npt.NDArray[np.float64]

# The values searched for each parameter (weights have their own exact grid, see weight_grid).
GRIDS: dict[str, tuple[float, ...]] = {
    "k": (1.0, 5.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0),
    "gamma": tuple(i / 10 for i in range(11)),
    "sigma": (0.001, 0.01, 0.1, 0.5, 1.0),
    "phi": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99),
    "segments": (2.0, 5.0, 10.0, 20.0, 50.0),
    "w": (1.0, 2.0, 3.0, 5.0, 10.0, 20.0),
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One setting searched: a method, a norm, its weights (or ``None``) and its parameters."""

    method: str
    norm: str
    weights: tuple[float, ...] | None
    params: tuple[tuple[str, float], ...]

    def __str__(self) -> str:
        parts = [self.method, f"norm={self.norm}"]
        if self.weights is not None:
            parts.append("weights=" + ",".join(f"{w:g}" for w in self.weights))
        parts.extend(f"{name}={value:g}" for name, value in self.params)
        return " ".join(parts)


def _parts(step: object) -> int:
    """``1 / step``, a whole number >= 1, or the ValueError naming `step`."""
    wrong = ValueError(f"'step' must be 1 / n for a whole n >= 1, such as 0.1 or 0.05 (got {step!r})")
    approximated = Fraction(0)
    if not isinstance(step, bool) and isinstance(step, numbers.Real | Decimal):
        try:  # 0, a negative, NaN (no comparison holds; a Decimal's raises) or infinity: refused
            if 0 < step <= 1:  # type: ignore[operator]  # numbers.Real declares no comparison
                approximated = Fraction(step).limit_denominator(10**6)  # type: ignore[arg-type]
        except ArithmeticError:
            pass
    if approximated == 0 or (1 / approximated).denominator != 1:
        raise wrong
    return int(1 / approximated)


MAX_WEIGHT_VECTORS = 1_000_000
"""The most weight vectors :func:`weight_grid` makes: the count grows as ``C(1/step + n - 1, n - 1)``
(6 runs at step 0.01: 96 million, gigabytes before the first fusion), and tuning fuses each."""


def weight_grid(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Every weight vector of `n_runs` multiples of `step` summing to 1, counted in integers (exact).

    ranx compares float sums with 1.0 and loses 4 of the 66 triples at step 0.1; this grid is
    the compositions of ``1 / step`` into `n_runs` parts, so none is lost. A grid of more than
    :data:`MAX_WEIGHT_VECTORS` vectors is a ValueError (take a larger step), made before any.

    >>> len(weight_grid(3, 0.1)), weight_grid(2, 0.5)
    (66, [(0.0, 1.0), (0.5, 0.5), (1.0, 0.0)])
    >>> weight_grid(6, 0.01)
    Traceback (most recent call last):
    ...
    ValueError: 'step' 0.01 with 6 runs makes 96,560,646 weight vectors (at most 1,000,000): take a larger step
    """
    given: object = n_runs  # typed int, but a caller's may be anything
    if isinstance(given, bool) or not isinstance(given, numbers.Integral):
        raise TypeError(f"'n_runs' must be a positive integer (got {given!r})")
    if given < 1:
        raise ValueError(f"'n_runs' must be a positive integer (got {given!r})")
    n_runs = int(given)
    n = _parts(step)
    size = math.comb(n + n_runs - 1, n_runs - 1)
    if size > MAX_WEIGHT_VECTORS:
        count = f"{size:,}" if size < 10**15 else f"about {float(size):.1e}"
        raise ValueError(
            f"'step' {step!r} with {n_runs} runs makes {count} weight vectors (at most {MAX_WEIGHT_VECTORS:,}): "
            "take a larger step"
        )
    out: list[tuple[float, ...]] = []
    for cuts in itertools.combinations(range(n + n_runs - 1), n_runs - 1):
        bounds = (-1, *cuts, n + n_runs - 1)
        out.append(tuple((bounds[i + 1] - bounds[i] - 1) / n for i in range(n_runs)))
    return sorted(out)


def grid(method: str, norm: str | None, n_runs: int, step: float) -> list[Candidate]:
    """The candidates searched for `method` under `norm` (its default norm when ``None``)."""
    spec, chosen, _, _ = resolve(method, norm, None, None, n_runs)
    weights: list[tuple[float, ...] | None] = (
        [None] if not spec.weighted or spec.name == "rrf" else list(weight_grid(n_runs, step))
    )
    names = [name for name, _ in spec.defaults]
    values = [GRIDS[name] for name in names]
    return [
        Candidate(method, chosen, w, tuple(zip(names, combo, strict=True)))
        for w in weights
        for combo in itertools.product(*values)
    ]


@dataclass(frozen=True)
class TuneReport:
    """What :func:`tune` chose and how the choice did on the queries it had not seen.

    ``chosen`` holds each fold's candidate; ``final`` the candidate best over all queries (the
    one to deploy; its score is in-sample). ``held_out`` is each judged query's score under the
    candidate its fold chose; ``inputs`` each input run's per-query scores. ``sweep`` gives, per
    ``(method, norm)``, the mean held-out score of cross-validating that pair alone.
    ``comparison`` is :func:`ef.compare.compare` of the held-out fused run (``"fused"``) against
    every input run, on `measure`.
    """

    measure: str
    folds: int
    seed: int
    queries: tuple[str, ...]
    chosen: tuple[Candidate, ...]
    final: Candidate
    held_out: Mapping[str, float]
    inputs: Mapping[str, Mapping[str, float]]
    sweep: Mapping[tuple[str, str], float]
    fused_run: Mapping[str, Mapping[str, float]] = field(repr=False)
    comparison: ComparisonReport = field(repr=False)

    @property
    def best_input(self) -> str:
        """The input run with the highest mean on the measure (the first on a tie)."""
        means = {name: float(np.mean(list(scores.values()))) for name, scores in self.inputs.items()}
        return max(means, key=lambda name: (means[name], -list(means).index(name)))

    def verdict(self) -> str:
        """One line: whether the held-out fused run beat the best input, with its difference, CI and p."""
        c = self.comparison.get("fused", self.measure, baseline=self.best_input)
        beat = "beat" if c.verdict == "better" else "did not beat"
        return (
            f"fusion {beat} the best input ({self.best_input}) on {self.measure}: {c.diff:+.4f}, "
            f"95% CI [{c.ci_low:+.4f}, {c.ci_high:+.4f}], p = {c.p_adjusted:.3g} "
            f"({self.comparison.correction}-corrected, {c.n_queries} held-out queries)"
        )

    def _repr_html_(self) -> str:
        """In a notebook: :meth:`verdict`, then the held-out comparison's page in a sandboxed frame
        (its terminal table without the ``report`` extra)."""
        import html

        from ef.report import comparison_report, notebook_html

        verdict = f'<p class="ef-verdict">{html.escape(self.verdict())}</p>'
        try:
            page = notebook_html(comparison_report(self.comparison, title="Fusion held out").html())
        except ImportError:
            page = f"<pre>{html.escape(str(self.comparison))}</pre>"
        return f"{verdict}\n{page}"


def _scores(run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Any], measure: str,
            queries: Sequence[str], level: float) -> Floats:
    from ef.evaluation import evaluate_run

    per_query = evaluate_run(run, qrels, [measure], relevance_level=level).per_query
    return np.array([next(iter(per_query[q].values())) if q in per_query else 0.0 for q in queries])


def _check_measure(measure: object) -> None:
    """`measure` names one per-query score (what is maximised, then compared)."""
    from ef.measures import resolve as resolve_measure

    if not isinstance(measure, str):
        raise TypeError(f"'measure' must be one measure name as a str (got {type(measure).__name__})")
    pairs = resolve_measure([measure], rankings=False)  # an unknown name: "measure 'x': unknown measure ..."
    if len(pairs) != 1:
        raise ValueError(
            f"'measure' must name one measure (got {measure!r}, which is {len(pairs)}: "
            f"{', '.join(label for label, _ in pairs[:3])}{' ...' if len(pairs) > 3 else ''})"
        )
    found = pairs[0][1]
    if found.spec.aggregate != "mean":
        raise ValueError(
            f"'measure' must be a per-query score averaged over queries (got {measure!r}, summarised as a "
            f"{found.spec.summary}): the tuning maximises a mean and compares mean differences"
        )


def _names_of(value: object, name: str, what: str) -> list[Any]:
    """One name or a sequence of them (a str is one name, not its characters)."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence):
        raise TypeError(f"{name!r} must be {what} (got {type(value).__name__})")
    return list(value)


def tune(
    runs: Any,
    qrels: Any,
    *,
    method: str | Sequence[str] = "wsum",
    norm: str | Sequence[str | None] | None = None,
    measure: str = "ndcg@10",
    folds: int = 5,
    seed: int = 0,
    step: float = 0.1,
    depth: int | None = None,
    missing: Missing = "zero",
    correction: str = "holm",
    relevance_level: float = 1,
) -> TuneReport:
    """Choose fusion parameters by cross-validation over query folds; report them held out.

    Parameters
    ----------
    runs
        As :func:`~ef.fusion.fuse` (a list, or a ``{name: run}`` mapping whose names label the
        comparison; a list's runs are ``run1``, ``run2`` ...).
    qrels
        ``{query_id: {doc_id: grade}}``, a qrels file or a DataFrame; its judged queries are split
        into folds. Trained methods are fitted on each fold's training queries only.
    method, norm
        One name or several: every (method, norm) pair is searched as one pool of candidates
        (rank-based methods take norm ``none`` only, whatever is listed). Parameters searched:
        weights on the exact grid of :func:`weight_grid`, and :data:`GRIDS`.
    measure
        What is maximised and compared (any name :func:`ef.evaluation.evaluate_run` reads).
    folds, seed
        The number of folds (2 to the number of judged queries) and the seed of their shuffle.
    step
        The step of the weight grid (1 / n).
    depth, missing
        As :func:`~ef.fusion.fuse`.
    correction
        The multiple-comparison correction of :func:`ef.compare.compare`.
    relevance_level
        The lowest grade that counts as relevant (trec_eval ``-l``): in `measure` and in the
        fitting of a trained method (TREC DL's passage qrels: 2).

    Returns
    -------
    TuneReport
    """
    from ef.compare import compare

    values, labels = _names(runs)
    names = list(runs) if isinstance(runs, Mapping) else [f"run{i + 1}" for i in range(len(values))]
    for name in names:  # ef.compare names the runs: found there, after every fusion
        if not isinstance(name, str) or not name:
            error = ValueError if name == "" else TypeError
            raise error(f"'runs': every name must be a non-empty str (got {name!r})")
    if "fused" in names:
        raise ValueError("'runs' must not name a run 'fused': the comparison calls the fused run so")
    if len(values) < 1:
        raise ValueError("'runs' must hold at least one run (got none)")
    # Every option is checked before anything is fused: a bad 'missing' was taken silently, a
    # bad 'depth' failed inside numpy, and a bad 'correction' or 'measure' was found only by
    # ef.compare, after every fold had been fused.
    if missing not in ("zero", "min"):
        raise ValueError(f"'missing' must be one of 'zero', 'min' (got {missing!r})")
    depth = _check_depth(depth)
    _check_measure(measure)
    level = check_positive_number(relevance_level, "relevance_level")
    check_options("t", correction, 0.05, 0.95, 10_000, 0)  # as compare() is called below
    mappings = [load_run(run, label) for run, label in zip(values, labels, strict=True)]  # an empty one refused
    stack = stack_runs(mappings, labels)
    if depth is not None:
        stack = stack.cut(depth)
    judged = _qrels(qrels)
    # A query whose judgements are empty ({"q2": {}}, as qrels filtered to grade > 0 give) is judged by
    # nothing: evaluate_run and ef.compare leave it out, so it is neither folded nor scored 0 here.
    queries = sorted(query for query, grades in judged.items() if len(grades))
    if not queries:
        raise ValueError("'qrels' judge no query: there is nothing to tune on")
    if not set(stack.queries) & set(queries):  # else a 'folds' error, or ef.compare's, after every fusion
        raise ValueError(
            f"'qrels' judge none of the runs' queries (they judge {len(queries)}, first {queries[0]!r}): "
            "there is nothing to tune on"
        )
    seed = check_non_negative_int(seed, "seed")  # numpy's own messages name no argument
    _parts(step)  # checked for every method, weighted or not
    if isinstance(folds, bool) or not isinstance(folds, int) or not 2 <= folds <= len(queries):
        raise ValueError(f"'folds' must be an integer from 2 to the {len(queries)} judged queries (got {folds!r})")
    methods = _names_of(method, "method", "a method name or a sequence of them")
    norms = [None] if norm is None else _names_of(norm, "norm", "a norm name, a sequence of them or None")
    if not methods:
        raise ValueError(f"'method' must name at least one method (got {method!r})")
    if not norms:
        raise ValueError(f"'norm' must name at least one norm, or be None (got {norm!r})")
    candidates: list[Candidate] = []
    for m in methods:
        for n in norms:
            spec = METHODS.get(m)
            if spec is not None:
                check_missing(spec, missing)
            if spec is not None and spec.kind != "score" and m != "segfuse":
                n = None
            for c in grid(m, n, stack.n_runs, step):
                if c not in candidates:
                    candidates.append(c)
    order = np.random.default_rng(seed).permutation(len(queries))
    fold_of = np.empty(len(queries), dtype=np.int64)
    fold_of[order] = np.arange(len(queries)) % folds

    def run_of(c: Candidate, training: Mapping[str, Any] | None) -> RankedRun:
        spec, chosen, w, params = resolve(c.method, c.norm, c.weights, dict(c.params), stack.n_runs)
        if spec.kind == "trained":
            params["tables"] = fit_tables(stack, training if training is not None else judged, c.method, params, level)
        return to_run(stack, fuse_stack(stack, spec, chosen, w, params, missing, labels))  # scored from its arrays

    # Per-query scores: one array per candidate, or per (candidate, fold) for trained methods,
    # whose tables are fitted on the fold's training queries.
    cache: dict[tuple[int, int], Floats] = {}

    def scores(i: int, f: int) -> Floats:
        trained = METHODS[candidates[i].method].kind == "trained"
        key = (i, f if trained else -1)
        if key not in cache:
            training = {q: judged[q] for q, g in zip(queries, fold_of, strict=True) if g != f} if trained else None
            cache[key] = _scores(run_of(candidates[i], training), judged, measure, queries, level)
        return cache[key]

    def cross_validate(pool: Sequence[int]) -> tuple[list[int], Floats]:
        chosen, held = [], np.zeros(len(queries))
        for f in range(folds):
            train = fold_of != f
            best = max(pool, key=lambda i: (float(scores(i, f)[train].mean()), -i))
            chosen.append(best)
            held[~train] = scores(best, f)[~train]
        return chosen, held

    chosen, held = cross_validate(range(len(candidates)))
    sweep = {}
    for pair in dict.fromkeys((c.method, c.norm) for c in candidates):
        pool = [i for i, c in enumerate(candidates) if (c.method, c.norm) == pair]
        sweep[pair] = float(cross_validate(pool)[1].mean())
    # The held-out fused run: each fold's queries fused by the candidate that fold chose.
    fused: dict[str, dict[str, float]] = {}
    for f, i in enumerate(chosen):
        test = {q for q, g in zip(queries, fold_of, strict=True) if g == f}
        trained = METHODS[candidates[i].method].kind == "trained"
        training = {q: judged[q] for q in queries if q not in test} if trained else None
        run = run_of(candidates[i], training)
        fused.update({q: dict(run[q]) for q in run if q in test})
    everything = [(float(scores(i, -1).mean()) if METHODS[c.method].kind != "trained" else
                   float(_scores(run_of(c, judged), judged, measure, queries, level).mean()), -i)
                  for i, c in enumerate(candidates)]
    final = candidates[-max(everything)[1]]
    inputs = {name: dict(zip(queries, _scores(run, judged, measure, queries, level).tolist(), strict=True))
              for name, run in zip(names, mappings, strict=True)}
    comparison = compare({"fused": fused, **dict(zip(names, mappings, strict=True))}, judged, [measure],
                         baseline=names, correction=correction, relevance_level=level)  # type: ignore[arg-type]
    return TuneReport(
        measure, folds, seed, tuple(queries), tuple(candidates[i] for i in chosen), final,
        dict(zip(queries, held.tolist(), strict=True)), inputs, sweep, fused, comparison,
    )
