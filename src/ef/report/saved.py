"""Checks of a saved comparison or benchmark JSON before it is drawn: file, field, rule.

What ``ef compare --format json`` and ``BenchmarkResult.to_json()`` write obeys these rules; a
file that breaks one was edited or cut, and drawing it would show numbers no run produced (a
``nan`` p-value, an interval whose ends are swapped, five samples summarised from one).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

__all__ = ["check_finite", "check_saved_benchmark", "check_saved_comparison"]

_VERDICTS = ("better", "worse", "not significant")
_STATISTICS = ("mean", "std", "min", "p50", "p90", "p95", "p99", "max", "ci_low", "ci_high")


def _path(parts: Sequence[str | int]) -> str:
    """``['comparisons', 0, 'p_value']`` -> ``comparisons[0].p_value``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def check_finite(data: object, where: str, parts: tuple[str | int, ...] = ()) -> None:
    """Refuse NaN or an infinity anywhere in `data` (ef writes neither), naming the field.

    >>> check_finite({"comparisons": [{"p_value": float("nan")}]}, "c.json")
    Traceback (most recent call last):
    ...
    ValueError: c.json: field comparisons[0].p_value must be a finite number (got nan)
    """
    if isinstance(data, float):
        if not math.isfinite(data):
            raise ValueError(f"{where}: field {_path(parts)} must be a finite number (got {data!r})")
    elif isinstance(data, Mapping):
        for key, value in data.items():
            check_finite(value, where, (*parts, str(key)))
    elif isinstance(data, list):
        for position, value in enumerate(data):
            check_finite(value, where, (*parts, position))


class _Fields:
    """Reads the fields of one saved object, each checked against its rule."""

    def __init__(self, data: object, where: str, parts: tuple[str | int, ...]) -> None:
        self.where, self.parts = where, parts
        if not isinstance(data, Mapping):
            self.fail((), "must be an object", data)
        self.data: Mapping[str, Any] = data

    def fail(self, field: tuple[str | int, ...], rule: str, got: object, *, shown: str | None = None) -> NoReturn:
        name = _path((*self.parts, *field)) or "the top level"
        raise ValueError(f"{self.where}: field {name} {rule} (got {_show(got) if shown is None else shown})")

    def get(self, name: str) -> Any:
        if name not in self.data:
            name_path = _path((*self.parts, name))
            raise ValueError(f"{self.where}: field {name_path} is missing")
        return self.data[name]

    def number(self, name: str, *, low: float | None = None, high: float | None = None, null: bool = False) -> float:
        value = self.get(name)
        if value is None and null:
            return math.nan
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail((name,), "must be a number" + (" or null" if null else ""), value)
        if (low is not None and value < low) or (high is not None and value > high):
            self.fail((name,), f"must lie in [{low:g}, {high:g}]" if low is not None and high is not None
                      else f"must be >= {low:g}" if low is not None else f"must be <= {high:g}", value)
        return float(value)

    def count(self, name: str) -> int:
        value = self.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.fail((name,), "must be a non-negative integer", value)
        return int(value)

    def text(self, name: str) -> str:
        value = self.get(name)
        if not isinstance(value, str):
            self.fail((name,), "must be a string", value)
        return str(value)

    def flag(self, name: str) -> bool:
        value = self.get(name)
        if not isinstance(value, bool):
            self.fail((name,), "must be true or false", value)
        return bool(value)

    def array(self, name: str) -> list[Any]:
        value = self.get(name)
        if not isinstance(value, list):
            self.fail((name,), "must be an array", value)
        return list(value)

    def object(self, name: str) -> Mapping[str, Any]:
        value = self.get(name)
        if not isinstance(value, Mapping):
            self.fail((name,), "must be an object", value)
        return value


def _show(value: object) -> str:
    if isinstance(value, list):
        return f"an array of {len(value)}"
    if isinstance(value, Mapping):
        return "an object"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _values(values: object, fields: _Fields, name: tuple[str | int, ...], length: int, unit: str) -> list[Any]:
    """A per-query array: numbers or nulls, one per query."""
    if not isinstance(values, list):
        fields.fail(name, "must be an array", values)
    items: list[Any] = list(values)
    if len(items) != length:
        fields.fail(name, f"must hold one value per entry of 'queries' ({length} {unit})", items)
    for position, value in enumerate(items):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            fields.fail((*name, position), "must be a number or null", value)
    return items


