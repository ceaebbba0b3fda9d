"""Open a report in headless Chromium (Debian's ``chromium``) through Playwright, and read it back.

Every request other than the file itself is recorded and aborted, console messages and page
errors are collected, and the page's own state (``window.efViews``: each chart's Vega view) is
read so a test can compare what a chart draws with the report's JSON.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    # CI installs both (.ci/run: apt-get install chromium; the dev extra: playwright): never skip there.
    if os.environ.get("CI"):
        pytest.fail(f"browser test cannot run in CI: {reason}")
    pytest.skip(reason)


@dataclass
class Opened:
    """A report loaded in the browser: what it logged and requested, and its page."""

    page: Any
    url: str
    console: list[tuple[str, str]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, int]:
        """Each figure's name → how many SVG marks it drew (paths, circles, rects, lines, text)."""
        result: dict[str, int] = self.page.evaluate(
            """() => Object.fromEntries(Array.from(document.querySelectorAll('[data-figure]')).map(host => {
                 const svg = host.querySelector('svg');
                 return [host.dataset.figure,
                         svg ? svg.querySelectorAll('path, circle, rect, line, text').length : 0];
               }))"""
        )
        return result

    def data(self, figure: str, dataset: str) -> list[dict[str, Any]]:
        """The rows a chart's Vega view holds in its named data set (what it draws)."""
        rows: list[dict[str, Any]] = self.page.evaluate(
            "([figure, dataset]) => window.efViews[figure].data(dataset)"
            ".map(row => Object.fromEntries(Object.entries(row).filter(([k]) => !k.startsWith('Symbol'))))",
            [figure, dataset],
        )
        return rows

    def table(self, table_id: str) -> list[list[tuple[str, float | None]]]:
        """A table's body as rows of ``(shown text, data-value or None)``."""
        rows: list[list[list[Any]]] = self.page.evaluate(
            """id => Array.from(document.querySelectorAll('#' + CSS.escape(id) + ' tbody tr')).map(tr =>
                 Array.from(tr.cells).map(td => [td.textContent,
                   td.dataset.value === undefined ? null : Number(td.dataset.value)]))""",
            table_id,
        )
        return [[(text, value) for text, value in row] for row in rows]


class Browser:
    """One Chromium with a fresh profile for a test module; :meth:`open` loads one file."""

    def __init__(self) -> None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            _unavailable("playwright is not installed (pip install 'ef-eval[dev]')")
        if not Path(CHROMIUM).exists():
            _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="ef-chromium-")
        self.playwright = sync_playwright().start()
        self.context = self.playwright.chromium.launch_persistent_context(
            self.profile,
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
            service_workers="block",
        )

    def open(self, path: Path) -> Opened:
        url = path.resolve().as_uri()
        page = self.context.new_page()
        opened = Opened(page, url)
        page.on("console", lambda message: opened.console.append((message.type, message.text)))
        page.on("pageerror", lambda error: opened.console.append(("pageerror", str(error))))

        def route(request_route: Any) -> None:
            opened.requests.append(request_route.request.url)
            if request_route.request.url == url:
                request_route.continue_()
            else:
                request_route.abort()

        page.route("**/*", route)
        page.on(
            "request",
            lambda request: (
                None if request.url == url or request.url in opened.requests else opened.requests.append(request.url)
            ),
        )
        page.goto(url, wait_until="load")
        page.evaluate("() => window.efReady")
        return opened

    def close(self) -> None:
        self.context.close()
        self.playwright.stop()
        shutil.rmtree(self.profile, ignore_errors=True)


def browser_fixture() -> Iterator[Browser]:
    browser = Browser()
    try:
        yield browser
    finally:
        browser.close()


# The tests: each report kind, opened as a user would open the file.

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from browser_fixture()


def _check_page(opened: Opened, shot: Path) -> dict[str, int]:
    """No console message, no request but the file, every figure drawn; a screenshot saved."""
    assert opened.console == []
    assert opened.requests == [opened.url]
    figures = opened.figures()
    assert figures, "the page has no figure"
    assert all(marks > 10 for marks in figures.values()), figures
    assert sorted(opened.page.evaluate("() => Object.keys(window.efViews)")) == sorted(figures)
    opened.page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return figures


def _summary_cells(opened: Opened, table_id: str = "summary") -> dict[tuple[str, str], tuple[str, float | None]]:
    headers: list[str] = opened.page.evaluate(
        "id => Array.from(document.querySelectorAll('#' + id + ' thead th')).map(th => th.textContent)", table_id
    )
    return {
        (row[0][0], header): cell
        for row in opened.table(table_id)
        for header, cell in zip(headers[1:], row[1:], strict=True)
    }


