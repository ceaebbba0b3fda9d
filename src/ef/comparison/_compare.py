"""Is system B better than A? Paired tests over the same queries, corrected, with effect sizes.

:func:`compare` scores every run on the same queries, tests each (pair, measure) comparison
with a paired test (:mod:`ef.comparison._stats`), corrects the p-values over the whole family
and returns a frozen :class:`ComparisonReport`. ``fastrag.benchmark.compare_results`` builds the
same report from benchmark results through :func:`build_report`.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from ef._validate import check_choice
from ef.comparison._report import Comparison, ComparisonReport
from ef.comparison._stats import (
    CORRECTIONS,
    Correction,
    Test,
    adjust_p_values,
    check_options,
    paired_statistics,
    seed_mean,
)
from ef.evaluation._run import DEFAULT_MEASURES, evaluate_run
from ef.io.frames import DataFrameLike, is_frame, qrels_from_frame
from ef.measures import resolve

__all__ = ["build_report", "compare"]

Missing = Literal["zero", "skip"]

# Below this many queries a paired test has little power (Urbano et al. 2013: ~25-50 topics).
_FEW_QUERIES = 25
# At this many queries a negligible difference is routinely significant.
_MANY_QUERIES = 1000
# |d| below this is "small" by Cohen's convention (0.2 small, 0.5 medium, 0.8 large).
_SMALL_EFFECT = 0.2


def _finite_number(value: object) -> bool:
    return (
        isinstance(value, int | float | np.integer | np.floating)
        and not isinstance(value, bool | np.bool_)
        and math.isfinite(value)
    )


def _pairs(systems: Sequence[str], baselines: Sequence[str]) -> list[tuple[str, str]]:
    if not baselines:
        return list(itertools.combinations(systems, 2))
    if len(baselines) == 1:
        return [(baselines[0], s) for s in systems if s != baselines[0]]
    return [(b, s) for b in baselines for s in systems if s not in baselines]


def _warnings(
    comparisons: Sequence[Comparison], lacked: Mapping[str, int], total: int, missing: str, unit: str
) -> list[str]:
    out: list[str] = []
    n_values = sorted({c.n_queries for c in comparisons})
    if n_values and n_values[0] < _FEW_QUERIES:
        out.append(
            f"only {n_values[0]} {unit}: a paired test this small has low power, so a real "
            "difference can easily come out not significant; look at the confidence intervals"
        )
    if n_values and n_values[-1] >= _MANY_QUERIES:
        small = sum(
            1
            for c in comparisons
            if c.significant and (c.effect_size is not None and abs(c.effect_size) < _SMALL_EFFECT)
        )
        plural = "s" if small != 1 else ""
        note = f" ({small} significant comparison{plural} with |d| < {_SMALL_EFFECT})" if small else ""
        out.append(
            f"{n_values[-1]} {unit}: with this many even a tiny difference comes out significant; "
            f"judge it by the effect size d and the confidence interval{note}"
        )
    for system, count in lacked.items():
        if count:
            fate = "scored 0 (missing='zero')" if missing == "zero" else "left out for every system"
            out.append(f"{system!r} lacked {count} of the {total} {unit}: {fate}")
    return out


def build_report(
    *,
    systems: Sequence[str],
    measures: Sequence[str],
    higher_is_better: Mapping[str, bool],
    queries: Sequence[str],
    scores: Mapping[str, Mapping[str, Sequence[float | None]]],
    lacked: Mapping[str, int],
    baseline: str | Sequence[str] | None,
    test: Test,
    correction: Correction,
    alpha: float,
    confidence: float,
    resamples: int,
    seed: int,
    missing: str,
    unit: str = "queries",
    notes: Sequence[str] = (),
    replicates: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
    judged: int | None = None,
) -> ComparisonReport:
    """Test every (pair, measure) comparison on per-query `scores` and correct over the family.

    `scores[system][measure]` is aligned with `queries`; a ``None`` leaves that query out of the
    measure's comparisons for every system, so one measure's comparisons share their queries.
    `baseline` is one name, several (every other system against each) or ``None`` (all pairs).
    `notes` lead the report's warnings; `replicates` is each seed's mean of a system given as
    several runs. `judged` is how many queries `lacked` counts against (default ``len(queries)``;
    with ``missing="skip"`` `queries` holds only the ones every system has). Options are checked
    by the caller.
    """
    baselines = (baseline,) if isinstance(baseline, str) else tuple(baseline or ())
    pairs = _pairs(systems, baselines)
    position = {s: i for i, s in enumerate(systems)}
    columns: list[tuple[tuple[str, str], str]] = [(pair, m) for pair in pairs for m in measures]
    values: dict[str, np.ndarray] = {}
    kept: dict[str, np.ndarray] = {}
    for m in measures:
        rows = [scores[s][m] for s in systems]
        if any(None in row for row in rows):
            mask = np.array([all(row[i] is not None for row in rows) for i in range(len(queries))], dtype=bool)
            rows = [[v for v, k in zip(row, mask, strict=True) if k] for row in rows]
        else:
            mask = np.ones(len(queries), dtype=bool)
        kept[m] = mask
        values[m] = np.array(rows, dtype=np.float64)
        if mask.sum() < 2:
            raise ValueError(
                f"only {int(mask.sum())} {unit} scored by every system on {m!r}: a paired test needs at least 2"
            )
    # Columns with the same number of queries share one set of resamples: group and test at once.
    by_n: dict[int, list[int]] = {}
    for index, (_, m) in enumerate(columns):
        by_n.setdefault(int(kept[m].sum()), []).append(index)
    stats_of: dict[int, tuple[float, float, float, float, float]] = {}
    exact = False
    for n, indices in by_n.items():
        diffs = np.empty((n, len(indices)))
        for j, index in enumerate(indices):
            (a, b), m = columns[index]
            diffs[:, j] = values[m][position[b]] - values[m][position[a]]
        result = paired_statistics(diffs, test=test, resamples=resamples, seed=seed, confidence=confidence)
        exact = exact or result.exact
        for j, index in enumerate(indices):
            stats_of[index] = (
                float(result.mean_diff[j]),
                float(result.ci_low[j]),
                float(result.ci_high[j]),
                float(result.effect_size[j]),
                float(result.p_value[j]),
            )
    raw = np.array([stats_of[i][4] for i in range(len(columns))])
    adjusted = adjust_p_values(raw, correction)
    comparisons: list[Comparison] = []
    for index, ((a, b), m) in enumerate(columns):
        x, y = values[m][position[a]], values[m][position[b]]
        _, low, high, effect, p = stats_of[index]
        better, worse = (y > x, y < x) if higher_is_better[m] else (y < x, y > x)
        comparisons.append(
            Comparison(
                system=b,
                baseline=a,
                measure=m,
                higher_is_better=higher_is_better[m],
                n_queries=len(x),
                system_mean=float(y.mean()),
                baseline_mean=float(x.mean()),
                diff=float(y.mean() - x.mean()),
                ci_low=low,
                ci_high=high,
                effect_size=None if math.isnan(effect) else effect,
                p_value=p,
                p_adjusted=float(adjusted[index]),
                significant=bool(adjusted[index] < alpha),
                wins=int(better.sum()),
                ties=int((y == x).sum()),
                losses=int(worse.sum()),
            )
        )
    return ComparisonReport(
        systems=tuple(systems),
        baseline=baselines[0] if baselines else None,
        measures=tuple(measures),
        higher_is_better={m: higher_is_better[m] for m in measures},
        comparisons=tuple(comparisons),
        test=test,
        correction=correction,
        alpha=float(alpha),
        confidence=float(confidence),
        resamples=int(resamples),
        seed=int(seed),
        missing=missing,
        exact=exact,
        queries=tuple(queries),
        scores={s: {m: tuple(scores[s][m]) for m in measures} for s in systems},
        lacked=dict(lacked),
        warnings=(*notes, *_warnings(comparisons, lacked, len(queries) if judged is None else judged, missing, unit)),
        unit=unit,
        baselines=baselines,
        replicates={s: {m: tuple(v) for m, v in by.items()} for s, by in (replicates or {}).items()},
    )


def _expand_measures(names: Sequence[str]) -> tuple[list[str], dict[str, bool], list[str]]:
    """Every name as ``ef trec-eval -m`` / :func:`ef.measures.resolve` reads it, with its direction.

    ``P.5,10`` gives ``P_5`` and ``P_10``, ``P`` trec_eval's default cutoffs, ``official`` its
    measures; a name no measure has is a report's own metric (a RAG score: higher is better).
    The measures of a nickname or family form that are no per-query mean (``num_q``, ``gm_map``)
    are left out and returned third, to be named in the report's warnings; a measure named
    alone that is no per-query mean is refused.
    """
    labels: list[str] = []
    direction: dict[str, bool] = {}
    left_out: list[str] = []
    taken: set[object] = set()  # the measures already labelled: ndcg@10 and ndcg_cut_10 are one
    for name in names:
        try:
            pairs = resolve([name], rankings=False)
        except ValueError:
            pairs = []
        if not pairs:  # a report's own metric name (a RAG metric, say): scores, higher is better
            labels.append(name)
            direction[name] = True
            continue
        several = len(pairs) > 1 or pairs[0][0] != name
        for label, measure in pairs:
            spec = measure.spec
            if spec.aggregate != "mean":
                if several:
                    left_out.append(label)
                    continue
                raise ValueError(
                    f"'measures': {label!r} is summarised as a {spec.summary}, not a mean over queries; "
                    "paired tests compare mean differences, so pick a per-query score"
                )
            if label in direction or measure in taken:
                # P.5,10 and P both hold P_5, ndcg@10 is ndcg_cut_10: compared once, as ef trec-eval
                # prints it once; a second test of one measure would only widen the correction's family.
                continue
            taken.add(measure)
            labels.append(label)
            direction[label] = spec.higher_is_better
    if not labels:
        raise ValueError(
            f"'measures' {list(names)!r} name no per-query score to compare (left out: {', '.join(left_out)})"
        )
    return labels, direction, left_out


def _is_report(run: object) -> bool:
    return not isinstance(run, Mapping | str | os.PathLike) and isinstance(getattr(run, "per_query", None), Mapping)


_PLAIN_NUMBERS = {int, float, np.float64, np.float32, np.int64, np.int32}


def _from_report(name: str, report: Any, measures: Sequence[str]) -> dict[str, tuple[float, ...]]:
    per_query = report.per_query
    try:  # the fast path: every value a plain finite number (checked in C, column by column)
        columns = []
        for m in measures:
            column = [values[m] for values in per_query.values()]
            if not set(map(type, column)) <= _PLAIN_NUMBERS:
                raise TypeError
            array = np.array(column, dtype=np.float64)
            if not np.isfinite(array).all():
                raise TypeError
            columns.append(array.tolist())
        return {str(q): row for q, row in zip(per_query, zip(*columns, strict=True), strict=True)}
    except (KeyError, TypeError, OverflowError):
        pass  # the slow path below names the query and the value
    out: dict[str, tuple[float, ...]] = {}
    for query_id, values in per_query.items():
        row = []
        for m in measures:
            if m not in values:
                raise ValueError(
                    f"run {name!r}: query {query_id!r} has no value for {m!r} "
                    f"(it has {', '.join(map(repr, values)) or 'none'})"
                )
            value = values[m]
            if not _finite_number(value):
                raise ValueError(f"run {name!r}: {m!r} of query {query_id!r} is not a finite number (got {value!r})")
            row.append(float(value))
        out[str(query_id)] = tuple(row)
    return out


def _from_run(
    name: str, run: Any, qrels: Mapping[str, Any], measures: Sequence[str], options: Mapping[str, Any]
) -> dict[str, tuple[float, ...]]:
    try:
        report = evaluate_run(run, qrels, list(measures), missing="skip", **options)
    except ValueError as error:
        message = str(error).removeprefix("run: ")  # evaluate_run's own prefix: the name says it now
        if message.startswith("no query to evaluate"):  # evaluated with missing="skip", whatever the caller's
            message = "no query of the run is judged in 'qrels'"
        if message.startswith("'run' holds no query"):  # an empty mapping: the name says which run
            raise ValueError(
                f"run {name!r} holds no query; a query that retrieved nothing is {{query_id: {{}}}}"
            ) from error
        raise ValueError(f"run {name!r}: {message}") from error
    return {q: tuple(float(v[m]) for m in measures) for q, v in report.per_query.items()}


def _zeros(run: Any, qrels: Mapping[str, Any], lacking: Sequence[str], measures: Sequence[str]) -> dict[str, tuple]:
    """What evaluate_run gives the queries a run lacks (trec_eval -c); 0 for a report."""
    if not lacking:
        return {}
    if _is_report(run):
        return {q: (0.0,) * len(measures) for q in lacking}
    with warnings.catch_warnings():
        # An empty run scores 0 at any level: a level these queries' grades miss is no news (the runs'
        # own evaluation warns when no judged query reaches it).
        warnings.filterwarnings("ignore", message="relevance_level=", category=UserWarning)
        report = evaluate_run({q: {} for q in lacking}, {q: qrels[q] for q in lacking}, list(measures))
    return {q: tuple(float(v[m]) for m in measures) for q, v in report.per_query.items()}


def _members(run: Any) -> list[Any]:
    """A system's runs: a list or tuple is several (seeds or folds), anything else one."""
    return list(run) if isinstance(run, list | tuple) else [run]


