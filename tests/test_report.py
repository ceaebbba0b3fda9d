"""ef.report without a browser: what an evaluation or benchmark report extracts, writes and refuses."""

from __future__ import annotations

import builtins
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from ef.cli import main
from ef.evaluation import RetrievalEvalReport, evaluate_run
from ef.report import benchmark_report, evaluation_data, evaluation_report
from ef.report._page import Report
from fastrag.benchmark import BenchmarkResult, DistributionSummary, QueryOutcome

RUN = {
    "q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1},
    "q2": {"d4": 0.5, "d5": 0.4, "d6": 0.4},  # d6 ties d5: d6 ranks first (greater id)
    "q3": {"d9": 1.0},
}
QRELS = {
    "q1": {"d1": 1, "d3": 2},
    "q2": {"d5": 1, "d6": 0, "d7": 2, "d8": 1},
    "q3": {"d10": 1},
}
QUERIES = {"q1": "first query", "q2": "second query", "q3": "third query"}
CORPUS = {"d1": "alpha " * 100, "d5": "the fifth   document\nhas text", "d7": "seven"}


def _run_report() -> Any:
    return evaluate_run(RUN, QRELS, ["ndcg@10", "P_1", "P_2", "recall@1", "recall@2", "mrr", "num_rel"])


def test_worst_queries_hold_their_rankings_marks_and_missed_documents() -> None:
    data = evaluation_data(_run_report(), run=RUN, qrels=QRELS, queries=QUERIES, corpus=CORPUS, worst=2, depth=2)
    assert data.worst_by == "ndcg@10"
    assert [(q.query_id, q.text) for q in data.worst] == [("q3", "third query"), ("q2", "second query")]
    q2 = data.worst[1]
    assert q2.value == _run_report().per_query["q2"]["ndcg@10"]
    assert [(d.rank, d.doc_id, d.score, d.grade) for d in q2.results] == [(1, "d4", 0.5, None), (2, "d6", 0.4, 0)]
    # d5 is relevant but ranked third, outside depth 2; the most relevant (grade 2) comes first.
    assert [(doc, grade) for doc, grade, _ in q2.missed] == [("d7", 2), ("d5", 1), ("d8", 1)]
    assert [snippet for _, _, snippet in q2.missed] == ["seven", "the fifth document has text", None]
    assert q2.n_missed == 3
    assert data.depth == 2


def test_snippets_are_cut_to_a_short_line() -> None:
    data = evaluation_data(_run_report(), run=RUN, qrels=QRELS, corpus=CORPUS, worst=3)
    q1 = next(q for q in data.worst if q.query_id == "q1")
    snippet = q1.results[0].snippet
    assert snippet is not None
    assert len(snippet) == 180
    assert snippet.endswith("…")
    assert snippet.startswith("alpha alpha")


def test_curves_group_the_cutoffs_of_each_measure_and_skip_counts() -> None:
    report = _run_report()
    data = evaluation_data(report)
    assert [(row["metric"], row["k"], row["value"]) for row in data.curves] == [
        ("recall", 1, report.metrics["recall@1"]),
        ("recall", 2, report.metrics["recall@2"]),
        ("precision", 1, report.metrics["P_1"]),
        ("precision", 2, report.metrics["P_2"]),
    ]
    assert data.integer == frozenset({"num_rel"})


def test_judged_share_divides_by_what_the_top_k_holds() -> None:
    data = evaluation_data(_run_report(), run=RUN, qrels=QRELS)
    # top 1: q1 d1 judged, q2 d4 not, q3 d9 not -> 1/3; top 2: q1 d1 of d1 d2, q2 d6 (judged 0) of
    # d4 d6, q3 none of its one doc; top 10: q1 d1 d3 of 3, q2 d6 d5 of 3, q3 0 of 1.
    assert [(row["k"], row["value"]) for row in data.judged] == [
        (1, 1 / 3),
        (2, (0.5 + 0.5 + 0) / 3),
        (10, (2 / 3 + 2 / 3) / 3),
    ]


def test_a_retrieval_report_and_its_json_give_the_same_page() -> None:
    report = RetrievalEvalReport(
        {"ndcg@1": 0.5, "ndcg@10": 0.25, "recall@1": 0.125, "recall@10": 1.0}, {"a": {"ndcg@10": 0.25}}, 1, (1, 10)
    )
    from_object = evaluation_report(report).html()
    from_json = evaluation_report(json.loads(json.dumps(report.to_dict()))).html()
    assert from_object == from_json
    assert '<td class="num" data-value="0.125">0.1250</td>' in from_object


