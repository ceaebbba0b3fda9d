"""What :func:`~ef.comparison._compare.compare` returns, and its renderings: terminal, Markdown, LaTeX, CSV, frames.

The report and its renderings share a module: each rendering reads the report, and the report's
methods call the renderings, so apart they would import each other. Every text rendering shows
the same columns, the same markers and the same legend.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ef._console import format_table
from ef.comparison._stats import CORRECTIONS, TESTS

__all__ = [
    "SCHEMA",
    "Comparison",
    "ComparisonReport",
    "csv_text",
    "dataframe",
    "latex",
    "markdown",
    "systems_table",
    "table",
]

SCHEMA = "ef.compare/1"

@dataclass(frozen=True)
class Comparison:
    """One (pair, measure) comparison of :class:`ComparisonReport`.

    ``diff`` is ``system_mean - baseline_mean`` in the measure's units; ``ci_low``/``ci_high``
    bound its paired-bootstrap confidence interval. ``effect_size`` is paired Cohen's d (the
    mean difference over the standard deviation of the per-query differences); ``None`` when
    every query differs by the same non-zero amount (an infinite effect). ``significant`` is
    ``p_adjusted < alpha``. ``wins``/``ties``/``losses`` count the queries where `system` did
    better than, the same as, or worse than `baseline`, in the measure's direction. In all-pairs
    mode `baseline` is the pair's first system.
    """

    system: str
    baseline: str
    measure: str
    higher_is_better: bool
    n_queries: int
    system_mean: float
    baseline_mean: float
    diff: float
    ci_low: float
    ci_high: float
    effect_size: float | None
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int

    @property
    def verdict(self) -> str:
        """``"better"`` or ``"worse"`` (significant, in the measure's direction) or ``"not significant"``."""
        if not self.significant or self.diff == 0.0:
            return "not significant"
        return "better" if (self.diff > 0) == self.higher_is_better else "worse"

    def to_dict(self) -> dict[str, Any]:
        """The fields, plus ``verdict``, as a JSON-ready dict."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["verdict"] = self.verdict
        return out


@dataclass(frozen=True, repr=False)
class ComparisonReport:
    """What :func:`compare` found: every comparison, the settings, the queries and the warnings.

    ``comparisons`` are ordered by pair (as the runs were given), then by measure; together they
    are the family the p-values were corrected over. ``queries`` are the query ids compared
    (sorted); ``baselines`` every baseline (the first is ``baseline``; empty in all-pairs mode);
    ``replicates[system][measure]`` each seed's (or fold's) mean, for a system given as several
    runs, whose per-query values were averaged (seeds) or joined (folds);
    ``scores[system][measure]`` holds that system's per-query values aligned with `queries`
    (``None`` where a benchmark sample was not scored; that measure then compares the samples
    every system scored). ``lacked[system]`` counts the queries the system had no
    result for. ``unit`` names what was paired: ``"queries"`` or ``"samples"``.

    Renderings: ``str(report)`` (a terminal table with markers and a legend), :meth:`to_markdown`,
    :meth:`to_latex`, :meth:`to_csv`, :meth:`to_dict` / :meth:`to_json` (with per-query
    differences) and :meth:`to_dataframe`.
    """

    systems: tuple[str, ...]
    baseline: str | None
    measures: tuple[str, ...]
    higher_is_better: Mapping[str, bool]
    comparisons: tuple[Comparison, ...]
    test: str
    correction: str
    alpha: float
    confidence: float
    resamples: int
    seed: int
    missing: str
    exact: bool
    queries: tuple[str, ...]
    scores: Mapping[str, Mapping[str, tuple[float | None, ...]]]
    lacked: Mapping[str, int]
    warnings: tuple[str, ...]
    unit: str = "queries"
    baselines: tuple[str, ...] = ()
    replicates: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)

    def __repr__(self) -> str:
        """Short: the per-query values would fill a screen."""
        return (
            f"ComparisonReport({len(self.systems)} systems, {len(self.measures)} measures, "
            f"{self.n_queries} {self.unit}, {self.family_size} comparisons, test={self.test!r})"
        )

    @property
    def family_size(self) -> int:
        """How many comparisons the correction was applied over."""
        return len(self.comparisons)

    @property
    def n_queries(self) -> int:
        """How many queries (samples) were paired."""
        return len(self.queries)

    @property
    def family(self) -> str:
        """The family of comparisons, in words."""
        pairs = len(self.comparisons) // max(len(self.measures), 1)
        if len(self.baselines) > 1:
            what = f"{pairs} (system, baseline) pairs, baselines {', '.join(map(repr, self.baselines))}"
        elif self.baseline is not None:
            what = f"{pairs} system{'s' if pairs != 1 else ''} against the baseline {self.baseline!r}"
        else:
            what = f"{pairs} pair{'s' if pairs != 1 else ''} of systems"
        return (
            f"every (system, measure) comparison: {what} x {len(self.measures)} "
            f"measure{'s' if len(self.measures) != 1 else ''} = {self.family_size}"
        )

    def get(self, system: str, measure: str, baseline: str | None = None) -> Comparison:
        """The comparison of `system` on `measure` (against `baseline` when several exist).

        Raises ``KeyError`` naming what was asked for when there is none; the comparison of a
        pair listed the other way round is not turned around.
        """
        for c in self.comparisons:
            if c.system == system and c.measure == measure and baseline in (None, c.baseline):
                return c
        against = "" if baseline is None else f" against {baseline!r}"
        raise KeyError(f"no comparison of {system!r} on {measure!r}{against} in this report")

    def per_query_diff(self, comparison: Comparison) -> dict[str, float]:
        """Query id -> ``system - baseline`` for the queries that comparison paired."""
        a = self.scores[comparison.baseline][comparison.measure]
        b = self.scores[comparison.system][comparison.measure]
        return {q: y - x for q, x, y in zip(self.queries, a, b, strict=True) if x is not None and y is not None}

    def to_dict(self, *, per_query: bool = True) -> dict[str, Any]:
        """A JSON-ready dict with schema version :data:`SCHEMA`.

        ``per_query=True`` adds ``queries``, each system's per-query values (``per_query``) and
        each comparison's per-query differences (``per_query_diff``, aligned with ``queries``,
        ``null`` where not paired).
        """
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "test": self.test,
            "test_name": TESTS[self.test],
            "exact": self.exact,
            "correction": self.correction,
            "alpha": self.alpha,
            "confidence": self.confidence,
            "resamples": self.resamples,
            "seed": self.seed,
            "missing": self.missing,
            "unit": self.unit,
            "systems": list(self.systems),
            "baseline": self.baseline,
            "baselines": list(self.baselines or ([] if self.baseline is None else [self.baseline])),
            "replicates": {s: {m: list(v) for m, v in by.items()} for s, by in self.replicates.items()},
            "measures": [{"name": m, "higher_is_better": self.higher_is_better[m]} for m in self.measures],
            "family": {"description": self.family, "size": self.family_size},
            "n_queries": self.n_queries,
            "lacked": dict(self.lacked),
            "comparisons": [c.to_dict() for c in self.comparisons],
            "warnings": list(self.warnings),
        }
        if per_query:
            out["queries"] = list(self.queries)
            out["per_query"] = {s: {m: list(v) for m, v in by.items()} for s, by in self.scores.items()}
            for record, c in zip(out["comparisons"], self.comparisons, strict=True):
                diffs = self.per_query_diff(c)
                record["per_query_diff"] = [diffs.get(q) for q in self.queries]
        return out

    def to_json(self, *, indent: int | None = None, per_query: bool = True) -> str:
        """:meth:`to_dict` as JSON text (never NaN: undefined values are ``null``)."""
        return json.dumps(self.to_dict(per_query=per_query), ensure_ascii=False, allow_nan=False, indent=indent)

    def to_markdown(self) -> str:
        """A Markdown table with the same columns, markers and legend as ``str(report)``."""
        return markdown(self)

    def to_latex(self) -> str:
        """A LaTeX ``tabular`` with booktabs rules (needs ``\\usepackage{booktabs,amssymb}``)."""
        return latex(self)

    def to_systems_table(self, form: str = "markdown") -> str:
        """Systems x measures: each mean, with superscripts naming the systems it is significantly
        better than, as papers print it; `form` is ``"markdown"``, ``"latex"`` or ``"text"``."""
        return systems_table(self, form)

    def to_csv(self) -> str:
        """One CSV row per comparison, full precision, no per-query values."""
        return csv_text(self)

    def to_dataframe(self, library: str = "pandas") -> Any:
        """One row per comparison as a pandas (default) or polars DataFrame.

        Raises ``ImportError`` with the install command when the library is missing.
        """
        return dataframe(self, library)

    def to_pandas(self) -> Any:
        """One row per comparison as a pandas DataFrame: ``to_dataframe("pandas")``."""
        return dataframe(self, "pandas")

    def to_polars(self) -> Any:
        """One row per comparison as a polars DataFrame: ``to_dataframe("polars")``."""
        return dataframe(self, "polars")

    def to_html(
        self,
        path: str | os.PathLike[str],
        *,
        runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
        qrels: Mapping[str, Mapping[str, float]] | None = None,
        queries: Mapping[str, str] | None = None,
        corpus: Mapping[str, str] | None = None,
        title: str | None = None,
    ) -> Path:
        """Write a self-contained HTML report with charts to `path` (atomically); returns the path.

        With `runs` (name -> ``{query_id: {doc_id: score}}``) the largest losses show both
        rankings side by side. Needs the ``report`` extra (``pip install 'ef-eval[report]'``); see
        :func:`ef.report.comparison_report`.
        """
        from ef.report import comparison_report

        page = comparison_report(self, runs=runs, qrels=qrels, queries=queries, corpus=corpus, title=title)
        return page.to_html(path)

    def _repr_html_(self) -> str:
        """In a notebook: the page :meth:`to_html` writes, in a sandboxed frame; without the ``report``
        extra, the terminal table."""
        from ef.report import comparison_report, notebook_html

        try:
            return notebook_html(comparison_report(self).html())
        except ImportError:
            import html

            return f"<pre>{html.escape(str(self))}</pre>"

    def __str__(self) -> str:
        """The terminal table: one row per comparison, markers, a legend and the warnings."""
        return table(self)


_BETTER, _WORSE = "▲", "▼"
_NAME_COLUMNS = 3


def _p(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def _marker(c: Comparison) -> str:
    return {"better": _BETTER, "worse": _WORSE}.get(c.verdict, "")


def _headers(report: ComparisonReport) -> list[str]:
    level = f"{round(report.confidence * 100, 6):g}% CI"
    adjusted = "p" if report.correction == "none" else f"p ({report.correction})"
    return ["system", "vs", "measure", "mean", "vs mean", "diff", level, "d", "p", adjusted, "W/T/L", "sig"]


def _cells(c: Comparison) -> list[str]:
    effect = "-" if c.effect_size is None else f"{c.effect_size:.2f}"
    return [
        c.system,
        c.baseline,
        c.measure if c.higher_is_better else f"{c.measure} ↓",
        f"{c.system_mean:.4f}",
        f"{c.baseline_mean:.4f}",
        _signed(c.diff),
        f"[{_signed(c.ci_low)}, {_signed(c.ci_high)}]",
        effect,
        _p(c.p_value),
        _p(c.p_adjusted),
        f"{c.wins}/{c.ties}/{c.losses}",
        _marker(c),
    ]


def _title(report: ComparisonReport) -> str:
    correction = CORRECTIONS[report.correction]
    test = TESTS[report.test]
    if report.test == "randomization":
        n = min(c.n_queries for c in report.comparisons)
        test += f" (all {2**n} sign flips)" if report.exact else f" ({report.resamples} random sign flips)"
    return (
        f"{test} over {report.n_queries} {report.unit}; "
        f"{correction} correction over {report.family_size} comparison{'s' if report.family_size != 1 else ''}, "
        f"alpha {report.alpha:g}"
    )


def _legend(report: ComparisonReport) -> list[str]:
    adjusted = "p" if report.correction == "none" else f"{CORRECTIONS[report.correction]}-adjusted p"
    return [
        f"{_BETTER} / {_WORSE}: system significantly better / worse than 'vs' ({adjusted} < {report.alpha:g}); "
        f"family: {report.family}",
        f"diff: system - vs; CI: paired bootstrap, {report.resamples} resamples, seed {report.seed}; "
        f"d: paired Cohen's d; W/T/L: {report.unit} won / tied / lost"
        + ("; ↓: lower is better" if not all(report.higher_is_better.values()) else ""),
    ]


def table(report: ComparisonReport) -> str:
    """The terminal table: the names (system, vs, measure) left-aligned, the numbers right-aligned."""
    cells = [_cells(c) for c in report.comparisons]
    lines = [format_table(_headers(report), cells, title=_title(report), left=_NAME_COLUMNS)]
    lines.extend(_legend(report))
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(report: ComparisonReport) -> str:
    """A pipe table with a title line above and the legend and warnings below."""
    headers = _headers(report)
    right = {"mean", "vs mean", "diff", "d", "p", headers[9], "W/T/L"}
    out = [f"**{_title(report)}**", ""]
    out.append("| " + " | ".join(headers) + " |")
    out.append("|" + "|".join("---:" if h in right else "---" for h in headers) + "|")
    out.extend("| " + " | ".join(_markdown_cell(x) for x in _cells(c)) + " |" for c in report.comparisons)
    out.append("")
    out.extend(line + "  " for line in _legend(report))
    out.extend(f"**Warning:** {_markdown_cell(w)}  " for w in report.warnings)
    return "\n".join(out).rstrip() + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex(report: ComparisonReport) -> str:
    """A booktabs ``tabular``; markers are amssymb triangles on the difference."""
    headers = ["System", "vs", "Measure", "Mean", "vs mean", r"$\Delta$",
               _tex(_headers(report)[6]), "$d$", "$p$", _tex(_headers(report)[9]), "W/T/L"]
    out = [
        f"% {_tex(_title(report))}",
        r"% needs \usepackage{booktabs,amssymb}",
        r"\begin{tabular}{lll" + "r" * 8 + "}",
        r"\toprule",
        " & ".join(headers) + r" \\",
        r"\midrule",
    ]
    for c in report.comparisons:
        cells = [_tex(x) for x in _cells(c)]
        marker = {"better": r"$^{\blacktriangle}$", "worse": r"$^{\blacktriangledown}$"}.get(c.verdict, "")
        cells[5] = cells[5] + marker
        out.append(" & ".join(cells[:-1]) + r" \\")
    out.append(r"\bottomrule")
    out.append(r"\end{tabular}")
    legend = _legend(report)[0].replace(_BETTER, "$\\blacktriangle$").replace(_WORSE, "$\\blacktriangledown$")
    out.append(f"% {legend}")
    out.extend(f"% warning: {_tex(w)}" for w in report.warnings)
    return "\n".join(out) + "\n"


_CSV_FIELDS = (
    "system", "baseline", "measure", "higher_is_better", "n_queries", "system_mean", "baseline_mean", "diff",
    "ci_low", "ci_high", "effect_size", "p_value", "p_adjusted", "significant", "verdict", "wins", "ties", "losses",
)


def _records(report: ComparisonReport) -> list[dict[str, Any]]:
    return [{k: c.to_dict()[k] for k in _CSV_FIELDS} for c in report.comparisons]


def csv_text(report: ComparisonReport) -> str:
    """One row per comparison; floats at full precision (``repr``), ``None`` as an empty cell."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in _records(report):
        writer.writerow({k: "" if v is None else repr(v) if isinstance(v, float) else v for k, v in record.items()})
    return buffer.getvalue()