def _check_runs(runs: object, baseline: object) -> tuple[list[str], tuple[str, ...]]:
    if not isinstance(runs, Mapping):
        raise TypeError(f"'runs' must be a mapping of name -> run (got {type(runs).__name__})")
    systems = list(runs)
    for name in systems:
        if not isinstance(name, str):
            raise TypeError(f"'runs': every name must be a non-empty str (got {name!r})")
        if not name:
            raise ValueError(f"'runs': every name must be a non-empty str (got {name!r})")
        if isinstance(runs[name], list | tuple) and not runs[name]:
            raise ValueError(f"'runs': {name!r} is an empty list of runs")
    if len(systems) < 2:
        raise ValueError(f"'runs' must hold at least 2 runs to compare (got {len(systems)})")
    if baseline is None:
        return systems, ()
    if isinstance(baseline, str):
        baselines: tuple[str, ...] = (baseline,)
    elif isinstance(baseline, Sequence) and all(isinstance(b, str) for b in baseline):
        baselines = tuple(baseline)
    else:
        raise TypeError(f"'baseline' must be a run name, a sequence of run names or None (got {baseline!r})")
    if not baselines:
        raise ValueError("'baseline' is an empty sequence: give a name or None for all pairs")
    for b in baselines:
        if b not in runs:
            raise ValueError(f"'baseline' {b!r} is not one of the runs ({', '.join(map(repr, systems))})")
    if len(set(baselines)) != len(baselines):
        raise ValueError(f"'baseline' names a run twice ({', '.join(map(repr, baselines))})")
    if len(baselines) == len(systems):
        raise ValueError("'baseline' names every run: leave at least one to compare with them")
    return systems, baselines


