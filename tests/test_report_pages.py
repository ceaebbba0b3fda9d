"""ef.report's pages tell the truth (issue 34): each test here failed on the page before its fix."""

from __future__ import annotations

import html
import json
import re
import types
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ef.evaluation import evaluate_run
from ef.report import comparison_report, evaluation_data, evaluation_report
from ef.report._page import Figure, Report, Section, Table, Text

T = TypeVar("T")

QRELS_RELEVANT_ONLY = {"q1": {"d1": 1}, "q2": {"d4": 2, "d5": 1}, "q3": {"d9": 1}}
RUN = {
    "q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1},
    "q2": {"d6": 0.5, "d7": 0.4, "d4": 0.3},
    "q3": {"d8": 1.0},
}


def _sections(page: Report) -> dict[str, Section]:
    return {s.id: s for s in page.sections}


def _as(block: object, kind: type[T]) -> T:
    """`block`, checked to be a `kind` (a page's blocks are a union)."""
    assert isinstance(block, kind), block
    return block


def _verdicts(page: Report) -> list[str]:
    return [b.text for b in _sections(page)["summary-section"].blocks if isinstance(b, Text) and b.css == "verdict"]


# 1. The judged share of the top k is P@k on qrels that judge only relevant documents.


def test_judged_share_is_left_out_when_the_qrels_judge_only_relevant_documents() -> None:
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2", "ndcg@10"])
    data = evaluation_data(report, run=RUN, qrels=QRELS_RELEVANT_ONLY)
    assert data.judged == ()
    assert data.judged_omitted == (
        "Not drawn: these qrels judge only relevant documents (no grade of 0 or below), so the share of the "
        "top k that has a judgement is P@k, not a measure of how complete the judgements are."
    )
    page = evaluation_report(report, run=RUN, qrels=QRELS_RELEVANT_ONLY)
    assert [f.name for f in page.figures] == ["curves", "per_query"]
    section = _sections(page)["judged-section"]
    assert [b.text for b in section.blocks] == [data.judged_omitted]  # type: ignore[union-attr]


def test_judged_share_caption_gives_its_figure_instead_of_a_blanket_warning() -> None:
    qrels = {**QRELS_RELEVANT_ONLY, "q2": {"d4": 2, "d5": 1, "d6": 0}}  # d6 judged not relevant
    data = evaluation_data(evaluate_run(RUN, qrels, ["P_1", "P_2"]), run=RUN, qrels=qrels)
    assert data.judged_omitted is None
    # top 2: q1 d1 (judged) d2 (not), q2 d6 (judged 0) d7 (not), q3 d8 (not): (1/2 + 1/2 + 0) / 3
    assert [(row["k"], row["value"]) for row in data.judged] == [(1, 2 / 3), (2, 1 / 3)]
    page = evaluation_report(evaluate_run(RUN, qrels, ["P_1", "P_2"]), run=RUN, qrels=qrels)
    figure = next(f for f in page.figures if f.name == "judged")
    assert figure.caption == (
        "Over the 3 queries with results. At k = 2, 33.3% of the top k has a judgement; the unjudged 66.7% "
        "count as not relevant, so the measures may understate the run if they are relevant."
    )


# 2. The worst queries: ties at the worst score are said, and broken by something that means something.


