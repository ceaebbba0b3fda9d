"""Renderings of a :class:`~ef.evaluation._compare.ComparisonReport`: terminal, Markdown, LaTeX, CSV, frames.

Every text rendering shows the same columns, the same markers and the same legend.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

from ef.evaluation._stats import CORRECTIONS, TESTS

if TYPE_CHECKING:
    from ef.evaluation._compare import Comparison, ComparisonReport

__all__ = ["csv_text", "dataframe", "latex", "markdown", "systems_table", "table"]

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


def _aligned(headers: list[str], rows: list[list[str]]) -> list[str]:
    """The names (system, vs, measure) left-aligned, the numbers right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < _NAME_COLUMNS else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def table(report: ComparisonReport) -> str:
    """The terminal table."""
    lines = [_title(report), *_aligned(_headers(report), [_cells(c) for c in report.comparisons])]
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
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [_title(report)]
    for cells in (headers, ["-" * w for w in widths], *rows):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                               enumerate(zip(cells, widths, strict=True))).rstrip())
    lines.append(legend.replace("bold", "*"))
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines) + "\n"


def _label(report: ComparisonReport, measure: str) -> str:
    return measure if report.higher_is_better[measure] else f"{measure} ↓"


def _mean(report: ComparisonReport, system: str, measure: str) -> float:
    """The system's mean over the queries the measure compared (those every system scored)."""
    values = [v for v in report.scores[system][measure] if v is not None]
    return sum(values) / len(values)