def check_saved_comparison(data: Mapping[str, Any], where: str) -> None:
    """Check a saved ``ComparisonReport.to_dict()`` (with per-query values); ``ValueError`` naming
    `where`, the field and the rule for the first that does not hold.

    >>> check_saved_comparison({"comparisons": [], "queries": ["q1"], "per_query": {}}, "c.json")
    >>> check_saved_comparison({"comparisons": [{"system": "b"}], "queries": [], "per_query": {}}, "c.json")
    Traceback (most recent call last):
    ...
    ValueError: c.json: field comparisons[0].baseline is missing
    """
    check_finite(data, where)
    top = _Fields(data, where, ())
    queries = top.array("queries")
    for position, query in enumerate(queries):
        if not isinstance(query, str):
            top.fail(("queries", position), "must be a string", query)
    if len(set(queries)) != len(queries):
        top.fail(("queries",), "must not repeat a query id", queries)
    n = len(queries)
    for name in ("alpha", "confidence"):
        if name in data:
            value = top.number(name, low=0.0, high=1.0)
            if value in (0.0, 1.0):
                top.fail((name,), "must lie strictly between 0 and 1", value)
    per_query = top.object("per_query")
    for system, by_measure in per_query.items():
        inner = _Fields(by_measure, where, ("per_query", system))
        for measure, values in inner.data.items():
            _values(values, inner, (measure,), n, "queries")
    for position, item in enumerate(top.array("comparisons")):
        c = _Fields(item, where, ("comparisons", position))
        for name in ("system", "baseline", "measure"):
            c.text(name)
        c.flag("higher_is_better")
        paired = c.count("n_queries")
        if paired > n:
            c.fail(("n_queries",), f"must be at most the {n} entries of 'queries'", paired)
        for name in ("system_mean", "baseline_mean", "diff", "ci_low", "ci_high"):
            c.number(name)
        c.number("effect_size", null=True)
        p_value = c.number("p_value", low=0.0, high=1.0)
        p_adjusted = c.number("p_adjusted", low=0.0, high=1.0)
        if p_adjusted < p_value:
            c.fail(("p_adjusted",), f"must be at least p_value ({p_value!r}): a correction never lowers it", p_adjusted)
        if c.number("ci_low") > c.number("ci_high"):
            c.fail(("ci_low",), f"must not exceed ci_high ({c.number('ci_high')!r})", c.number("ci_low"))
        c.flag("significant")
        counts = [c.count(name) for name in ("wins", "ties", "losses")]
        if sum(counts) != paired:
            c.fail(("wins",), f"+ ties + losses must be n_queries ({paired})", counts, shown="+".join(map(str, counts)))
        if "verdict" in c.data and c.data["verdict"] not in _VERDICTS:
            c.fail(("verdict",), f"must be one of {', '.join(map(repr, _VERDICTS))}", c.data["verdict"])
        if "per_query_diff" in c.data:
            diffs = _values(c.data["per_query_diff"], c, ("per_query_diff",), n, "queries")
            if sum(value is not None for value in diffs) != paired:
                c.fail(("per_query_diff",), f"must hold n_queries ({paired}) values, the rest null", diffs)


def check_saved_benchmark(data: Mapping[str, Any], where: str) -> None:
    """Check a saved ``BenchmarkResult.to_dict()``; ``ValueError`` naming `where`, the field and the rule.

    >>> check_saved_benchmark({"summary": {}, "samples": []}, "b.json")
    >>> check_saved_benchmark({"summary": {"m": {"count": 2}}, "samples": []}, "b.json")
    Traceback (most recent call last):
    ...
    ValueError: b.json: field summary.m.missing is missing
    """
    check_finite(data, where)
    top = _Fields(data, where, ())
    summary = top.object("summary")
    samples = top.array("samples")
    if "higher_is_better" in data:
        directions = top.object("higher_is_better")
        for name, value in directions.items():
            if not isinstance(value, bool):
                top.fail(("higher_is_better", name), "must be true or false", value)
    seen: set[str] = set()
    scored = dict.fromkeys(summary, 0)
    for position, item in enumerate(samples):
        s = _Fields(item, where, ("samples", position))
        sample_id = s.text("sample_id")
        if sample_id in seen:
            s.fail(("sample_id",), "must not repeat an earlier sample's id", sample_id)
        seen.add(sample_id)
        scores = s.object("scores")
        if set(scores) != set(summary):
            s.fail(("scores",), f"must name the metrics of 'summary' ({', '.join(summary)})", sorted(scores))
        values = _Fields(scores, where, ("samples", position, "scores"))
        for name in summary:
            if not math.isnan(values.number(name, null=True)):
                scored[name] += 1
    for name, item in summary.items():
        m = _Fields(item, where, ("summary", name))
        count, missing = m.count("count"), m.count("missing")
        if count + missing != len(samples):
            m.fail(("count",), f"+ missing must be the number of samples ({len(samples)})", count,
                   shown=f"{count}+{missing}")
        if count != scored[name]:
            m.fail(("count",), f"must be the number of samples with a {name} score ({scored[name]})", count)
        stats = {stat: m.number(stat, null=True) for stat in _STATISTICS}
        low, high = stats["ci_low"], stats["ci_high"]
        if low > high:  # False when either is NaN (null)
            m.fail(("ci_low",), f"must not exceed ci_high ({high!r})", low)
        if stats["min"] > stats["max"]:
            m.fail(("min",), f"must not exceed max ({stats['max']!r})", stats["min"])