def _check_measures(measures: object, runs: Mapping[str, Any]) -> list[str]:
    if measures is None:
        members = [r for run in runs.values() for r in _members(run)]
        reports = [r for r in members if _is_report(r)]
        if len(reports) < len(members):
            return list(DEFAULT_MEASURES)
        first: Mapping[str, Any] = next(iter(reports[0].per_query.values()), {})
        shared = [m for m in first if all(all(m in v for v in r.per_query.values()) for r in reports)]
        if not shared:
            raise ValueError("'measures' is None and the reports share no measure")
        return shared
    if isinstance(measures, str) or not isinstance(measures, Sequence):
        raise TypeError(f"'measures' must be a sequence of measure names (got {measures!r})")
    names = list(measures)
    if not names:
        raise ValueError("'measures' must name at least one measure")
    for m in names:
        if not isinstance(m, str):
            raise TypeError(f"'measures' must hold str names (got {m!r})")
    repeated = [m for i, m in enumerate(names) if m in names[:i]]
    if repeated:
        raise ValueError(f"'measures' lists {repeated[0]!r} twice")
    return names


Rows = dict[str, tuple[float, ...]]


def _combine(name: str, parts: list[Rows], measures: Sequence[str]) -> tuple[Rows, dict[str, tuple[float, ...]]]:
    """One system's runs as one: seeds (the same queries) averaged per query, folds (disjoint
    queries) joined; with each run's mean per measure."""
    means = {
        m: tuple(float(np.mean([row[j] for row in part.values()])) if part else 0.0 for part in parts)
        for j, m in enumerate(measures)
    }
    if len(parts) == 1:
        return parts[0], {}
    sets = [set(part) for part in parts]
    if all(s == sets[0] for s in sets):  # seeds: average each query over them
        order = list(parts[0])
        averaged = seed_mean([[part[q] for q in order] for part in parts]).tolist()
        return {q: tuple(row) for q, row in zip(order, averaged, strict=True)}, means
    for i, j in itertools.combinations(range(len(parts)), 2):
        shared = sets[i] & sets[j]
        if shared:
            raise ValueError(
                f"run {name!r}: its runs {i + 1} and {j + 1} are neither seeds (the same queries: "
                f"{len(sets[i])} and {len(sets[j])} judged queries) nor folds (disjoint: they share "
                f"{len(shared)}, e.g. {sorted(shared)[0]!r})"
            )
    joined: Rows = {}
    for part in parts:
        joined.update(part)
    return joined, means