def test_the_summary_table_pivots_cutoffs_and_lists_the_rest() -> None:
    report = _run_report()
    page = evaluation_report(report)
    summary = page.sections[0]
    pivot, other = summary.blocks
    assert pivot.headers == ("measure", "@1", "@2", "@10")  # type: ignore[union-attr]
    rows = {row[0].text: [(c.text, c.value) for c in row[1:]] for row in pivot.rows}  # type: ignore[union-attr]
    assert rows["P"] == [
        (f"{report.metrics['P_1']:.4f}", report.metrics["P_1"]),
        (f"{report.metrics['P_2']:.4f}", report.metrics["P_2"]),
        ("-", None),
    ]
    assert rows["ndcg"] == [("-", None), ("-", None), (f"{report.metrics['ndcg@10']:.4f}", report.metrics["ndcg@10"])]
    assert [(row[0].text, row[1].text) for row in other.rows] == [  # type: ignore[union-attr]
        ("mrr", f"{report.metrics['mrr']:.4f}"),
        ("num_rel", "6"),
    ]


def test_the_page_loads_nothing_from_outside() -> None:
    page = evaluation_report(_run_report(), run=RUN, qrels=QRELS, queries=QUERIES).html()
    markup = re.sub(r"<script>.*?</script>", "", page, flags=re.S)  # the Vega bundle quotes tags in strings
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=\"(?!data:)", markup)
    assert re.findall(r"<link[^>]*>", markup) == ['<link rel="icon" href="data:,">']  # no favicon request
    assert "default-src 'none'" in page  # the Content-Security-Policy refuses any request
    assert page.count("<script") == 3  # the figure specs, the Vega bundle, the boot script


def test_text_is_escaped() -> None:
    page = evaluation_report(
        _run_report(), run=RUN, qrels=QRELS, queries={"q3": "</script><b>x</b>"}, title="a < b"
    ).html()
    assert "<title>a &lt; b</title>" in page
    assert "&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;" in page
    assert "</script><b>" not in page