def _tied_report(n: int) -> tuple[Any, dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    # n queries score 0 on ndcg@10; query i's first relevant document is at rank 11 + (i * 7) % n, or none.
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for i in range(n):
        q = f"q{i:03d}"
        depth = 11 + (i * 7) % n
        run[q] = {f"{q}-d{r}": float(1000 - r) for r in range(1, depth + 1)}
        qrels[q] = {f"{q}-d{depth}": 1} if i % 5 else {f"{q}-absent": 1}
    run["good"] = {"g1": 1.0}
    qrels["good"] = {"g1": 1}
    return evaluate_run(run, qrels, ["ndcg@10"]), run, qrels


def test_worst_queries_tied_at_the_bottom_are_ordered_by_the_depth_of_their_first_relevant_document() -> None:
    report, run, qrels = _tied_report(52)
    data = evaluation_data(report, run=run, qrels=qrels, worst=10)
    # Every fifth query never retrieves its relevant document: those come first (by id), then the deepest.
    never = [f"q{i:03d}" for i in range(52) if i % 5 == 0][:10]
    assert [q.query_id for q in data.worst] == never
    assert [q.first_relevant for q in data.worst] == [None] * 10
    assert data.tied == 52
    deeper = evaluation_data(report, run=run, qrels=qrels, worst=13)
    found = sorted(((11 + (i * 7) % 52, f"q{i:03d}") for i in range(52) if i % 5), key=lambda item: (-item[0], item[1]))
    assert [(q.query_id, q.first_relevant) for q in deeper.worst[11:]] == [(q, d) for d, q in found[:2]]
    page = evaluation_report(report, run=run, qrels=qrels, worst=10)
    worst = _sections(page)["worst-section"]
    assert worst.title == "10 of the 52 queries tied at the lowest ndcg@10 (0.0000)"
    assert worst.blocks[0].text == (  # type: ignore[union-attr]
        "52 queries tie at ndcg@10 0.0000; these 10 are those whose first relevant document is ranked "
        "deepest (not retrieved at all first), then by query id."
    )
    assert worst.blocks[1].title == "1. query q000: ndcg@10 0.0000, no relevant document retrieved"  # type: ignore


def test_worst_queries_without_a_tie_say_nothing_of_ties() -> None:
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["ndcg@10"])
    data = evaluation_data(report, run=RUN, qrels=QRELS_RELEVANT_ONLY, worst=2)
    assert [q.query_id for q in data.worst] == ["q3", "q2"]
    assert data.tied == 1
    worst = _sections(evaluation_report(report, run=RUN, qrels=QRELS_RELEVANT_ONLY, worst=2))["worst-section"]
    assert worst.title == "The 2 worst queries by ndcg@10"
    assert [b.title for b in worst.blocks] == [  # type: ignore[union-attr]
        "1. query q3: ndcg@10 0.0000, no relevant document retrieved",
        f"2. query q2: ndcg@10 {report.per_query['q2']['ndcg@10']:.4f}, first relevant document at rank 3",
    ]


def test_worst_queries_tied_but_all_shown_say_how_they_are_ordered() -> None:
    report, run, qrels = _tied_report(4)
    worst = _sections(evaluation_report(report, run=run, qrels=qrels, worst=10))["worst-section"]
    assert worst.title == "The 5 worst queries by ndcg@10"
    assert _as(worst.blocks[0], Text).text == (
        "Queries of equal ndcg@10 are listed by the depth of their first relevant document (deepest first, none "
        "retrieved before all), then by id."
    )
    bare = _sections(evaluation_report(report, worst=10))["worst-section"]
    assert _as(bare.blocks[0], Text).text == "Queries of equal ndcg@10 are listed by query id."
    assert [_as(b, Section).title.split(":")[0] for b in bare.blocks[1:]] == [
        "1. query q000",
        "2. query q001",
        "3. query q002",
        "4. query q003",
        "5. query good",
    ]


def test_worst_queries_without_a_run_are_ordered_by_id_and_say_so() -> None:
    report, _, _ = _tied_report(12)
    page = evaluation_report(report, worst=3)
    worst = _sections(page)["worst-section"]
    assert worst.title == "3 of the 12 queries tied at the lowest ndcg@10 (0.0000)"
    assert worst.blocks[0].text == (  # type: ignore[union-attr]
        "12 queries tie at ndcg@10 0.0000; these 3 are the first by query id (pass the run to order them by "
        "the depth of their first relevant document)."
    )
    assert [b.title for b in worst.blocks[1:]] == [  # type: ignore[union-attr]
        "1. query q000: ndcg@10 0.0000",
        "2. query q001: ndcg@10 0.0000",
        "3. query q002: ndcg@10 0.0000",
    ]


# 3. Many queries: the share of queries in each band of values, not a saturated strip of dots.