def compare(
    runs: Mapping[str, Any],
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | DataFrameLike | None,
    measures: Sequence[str] | None = None,
    *,
    baseline: str | Sequence[str] | None = None,
    test: Test = "t",
    correction: Correction = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    missing: Missing = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
) -> ComparisonReport:
    """Compare systems on the same queries with paired tests, corrected over every comparison.

    Parameters
    ----------
    runs
        Name -> run: a ``{query_id: {doc_id: score}}`` mapping, the path of a TREC run file, a
        DataFrame (``query_id``, ``doc_id``, ``score``), or a report that holds per-query values
        (:func:`~ef.evaluation.evaluate_run`'s or :func:`~ef.evaluation.evaluate_retrieval`'s),
        in the order the table should list them. A list or tuple of runs is one system run
        several times: seeds (the same queries: averaged per query before testing) or folds
        (disjoint queries: joined); each one's mean is kept in ``report.replicates``.
        A report's queries count as present (one made with ``missing="zero"`` already holds
        zeros); those `qrels` does not judge are not compared.
    qrels
        ``{query_id: {doc_id: grade}}``, a qrels file or a DataFrame (``query_id``, ``doc_id``,
        ``relevance``); its judged queries are the queries compared. ``None`` only when every
        run is a report (then their queries are).
    measures
        Measure names in any spelling ``ef trec-eval`` and :func:`~ef.measures.resolve` read
        (``ndcg@10``, ``P_5``, ``nDCG@10``, ``P.5,10``, ``ndcg_cut.10``, ``P``, ``official``; for a
        report: its keys). A nickname or family form compares its per-query means and names the
        rest (``num_q``, ``gm_map`` ...) in the warnings.
        ``None``: ``ndcg@10``, ``recall@100``, ``map``, ``mrr`` (for reports only: the
        measures they share). Only per-query scores: counts such as ``num_rel`` are refused.
    baseline
        Compare every other system with this one; several names compare every other system with
        each of them; ``None`` compares all pairs.
    test
        ``"t"`` (paired Student t, scipy's ``ttest_rel``), ``"randomization"`` (two-sided sign
        flips, ``p = (b + 1) / (B + 1)``; exact enumeration when ``2**n <= resamples``),
        ``"bootstrap"`` (paired, shift method) or ``"wilcoxon"`` (scipy's ``wilcoxon``, zero
        differences dropped).
    correction
        ``"holm"``, ``"bh"`` (Benjamini-Hochberg), ``"bonferroni"`` or ``"none"``, over the family
        of every (pair, measure) comparison in the report (with one comparison all are the same).
    alpha
        A comparison is significant when its adjusted p-value is below `alpha`.
    confidence
        The level of the bootstrap interval of each mean difference.
    resamples
        Resamples of the randomization and bootstrap tests and of the bootstrap interval.
    seed
        Seeds every resample: the same inputs and seed give the same report whatever the order of
        the runs, the other runs in it or the number of threads.
    missing
        A judged query a run lacks: ``"zero"`` scores it 0 (trec_eval ``-c``), ``"skip"`` leaves it
        out for every system. The report counts, per system, the queries it lacked.
    relevance_level, max_docs
        As :func:`~ef.evaluation.evaluate_run` (trec_eval ``-l`` and ``-M``), for runs.

    Returns
    -------
    ComparisonReport

    Raises
    ------
    ValueError
        For a bad option (named, with the value given), an unknown or non-mean measure, a run
        that cannot be evaluated (named), or fewer than 2 queries to pair.
    TypeError
        When `runs` is not a mapping or a measure name is not a str.

    Examples
    --------
    >>> qrels = {f"q{i}": {"d1": 1} for i in range(6)}
    >>> a = {f"q{i}": {"d1": 0.5, "d2": 0.9} for i in range(6)}  # d1 at rank 2 everywhere
    >>> b = {f"q{i}": {"d1": 0.9, "d2": 0.5} for i in range(5)}  # rank 1, but q5 is missing
    >>> report = compare({"a": a, "b": b}, qrels, ["mrr"], test="randomization")
    >>> c = report.get("b", "mrr")
    >>> c.baseline_mean, round(c.system_mean, 4), (c.wins, c.ties, c.losses), report.lacked["b"]
    (0.5, 0.8333, (5, 0, 1), 1)
    >>> c.p_value, report.exact  # exact: 14 of all 2**6 sign flips reach |sum| = 2
    (0.21875, True)
    """
    systems, baselines = _check_runs(runs, baseline)
    check_options(test, correction, alpha, confidence, resamples, seed)
    check_choice(missing, "missing", ("zero", "skip"))
    names, direction, left_out = _expand_measures(_check_measures(measures, runs))
    options: dict[str, Any] = {"relevance_level": relevance_level, "max_docs": max_docs}
    if relevance_level != 1 or max_docs is not None:
        scored = [s for s in systems if any(_is_report(r) for r in _members(runs[s]))]
        if scored:  # a report's values were scored elsewhere: the options cannot reach them
            raise ValueError(
                f"'relevance_level' and 'max_docs' score runs; {scored[0]!r} is a report, already scored "
                "(score it with these options, or give its run)"
            )
    if qrels is None:
        loaded: Mapping[str, Any] | None = None
        plain = [s for s in systems if not all(_is_report(r) for r in _members(runs[s]))]
        if plain:
            raise ValueError(f"'qrels' is None but run {plain[0]!r} is a run, not a report with per-query values")
    elif isinstance(qrels, str | os.PathLike):
        from ef.trec import read_qrels

        loaded = read_qrels(qrels)
    elif isinstance(qrels, Mapping):
        loaded = qrels
    elif is_frame(qrels):
        loaded = qrels_from_frame(qrels)
    else:
        raise TypeError(f"'qrels' must be a mapping, a path, a DataFrame or None (got {type(qrels).__name__})")

    present: dict[str, Rows] = {}
    replicates: dict[str, dict[str, tuple[float, ...]]] = {}
    for s in systems:
        parts: list[Rows] = []
        for member in _members(runs[s]):
            if _is_report(member):
                part = _from_report(s, member, names)
            elif loaded is not None:
                part = _from_run(s, member, loaded, names, options)
            else:  # pragma: no cover - refused above
                raise ValueError(f"'qrels' is None but run {s!r} is a run")
            if loaded is not None:  # a report may hold queries the qrels do not judge: not compared
                part = {q: v for q, v in part.items() if q in loaded}
            parts.append(part)
        present[s], means = _combine(s, parts, names)
        if means:
            replicates[s] = means
    # A query whose judgements are empty ({'q2': {}}, as qrels filtered to grade > 0 give) is judged by
    # nothing: evaluate_run leaves it out (c939d8e), so no run lacks it and it has no zeros to take.
    judged = (sorted(str(q) for q, judgements in loaded.items() if len(judgements)) if loaded is not None
              else sorted(set().union(*(present[s] for s in systems))))
    lacked = {s: sum(1 for q in judged if q not in present[s]) for s in systems}
    if missing == "skip":
        queries = [q for q in judged if all(q in present[s] for s in systems)]
        rows = present
    else:
        queries = judged
        rows = {}
        for s in systems:
            lacking = [q for q in judged if q not in present[s]]
            rows[s] = {**present[s], **_zeros(_members(runs[s])[0], loaded or {}, lacking, names)}
    if len(queries) < 2:
        raise ValueError(
            f"only {len(queries)} queries to compare (missing={missing!r}): a paired test needs at least 2"
        )
    scores = {s: {m: [rows[s][q][j] for q in queries] for j, m in enumerate(names)} for s in systems}
    notes = []
    if left_out:
        notes.append(f"not compared, as they are no per-query means: {', '.join(left_out)}")
    return build_report(
        systems=systems,
        measures=names,
        higher_is_better=direction,
        queries=queries,
        scores=scores,
        lacked=lacked,
        baseline=baselines or None,
        test=test,
        correction=correction,
        alpha=alpha,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        missing=missing,
        notes=notes,
        replicates=replicates,
        judged=len(judged),  # missing="skip" compares fewer: a lack is counted against every judged query
    )


_ = CORRECTIONS  # the option names, re-exported for the command line
