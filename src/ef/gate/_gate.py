"""``ef.gate.gate``: is the candidate no worse than the baseline, by more than a stated margin?

For each gated measure a non-inferiority test (:mod:`ef.gate._stats`): a seeded paired
randomization p-value and a paired bootstrap bound, Holm's correction across the measures.
**pass** when the candidate is shown non-inferior (the corrected bound on the worse side lies
inside the margin, and Holm's p of "worse by the margin or more" is below alpha), **fail** when
it is shown worse by more than the margin (the corrected bound on the better side lies beyond
it, and Holm's p of "not worse by more than the margin" is below alpha), **inconclusive**
otherwise, with the smallest difference this query set detects and the queries needed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ef.comparison._stats import equal_but_for_rounding, seed_mean
from ef.gate import _stats as stats
from ef.gate._report import GateReport, MeasureVerdict, Outcome
from ef.gate._result import OPTION_NAMES, READABLE, Piped, Result, load_result, open_piped, readable, saved_kind

__all__ = ["DEFAULT_MARGIN", "Margin", "gate", "parse_margin"]


@dataclass(frozen=True)
class Margin:
    """How much worse the candidate may be: ``value`` in the measure's units, or with
    ``relative`` a fraction of the baseline's mean (``0.02`` is 2%)."""

    value: float
    relative: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.value, bool) or not isinstance(self.value, int | float) or not math.isfinite(self.value):
            raise TypeError(f"'margin' must be a finite number (got {self.value!r})")
        if self.value < 0:
            raise ValueError(f"'margin' must be >= 0 (got {self.value!r})")
        relative: object = self.relative
        if not isinstance(relative, bool):  # 'no' is truthy: the margin became a share of the mean
            raise TypeError(f"'relative' must be a bool (got {relative!r})")

    def absolute(self, baseline_mean: float) -> float:
        """The margin in the measure's units."""
        return self.value * abs(baseline_mean) if self.relative else float(self.value)

    def __str__(self) -> str:
        return f"{self.value * 100:g}% of the baseline mean" if self.relative else f"{self.value:g}"


DEFAULT_MARGIN = Margin(0.02, relative=True)
"""The margin of a measure none is stated for: 2% of the baseline's mean."""


def parse_margin(text: str) -> Margin:
    """``"0.01"`` (absolute) or ``"2%"`` (relative to the baseline mean).

    >>> parse_margin("2%"), parse_margin("0.01")
    (Margin(value=0.02, relative=True), Margin(value=0.01, relative=False))
    """
    if not isinstance(text, str):  # None failed inside, on .strip()
        raise TypeError(f"'text' must be a margin as a str, such as '0.01' or '2%' (got {type(text).__name__})")
    spelled = text.strip()
    relative = spelled.endswith("%")
    try:
        value = float(spelled[:-1] if relative else spelled)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"a margin is a number >= 0, or a percentage such as 2% (got {text!r})")
    return Margin(value / 100.0, True) if relative else Margin(value)


# --- loading and checking ------------------------------------------------------------------------


def _members(source: Any) -> list[Any]:
    return list(source) if isinstance(source, list | tuple) else [source]


def _opened(source: Any) -> Any:
    """`source`, or what standard input or a pipe it names holds (:class:`Piped`), read once."""
    piped = open_piped(source) if isinstance(source, str | os.PathLike) else None
    return source if piped is None else piped


def _is_run(source: Any) -> bool:
    """A TREC run (file, pipe or mapping) to be scored, not a saved result."""
    if isinstance(source, Piped):
        return source.saved is None
    if isinstance(source, str | os.PathLike):
        return saved_kind(source) is None
    if isinstance(source, Mapping):
        return not ("per_query" in source or "samples" in source or "schema" in source)
    return False


def _name(sources: list[Any]) -> str:
    def one(s: Any) -> str:
        return str(s) if isinstance(s, str | os.PathLike) else type(s).__name__

    return one(sources[0]) if len(sources) == 1 else f"{one(sources[0])} and {len(sources) - 1} more seeds"