def test_many_queries_are_drawn_as_shares_of_queries_per_band_of_values() -> None:
    run = {f"q{i:03d}": {f"d{i}": 1.0, "x": 0.5} for i in range(300)}
    qrels = {f"q{i:03d}": ({f"d{i}": 1} if i % 3 else {"absent": 1}) for i in range(300)}
    report = evaluate_run(run, qrels, ["ndcg@10", "P_1", "recall@2"])
    page = evaluation_report(report, run=run, qrels=qrels)
    figure = next(f for f in page.figures if f.name == "per_query")
    assert figure.title == "Share of queries in each band of values, per measure"
    shares = figure.spec["datasets"]["per_query_share"]
    ndcg = {row["band"]: (row["count"], row["share"]) for row in shares if row["metric"] == "ndcg@10"}
    assert ndcg == {"0 (fails)": (100, 100 / 300), "1 (perfect)": (200, 200 / 300)}
    assert {row["metric"] for row in shares} == {"ndcg@10", "P_1", "recall@2"}
    for metric in ("ndcg@10", "P_1", "recall@2"):
        assert sum(row["count"] for row in shares if row["metric"] == metric) == 300
    assert "per_query" not in figure.spec["datasets"]  # 900 dots are not drawn
    section = _sections(page)["distribution-section"]
    assert section.blocks[0].text == "ndcg@10: 100 of 300 queries (33.3%) score 0."  # type: ignore[union-attr]


def test_few_queries_keep_one_dot_each_and_the_share_that_scores_zero() -> None:
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["ndcg@10", "P_1"])
    page = evaluation_report(report, run=RUN, qrels=QRELS_RELEVANT_ONLY)
    figure = next(f for f in page.figures if f.name == "per_query")
    assert len(figure.spec["datasets"]["per_query"]) == 6
    section = _sections(page)["distribution-section"]
    assert section.blocks[0].text == "ndcg@10: 1 of 3 queries (33.3%) score 0."  # type: ignore[union-attr]


# 5. fastrag's metric@k: one distinct line per metric, each interval drawn and labelled, no pale bands.


def _layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(spec.get("layer", [spec]))


def _mark(layer: dict[str, Any]) -> str:
    mark = layer["mark"]
    return str(mark["type"] if isinstance(mark, dict) else mark)


def test_metric_at_k_with_intervals_draws_lines_error_bars_and_end_labels() -> None:
    from ef.report import _figures

    rows = [
        {"metric": m, "k": k, "value": v, "low": v - 0.1, "high": v + 0.1}
        for m, base in (("recall[source_uri]", 0.5), ("ndcg[source_uri]", 0.4), ("precision[source_uri]", 0.3))
        for k, v in ((1, base), (5, base + 0.1), (10, base + 0.2))
    ]
    spec = _figures.at_k_chart("curves", rows, y_title="mean", band=True)
    marks = [_mark(layer) for layer in _layers(spec)]
    assert "area" not in marks
    assert marks == ["rule", "line", "text"]
    rule, line, text = _layers(spec)
    assert (rule["encoding"]["y"]["field"], rule["encoding"]["y2"]["field"]) == ("low", "high")
    assert line["encoding"]["strokeDash"]["field"] == "metric"
    assert line["encoding"]["x"]["field"] == rule["encoding"]["x"]["field"] == "k_shown"
    # the three intervals at one k are set apart, in the metrics' order, so none hides another
    at_5 = [row["k_shown"] for row in spec["datasets"]["curves"] if row["k"] == 5]
    assert at_5 == sorted(at_5)
    assert len(set(at_5)) == 3
    # each line is named at its end: the legend need not be matched by colour
    labels = spec["datasets"]["curves_labels"]
    assert [(row["metric"], row["k"]) for row in labels] == [
        ("recall[source_uri]", 10),
        ("ndcg[source_uri]", 10),
        ("precision[source_uri]", 10),
    ]
    assert text["encoding"]["text"]["field"] == "metric"


# 6. Exported images carry their title.


def test_exported_figures_carry_their_title_and_the_reports(tmp_path: Path) -> None:
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"])
    page = evaluation_report(report, title="BM25 on the demo")
    svg = page.save_figures(tmp_path, "svg")[0].read_text(encoding="utf-8")
    texts = [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]
    assert "Mean metric against the cutoff k" in texts
    assert "BM25 on the demo" in texts
    assert "title" not in dict(page.figures[0].spec)  # the page shows the title as a heading, not twice


# 7. A precision-recall curve from trec_eval's 11-point interpolated precision.