def test_to_html_writes_atomically_and_returns_the_path(tmp_path: Path) -> None:
    target = tmp_path / "r.html"
    target.write_text("old")
    assert evaluation_report(_run_report()).to_html(target) == target
    assert target.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_figures_save_as_png_and_svg(tmp_path: Path) -> None:
    page = evaluation_report(_run_report(), run=RUN, qrels=QRELS)
    pngs = page.save_figures(tmp_path / "png", "png")
    assert [p.name for p in pngs] == ["evaluation-curves.png", "evaluation-per_query.png", "evaluation-judged.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    svgs = page.save_figures(tmp_path / "svg", "svg")
    assert all(p.read_text(encoding="utf-8").startswith("<svg") for p in svgs)
    with pytest.raises(ValueError, match=r"^'format' must be 'png' or 'svg' \(got 'pdf'\)$"):
        page.save_figures(tmp_path, "pdf")


@pytest.mark.parametrize(
    ("report", "error", "message"),
    [
        ([1, 2], TypeError, "'report' must be a RetrievalEvalReport, a RunEvalReport or its to_dict() (got list)"),
        ({"per_query": {}}, ValueError, "'report' has no 'metrics' (or 'measures') mapping of measure name to value"),
        ({"metrics": {"ndcg@10": float("nan")}}, ValueError, "'report'['metrics']['ndcg@10'] must be finite (got nan)"),
        ({"metrics": {"ndcg@10": "0.5"}}, ValueError, "'report'['metrics']['ndcg@10'] must be a number (got '0.5')"),
        (
            {"metrics": {"m": 1.0}, "per_query": {"q": {"m": None}}},
            ValueError,
            "'report'['per_query']['q']['m'] must be a number (got None)",
        ),
        (
            {"metrics": {"m": 1.0}, "n_queries": -1},
            ValueError,
            "'report'['n_queries'] must be a non-negative integer (got -1)",
        ),
    ],
)
def test_bad_reports_are_refused_by_name(report: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        evaluation_report(report)


def test_bad_options_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^'worst' must be a non-negative integer \(got -1\)$"):
        evaluation_data(_run_report(), worst=-1)
    with pytest.raises(ValueError, match=r"^'depth' must be a positive integer or None \(got 0\)$"):
        evaluation_data(_run_report(), depth=0)


def test_without_the_extra_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_altair(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "altair":
            raise ImportError("No module named 'altair'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "altair", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_altair)
    with pytest.raises(ImportError, match=re.escape("pip install 'ef-eval[report]'")):
        evaluation_report(_run_report())


def _benchmark() -> BenchmarkResult:
    outcomes = (
        QueryOutcome("s1", "alpha", latency_ms=2.0),
        QueryOutcome("s2", "beta", latency_ms=4.0),
        QueryOutcome("s3", "gamma", error="TimeoutError: took over 5 s"),
    )
    scores = {
        "recall@1": (0.0, 1.0, None),
        "recall@5": (1.0, 1.0, None),
        "latency_ms": (2.0, 4.0, None),
        "cost_usd": (None, None, None),
    }
    return BenchmarkResult(
        summary={name: DistributionSummary.from_scores(values) for name, values in scores.items()},
        outcomes=outcomes,
        scores=scores,
        higher_is_better={"latency_ms": False, "cost_usd": False},
    )


def test_a_benchmark_report_shows_failures_latency_and_metric_at_k() -> None:
    result = _benchmark()
    page = benchmark_report(result)
    assert [s.title for s in page.sections] == [
        "Summary",
        "Metric distributions",
        "Metrics at each cutoff",
        "Latency and cost",
        "Failed samples (1)",
    ]
    assert [f.name for f in page.figures] == ["distributions", "curves", "operational"]
    failures = page.sections[-1].blocks[0]
    assert [[c.text for c in row] for row in failures.rows] == [  # type: ignore[union-attr]
        ["s3", "gamma", "TimeoutError: took over 5 s"]
    ]
    operational = page.sections[3].blocks[1]
    latency = result.summary["latency_ms"]
    assert [c.value for c in operational.rows[0][1:]] == [  # type: ignore[union-attr]
        2,
        latency.mean,
        latency.p50,
        latency.p90,
        latency.p95,
        latency.p99,
        latency.max,
    ]
    # cost_usd was never reported: no empty panel for it
    assert "cost_usd" not in json.dumps(page.figures[2].spec)


def test_benchmark_result_to_html(tmp_path: Path) -> None:
    result = _benchmark()
    target = result.to_html(tmp_path / "bench.html")
    assert target == tmp_path / "bench.html"
    assert target.read_text(encoding="utf-8") == benchmark_report(result).html()
    assert benchmark_report(json.loads(result.to_json())).html() == target.read_text(encoding="utf-8")


def test_benchmark_report_refuses_other_objects() -> None:
    with pytest.raises(TypeError, match=r"^'result' must be a fastrag BenchmarkResult or its to_dict\(\)"):
        benchmark_report({"metrics": {}})


def test_report_is_a_frozen_value() -> None:
    page = evaluation_report(_run_report())
    assert isinstance(page, Report)
    with pytest.raises(AttributeError):
        page.title = "other"  # type: ignore[misc]


# The command line


def test_ef_report_renders_a_saved_evaluation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "eval.json"
    saved.write_text(json.dumps(_run_report().to_dict()))
    status = main(["report", str(saved), "--html", str(tmp_path / "r.html"), "--svg", str(tmp_path / "svg")])
    assert (status, capsys.readouterr().err) == (0, "")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == evaluation_report(_run_report()).html()
    assert sorted(p.name for p in (tmp_path / "svg").iterdir()) == ["evaluation-curves.svg", "evaluation-per_query.svg"]


def test_ef_report_with_run_qrels_and_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.trec import read_run, write_run

    corpus, queries, qrels = read_beir(demo_dataset())
    run = {q: {doc: float(len(doc) - i) for i, doc in enumerate(sorted(corpus)[:5])} for q in qrels}
    write_run(tmp_path / "run.trec", run)
    report = evaluate_run(run, qrels, ["ndcg@10", "P_5"])
    saved = tmp_path / "eval.json"
    saved.write_text(json.dumps(report.to_dict()))
    status = main(
        [
            "report",
            str(saved),
            "--html",
            str(tmp_path / "r.html"),
            "--run",
            str(tmp_path / "run.trec"),
            "--dataset",
            str(demo_dataset()),
            "--worst",
            "2",
            "--title",
            "Demo",
        ]
    )
    assert (status, capsys.readouterr().err) == (0, "")
    expected = evaluation_report(
        report, run=read_run(tmp_path / "run.trec"), qrels=qrels, queries=queries, corpus=corpus, worst=2, title="Demo"
    )
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == expected.html()


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        (
            "{}",
            ["--html", "{tmp}/r.html"],
            "ef report: error: not a report ef can render: expected the JSON of ef eval",
        ),
        ("[1]", ["--html", "{tmp}/r.html"], "ef report: error: {tmp}/x.json: expected a JSON object, got array"),
        ("{", ["--html", "{tmp}/r.html"],
         "ef report: error: {tmp}/x.json: malformed JSON: Expecting property name enclosed in double quotes "
         "(column 2)"),
        ('{"metrics": {}}', [], "ef report: error: nothing to write: give --html REPORT.html, --png DIR or --svg DIR"),
        (
            '{"metrics": {"m": 1}}',
            ["--html", "{tmp}/no/r.html"],
            "ef report: error: --html {tmp}/no/r.html: directory {tmp}/no does not exist",
        ),
        (
            '{"metrics": {"m": "x"}}',
            ["--html", "{tmp}/r.html"],
            "ef report: error: {tmp}/x.json: 'report'['metrics']['m'] must be a number (got 'x')",
        ),
    ],
)
def test_ef_report_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, argv: list[str], message: str
) -> None:
    (tmp_path / "x.json").write_text(content)
    status = main(["report", str(tmp_path / "x.json"), *(a.format(tmp=tmp_path) for a in argv)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith(message.format(tmp=tmp_path))
    assert err.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_ef_eval_html_shows_the_worst_queries_from_its_own_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the run written for the report goes
    made: list[str] = []
    real = tempfile.TemporaryDirectory

    def recording(*args: Any, **kwargs: Any) -> Any:
        folder = real(*args, **kwargs)
        made.append(folder.name)
        return folder

    monkeypatch.setattr(tempfile, "TemporaryDirectory", recording)
    status = main(
        [
            "eval",
            "--quiet",
            "--k",
            "1,10",
            "--json",
            str(tmp_path / "e.json"),
            "--html",
            str(tmp_path / "e.html"),
            "--png",
            str(tmp_path / "png"),
        ]
    )
    assert status == 0
    capsys.readouterr()
    page = (tmp_path / "e.html").read_text(encoding="utf-8")
    saved = json.loads((tmp_path / "e.json").read_text())
    assert f'data-value="{saved["metrics"]["ndcg@10"]!r}"' in page
    assert "The 10 worst queries by ndcg@10" in page
    assert "✓ relevant (2)" in page
    # The demo's qrels judge only relevant documents: the judged share would be P@k, so it is not drawn.
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "evaluation-curves.png",
        "evaluation-per_query.png",
    ]
    assert "these qrels judge only relevant documents" in page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.html", "e.json", "png", "scratch"]
    # issue 10: the report's rankings come from the evaluation report's own run, in the retriever's
    # order; no run file is written (and read back, re-sorted) for the page any more
    assert made == []
    assert list(scratch.iterdir()) == []


# Comparisons

NEW_RUN = {
    "q1": {"d1": 0.2, "d2": 0.8, "d3": 0.9},  # d3 (grade 2) now first
    "q2": {"d4": 0.1, "d5": 0.9, "d7": 0.8},
    "q3": {"d8": 1.0},  # still nothing relevant
}


def _comparison() -> Any:
    from ef.compare import compare

    return compare({"old": RUN, "new": NEW_RUN}, QRELS, ["ndcg@10", "P_1"], baseline="old", resamples=200)


def test_a_comparison_report_shows_every_comparison_with_its_mark() -> None:
    from ef.report import comparison_report

    report = _comparison()
    page = comparison_report(report)
    table = page.sections[0].blocks[0]
    assert [c.text for c in table.rows[0]][:3] == ["new", "old", "ndcg@10"]  # type: ignore[union-attr]
    for row, c in zip(table.rows, report.comparisons, strict=True):  # type: ignore[union-attr]
        assert [cell.value for cell in row[3:11]] == [
            c.system_mean,
            c.baseline_mean,
            c.diff,
            c.ci_low,
            c.ci_high,
            c.effect_size,
            c.p_value,
            c.p_adjusted,
        ]
        assert row[11].text == f"{c.wins}/{c.ties}/{c.losses}"
        assert row[12].text == {"better": "▲", "worse": "▼"}.get(c.verdict, "")
    assert [f.name for f in page.figures] == ["forest", "sorted", "wins"]
    sorted_rows = page.figures[1].spec["datasets"]["sorted"]
    ndcg = [row for row in sorted_rows if row["comparison"] == "new − old: ndcg@10"]
    diffs = report.per_query_diff(report.get("new", "ndcg@10"))
    assert [(row["query_id"], row["difference"]) for row in ndcg] == sorted(diffs.items(), key=lambda i: (i[1], i[0]))
    assert [row["outcome"] for row in ndcg] == [
        "tie" if d == 0 else "win" for _, d in sorted(diffs.items(), key=lambda i: (i[1], i[0]))
    ]


def test_the_largest_losses_show_both_rankings_side_by_side() -> None:
    from ef.report import comparison_report

    report = _comparison()
    # "new" loses nothing; seen from the other side ("old" against "new") q1 and q2 are losses.
    from ef.compare import compare

    reverse = compare({"new": NEW_RUN, "old": RUN}, QRELS, ["ndcg@10"], baseline="new", resamples=200)
    page = comparison_report(reverse, runs={"old": RUN, "new": NEW_RUN}, qrels=QRELS, queries=QUERIES, depth=2)
    losses = page.sections[-1]
    diffs = reverse.per_query_diff(reverse.comparisons[0])
    expected = sorted((d, q) for q, d in diffs.items() if d < 0)
    assert [b.title.split(":")[0] for b in losses.blocks] == [f"{i}. {q}" for i, (_, q) in enumerate(expected, 1)]
    first = losses.blocks[0]
    assert first.blocks[0].text == QUERIES[expected[0][1]]  # type: ignore[union-attr]
    sides = first.blocks[1]  # type: ignore[union-attr]
    assert sides.side_by_side
    assert [s.title.split(":")[0] for s in sides.blocks] == ["new", "old"]  # type: ignore[union-attr]
    new_table = sides.blocks[0].blocks[0]  # type: ignore[union-attr]
    query = expected[0][1]
    assert [row[1].text for row in new_table.rows] == [
        d for d, _ in sorted(NEW_RUN[query].items(), key=lambda i: -i[1])
    ][:2]
    assert comparison_report(report).sections[-1].blocks[0].text == "new lost no query on ndcg@10."  # type: ignore
    # Without the runs, a loss shows both values and says what would show the rankings.
    bare = comparison_report(reverse).sections[-1].blocks[0]
    q = expected[0][1]
    old, new = (reverse.scores["old"]["ndcg@10"], reverse.scores["new"]["ndcg@10"])
    at = reverse.queries.index(q)
    assert [b.text for b in bare.blocks] == [  # type: ignore[union-attr]
        f"new: {new[at]:.4f}, old: {old[at]:.4f} (pass the runs to see both rankings)"]


def test_comparison_to_html_and_compare_results(tmp_path: Path) -> None:
    from ef.report import comparison_report
    from fastrag.benchmark import compare_results

    report = _comparison()
    assert report.to_html(tmp_path / "c.html") == tmp_path / "c.html"
    assert (tmp_path / "c.html").read_text(encoding="utf-8") == comparison_report(report).html()
    assert comparison_report(json.loads(report.to_json())).html() == comparison_report(report).html()
    other = BenchmarkResult(
        summary={"recall@1": DistributionSummary.from_scores([1.0, 1.0, None])},
        outcomes=_benchmark().outcomes,
        scores={"recall@1": (1.0, 1.0, None)},
        higher_is_better={"recall@1": True},
    )
    base = _benchmark()
    samples = compare_results(
        {"base": base, "other": other},
        ["recall@1"],
        baseline="base",
        resamples=200,
        higher_is_better={"recall@1": True},
    )
    samples.to_html(tmp_path / "s.html")
    page = (tmp_path / "s.html").read_text(encoding="utf-8")
    assert "Per-sample differences, sorted" in page
    assert "<dt>samples</dt><dd>3</dd>" in page  # s3 failed in both: recall@1 pairs two of them


def test_comparison_report_refuses_what_it_cannot_draw() -> None:
    from ef.report import comparison_report

    with pytest.raises(TypeError, match=r"^'comparison' must be an ef.compare ComparisonReport"):
        comparison_report({"metrics": {}})
    with pytest.raises(ValueError, match=r"^'comparison' has no per-query values: save it with to_dict"):
        comparison_report(_comparison().to_dict(per_query=False))
    with pytest.raises(ValueError, match=r"^'losses' must be a non-negative integer \(got -2\)$"):
        comparison_report(_comparison(), losses=-2)


def test_ef_compare_html_and_ef_report_of_its_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.report import comparison_report
    from ef.trec import write_qrels, write_run

    write_run(tmp_path / "old.trec", RUN)
    write_run(tmp_path / "new.trec", NEW_RUN)
    write_qrels(tmp_path / "qrels", QRELS)
    argv = [
        "compare",
        str(tmp_path / "qrels"),
        str(tmp_path / "old.trec"),
        str(tmp_path / "new.trec"),
        "--baseline",
        "old",
        "-m",
        "ndcg@10,P_1",
        "--resamples",
        "200",
        "--format",
        "json",
    ]
    assert main([*argv, "--html", str(tmp_path / "c.html")]) == 0
    saved = json.loads(capsys.readouterr().out)
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert (
        page
        == comparison_report(
            saved,
            runs={"old": RUN, "new": NEW_RUN},
            qrels=QRELS,
            facts={"qrels": str(tmp_path / "qrels")},
            title="Comparison: old, new",
        ).html()
    )
    (tmp_path / "c.json").write_text(json.dumps(saved))
    assert (
        main(
            [
                "report",
                str(tmp_path / "c.json"),
                "--html",
                str(tmp_path / "r.html"),
                "--run",
                f"old={tmp_path / 'old.trec'}",
                "--run",
                f"new={tmp_path / 'new.trec'}",
                "--worst",
                "5",
            ]
        )
        == 0
    )
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == comparison_report(
        saved, runs={"old": RUN, "new": NEW_RUN}
    ).html()


def test_ef_report_renders_a_saved_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "bench.json"
    saved.write_text(_benchmark().to_json())
    assert main(["report", str(saved), "--html", str(tmp_path / "b.html"), "--png", str(tmp_path / "png")]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "b.html").read_text(encoding="utf-8") == benchmark_report(_benchmark()).html()
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "benchmark-curves.png",
        "benchmark-distributions.png",
        "benchmark-operational.png",
    ]


def test_ef_trec_eval_html_with_every_measure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"
    if not suite.is_dir():
        pytest.skip(f"{suite} is missing")
    argv = [
        "trec-eval",
        "-q",
        "--json",
        "-m",
        "all_trec",
        "-mrelstring.20",
        str(suite / "qrels.test"),
        str(suite / "results.test"),
    ]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert main([*argv, "--html", str(tmp_path / "t.html")]) == 0
    assert json.loads(capsys.readouterr().out) == printed
    page = (tmp_path / "t.html").read_text(encoding="utf-8")
    # Every numeric summary is in a table, exactly; relstring (text per query, no summary) is not.
    for name, value in printed["measures"].items():
        assert f'data-value="{float(value)!r}"' in page, name
    assert "relstring" not in page
    # utility and the counts are not on the 0-1 axis of the per-query chart: they are named instead.
    note = re.search(r"Not drawn \(values outside 0–1\): ([^.]*)\.", page)
    assert note is not None
    assert "utility" in note.group(1).split(", ")


def test_ef_report_refuses_a_run_of_no_compared_system(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.trec import write_run

    (tmp_path / "c.json").write_text(_comparison().to_json())
    write_run(tmp_path / "x.trec", RUN)
    status = main(
        [
            "report",
            str(tmp_path / "c.json"),
            "--html",
            str(tmp_path / "r.html"),
            "--run",
            f"other={tmp_path / 'x.trec'}",
        ]
    )
    assert status == 2
    assert capsys.readouterr().err == (
        "ef report: error: --run other=...: the comparison has no system 'other' (it has ['old', 'new'])\n"
    )
    assert not (tmp_path / "r.html").exists()


def test_ef_report_refuses_a_run_of_no_ranking_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # it exited 0 with nothing to show where the run's rankings go (found by the review)
    (tmp_path / "c.json").write_text(_comparison().to_json())
    (tmp_path / "empty.trec").write_text("")
    status = main(["report", str(tmp_path / "c.json"), "--html", str(tmp_path / "r.html"),
                   "--run", f"new={tmp_path / 'empty.trec'}"])
    assert (status, capsys.readouterr().err) == (
        2, f"ef report: error: --run {tmp_path / 'empty.trec'}: the run holds no ranking line (it has no ranking "
           "to show)\n"
    )
    assert not (tmp_path / "r.html").exists()


def test_the_inlined_javascript_cannot_end_its_script_element(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from ef.report import _page

    fake = types.SimpleNamespace(
        javascript_bundle=lambda vl_version=None: 'let s = "</script><b>"; let t = "</SCRIPT >";',
        get_vegalite_versions=lambda: ["6.4"],
    )
    monkeypatch.setattr(_page._deps, "vl_convert", lambda: fake)
    assert _page._javascript.__wrapped__() == 'let s = "<\\/script><b>"; let t = "<\\/SCRIPT >";'