def _expand(measures: Sequence[str]) -> list[str]:
    from ef.comparison._compare import _expand_measures

    return _expand_measures(measures)[0]


def _at_least(needed: int | None, least: int) -> int | None:
    return None if needed is None else max(needed, least)


def _differences(a: Mapping[str, Any], b: Mapping[str, Any], what: str, names: tuple[str, str]) -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key), b.get(key)
        if x is not None and y is not None and x != y:
            out.append(f"{what}{key}: {x!r} in the {names[0]}, {y!r} in the {names[1]}")
    return out


def _check_same(left: Result, right: Result, names: tuple[str, str], warnings: list[str]) -> None:
    """Refuse two results of different queries, qrels, datasets or options, naming the difference."""
    a, b = set(left.per_query), set(right.per_query)
    if a != b:
        only_a, only_b = sorted(a - b), sorted(b - a)
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} only in the {names[0]} (first {only_a[0]!r})")
        if only_b:
            parts.append(f"{len(only_b)} only in the {names[1]} (first {only_b[0]!r})")
        raise ValueError(
            f"the {names[0]} ({left.source}) and the {names[1]} ({right.source}) hold different queries: "
            + ", ".join(parts)
        )
    ma, mb = left.metadata, right.metadata
    ha, hb = ma.get("qrels_hash"), mb.get("qrels_hash")
    if ha is not None and hb is not None and ha != hb:
        raise ValueError(
            f"the {names[0]} ({left.source}) and the {names[1]} ({right.source}) were judged with different "
            f"qrels: {ha} against {hb}"
        )
    if ha is None or hb is None:
        lacking = (
            "neither result records a qrels hash"
            if ha is None and hb is None
            else f"the {names[0] if ha is None else names[1]} records no qrels hash"
        )
        warnings.append(f"{lacking}: that both were judged alike is not checked")
    da, db = ma.get("dataset") or {}, mb.get("dataset") or {}
    problems = _differences(da, db, "dataset ", names) if isinstance(da, Mapping) and isinstance(db, Mapping) else []
    oa, ob = ma.get("options") or {}, mb.get("options") or {}
    if isinstance(oa, Mapping) and isinstance(ob, Mapping):
        problems += _differences(
            {k: oa.get(k) for k in OPTION_NAMES}, {k: ob.get(k) for k in OPTION_NAMES}, "option ", names
        )
    # A run the gate scores counts every retrieved document: a result saved with a self-match dropped
    # (ef eval of ArguAna or Quora, its own --run-out included) or with -J is compared with the run
    # scored that way by ef trec-eval, which the refusal alone did not say.
    flags = [flag for option, flag in (("ignore_identical_ids", "--ignore-identical-ids"), ("judged_docs_only", "-J"))
             if any(p.startswith(f"option {option}:") for p in problems)]
    if problems:
        raise ValueError(
            f"the {names[0]} ({left.source}) and the {names[1]} ({right.source}) are not comparable: "
            + "; ".join(problems)
            + (" (gate a TREC run with ignore_identical_ids=True, ef gate --ignore-identical-ids, to drop its "
               "self-matches)" if flags == ["--ignore-identical-ids"] else
               f" (to gate a TREC run so scored, save its result with 'ef trec-eval {' '.join(flags)} -q --json "
               "FILE QRELS RUN' and gate FILE)" if flags else "")
        )
    va, vb = ma.get("ef_version"), mb.get("ef_version")
    if va is not None and vb is not None and va != vb:
        warnings.append(f"the {names[0]} was saved by ef {va}, the {names[1]} by ef {vb}")


def _measures_of(results: list[Result], given: list[str] | None, side: str) -> tuple[str, ...]:
    if given is not None:
        for r in results:
            lacking = [m for m in given if m not in r.measures]
            if lacking:
                raise ValueError(
                    f"the {side} ({r.source}) has no {', '.join(map(repr, lacking))} "
                    f"(it has {', '.join(map(repr, r.measures))})"
                )
        return tuple(given)
    return results[0].measures