def test_iprec_at_recall_draws_a_precision_recall_curve() -> None:
    measures = ["map", *(f"iprec_at_recall_{r / 10:.2f}" for r in range(11))]
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, measures)
    data = evaluation_data(report)
    assert [(row["recall"], row["precision"]) for row in data.precision_recall] == [
        (r / 10, report.metrics[f"iprec_at_recall_{r / 10:.2f}"]) for r in range(11)
    ]
    page = evaluation_report(report)
    figure = next(f for f in page.figures if f.name == "precision_recall")
    assert figure.title == "Interpolated precision at 11 recall levels"
    assert figure.spec["datasets"]["precision_recall"] == [dict(row) for row in data.precision_recall]
    assert [f.name for f in evaluation_report(evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["map"])).figures] == ["per_query"]


def test_ef_trec_eval_html_has_the_precision_recall_curve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main
    from ef.trec import write_qrels, write_run

    write_run(tmp_path / "run", RUN)
    write_qrels(tmp_path / "qrels", QRELS_RELEVANT_ONLY)
    argv = ["trec-eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "--html", str(tmp_path / "t.html"), "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)["measures"]
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    specs = json.loads(re.search(r'id="ef-figures">(.*?)</script>', page, re.S).group(1))  # type: ignore[union-attr]
    assert [(row["recall"], row["precision"]) for row in specs["precision_recall"]["datasets"]["precision_recall"]] == [
        (r / 10, printed[f"iprec_at_recall_{r / 10:.2f}"]) for r in range(11)
    ]


# 8. The Vega bundle is built once per installation, not once per page.