def dataframe(report: ComparisonReport, library: str) -> Any:
    """The CSV's rows as a pandas or polars DataFrame."""
    from ef.io.frames import require

    module = require(library)  # the install hint when it is missing
    records = _records(report)
    if library == "pandas":
        return module.DataFrame.from_records(records, columns=list(_CSV_FIELDS))
    return module.DataFrame(records)


def _letters(report: ComparisonReport) -> dict[str, str]:
    """A letter per system (a, b, ... z, then aa, ab ...), in the report's order."""
    out: dict[str, str] = {}
    for i, system in enumerate(report.systems):
        out[system] = chr(97 + i) if i < 26 else chr(96 + i // 26) + chr(97 + i % 26)
    return out


def _beats(report: ComparisonReport) -> dict[tuple[str, str], list[str]]:
    """(system, measure) -> the systems it is significantly better than, in the report's order."""
    out: dict[tuple[str, str], list[str]] = {}
    for c in report.comparisons:
        if c.verdict == "better":
            out.setdefault((c.system, c.measure), []).append(c.baseline)
        elif c.verdict == "worse":  # worse than its baseline: the baseline beat it
            out.setdefault((c.baseline, c.measure), []).append(c.system)
    order = {s: i for i, s in enumerate(report.systems)}
    return {key: sorted(set(v), key=order.__getitem__) for key, v in out.items()}


def systems_table(report: ComparisonReport, form: str) -> str:
    """Systems x measures, each mean with the letters of the systems it is significantly better
    than as a superscript (only pairs the report compared count); the best mean of each measure
    in bold. `form`: ``"markdown"``, ``"latex"`` or ``"text"``."""
    if form not in ("markdown", "latex", "text"):
        raise ValueError(f"'form' must be 'markdown', 'latex' or 'text' (got {form!r})")
    letters = _letters(report)
    beats = _beats(report)
    means = {s: {m: _mean(report, s, m) for m in report.measures} for s in report.systems}
    best = {
        m: (max if report.higher_is_better[m] else min)(means[s][m] for s in report.systems) for m in report.measures
    }
    adjusted = "p" if report.correction == "none" else f"{CORRECTIONS[report.correction]}-adjusted p"
    legend = (
        f"superscript: the systems (by letter) this one is significantly better than ({TESTS[report.test]}, "
        f"{adjusted} < {report.alpha:g}, over {report.n_queries} {report.unit}); bold: the best mean; "
        f"family: {report.family}"
    )
    names = [f"({letters[s]}) {s}" for s in report.systems]
    if form == "latex":
        out = [f"% {_tex(_title(report))}", r"% needs \usepackage{booktabs}",
               r"\begin{tabular}{l" + "r" * len(report.measures) + "}", r"\toprule",
               " & ".join(["System", *(_tex(_label(report, m)) for m in report.measures)]) + r" \\", r"\midrule"]
        for s, name in zip(report.systems, names, strict=True):
            cells = [_tex(name)]
            for m in report.measures:
                value = f"{means[s][m]:.4f}"
                value = rf"\textbf{{{value}}}" if means[s][m] == best[m] else value
                sup = "".join(letters[o] for o in beats.get((s, m), []))
                cells.append(value + (rf"$^{{{sup}}}$" if sup else ""))
            out.append(" & ".join(cells) + r" \\")
        out += [r"\bottomrule", r"\end{tabular}", f"% {_tex(legend)}"]
        out.extend(f"% warning: {_tex(w)}" for w in report.warnings)
        return "\n".join(out) + "\n"
    rows: list[list[str]] = []
    for s, name in zip(report.systems, names, strict=True):
        row = [name]
        for m in report.measures:
            value = f"{means[s][m]:.4f}"
            sup = "".join(letters[o] for o in beats.get((s, m), []))
            if form == "markdown":
                value = f"**{value}**" if means[s][m] == best[m] else value
                row.append(value + (f"<sup>{sup}</sup>" if sup else ""))
            else:
                row.append(value + (f"^{sup}" if sup else "") + ("*" if means[s][m] == best[m] else ""))
        rows.append(row)
    headers = ["system", *(_label(report, m) for m in report.measures)]
    if form == "markdown":
        out = [f"**{_title(report)}**", "", "| " + " | ".join(_markdown_cell(h) for h in headers) + " |",
               "|---" + "|---:" * len(report.measures) + "|"]
        out.extend("| " + " | ".join(_markdown_cell(c) for c in row) + " |" for row in rows)
        out += ["", _markdown_cell(legend) + "  "]
        out.extend(f"**Warning:** {_markdown_cell(w)}  " for w in report.warnings)
        return "\n".join(out).rstrip() + "\n"
    lines = [format_table(headers, rows, title=_title(report))]
    lines.append(legend.replace("bold", "*"))
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines) + "\n"


def _label(report: ComparisonReport, measure: str) -> str:
    return measure if report.higher_is_better[measure] else f"{measure} ↓"


def _mean(report: ComparisonReport, system: str, measure: str) -> float:
    """The system's mean over the queries the measure compared (those every system scored)."""
    values = [v for v in report.scores[system][measure] if v is not None]
    return sum(values) / len(values)