def _not_a_mean(name: str) -> bool:
    """Whether `name` is one measure of ef's registry that is summarised other than by a mean (num_ret)."""
    from ef.measures import resolve

    try:
        pairs = resolve([name], rankings=False)
    except ValueError:  # a saved result's own metric (a RAG score): gated as a mean
        return False
    return len(pairs) == 1 and pairs[0][1].spec.aggregate != "mean"


def _direction(measure: str, given: Mapping[str, bool], sides: Sequence[Result]) -> bool:
    recorded = {r.higher_is_better.get(measure) for r in sides} - {None}
    if measure in given:
        said = bool(given[measure])
        if recorded and recorded != {said}:  # the registry's or a saved result's: reversed, a regression passes
            raise ValueError(
                f"{measure!r} is given as {'higher' if said else 'lower'}-is-better, but the results record that "
                f"{'lower' if said else 'higher'} is better: a gate the wrong way round would pass a regression"
            )
        return said
    if len(recorded) > 1:
        raise ValueError(f"the results disagree on whether higher {measure!r} is better: say it with higher_is_better")
    if recorded:
        return bool(recorded.pop())
    raise ValueError(
        f"whether higher {measure!r} is better is not known: say it (higher_is_better={{{measure!r}: False}}, "
        f"ef gate --lower-is-better {measure})"
    )


def _margins(
    margin: float | str | Margin | Mapping[str, float | str | Margin] | None, measures: Sequence[str]
) -> tuple[dict[str, Margin], Margin]:
    def one(value: object, where: str) -> Margin:
        if isinstance(value, Margin):
            return value
        if isinstance(value, str):
            return parse_margin(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{where} must be a number, a percentage string or a Margin (got {value!r})")
        return Margin(float(value))

    if margin is None:
        return dict.fromkeys(measures, DEFAULT_MARGIN), DEFAULT_MARGIN
    if isinstance(margin, Mapping):
        unknown = [m for m in margin if m not in measures and m != "*"]
        if unknown:
            raise ValueError(f"'margin' names {unknown[0]!r}, which is not gated (gated: {', '.join(measures)})")
        default = one(margin["*"], "'margin'['*']") if "*" in margin else DEFAULT_MARGIN
        return {m: one(margin[m], f"'margin'[{m!r}]") if m in margin else default for m in measures}, default
    default = one(margin, "'margin'")
    return dict.fromkeys(measures, default), default


def _check_keywords(measures: object, qrels: object, higher_is_better: object) -> None:
    """Name a wrong type before anything is read (inside, each failed naming nothing, or not at all)."""
    if measures is not None and (isinstance(measures, str) or not isinstance(measures, Iterable)):
        # a str's characters would be read as measure names
        raise TypeError(f"'measures' must be a sequence of measure names (got {measures!r})")
    if qrels is not None and not isinstance(qrels, Mapping | str | os.PathLike):
        raise TypeError(
            f"'qrels' must be a mapping query -> {{doc: relevance}}, a path (str or os.PathLike) or None "
            f"(got {type(qrels).__name__})"
        )
    if higher_is_better is not None:
        if not isinstance(higher_is_better, Mapping):
            raise TypeError(
                f"'higher_is_better' must be a mapping measure -> bool, or None (got {higher_is_better!r})"
            )
        for measure, value in higher_is_better.items():
            # bool('no') is True: a str or a number would pass silently (numpy's bool_, as a frame
            # or an array comparison gives it, is a bool)
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"'higher_is_better'[{measure!r}] must be True or False (got {value!r})")