class _CountingConvert:
    """vl_convert with its bundle call counted."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.calls = 0
        self.__version__ = real.__version__

    def javascript_bundle(self, vl_version: str | None = None) -> str:
        self.calls += 1
        return str(self.real.javascript_bundle(vl_version=vl_version))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[_CountingConvert]:
    from ef.report import _deps, _page

    fake = _CountingConvert(_deps.vl_convert())
    monkeypatch.setattr(_deps, "vl_convert", lambda: fake)
    monkeypatch.setenv("EF_HOME", str(tmp_path / "home"))
    _page._javascript.cache_clear()
    _page._vl_version.cache_clear()
    yield fake
    _page._javascript.cache_clear()
    _page._vl_version.cache_clear()


def test_the_vega_bundle_is_built_once_per_installation(counting: _CountingConvert, tmp_path: Path) -> None:
    from ef.report import _page

    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"])
    first = evaluation_report(report).html()
    assert counting.calls == 1
    cached = list((tmp_path / "home" / "report").iterdir())
    assert [p.name for p in cached] == [f"vega-{counting.__version__}-vl{_page._vl_version()}.js"]
    _page._javascript.cache_clear()  # as a new process would start
    second = evaluation_report(report).html()
    assert counting.calls == 1  # read back, not rebuilt
    assert second == first


def test_a_damaged_cached_bundle_is_built_again(counting: _CountingConvert, tmp_path: Path) -> None:
    from ef.report import _page

    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"])
    first = evaluation_report(report).html()
    (cached,) = (tmp_path / "home" / "report").iterdir()
    cached.write_bytes(cached.read_bytes()[:1000])  # cut short
    _page._javascript.cache_clear()
    assert evaluation_report(report).html() == first
    assert counting.calls == 2
    assert cached.stat().st_size > 500_000  # written again, whole


def test_an_unwritable_cache_falls_back_to_building_the_bundle(
    counting: _CountingConvert, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ef.report import _page

    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("EF_HOME", str(tmp_path / "file"))
    report = evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"])
    page = evaluation_report(report).html()
    assert counting.calls == 1
    assert "vegaEmbed" in page
    assert (tmp_path / "file").read_text() == "not a folder"
    _page._javascript.cache_clear()
    evaluation_report(report).html()
    assert counting.calls == 2  # nothing could be kept: built again, and no error


def test_a_bundle_of_an_unknown_version_is_not_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ef.report import _deps, _page

    fake = types.SimpleNamespace(javascript_bundle=lambda vl_version=None: "let x = 1;", get_vegalite_versions=list)
    monkeypatch.setattr(_deps, "vl_convert", lambda: fake)
    monkeypatch.setenv("EF_HOME", str(tmp_path))
    assert _page._javascript.__wrapped__() == "let x = 1;"
    assert list(tmp_path.iterdir()) == []


# 9. A comparison page says in words whether B is better than A.


def test_a_comparison_page_says_in_words_which_system_is_better() -> None:
    from ef.compare import compare

    qrels = {f"q{i}": {"d1": 1} for i in range(12)}
    old = {q: {"d2": 1.0, "d1": 0.5} for q in qrels}  # d1 at rank 2
    new = {q: {"d1": 1.0, "d2": 0.5} for q in qrels}  # d1 at rank 1
    report = compare({"old": old, "new": new}, qrels, ["ndcg@10", "P_2"], baseline="old", resamples=200)
    page = comparison_report(report)
    verdicts = _verdicts(page)
    ndcg, p2 = report.comparisons
    assert ndcg.p_adjusted < 0.0001
    assert verdicts == [
        f"new is better than old on ndcg@10: {ndcg.diff:+.4f} (95% CI {ndcg.ci_low:+.4f} to {ndcg.ci_high:+.4f}); "
        f"{report.correction}-corrected p < 0.0001 (alpha 0.05), over 12 queries.",
        f"new is not significantly better or worse than old on P_2: {p2.diff:+.4f} "
        f"(95% CI {p2.ci_low:+.4f} to {p2.ci_high:+.4f}); {report.correction}-corrected p {p2.p_adjusted:.4f} "
        "(alpha 0.05), over 12 queries.",
    ]
    reverse = compare({"new": new, "old": old}, qrels, ["ndcg@10"], baseline="new", resamples=200)
    (text,) = _verdicts(comparison_report(reverse))
    assert text.startswith("old is worse than new on ndcg@10: -")


# 4. The loss drill-down shows the query and each document's text when they are given.


def test_the_loss_drill_down_shows_query_and_document_text() -> None:
    from ef.compare import compare

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    old = {"q1": {"a": 1.0, "x": 0.5}, "q2": {"b": 1.0}}
    new = {"q1": {"x": 1.0, "a": 0.5}, "q2": {"b": 1.0}}
    report = compare({"old": old, "new": new}, qrels, ["ndcg@10"], baseline="old", resamples=50)
    page = comparison_report(
        report,
        runs={"old": old, "new": new},
        qrels=qrels,
        queries={"q1": "what is a"},
        corpus={"a": "the letter a", "x": "an   unrelated\ntext"},
    )
    loss = _as(_sections(page)["losses-section"].blocks[0], Section)
    assert _as(loss.blocks[0], Text).text == "what is a"
    sides = _as(loss.blocks[1], Section).blocks
    new_table = _as(_as(sides[1], Section).blocks[0], Table)
    assert new_table.headers == ("rank", "doc id", "score", "relevance", "text")
    assert [[c.text for c in row] for row in new_table.rows] == [
        ["1", "x", "1.0000", "· unjudged", "an unrelated text"],
        ["2", "a", "0.5000", "✓ relevant (1)", "the letter a"],
    ]


# 10. Every report shows itself in a notebook: the page itself, in a sandboxed frame.


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.starts: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append((tag, dict(attrs)))


def _framed_page(fragment: str) -> str:
    """The page a notebook fragment shows; the fragment must be one sandboxed iframe and nothing else."""
    parser = _Elements()
    parser.feed(fragment)
    parser.close()
    assert [tag for tag, _ in parser.starts] == ["iframe"]
    attrs = parser.starts[0][1]
    assert attrs["sandbox"] == "allow-scripts"
    assert fragment.endswith("</iframe>")
    srcdoc = attrs["srcdoc"]
    assert srcdoc is not None
    return srcdoc


def test_a_report_in_a_notebook_is_its_page_in_a_sandboxed_frame() -> None:
    page = evaluation_report(evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"]), title='a "quoted" <title>')
    assert _framed_page(page._repr_html_()) == page.html()


def _objects_with_pages(tmp_path: Path) -> list[tuple[str, Any, str]]:
    """(name, object, the page its to_html writes) for every result with an HTML page."""
    from ef.compare import compare
    from ef.datasets import demo_dataset
    from ef.gate import gate
    from ef.sweep import sweep
    from fastrag.benchmark import BenchmarkResult, DistributionSummary, QueryOutcome

    out: list[tuple[str, Any, str]] = []
    comparison = compare(
        {"old": RUN, "new": {**RUN, "q3": {"d9": 1.0}}}, QRELS_RELEVANT_ONLY, ["ndcg@10"], baseline="old", resamples=50
    )
    comparison.to_html(tmp_path / "c.html")
    out.append(("ComparisonReport", comparison, (tmp_path / "c.html").read_text(encoding="utf-8")))
    outcomes = tuple(QueryOutcome(f"s{i}", f"query {i}", latency_ms=1.0) for i in range(3))
    benchmark = BenchmarkResult(
        summary={"recall@1": DistributionSummary.from_scores([1.0, 0.0, 1.0])},
        outcomes=outcomes,
        scores={"recall@1": (1.0, 0.0, 1.0)},
        higher_is_better={"recall@1": True},
    )
    benchmark.to_html(tmp_path / "b.html")
    out.append(("BenchmarkResult", benchmark, (tmp_path / "b.html").read_text(encoding="utf-8")))
    scores = {"per_query": {f"q{i}": {"ndcg@10": v} for i, v in enumerate([0.5, 0.6, 0.7, 0.2, 0.9])}}
    checked = gate(scores, scores, margin=0.01)
    out.append(("GateReport", checked, checked.to_html()))
    swept = sweep({"k": [5, 10]}, demo_dataset(), tmp_path / "sweep", show_progress=False)
    swept.to_html(tmp_path / "s.html")
    out.append(("SweepResult", swept, (tmp_path / "s.html").read_text(encoding="utf-8")))
    return out


def test_every_result_with_a_page_shows_that_page_in_a_notebook(tmp_path: Path) -> None:
    for name, obj, written in _objects_with_pages(tmp_path):
        assert _framed_page(obj._repr_html_()) == written, name


def test_a_figure_spec_is_json_in_the_framed_page() -> None:
    page = evaluation_report(evaluate_run(RUN, QRELS_RELEVANT_ONLY, ["P_1", "P_2"]))
    srcdoc = _framed_page(page._repr_html_())
    specs = json.loads(re.search(r'id="ef-figures">(.*?)</script>', srcdoc, re.S).group(1))  # type: ignore[union-attr]
    assert list(specs) == [f.name for f in page.figures]
    assert isinstance(page.figures[0], Figure)


def test_without_the_extra_a_notebook_shows_the_text_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from ef.compare import compare
    from ef.report import _deps

    def missing() -> Any:
        raise ImportError("the HTML report needs the 'report' extra: pip install 'ef-eval[report]'")

    monkeypatch.setattr(_deps, "altair", missing)
    comparison = compare({"old": RUN, "new": RUN}, QRELS_RELEVANT_ONLY, ["ndcg@10"], baseline="old", resamples=50)
    assert comparison._repr_html_() == f"<pre>{html.escape(str(comparison))}</pre>"


def test_a_rag_report_in_a_notebook_is_its_table() -> None:
    from ef.evaluation import RagEvalReport

    report = RagEvalReport({"exact_match": 0.5, "<b>": 0.25}, {"exact_match": 2, "<b>": 1, "token_f1": 0}, 4)
    assert report._repr_html_() == (
        '<table class="ef-report"><caption>RAG evaluation over 4 samples</caption>\n'
        "<thead><tr><th>metric</th><th>mean</th><th>samples</th></tr></thead>\n"
        "<tbody><tr><td>exact_match</td><td>0.5000</td><td>2</td></tr>"
        "<tr><td>&lt;b&gt;</td><td>0.2500</td><td>1</td></tr>"
        "<tr><td>token_f1</td><td>-</td><td>0</td></tr></tbody></table>"
    )


def test_a_tuning_report_in_a_notebook_is_its_verdict_and_its_comparison_page() -> None:
    from ef.fusion import tune

    qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(6)}
    a = {q: {"d1": 0.2, "d2": 0.9, "d3": 0.5} for q in qrels}
    b = {q: {"d1": 0.8, "d2": 0.1, "d3": 0.5} for q in qrels}
    report = tune({"a": a, "b": b}, qrels, method="wsum", folds=2, step=0.5)
    fragment = report._repr_html_()
    verdict, frame = fragment.split("\n", 1)
    assert verdict == f'<p class="ef-verdict">{html.escape(report.verdict())}</p>'
    assert _framed_page(frame) == comparison_report(report.comparison, title="Fusion held out").html()