def test_evaluation_report_of_ef_eval(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    assert main(["eval", "--quiet", "--json", str(tmp_path / "e.json"), "--html", str(tmp_path / "e.html")]) == 0
    capsys.readouterr()
    saved = json.loads((tmp_path / "e.json").read_text())
    opened = browser.open(tmp_path / "e.html")
    # The demo's qrels judge only relevant documents: a judged share would be P@k, so it is not drawn.
    assert set(_check_page(opened, tmp_path / "evaluation.png")) == {"curves", "per_query"}
    assert opened.page.inner_text("#judged-section p").startswith("Not drawn: these qrels judge only relevant")
    # The summary table shows every mean, as 4 decimals of the JSON number.
    cells = _summary_cells(opened)
    assert len(cells) == len(saved["metrics"]) == 25
    for key, value in saved["metrics"].items():
        name, k = key.split("@")
        assert cells[name, f"@{k}"] == (f"{value:.4f}", value)
    # The curves draw the means; the distribution draws every query's value, exactly.
    curves = opened.data("curves", "curves")
    assert {row["measure"]: row["value"] for row in curves} == saved["metrics"]
    points = opened.data("per_query", "per_query")
    assert {(row["query_id"], row["metric"]): row["value"] for row in points} == {
        (query_id, name): value for query_id, values in saved["per_query"].items() for name, value in values.items()
    }
    # Hovering a dot names its query: the first dot drawn is the first row of the chart's data.
    dot = opened.page.locator("#figure-per_query svg .mark-symbol path").first
    dot.scroll_into_view_if_needed()
    dot.hover(force=True)
    tooltip = opened.page.locator("#vg-tooltip-element.visible")
    tooltip.wait_for(timeout=2000)
    first = points[0]
    assert tooltip.inner_text().split() == [
        "query_id",
        first["query_id"],
        "query",
        *first["query"].split(),
        "metric",
        first["metric"],
        "value",
        f"{first['value']:.4f}",
    ]
    # The worst query is first, with the demo's own query text and its ranked, marked results.
    lowest = min(values["ndcg@10"] for values in saved["per_query"].values())
    at_lowest = sorted(q for q, values in saved["per_query"].items() if values["ndcg@10"] == lowest)
    heading = opened.page.inner_text("#worst-1 h3")
    assert re.fullmatch(
        rf"1\. query (\S+): ndcg@10 {lowest:.4f}, (no relevant document retrieved|first relevant "
        r"document at rank \d+)",
        heading,
    ), heading
    assert heading.split()[2].rstrip(":") in at_lowest
    results = opened.table("worst-1-results")
    assert [text for text, _ in (row[0] for row in results)] == [str(i) for i in range(1, len(results) + 1)]
    assert all(row[3][0].startswith(("✓ relevant", "✗ not relevant", "· unjudged")) for row in results)


def test_run_report_of_ef_trec_eval(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.trec import write_run

    corpus, _, qrels = read_beir(demo_dataset())
    documents = sorted(corpus)
    run = {
        q: {d: float(100 - i) for i, d in enumerate(documents[j % 7 :: 3][:30])} for j, q in enumerate(sorted(qrels))
    }
    write_run(tmp_path / "run.trec", run, run_id="stripes")
    qrels_path = Path(demo_dataset()) / "qrels" / "test.tsv"
    argv = [
        "trec-eval",
        "-q",
        "--json",
        "-m",
        "P.1,5,10",
        "-m",
        "ndcg_cut.5,10",
        "-m",
        "map",
        "-m",
        "num_rel_ret",
        str(qrels_path),
        str(tmp_path / "run.trec"),
    ]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--html", str(tmp_path / "t.html")]) == 0
    assert json.loads(capsys.readouterr().out) == printed  # the report changes nothing that is printed
    opened = browser.open(tmp_path / "t.html")
    assert set(_check_page(opened, tmp_path / "trec-eval.png")) == {"curves", "per_query"}
    cells = _summary_cells(opened)
    assert cells["P", "@5"] == (f"{printed['measures']['P_5']:.4f}", printed["measures"]["P_5"])
    assert cells["ndcg_cut", "@10"][1] == printed["measures"]["ndcg_cut_10"]
    other = {row[0][0]: row[1] for row in opened.table("summary-other")}
    assert other == {
        "map": (f"{printed['measures']['map']:.4f}", printed["measures"]["map"]),
        "num_rel_ret": (str(printed["measures"]["num_rel_ret"]), printed["measures"]["num_rel_ret"]),
    }
    points = opened.data("per_query", "per_query")
    assert {(r["query_id"], r["metric"]): r["value"] for r in points} == {
        (q, m): v for q, values in printed["per_query"].items() for m, v in values.items() if m != "num_rel_ret"
    }


def test_benchmark_report(browser: Browser, tmp_path: Path) -> None:
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.source_manager import ingest
    from fastrag.adapters import CorpusRetriever
    from fastrag.benchmark import EvalSample, run_benchmark_sync
    from fastrag.benchmark.metrics.operational import Latency
    from fastrag.benchmark.metrics.retrieval import NDCG, Recall

    corpus, queries, qrels = read_beir(demo_dataset())
    inner = CorpusRetriever(ingest(corpus, show_progress=False))

    class Flaky:
        def retrieve(self, query: str, k: int) -> Any:
            if "coffee" in query:
                raise RuntimeError(f"backend refused {query!r}")
            return inner.retrieve(query, k)

    samples = [EvalSample(q, queries[q], [d for d, g in qrels[q].items() if g > 0]) for q in sorted(qrels)]
    metrics = [
        Recall(k=1, key="source_uri"),
        Recall(k=5, key="source_uri"),
        Recall(k=10, key="source_uri"),
        NDCG(k=10, key="source_uri"),
        Latency(),
    ]
    # Playwright's sync API keeps an event loop running on this thread; the harness wants its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        result = pool.submit(run_benchmark_sync, Flaky(), samples, metrics, show_progress=False).result()
    saved = json.loads(result.to_json())
    result.to_html(tmp_path / "b.html")
    opened = browser.open(tmp_path / "b.html")
    assert set(_check_page(opened, tmp_path / "benchmark.png")) == {"distributions", "curves", "operational"}
    rows = {row[0][0].rstrip(" ↑↓"): row for row in opened.table("summary")}
    assert set(rows) == set(saved["summary"])
    for name, summary in saved["summary"].items():
        shown = [value for _, value in rows[name][1:]]
        expected = [
            summary[key] for key in ("count", "missing", "mean", "ci_low", "ci_high", "std", "p50", "min", "max")
        ]
        assert shown == expected
    means = {
        row["metric"]: (row["value"], row["low"], row["high"])
        for row in opened.data("distributions", "distributions_mean")
    }
    assert means == {
        n: (s["mean"], s["ci_low"], s["ci_high"]) for n, s in saved["summary"].items() if n != "latency_ms"
    }
    failures = [[text for text, _ in row] for row in opened.table("failures")]
    assert failures == [[s["sample_id"], s["query"], s["error"]] for s in saved["samples"] if s["error"]]
    assert len(failures) == 3
    bars = opened.data("operational", "operational")
    assert {row["label"]: row["value"] for row in bars} == {
        p: saved["summary"]["latency_ms"][p] for p in ("p50", "p90", "p95", "p99", "max")
    }


def test_comparison_report_of_ef_compare(browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main
    from ef.datasets import demo_dataset
    from ef.evaluation import evaluate_retrieval, read_beir
    from ef.source_manager import ingest
    from ef.trec import read_run

    corpus, queries, qrels = read_beir(demo_dataset())
    index = ingest(corpus, show_progress=False)
    evaluate_retrieval(index, qrels, queries, k_values=(10,), run_path=tmp_path / "bm25.trec")
    # A weaker system: the same index, only each query's first two words.
    short = {q: " ".join(text.split()[:2]) for q, text in queries.items()}
    evaluate_retrieval(index, qrels, short, k_values=(10,), run_path=tmp_path / "two-words.trec")
    qrels_path = str(Path(demo_dataset()) / "qrels" / "test.tsv")
    argv = [
        "compare",
        qrels_path,
        str(tmp_path / "bm25.trec"),
        str(tmp_path / "two-words.trec"),
        "--baseline",
        "bm25",
        "-m",
        "ndcg@10,recall@10,mrr",
        "--resamples",
        "1000",
        "--format",
        "json",
        "--html",
        str(tmp_path / "c.html"),
    ]
    assert main(argv) == 0
    saved = json.loads(capsys.readouterr().out)
    opened = browser.open(tmp_path / "c.html")
    assert set(_check_page(opened, tmp_path / "comparison.png")) == {"forest", "sorted", "wins"}
    rows = opened.table("comparisons")
    assert len(rows) == len(saved["comparisons"]) == 3
    for row, c in zip(rows, saved["comparisons"], strict=True):
        assert [text for text, _ in row[:3]] == [c["system"], c["baseline"], c["measure"]]
        numbers = ["system_mean", "baseline_mean", "diff", "ci_low", "ci_high", "effect_size", "p_value", "p_adjusted"]
        assert [value for _, value in row[3:11]] == [c[key] for key in numbers]
        assert row[5][0] == f"{c['diff']:+.4f}"
        assert row[11][0] == f"{c['wins']}/{c['ties']}/{c['losses']}"
        assert row[12][0] == {"better": "▲", "worse": "▼"}.get(c["verdict"], "")
    forest = opened.data("forest", "forest")
    assert [(r["difference"], r["low"], r["high"]) for r in forest] == [
        (c["diff"], c["ci_low"], c["ci_high"]) for c in saved["comparisons"]
    ]
    wins = {(r["metric"], r["outcome"]): r["count"] for r in opened.data("wins", "wins")}
    assert wins == {
        (f"{c['system']} − {c['baseline']}: {c['measure']}", outcome): c[key]
        for c in saved["comparisons"]
        for outcome, key in (("win", "wins"), ("tie", "ties"), ("loss", "losses"))
    }
    bars = opened.data("sorted", "sorted")
    for c in saved["comparisons"]:
        label = f"{c['system']} − {c['baseline']}: {c['measure']}"
        shown = sorted((r["query_id"], r["difference"]) for r in bars if r["comparison"] == label)
        assert shown == sorted((q, d) for q, d in zip(saved["queries"], c["per_query_diff"], strict=True))
    # The largest loss, side by side: both rankings as the run files hold them.
    first = saved["comparisons"][0]
    loss = min((d, q) for q, d in zip(saved["queries"], first["per_query_diff"], strict=True))
    assert opened.page.inner_text("#loss-1 h3").startswith(f"1. {loss[1]}: ndcg@10 ")
    for name in ("bm25", "two-words"):
        ranking = read_run(tmp_path / f"{name}.trec")[loss[1]]
        # trec_eval's order: score descending, ties by doc id descending
        expected = [d for d, _ in sorted(ranking.items(), key=lambda item: (item[1], item[0]), reverse=True)][:10]
        assert [row[1][0] for row in opened.table(f"loss-1-{name}")] == expected


def test_scifact_report_is_small_and_loads(browser: Browser, tmp_path: Path) -> None:
    if not SCIFACT.is_dir():
        _unavailable(f"{SCIFACT} is missing")
    from ef.evaluation import evaluate_retrieval, read_beir
    from ef.report import evaluation_report
    from ef.source_manager import ingest

    corpus, queries, qrels = read_beir(SCIFACT)
    index = ingest(corpus, show_progress=False)
    run: dict[str, dict[str, float]] = {}
    texts = {text: query_id for query_id, text in queries.items()}

    class Recording:
        """The index, keeping each query's ranking (best hit per document) for the report."""

        def search_many(self, batch: list[str], *, limit: int) -> Any:
            results = index.search_many(batch, limit=limit, show_progress=False)
            for text, hits in zip(batch, results, strict=True):
                ranking = run.setdefault(texts[text], {})
                for hit in hits:
                    ranking.setdefault(hit.segment.source_id, hit.score)
            return results

    report = evaluate_retrieval(Recording(), qrels, queries, k_values=(1, 3, 5, 10, 100))
    assert round(report.metrics["ndcg@10"], 4) == 0.6791  # the reference BM25 number: the run is the real one
    page = evaluation_report(report, run=run, qrels=qrels, queries=queries, corpus=corpus)
    path = page.to_html(tmp_path / "scifact.html")
    assert report.n_queries == 300
    assert path.stat().st_size < 5 * 1024 * 1024
    opened = browser.open(path)
    _check_page(opened, tmp_path / "scifact.png")
    # 300 queries: the share of queries in each band of values, per measure, not 7,500 dots.
    shares = opened.data("per_query", "per_query_share")
    assert {row["metric"] for row in shares} == set(report.metrics)
    for metric in report.metrics:
        assert sum(row["count"] for row in shares if row["metric"] == metric) == 300
    zero = sum(1 for values in report.per_query.values() if values["ndcg@10"] == 0)
    assert {row["band"]: row["count"] for row in shares if row["metric"] == "ndcg@10"}["0 (fails)"] == zero
    assert opened.page.inner_text("#distribution-section > p") == (
        f"ndcg@10: {zero} of 300 queries ({zero / 300:.1%}) score 0."
    )
    # Many queries tie at 0: the page says so, and which of them it shows.
    note = opened.page.inner_text("#worst-section > p")
    assert note.startswith(f"{zero} queries tie at ndcg@10 0.0000; these 10 are those whose first relevant")


# Issue 34: the pages that misled, each opened as a user would.


def test_a_report_in_a_notebook_frame_draws_its_figures(browser: Browser, tmp_path: Path) -> None:
    from ef.evaluation import evaluate_run
    from ef.report import evaluation_report

    run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.4, "d4": 0.3}}
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d4": 1}}
    page = evaluation_report(evaluate_run(run, qrels, ["P_1", "P_2", "ndcg@10"]), run=run, qrels=qrels)
    # A notebook inserts the fragment into its own page: here, a bare host page.
    host = tmp_path / "notebook.html"
    host.write_text(f"<!DOCTYPE html><html><body><div class='output'>{page._repr_html_()}</div></body></html>")
    opened = browser.open(host)
    frame = opened.page.frame_locator("iframe")
    frame.locator("#figure-judged svg").wait_for(timeout=20000)
    inner = opened.page.frames[1]
    inner.evaluate("() => window.efReady")
    drawn = inner.evaluate(
        "() => Object.fromEntries(Array.from(document.querySelectorAll('[data-figure]')).map(h => "
        "[h.dataset.figure, h.querySelectorAll('svg path, svg circle, svg rect, svg line, svg text').length]))"
    )
    assert sorted(drawn) == ["curves", "judged", "per_query"]
    assert all(marks > 10 for marks in drawn.values()), drawn
    assert inner.evaluate("() => document.title") == "Retrieval evaluation"
    assert [m for m in opened.console if m[0] in ("error", "pageerror")] == []
    assert opened.requests == [opened.url]


def test_ef_trec_eval_default_measures_draw_the_precision_recall_curve(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.cli import main
    from ef.trec import write_qrels, write_run

    run = {f"q{i}": {f"d{j}": float(20 - j) for j in range(20)} for i in range(6)}
    qrels = {f"q{i}": {f"d{j}": int(j % (i + 2) == 0) for j in range(0, 30, 3)} for i in range(6)}
    write_run(tmp_path / "run", run)
    write_qrels(tmp_path / "qrels", qrels)
    argv = ["trec-eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "--json", "--html", str(tmp_path / "t.html")]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)["measures"]
    opened = browser.open(tmp_path / "t.html")
    figures = _check_page(opened, tmp_path / "pr.png")
    assert "precision_recall" in figures
    assert "judged" in figures  # these qrels hold grade-0 judgements: the judged share means something
    points = opened.data("precision_recall", "precision_recall")
    assert [(row["recall"], row["precision"]) for row in points] == [
        (r / 10, printed[f"iprec_at_recall_{r / 10:.2f}"]) for r in range(11)
    ]


def test_a_benchmark_metric_at_k_chart_names_each_line_and_draws_each_interval(
    browser: Browser, tmp_path: Path
) -> None:
    from fastrag.benchmark import BenchmarkResult, DistributionSummary, QueryOutcome

    outcomes = tuple(QueryOutcome(f"s{i}", f"query {i}", latency_ms=1.0 + i) for i in range(8))
    scores = {
        f"{name}@{k}[source_uri]": tuple(((i * 7 + k * 3 + shift) % 10) / 10 for i in range(8))
        for name, shift in (("recall", 0), ("ndcg", 1), ("precision", 2))
        for k in (1, 5, 10)
    }
    result = BenchmarkResult(
        summary={name: DistributionSummary.from_scores(values) for name, values in scores.items()},
        outcomes=outcomes,
        scores=scores,
        higher_is_better=dict.fromkeys(scores, True),
    )
    opened = browser.open(result.to_html(tmp_path / "b.html"))
    _check_page(opened, tmp_path / "curves.png")
    # No shaded areas; one text label per line, at its right end, and every line's interval.
    svg = "#figure-curves svg"
    assert opened.page.locator(f"{svg} .mark-area.role-mark").count() == 0
    labels = opened.page.locator(f"{svg} .mark-text.role-mark text").evaluate_all(
        "nodes => nodes.map(n => n.textContent)"
    )
    assert sorted(labels) == ["ndcg[source_uri]", "precision[source_uri]", "recall[source_uri]"]
    assert opened.page.locator(f"{svg} .mark-rule.role-mark line").count() == 9  # 3 metrics x 3 cutoffs
    rows = opened.data("curves", "curves")
    assert sorted((r["metric"], r["k"], r["low"], r["high"]) for r in rows) == sorted(
        (name.split("@")[0] + "[source_uri]", int(name.split("@")[1].split("[")[0]), s.ci_low, s.ci_high)
        for name, s in result.summary.items()
    )


def test_a_comparison_page_says_which_system_is_better(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.cli import main
    from ef.trec import write_qrels, write_run

    qrels = {f"q{i}": {"d1": 1} for i in range(12)}
    write_qrels(tmp_path / "qrels", qrels)
    write_run(tmp_path / "old.trec", {q: {"d2": 1.0, "d1": 0.5} for q in qrels})
    write_run(tmp_path / "new.trec", {q: {"d1": 1.0, "d2": 0.5} for q in qrels})
    argv = [
        "compare",
        str(tmp_path / "qrels"),
        str(tmp_path / "old.trec"),
        str(tmp_path / "new.trec"),
        "--baseline",
        "old",
        "-m",
        "ndcg@10",
        "--format",
        "json",
        "--html",
        str(tmp_path / "c.html"),
    ]
    assert main(argv) == 0
    (c,) = json.loads(capsys.readouterr().out)["comparisons"]
    opened = browser.open(tmp_path / "c.html")
    _check_page(opened, tmp_path / "verdict.png")
    assert opened.page.inner_text("p.verdict") == (
        f"new is better than old on ndcg@10: {c['diff']:+.4f} (95% CI {c['ci_low']:+.4f} to {c['ci_high']:+.4f}); "
        f"holm-corrected p < 0.0001 (alpha 0.05), over 12 queries."
    )


def test_ef_compare_with_a_dataset_shows_query_and_passage_texts_in_the_losses(
    browser: Browser, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.cli import main
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.trec import read_run, write_run

    corpus, queries, qrels = read_beir(demo_dataset())
    documents = sorted(corpus)
    good = {q: {d: 2.0 if g > 0 else 1.0 for d, g in judged.items()} for q, judged in qrels.items()}
    for ranking in good.values():  # the relevant documents first, then others
        ranking.update({d: 0.5 for d in documents[:5] if d not in ranking})
    worse = {q: {d: (0.1 if i % 2 else score) for i, (d, score) in enumerate(r.items())} for q, r in good.items()}
    write_run(tmp_path / "good.trec", good)
    write_run(tmp_path / "worse.trec", worse)
    argv = [
        "compare",
        "--dataset",
        str(demo_dataset()),
        str(tmp_path / "good.trec"),
        str(tmp_path / "worse.trec"),
        "--baseline",
        "good",
        "-m",
        "ndcg@10",
        "--format",
        "json",
        "--html",
        str(tmp_path / "c.html"),
    ]
    assert main(argv) == 0
    capsys.readouterr()
    opened = browser.open(tmp_path / "c.html")
    _check_page(opened, tmp_path / "dataset.png")
    heading = opened.page.inner_text("#loss-1 h3")
    query_id = heading.split(" ")[1].rstrip(":")
    assert opened.page.inner_text("#loss-1 p.query") == queries[query_id]
    table = opened.table("loss-1-worse")
    ranking = read_run(tmp_path / "worse.trec")[query_id]
    expected = [d for d, _ in sorted(ranking.items(), key=lambda item: (item[1], item[0]), reverse=True)][:10]
    assert [row[1][0] for row in table] == expected
    for row in table:
        text = " ".join(corpus[row[1][0]].split())
        assert row[4][0] == (text if len(text) <= 180 else text[:179].rstrip() + "…")


def test_the_readme_screenshots_script_makes_both_images(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import importlib.util

    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    script = Path(__file__).resolve().parents[1] / "docs" / "img" / "make_screenshots.py"
    spec = importlib.util.spec_from_file_location("make_screenshots", script)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # Playwright's sync API keeps an event loop running on this thread (the browser fixture's): its own.
    with ThreadPoolExecutor(max_workers=1) as pool:
        written = pool.submit(module.main, tmp_path).result()
    capsys.readouterr()
    assert [p.name for p in written] == ["evaluation-report.png", "comparison-report.png"]
    readme = (script.parents[2] / "README.md").read_text(encoding="utf-8")
    for path in written:
        assert f"](docs/img/{path.name})" in readme
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == 880  # the width the README shows
        assert 10_000 < len(data) < 200_000
