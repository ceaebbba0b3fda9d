"""What :func:`~ef.gate.gate` returns, and its renderings: verdict lines, Markdown, JUnit XML, JSON, HTML.

The report and its renderings share a module: each rendering reads the report, and the report's
methods call the renderings, so apart they would import each other. :mod:`ef.gate._gate` makes
the report and imports this module; nothing here imports it.
"""

from __future__ import annotations

import html as html_lib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from xml.etree import ElementTree

__all__ = [
    "EXIT_CODES",
    "SCHEMA",
    "GateReport",
    "MeasureVerdict",
    "Outcome",
    "as_dict",
    "detectable_text",
    "html",
    "junit",
    "lines",
    "markdown",
    "verdict_line",
]

SCHEMA = "ef.gate/1"
Outcome = Literal["pass", "fail", "inconclusive"]
EXIT_CODES: Mapping[str, int] = {"pass": 0, "fail": 1, "usage": 2, "inconclusive": 3}
"""The exit status of ``ef gate`` for each outcome (``usage``: a bad argument or input)."""


@dataclass(frozen=True)
class MeasureVerdict:
    """The gate's finding on one measure.

    ``diff`` is ``candidate - baseline`` in the measure's units; ``threshold`` the margin on the
    worse side (``-margin`` where higher is better, ``+margin`` where lower is); ``worst`` and
    ``best`` the paired-bootstrap bounds of ``diff`` on its worse and better sides at Holm's level
    for this measure (``level_pass``, ``level_fail``: one-sided). ``p_pass`` tests "worse by the
    margin or more", ``p_fail`` "not worse by more than the margin" (randomization, one-sided);
    ``*_holm`` are Holm-adjusted across the gated measures. ``sd`` is the standard deviation of
    the per-query differences, ``detectable`` the smallest distance from the margin that
    ``n_queries`` detect with 80% power and ``queries_needed`` how many queries would settle the
    observed difference (``None``: it sits on the margin).
    """

    measure: str
    higher_is_better: bool
    verdict: Outcome
    margin: float
    margin_text: str
    threshold: float
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    diff: float
    worst: float
    best: float
    level_pass: float
    level_fail: float
    p_pass: float
    p_pass_holm: float
    p_fail: float
    p_fail_holm: float
    sd: float
    detectable: float
    queries_needed: int | None

    @property
    def line(self) -> str:
        """One line for a terminal or a CI log."""
        return verdict_line(self)

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True, repr=False)
class GateReport:
    """What :func:`gate` found: the outcome, one :class:`MeasureVerdict` per measure, the settings.

    ``outcome`` is ``"fail"`` if any measure failed, else ``"inconclusive"`` if any was, else
    ``"pass"``; :attr:`exit_code` its status (:data:`EXIT_CODES`). ``spread[side][measure]``
    holds each seed's mean for a side given as several runs. ``metadata[side]`` what each side
    recorded; ``warnings`` what could not be checked.
    """

    outcome: Outcome
    verdicts: tuple[MeasureVerdict, ...]
    baseline: str
    candidate: str
    queries: tuple[str, ...]
    alpha: float
    resamples: int
    seed: int
    exact: bool
    default_margin: str
    spread: Mapping[str, Mapping[str, tuple[float, ...]]]
    metadata: Mapping[str, Mapping[str, Any]]
    warnings: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        return f"GateReport({self.outcome!r}, {len(self.verdicts)} measures, {self.n_queries} queries)"

    @property
    def n_queries(self) -> int:
        """How many queries were paired."""
        return len(self.queries)

    @property
    def exit_code(self) -> int:
        """``ef gate``'s exit status: pass 0, fail 1, inconclusive 3."""
        return EXIT_CODES[self.outcome]

    def get(self, measure: str) -> MeasureVerdict:
        """The verdict on `measure`; ``KeyError`` naming it when it was not gated."""
        for v in self.verdicts:
            if v.measure == measure:
                return v
        raise KeyError(f"{measure!r} was not gated (gated: {', '.join(v.measure for v in self.verdicts)})")

    def lines(self) -> list[str]:
        """The verdict lines: one per measure, then the outcome."""
        return lines(self)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_markdown(self) -> str:
        """A Markdown summary for a CI job summary or a pull-request comment."""
        return markdown(self)

    def to_junit(self) -> str:
        """JUnit XML: one test case per measure (a failure for fail, skipped for inconclusive)."""
        return junit(self)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with schema :data:`SCHEMA`."""
        return as_dict(self)

    def to_json(self, *, indent: int | None = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """A self-contained HTML page; written atomically to `path` when given. Returns the page."""
        if path is not None and not isinstance(path, str | os.PathLike):  # before the page is made
            raise TypeError(f"'path' must be a str or os.PathLike path, or None (got {type(path).__name__})")
        page = html(self)
        if path is not None:
            from ef.io._atomic import atomic_writer

            with atomic_writer(path) as stream:
                stream.write(page.encode("utf-8"))
        return page

    def _repr_html_(self) -> str:
        """In a notebook: the page :meth:`to_html` writes, in a sandboxed frame."""
        from ef.report import notebook_html

        return notebook_html(self.to_html())


_WORD = {"pass": "PASS", "fail": "FAIL", "inconclusive": "INCONCLUSIVE"}
_ICON = {"pass": "✅", "fail": "❌", "inconclusive": "⚠️"}


def _p(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _margin(v: MeasureVerdict) -> str:
    return f"{v.threshold:+.4f} ({v.margin_text})"


def _why(v: MeasureVerdict) -> str:
    inside = "above" if v.higher_is_better else "below"
    beyond = "below" if v.higher_is_better else "above"
    if v.verdict == "pass":
        return (
            f"worst case {v.worst:+.4f} is {inside} the margin {_margin(v)}; "
            f"p {_p(v.p_pass_holm)} (Holm) that it is worse by the margin or more"
        )
    if v.verdict == "fail":
        return (
            f"even the best case {v.best:+.4f} is {beyond} the margin {_margin(v)}; "
            f"p {_p(v.p_fail_holm)} (Holm) that it is within the margin"
        )
    low, high = min(v.worst, v.best), max(v.worst, v.best)
    if low <= v.threshold <= high:
        return f"the interval [{low:+.4f}, {high:+.4f}] holds the margin {_margin(v)}"
    # The bounds clear the margin but the randomization p-value does not (a few queries: with 4, no
    # sign flip test gets below 1/16), so "the interval holds the margin" would be false.
    if (v.worst - v.threshold) * (1 if v.higher_is_better else -1) > 0:
        return (
            f"worst case {v.worst:+.4f} is {inside} the margin {_margin(v)}, but p {_p(v.p_pass_holm)} (Holm) "
            "that it is worse by the margin or more is not below alpha"
        )
    return (
        f"the best case {v.best:+.4f} is {beyond} the margin {_margin(v)}, but p {_p(v.p_fail_holm)} (Holm) "
        "that it is within the margin is not below alpha"
    )


def detectable_text(v: MeasureVerdict) -> str:
    """The sentence an inconclusive verdict ends with: what this query set can detect."""
    if v.queries_needed is None:
        needed = "no number of queries settles a difference that sits on the margin"
    else:
        needed = f"about {v.queries_needed:,} queries would settle a difference of {v.diff:+.4f}"
        if v.queries_needed > 100 * v.n_queries:  # a bare 188026672 reads as a fault; it is the margin
            needed += (
                f" ({v.queries_needed / v.n_queries:,.0f}x this query set: it sits "
                f"{abs(v.diff - v.threshold):.4f} from the margin)"
            )
    if v.sd == 0.0 and v.queries_needed is None:  # no spread, and "detects a difference of 0.0000" misled
        return "every query differs by the same amount, which sits on the margin: no number of queries settles it"
    if v.sd == 0.0:  # no spread: the sign flips' resolution limits the test
        return (
            f"every query differs by the same amount, and with {v.n_queries} queries no sign-flip p falls below "
            f"alpha; {needed}"
        )
    return (
        f"with {v.n_queries} queries the gate detects a difference of {v.detectable:.4f} from the margin "
        f"(80% power); {needed}"
    )


def verdict_line(v: MeasureVerdict) -> str:
    """``PASS ndcg@10: 0.6512 vs 0.6550 (-0.0038); worst case ...``."""
    arrow = "" if v.higher_is_better else " (lower is better)"
    line = (
        f"{_WORD[v.verdict]} {v.measure}{arrow}: candidate {v.candidate_mean:.4f} vs baseline "
        f"{v.baseline_mean:.4f} ({v.diff:+.4f}); {_why(v)}"
    )
    if v.verdict == "inconclusive":
        line += f"; {detectable_text(v)}"
    return line


def _settings(report: GateReport) -> str:
    flips = "every sign flip" if report.exact else f"{report.resamples} sign flips"
    return (
        f"{report.n_queries} queries; non-inferiority per measure (default margin: {report.default_margin}); "
        f"paired randomization test ({flips}, seed {report.seed}) and paired bootstrap bounds, "
        f"Holm-corrected across {len(report.verdicts)} measure{'s' if len(report.verdicts) != 1 else ''}, "
        f"alpha {report.alpha:g}"
    )


def _spread(report: GateReport) -> list[str]:
    out = []
    for side, by in report.spread.items():
        for measure, means in by.items():
            mean = sum(means) / len(means)
            sd = (sum((x - mean) ** 2 for x in means) / (len(means) - 1)) ** 0.5
            out.append(
                f"{side}: {len(means)} seeds averaged per query; {measure} per seed "
                f"{min(means):.4f} to {max(means):.4f} (sd {sd:.4f})"
            )
    return out


def lines(report: GateReport) -> list[str]:
    """One verdict line per measure, the settings, the seeds' spread, the warnings and the outcome."""
    out = [f"ef gate: {report.candidate} against {report.baseline}: {_settings(report)}"]
    out += [verdict_line(v) for v in report.verdicts]
    out += _spread(report)
    out += [f"warning: {w}" for w in report.warnings]
    out.append(f"outcome: {_WORD[report.outcome]} (exit {report.exit_code})")
    return out


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(report: GateReport) -> str:
    """A summary for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment."""
    out = [
        f"### {_ICON[report.outcome]} ef gate: {_WORD[report.outcome]}",
        "",
        f"Candidate `{_md(report.candidate)}` against baseline `{_md(report.baseline)}`: {_md(_settings(report))}.",
        "",
        "| measure | verdict | baseline | candidate | diff | worst case | best case | margin | p pass | p fail |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for v in report.verdicts:
        name = v.measure if v.higher_is_better else f"{v.measure} ↓"
        out.append(
            f"| {_md(name)} | {_ICON[v.verdict]} {_WORD[v.verdict]} | {v.baseline_mean:.4f} | {v.candidate_mean:.4f} "
            f"| {v.diff:+.4f} | {v.worst:+.4f} | {v.best:+.4f} | {_md(_margin(v))} | {_p(v.p_pass_holm)} "
            f"| {_p(v.p_fail_holm)} |"
        )
    out.append("")
    notes = [f"{v.measure}: {detectable_text(v)}" for v in report.verdicts if v.verdict == "inconclusive"]
    notes += _spread(report) + [f"warning: {w}" for w in report.warnings]
    out += [f"- {_md(n)}" for n in notes]
    if notes:
        out.append("")
    out.append(
        "Worst and best case: one-sided paired-bootstrap bounds of candidate - baseline at each measure's Holm "
        "level; p pass / p fail: Holm-adjusted randomization p-values of \"worse by the margin or more\" / "
        "\"not worse by more than the margin\". Pass when p pass < alpha and the worst case is inside the "
        "margin; fail when p fail < alpha and the best case is beyond it."
    )
    return "\n".join(out) + "\n"


def junit(report: GateReport) -> str:
    """JUnit XML: a test case per measure; fail is a failure, inconclusive is skipped (exit 3 says so)."""
    suite = ElementTree.Element(
        "testsuite",
        name="ef gate",
        tests=str(len(report.verdicts)),
        failures=str(sum(v.verdict == "fail" for v in report.verdicts)),
        errors="0",
        skipped=str(sum(v.verdict == "inconclusive" for v in report.verdicts)),
    )
    for v in report.verdicts:
        case = ElementTree.SubElement(suite, "testcase", classname="ef.gate", name=v.measure)
        if v.verdict == "fail":
            ElementTree.SubElement(case, "failure", type="regression", message=verdict_line(v)).text = verdict_line(v)
        elif v.verdict == "inconclusive":
            ElementTree.SubElement(case, "skipped", message=verdict_line(v))
        ElementTree.SubElement(case, "system-out").text = verdict_line(v)
    ElementTree.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(suite, encoding="unicode") + "\n"


def as_dict(report: GateReport) -> dict[str, Any]:
    """The JSON form, schema ``ef.gate/1``."""
    return {
        "schema": SCHEMA,
        "outcome": report.outcome,
        "exit_code": report.exit_code,
        "exit_codes": dict(EXIT_CODES),
        "baseline": report.baseline,
        "candidate": report.candidate,
        "n_queries": report.n_queries,
        "alpha": report.alpha,
        "resamples": report.resamples,
        "seed": report.seed,
        "exact": report.exact,
        "default_margin": report.default_margin,
        "measures": [{**v.to_dict(), "line": verdict_line(v)} for v in report.verdicts],
        "spread": {side: {m: list(v) for m, v in by.items()} for side, by in report.spread.items()},
        "metadata": {side: dict(meta) for side, meta in report.metadata.items()},
        "warnings": list(report.warnings),
        "queries": list(report.queries),
    }


def html(report: GateReport) -> str:
    """A self-contained page (no script, no outside resource): the verdicts and the settings."""
    esc = html_lib.escape
    rows = []
    for v in report.verdicts:
        rows.append(
            "<tr class='{}'><td>{}</td><td>{}</td><td>{:.4f}</td><td>{:.4f}</td><td>{:+.4f}</td>"
            "<td>{:+.4f}</td><td>{:+.4f}</td><td>{}</td></tr>".format(
                v.verdict, esc(v.measure if v.higher_is_better else f"{v.measure} ↓"), _WORD[v.verdict],
                v.baseline_mean, v.candidate_mean, v.diff, v.worst, v.best, esc(_margin(v)),
            )
        )
    items = "".join(f"<li>{esc(line)}</li>" for line in lines(report)[1:])
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        f"<title>ef gate: {_WORD[report.outcome]}</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child{text-align:left}"
        ".pass{background:#e6f4ea}.fail{background:#fce8e6}.inconclusive{background:#fef7e0}</style></head><body>"
        f"<h1 class='{report.outcome}'>ef gate: {_WORD[report.outcome]}</h1>"
        f"<p>Candidate <code>{esc(report.candidate)}</code> against baseline <code>{esc(report.baseline)}</code>: "
        f"{esc(_settings(report))}.</p>"
        "<table><tr><th>measure</th><th>verdict</th><th>baseline</th><th>candidate</th><th>diff</th>"
        "<th>worst case</th><th>best case</th><th>margin</th></tr>"
        + "".join(rows)
        + f"</table><ul>{items}</ul></body></html>\n"
    )