def gate(
    baseline: Any,
    candidate: Any,
    measures: Sequence[str] | None = None,
    *,
    margin: float | str | Margin | Mapping[str, float | str | Margin] | None = None,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    higher_is_better: Mapping[str, bool] | None = None,
    missing: str = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
    ignore_identical_ids: bool = False,
) -> GateReport:
    """Gate `candidate` against `baseline`: non-inferiority per measure, Holm across measures.

    Parameters
    ----------
    baseline, candidate
        Anything :func:`~ef.gate.load_result` reads (a saved result, ``ef eval --json``, a report,
        a fastrag ``BenchmarkResult``, a TREC run with `qrels`), or a list of them: one system run
        with several seeds, averaged per query before testing (their spread is reported).
    measures
        The gated measures, in any spelling ``ef trec-eval`` reads; ``None``: every measure of the
        baseline (the candidate must have the same ones).
    margin
        How much worse the candidate may be: a number (absolute, every measure), ``"2%"`` (of the
        baseline's mean), a :class:`Margin`, or a mapping measure -> any of these (``"*"``: the
        others). Default :data:`DEFAULT_MARGIN`, 2% of the baseline mean.
    qrels
        Judgements to score a TREC run against (its hash is recorded and checked).
    alpha
        The one-sided level of each test, Holm-corrected across the measures.
    resamples, seed
        The randomization and bootstrap resamples and their seed.
    higher_is_better
        Directions of measures the registry and the results do not know (``latency_ms``: False).
    missing, relevance_level, max_docs
        How a TREC run is scored (:func:`~ef.evaluation.evaluate_run`).

    Raises
    ------
    TypeError
        For an argument of the wrong type, named (``gate(None, ...)``: 'baseline').
    ValueError
        When the two sides hold different queries, qrels, datasets, options or measures (the
        message names the difference), or for a bad option.
    """
    from ef.compare import check_options

    check_options("randomization", "holm", alpha, 0.95, resamples, seed)
    base_sources, cand_sources = _members(baseline), _members(candidate)
    for side, given_side, sources in (("baseline", baseline, base_sources), ("candidate", candidate, cand_sources)):
        if not sources:
            raise ValueError(f"{side!r} must be a result or a non-empty list of results (got {given_side!r})")
        for i, source in enumerate(sources):
            if not readable(source):
                where = f"{side!r}[{i}]" if isinstance(given_side, list | tuple) else repr(side)
                got = "None" if source is None else type(source).__name__
                raise TypeError(f"{where} must be a result ({READABLE}), or a list of them (got {got})")
    _check_keywords(measures, qrels, higher_is_better)
    # A pipe is read here, once: whether it holds a saved result or a run decides the measures a run
    # is scored with and whether the options apply (the sides keep their paths as names).
    base_named, cand_named = base_sources, cand_sources
    base_sources, cand_sources = ([_opened(s) for s in sources] for sources in (base_named, cand_named))
    options: dict[str, Any] = {
        "qrels": qrels, "missing": missing, "relevance_level": relevance_level, "max_docs": max_docs,
        "ignore_identical_ids": ignore_identical_ids,
    }
    given = None if measures is None else _expand(list(measures))
    saved = [s for s in (*base_sources, *cand_sources) if not _is_run(s)]
    if len(saved) == len(base_sources) + len(cand_sources) and (
        missing != "zero" or relevance_level != 1 or max_docs is not None or ignore_identical_ids
    ):  # nothing to score: the options would be ignored
        raise ValueError(
            "'missing', 'relevance_level', 'max_docs' and 'ignore_identical_ids' score TREC runs, and both sides "
            "are saved results (their options are in their metadata)"
        )

    def load_one(source: Any, where: str, measures_of: Callable[[Any], Sequence[str] | None]) -> Result:
        try:
            return load_result(source, measures=measures_of(source), **options)
        except ValueError as error:
            if isinstance(source, str | os.PathLike | Piped):  # the message names the file already
                raise
            # an in-memory result is called "result" or "run" inside: say which side it is
            raise ValueError(f"the {where}: {error}") from error

    # A TREC run is scored with the measures asked for, else with those of the saved result on
    # the other side, else with evaluate_run's defaults.
    if given is not None:
        run_measures = given
    elif saved:
        first = "baseline" if any(saved[0] is s for s in base_sources) else "candidate"
        run_measures = list(load_one(saved[0], first, lambda _: None).measures)
    else:
        from ef.evaluation._run import DEFAULT_MEASURES

        run_measures = list(DEFAULT_MEASURES)

    def load_side(sources: list[Any], side: str) -> list[Result]:
        results = [
            load_one(s, side if len(sources) == 1 else f"{side}'s seed {i + 1}",
                     lambda one: run_measures if _is_run(one) else given)
            for i, s in enumerate(sources)
        ]
        for r in results[1:]:
            _check_same(results[0], r, (f"{side}'s first seed", f"{side}'s other seed"), [])
            if set(r.measures) != set(results[0].measures):
                raise ValueError(f"the {side}'s seeds hold different measures ({results[0].source}, {r.source})")
        return results

    base = load_side(base_sources, "baseline")
    cand = load_side(cand_sources, "candidate")
    names = ("baseline", "candidate")
    warnings: list[str] = []
    for side, results in (("baseline", base), ("candidate", cand)):
        for r in results:
            if r.lacked:
                warnings.append(
                    f"the {side} {r.source} lacked {r.lacked} of the {len(r.per_query)} judged queries: "
                    "scored 0 (missing='zero')"
                )
    try:
        _check_same(base[0], cand[0], names, warnings)
    except ValueError as error:
        scored = [s for s in (*base_sources, *cand_sources) if _is_run(s)]
        if not (scored and missing == "zero" and "hold different queries" in str(error)):
            raise
        # ef eval scores the queries with a relevant judgement and a text; a run here, every judged one.
        raise ValueError(
            f"{error} (a TREC run is scored here on every judged query, as trec_eval scores it, where ef eval "
            "scores only those with a relevant judgement and a text: missing='skip' (--missing skip) scores the "
            "run on its own queries)"
        ) from None
    if given is None:
        gated = list(base[0].measures)
        extra = [m for m in cand[0].measures if m not in gated]
        lacking = [m for m in gated if m not in cand[0].measures]
        if extra or lacking:
            parts = [f"only in the baseline: {', '.join(lacking)}"] if lacking else []
            parts += [f"only in the candidate: {', '.join(extra)}"] if extra else []
            raise ValueError(
                f"the baseline and the candidate hold different measures ({'; '.join(parts)}): choose with -m"
            )
        # ef trec-eval's num_ret, num_rel ... are counts: their "mean" is not a per-query score (num_rel
        # always passes), and -m num_ret is refused; left out, and said, as ef compare says it.
        left_out = [m for m in gated if _not_a_mean(m)]
        if left_out and len(left_out) == len(gated):  # refused, as -m num_ret is and ef compare refuses it
            raise ValueError(
                f"the baseline ({base[0].source}) holds no per-query score to gate: {', '.join(left_out)} "
                f"{'is no per-query mean' if len(left_out) == 1 else 'are no per-query means'}; paired tests "
                "compare mean differences, so give a result with a per-query score"
            )
        if left_out:
            gated = [m for m in gated if m not in left_out]
            warnings.append(f"not gated, as they are no per-query means: {', '.join(left_out)}")
    else:
        gated = list(given)
        _measures_of(base, gated, "baseline")
        _measures_of(cand, gated, "candidate")
    direction = {m: _direction(m, higher_is_better or {}, [*base, *cand]) for m in gated}
    margins, default = _margins(margin, gated)
    queries = tuple(sorted(base[0].per_query))
    n = len(queries)
    if n < 2:
        raise ValueError(f"only {n} query to pair: a gate needs at least 2")
    values = {
        side: seed_mean([[r.values(m, list(queries)) for m in gated] for r in results]).T
        for side, results in (("baseline", base), ("candidate", cand))
    }  # (n, k): seeds averaged per query
    spread = {
        side: {m: tuple(r.mean(m) for r in results) for m in gated}
        for side, results in (("baseline", base), ("candidate", cand))
        if len(results) > 1
    }
    sign = np.array([1.0 if direction[m] else -1.0 for m in gated])
    with np.errstate(over="ignore", invalid="ignore"):
        raw = values["candidate"] - values["baseline"]
        means = np.abs(values["baseline"]).sum(axis=0) + np.abs(raw).sum(axis=0)
    for j, m in enumerate(gated):  # finite values whose differences or sums overflow: every bound was NaN
        if not math.isfinite(float(means[j])):
            raise ValueError(
                f"{m!r}: the values are too large to compare (their differences or sums overflow a float, "
                "about 1.8e308): scale them down"
            )
    oriented = raw * sign
    base_means = values["baseline"].mean(axis=0)
    delta = np.array([margins[m].absolute(float(base_means[j])) for j, m in enumerate(gated)])
    decision = stats.decide(oriented, delta, alpha=alpha, resamples=resamples, seed=seed)
    verdicts = []
    level = alpha / len(gated)  # Holm's strictest step: what a measure must clear in the worst case
    # No sign-flip p falls below 2**-n: fewer queries than this settle nothing, whatever the normal
    # approximation says ("about 2 queries would settle" was printed of 4 that did not).
    flips = math.floor(math.log2(1.0 / level)) + 1
    for j, m in enumerate(gated):
        column = oriented[:, j]
        # Differences equal but for rounding: as for equal ones, the sign flips' resolution limits the
        # test, not "a difference of 0.0000" and "about 2 queries" (ef compare's Cohen's d says the same).
        sd = 0.0 if equal_but_for_rounding(column[:, None])[0] else float(column.std(ddof=1))
        distance = float(oriented[:, j].mean()) + float(delta[j])
        s = float(sign[j])
        verdicts.append(
            MeasureVerdict(
                measure=m,
                higher_is_better=direction[m],
                verdict=str(decision.verdict[j]),  # type: ignore[arg-type]
                margin=float(delta[j]),
                margin_text=str(margins[m]),
                threshold=float(-delta[j] * s) + 0.0,  # a margin of 0 prints +0.0000, not -0.0000
                n_queries=n,
                baseline_mean=float(base_means[j]),
                candidate_mean=float(values["candidate"][:, j].mean()),
                diff=float(raw[:, j].mean()),
                worst=float(decision.worst[j] * s) + 0.0,  # as threshold: 0, not -0.0, for a lower-is-better one
                best=float(decision.best[j] * s) + 0.0,
                level_pass=float(decision.level_pass[j]),
                level_fail=float(decision.level_fail[j]),
                p_pass=float(decision.p_pass[j]),
                p_pass_holm=float(decision.p_pass_holm[j]),
                p_fail=float(decision.p_fail[j]),
                p_fail_holm=float(decision.p_fail_holm[j]),
                sd=sd,
                detectable=stats.detectable_difference(sd, n, level),
                # all differences equal: the exact test needs 2**n > 1/level sign flips, whatever the sd;
                # equal to the margin (0 and 0: a relative margin of a baseline mean of 0), no number can
                queries_needed=_at_least(stats.queries_needed(sd, distance, level), flips)
                if sd > 0 or distance == 0
                else max(n + 1, flips),
            )
        )
    outcomes = {v.verdict for v in verdicts}
    outcome: Outcome = "fail" if "fail" in outcomes else "inconclusive" if "inconclusive" in outcomes else "pass"
    return GateReport(
        outcome=outcome,
        verdicts=tuple(verdicts),
        baseline=_name(base_named),
        candidate=_name(cand_named),
        queries=queries,
        alpha=float(alpha),
        resamples=int(resamples),
        seed=int(seed),
        exact=decision.exact,
        default_margin=str(default),
        spread=spread,
        metadata={"baseline": dict(base[0].metadata), "candidate": dict(cand[0].metadata)},
        warnings=tuple(warnings),
    )


