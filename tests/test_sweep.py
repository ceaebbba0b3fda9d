"""ef.sweep and ef sweep: cells, caching by content (proven by counts), resume after kill -9, decision, report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ef.datasets import demo_dataset
from ef.evaluation import evaluate_run, read_beir
from ef.pipeline import Pipeline
from ef.pipeline_stages import Workspace
from ef.sweep import read_config, sweep
from ef.sweep._report import pareto_front

_BM25_GRID = {"k1": [0.6, 1.2], "b": [0.5, 0.75], "size": [10, "whole"], "k": [10, 100]}  # 16 cells


def _cells(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((folder / "cells").glob("*.json"))}


def _runs(folder: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted((folder / "runs").glob("*.trec"))}


def test_a_cell_scores_its_chunks_collapsed_to_sources(tmp_path: Path) -> None:
    result = sweep({"size": 3, "k": 10}, demo_dataset(), tmp_path, show_progress=False, measures=["ndcg@10", "P_5"])
    cell = result.cells[0]
    corpus, queries, qrels = read_beir(demo_dataset())
    # The same pipeline by hand: its chunks, each source at its best chunk's score, then scored.
    workspace = Workspace(corpus)
    ids = sorted(qrels)
    output = workspace.run(cell.pipeline, [queries[q] for q in ids])
    segments = workspace.chunks(cell.pipeline).segments
    by_hand: dict[str, dict[str, float]] = {}
    for q, (positions, _) in zip(ids, output.rankings, strict=True):
        # Chunks come best first: a source's first chunk is its best (max score); its others drop out.
        order = list(dict.fromkeys(segments[p].source_id for p in positions.tolist()))
        by_hand[q] = {doc: float(len(order) - i) for i, doc in enumerate(order)}  # scored in that order
    assert sum(len(r) for r in by_hand.values()) < 10 * len(ids)  # chunks of one source did collapse
    expected = evaluate_run(by_hand, qrels, ["ndcg@10", "P_5"])
    assert cell.metrics == pytest.approx(expected.metrics, abs=0)
    assert cell.per_query == expected.per_query
    from ef.trec import read_run

    assert cell.run_path is not None
    assert read_run(cell.run_path) == {q: r for q, r in by_hand.items() if r}


def test_the_whole_doc_bm25_cell_is_ef_evals_number_and_the_decision_is_in_words(tmp_path: Path) -> None:
    result = sweep(_BM25_GRID, demo_dataset(), tmp_path, show_progress=False,
                   baseline="bm25 k1=0.6 b=0.5 | 10 words | k=10")
    assert len(result.cells) == 16
    assert result.n_queries == 27
    assert result.cell("bm25 k1=1.2 b=0.75 | whole docs | k=100").metrics["ndcg@10"] == pytest.approx(0.8078, abs=5e-5)
    means = [c.metrics["ndcg@10"] for c in result.cells]
    assert result.cell(result.best).metrics["ndcg@10"] == max(means)
    assert result.baseline == Pipeline(k1=0.6, b=0.5, size=10, k=10).id
    rows = {r["id"]: r for r in result.rows()}
    assert rows[result.baseline]["verdict"] == "baseline"
    assert rows[result.baseline]["delta"] is None
    for cell in result.cells:
        row = rows[cell.id]
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
        if cell.id != result.baseline:
            versus = result.comparison.get(cell.label, "ndcg@10")
            assert row["delta"] == versus.diff == pytest.approx(row["mean"] - rows[result.baseline]["mean"])
    # The family is every cell against the baseline; against the best, a second family.
    assert result.comparison.family_size == 15
    assert result.versus_best.family_size == 15
    versus_best = {c.system: c.significant for c in result.versus_best.comparisons}
    same = [c for c in result.cells if c.id != result.best and not versus_best[c.label]]
    assert result.indistinguishable == tuple(c.id for c in same)
    text = result.summary_text()
    assert text.startswith(f"Best on ndcg@10: {result.cell(result.best).label} (")
    if same:
        assert "Indistinguishable from it (paired t test over 27 queries, holm correction over 15 comparisons, " \
               "alpha 0.05): " + "; ".join(c.label for c in same) + "." in text
    assert "Against the baseline bm25 k1=0.6 b=0.5 | 10 words | k=10" in text
    whole = result.cell("bm25 k1=1.2 b=0.75 | whole docs | k=100")
    assert whole.index_bytes > 0
    assert whole.build_seconds > 0
    assert whole.latency_ms > 0
    assert whole.rerank_ms == 0
    table = str(result)
    assert table.splitlines()[0].split() == [
        "cell", "ndcg@10", "95%", "CI", "delta", "p", "(adj.)", "vs", "baseline", "ms/query", "index", "MB",
        "build", "s",
    ]
    data = json.loads(result.to_json())
    assert data["best"] == result.best
    assert len(data["rows"]) == 16
    assert data["summary"] == text


def test_each_chunking_is_cut_and_indexed_once_and_a_rerun_scores_nothing(tmp_path: Path) -> None:
    workspace = Workspace(read_beir(demo_dataset())[0])
    result = sweep(_BM25_GRID, demo_dataset(), tmp_path, show_progress=False, workspace=workspace)
    assert len(result.scored) == 16
    assert result.loaded == ()
    assert result.counts["chunked"] == {"words/10/0": 1, "words/whole/0": 1}
    assert result.counts["tokenized"] == {"words/10/0/english/english": 1, "words/whole/0/english/english": 1}
    assert sorted(result.counts["bm25_indexed"].values()) == [1] * 8  # 2 chunkings x 2 k1 x 2 b
    assert sorted(result.counts["retrieved"].values()) == [1] * 8  # k=10 and k=100 share a retrieval
    again = sweep(_BM25_GRID, demo_dataset(), tmp_path, show_progress=False)
    assert again.scored == ()
    assert set(again.loaded) == {c.id for c in result.cells}
    assert all(not counts for counts in again.counts.values())  # nothing computed at all
    assert [c.per_query for c in again.cells] == [c.per_query for c in result.cells]


@pytest.mark.slow
def test_each_chunking_and_embedder_is_encoded_once_across_retrievers_rerankers_and_k(tmp_path: Path) -> None:
    grid = {"retriever": ["bm25", "dense", "hybrid"], "size": [8, "whole"], "overlap": [2],
            "rerank": ["none", "minilm"], "rerank_depth": [20], "k": [5, 10]}
    result = sweep(grid, demo_dataset(), tmp_path / "a", show_progress=False)
    assert len(result.cells) == 24
    assert len(result.scored) == 24
    counts = result.counts
    assert counts["chunked"] == {"words/8/2": 1, "words/whole/0": 1}
    assert counts["encoded"] == {"words/8/2/all-MiniLM-L6-v2": 1, "words/whole/0/all-MiniLM-L6-v2": 1}
    assert list(counts["queries_encoded"].values()) == [1]
    assert counts["loaded"] == {}
    assert sorted(counts["bm25_indexed"].values()) == [1, 1]
    assert sorted(counts["retrieved"].values()) == [1] * 6  # (2 chunkings) x (3 first stages)
    assert sorted(counts["reranked"].values()) == [1] * 6
    dense = result.cell("dense all-MiniLM-L6-v2 | whole docs | k=10")
    assert dense.index_bytes == 100 * 384 * 4  # the vectors: 100 documents, 384 float32 each
    reranked = result.cell("bm25 k1=1.2 b=0.75 | whole docs | rerank bi:all-MiniLM-L6-v2@20 | k=10")
    assert reranked.rerank_ms > 0
    # A new sweep folder with the same vector cache encodes nothing: the vectors are read back.
    other = sweep(grid, demo_dataset(), tmp_path / "b", cache_dir=tmp_path / "a" / "cache", show_progress=False)
    assert other.counts["encoded"] == {}
    assert other.counts["queries_encoded"] == {}
    assert other.counts["loaded"] == {"words/8/2/all-MiniLM-L6-v2": 1, "words/whole/0/all-MiniLM-L6-v2": 1,
                                      **dict.fromkeys(counts["queries_encoded"], 1)}
    assert [c.per_query for c in other.cells] == [c.per_query for c in result.cells]
    from ef.pipeline_stages import fusion_method

    assert result.settings["fusion"] == fusion_method()


_KILLED_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    import ef.sweep._store as store
    from ef.datasets import demo_dataset
    from ef.sweep import sweep

    real_save = store.SweepStore.save
    saved = []

    def save(self, pipeline, record, run):
        if len(saved) == int(sys.argv[2]):
            # Mid-cell: its run file is written, its record is not, and the process dies at once.
            from ef.io.trec import write_run
            write_run(self.run_path(pipeline), {q: d for q, d in run.items() if d}, run_id="half")
            os.kill(os.getpid(), signal.SIGKILL)
        real_save(self, pipeline, record, run)
        saved.append(pipeline.id)

    store.SweepStore.save = save
    sweep({GRID}, demo_dataset(), sys.argv[1], show_progress=False)
""").replace("{GRID}", repr(_BM25_GRID))


def test_a_sweep_killed_mid_cell_resumes_with_nothing_lost_and_nothing_scored_twice(tmp_path: Path) -> None:
    folder = tmp_path / "killed"
    done = subprocess.run([sys.executable, "-c", _KILLED_SCRIPT, str(folder), "5"], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert len(_cells(folder)) == 5
    assert len(_runs(folder)) == 6  # the sixth cell's run, without its record
    resumed = sweep(_BM25_GRID, demo_dataset(), folder, show_progress=False)
    assert len(resumed.loaded) == 5
    assert len(resumed.scored) == 11
    assert not set(resumed.loaded) & set(resumed.scored)
    assert not [p for p in (folder / "runs").iterdir() if p.suffix not in (".trec",)]  # no temporary file left
    whole = sweep(_BM25_GRID, demo_dataset(), tmp_path / "whole", show_progress=False)
    assert [c.per_query for c in resumed.cells] == [c.per_query for c in whole.cells]
    assert _runs(folder) == _runs(tmp_path / "whole")  # the half-written cell's run was replaced
    strip = ("retrieve_ms", "rerank_ms", "build_seconds")
    assert [{k: v for k, v in c.items() if k not in strip} for c in _cells(folder).values()] == \
        [{k: v for k, v in c.items() if k not in strip} for c in _cells(tmp_path / "whole").values()]


def test_kill_9_from_outside_while_cells_are_scored(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    slow = textwrap.dedent("""
        import sys, time
        import ef.sweep._store as store
        from ef.datasets import demo_dataset
        from ef.sweep import sweep

        real_save = store.SweepStore.save

        def save(self, pipeline, record, run):
            time.sleep(0.4)  # cells slow enough for the test to kill the sweep among them
            real_save(self, pipeline, record, run)

        store.SweepStore.save = save
        sweep({GRID}, demo_dataset(), sys.argv[1], show_progress=False)
    """).replace("{GRID}", repr(_BM25_GRID))
    process = subprocess.Popen([sys.executable, "-c", slow, str(folder)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while len(list((folder / "cells").glob("*.json"))) < 3:
            assert process.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(30)
    assert process.returncode == -signal.SIGKILL
    saved = set(_cells(folder))
    assert 3 <= len(saved) < 16
    resumed = sweep(_BM25_GRID, demo_dataset(), folder, show_progress=False)
    assert set(resumed.loaded) == saved
    assert len(resumed.scored) == 16 - len(saved)
    fresh = sweep(_BM25_GRID, demo_dataset(), None, show_progress=False)
    assert [c.metrics for c in resumed.cells] == [c.metrics for c in fresh.cells]


def test_a_folder_of_another_sweep_is_refused(tmp_path: Path) -> None:
    sweep({"k": 10}, demo_dataset(), tmp_path, show_progress=False)
    with pytest.raises(ValueError) as caught:
        sweep({"k": 10}, demo_dataset(), tmp_path, measures=["mrr"], show_progress=False)
    assert str(caught.value) == (
        f"{tmp_path} holds a sweep of another dataset or other measures ({str(Path(demo_dataset()))!r}, "
        "['ndcg@10']); use another folder, or resume=False (--no-resume) to start over"
    )
    restarted = sweep({"k": 10}, demo_dataset(), tmp_path, measures=["mrr"], resume=False, show_progress=False)
    assert restarted.loaded == ()
    assert restarted.scored == (Pipeline(k=10).id,)


def test_bad_arguments_are_named_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^'baseline' 'nope' is not a cell of this sweep"):
        sweep({"k": [5, 10]}, demo_dataset(), baseline="nope", show_progress=False)
    with pytest.raises(ValueError, match=r"^measure 'ndgc@10': unknown measure; did you mean 'ndcg@10'"):
        sweep({"k": 5}, demo_dataset(), measures=["ndgc@10"], show_progress=False)
    with pytest.raises(FileNotFoundError, match=r"^dataset directory .*nowhere does not exist, nor a zip"):
        sweep({"k": 5}, tmp_path / "nowhere", show_progress=False)


def test_progress_off_a_terminal_is_the_line_every_command_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # ef._console.Progress: a start line, a line at the first cell after each 30 s (count, share,
    # ETA, rate), an end line; a clock that moves 31 s a reading makes every line appear.
    import functools
    import itertools

    from ef._console import Progress

    ticks = itertools.count(0.0, 31.0)
    monkeypatch.setattr("ef.sweep._sweep.Progress", functools.partial(Progress, clock=lambda: next(ticks)))
    sweep({"k": [5, 10, 20]}, demo_dataset(), tmp_path, show_progress=True)
    assert capsys.readouterr().err.splitlines() == [
        "sweep cells: 0/3 started",
        "sweep cells: 1/3 (33%) [00:31 elapsed, ETA 01:02, 0.03 items/s]",
        "sweep cells: 2/3 (67%) [01:02 elapsed, ETA 00:31, 0.03 items/s]",
        "sweep cells: 3/3 [02:04, 0.02 items/s]",
    ]
    # Run again: 3 cells read back, 1 scored; the count and the ETA are of the cells scored now.
    ticks = itertools.count(0.0, 31.0)
    sweep({"k": [5, 10, 20, 30]}, demo_dataset(), tmp_path, show_progress=True)
    assert capsys.readouterr().err.splitlines() == [
        "sweep cells (3 read back): 0/1 started",
        "sweep cells (3 read back): 1/1 [01:02, 0.02 items/s]",
    ]
    sweep({"k": [5, 10, 20, 30]}, demo_dataset(), tmp_path, show_progress=True)  # nothing left to score
    assert capsys.readouterr().err == ""


def test_the_pareto_front_by_hand() -> None:
    # (latency, quality): 0 is dominated by 4 (faster, as good); 2 and 3 by 1.
    points = [(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (2.0, 0.4), (0.5, 0.5)]
    assert pareto_front(points) == [4, 1]
    assert pareto_front(points, higher_is_better=False) == [4, 3]
    assert pareto_front([(1.0, 0.5), (1.0, 0.5)]) == [0, 1]  # equal points dominate neither


def test_the_report_has_the_table_the_text_and_the_three_figures(tmp_path: Path) -> None:
    pytest.importorskip("altair")
    result = sweep({"size": [5, 10, "whole"], "k": [10, 100], "k1": [0.9, 1.2]}, demo_dataset(), tmp_path / "s",
                   show_progress=False)
    report = result.report()
    assert [f.name for f in report.figures] == ["chunk_size", "at_k", "quality_latency"]
    chunk = report.figures[0].spec
    assert {row["chunking"] for row in chunk["datasets"]["chunk_size"]} == {"5 words", "10 words", "whole docs"}
    assert len({row["series"] for row in chunk["datasets"]["chunk_size"]}) == 4  # 2 k1 x 2 k: a line each
    assert chunk["layer"][1]["encoding"]["x"]["sort"] == ["5 words", "10 words", "whole docs"]
    latency = report.figures[2].spec["datasets"]
    front = [row for row in latency["quality_latency"] if row["pareto"] == "on the Pareto front"]
    expected = pareto_front([(c.latency_ms, c.metrics["ndcg@10"]) for c in result.cells])
    assert [r["label"] for r in front] == [result.cells[i].label for i in sorted(expected)]
    assert len(latency["pareto_front"]) == len(expected)
    path = result.to_html(tmp_path / "sweep.html")
    page = path.read_text(encoding="utf-8")
    assert result.summary_text().replace("'", "&#x27;") in page
    import re

    table = re.search(r'<table id="sweep".*?</table>', page, re.S)
    assert table is not None
    assert table.group(0).count("<tr") == 1 + len(result.cells)
    assert all(f'id="figure-{name}"' in page for name in ("chunk_size", "at_k", "quality_latency"))


def test_lines_past_the_twentieth_colour_are_dashed_with_one_legend(tmp_path: Path) -> None:
    pytest.importorskip("altair")
    k1s = [0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.1]
    result = sweep({"k1": k1s, "size": [5, 10, "whole"], "k": [5, 10]}, demo_dataset(), None, show_progress=False)
    chunk, at_k = (f.spec for f in result.report().figures[:2])
    series = list(dict.fromkeys(row["series"] for row in at_k["datasets"]["at_k"]))
    assert len(series) == 21  # 7 k1 x 3 chunkings: one line each, a colour each but the last
    line = at_k["layer"][1]["encoding"]
    assert line["color"]["scale"]["domain"] == series
    assert line["strokeDash"]["scale"] == {"domain": series, "range": [[1, 0]] * 20 + [[6, 3]]}
    assert line["strokeDash"]["legend"] == line["color"]["legend"]  # the same legend: Vega-Lite merges them
    assert line["color"]["legend"]["symbolType"] == "stroke"
    assert len({row["series"] for row in chunk["datasets"]["chunk_size"]}) == 14  # 7 k1 x 2 k: no dashes
    assert "strokeDash" not in chunk["layer"][1]["encoding"]


_CONFIG = """
measures = ["ndcg@10", "recall@100"]
baseline = {retriever = "bm25", k = 10}
[grid]
retriever = "bm25"
k1 = [0.9, 1.2]
k = [10, 100]
"""


def test_ef_sweep_reads_a_config_and_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text(_CONFIG, encoding="utf-8")
    status = main(["sweep", str(config), "--dataset", str(demo_dataset()), "--out", str(tmp_path / "out"),
                   "--json", "-", "-q"])
    captured = capsys.readouterr()
    assert status == 0
    data = json.loads(captured.out)
    assert data["baseline"] == Pipeline(k=10).id
    assert data["measures"] == ["ndcg@10", "recall@100"]
    assert len(data["cells"]) == 4
    assert captured.err.startswith(f"{demo_dataset()}: 4 cells (4 scored, 0 read back")
    assert data["summary"] in captured.err
    again = main(["sweep", str(config), "--dataset", str(demo_dataset()), "--out", str(tmp_path / "out"), "-q"])
    assert again == 0
    assert "4 cells (0 scored, 4 read back" in capsys.readouterr().out


def test_ef_sweep_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text("[grid]\nchunk = [1]\n", encoding="utf-8")
    assert main(["sweep", str(config), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == (
        f"ef sweep: error: {config}: unknown grid parameter(s) 'chunk'; known: retriever, model, k1, b, stemmer, "
        "stopwords, unit, size, overlap, rerank, rerank_depth, fusion_depth, k\n"
    )
    config.write_text("grid = {k = 5}\nfolds = 3\n", encoding="utf-8")
    assert main(["sweep", str(config), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"ef sweep: error: {config}: unknown key(s) 'folds'; known: grid,")
    config.write_text("grid = {k = 5}\n", encoding="utf-8")
    assert main(["sweep", str(config), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"ef sweep: error: no dataset: give --dataset DIR or 'dataset' in {config}\n"


def test_ef_sweep_baseline_errors_name_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # sweep's message names its keyword ('baseline'): given by --baseline, the user typed the flag
    from ef.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text(_CONFIG, encoding="utf-8")
    argv = ["sweep", str(config), "--dataset", str(demo_dataset()), "--out", str(tmp_path / "out"), "-q"]
    assert main([*argv, "--baseline", "whole"]) == 2
    assert capsys.readouterr().err == (
        "ef sweep: error: --baseline 'whole' is not a cell of this sweep (give a cell's id or label)\n"
    )


def test_config_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"grid": [{"k": 5}, {"retriever": "dense", "k": 5}],
                                                 "dataset": "d", "out": "o", "cache": "~/x"}))
    config = read_config(tmp_path / "c.json")
    assert (config.dataset, config.out) == (str(tmp_path / "d"), str(tmp_path / "o"))
    assert config.cache == str(Path("~/x").expanduser())
    assert [p.label for p in config.pipelines()] == ["bm25 k1=1.2 b=0.75 | whole docs | k=5",
                                                      "dense all-MiniLM-L6-v2 | whole docs | k=5"]


def test_a_grid_runs_through_the_fastrag_harness_sharing_one_workspace(tmp_path: Path) -> None:
    from ef.sweep import benchmark_grid
    from fastrag.benchmark import EvalSample
    from fastrag.benchmark.metrics import Latency, Recall

    corpus, queries, qrels = read_beir(demo_dataset())
    ids = sorted(qrels)
    samples = [EvalSample(q, queries[q], sorted(d for d, g in qrels[q].items() if g > 0)) for q in ids]
    grid = {"size": [9, "whole"], "k1": [0.9, 1.2], "k": 10}
    workspace = Workspace(corpus)
    results = benchmark_grid(grid, corpus, samples, [Recall(k=10, key="source_uri"), Latency()],
                             workspace=workspace, show_progress=False, results_path=str(tmp_path / "bench"))
    swept = sweep(grid, demo_dataset(), measures=["recall@10"], show_progress=False)
    assert list(results) == [c.label for c in swept.cells]
    for cell in swept.cells:
        assert results[cell.label].scores["recall@10[source_uri]"] == tuple(cell.per_query[q]["recall@10"] for q in ids)
        assert results[cell.label].summary["latency_ms"].count == len(ids)
    assert dict(workspace.counts["chunked"]) == {("words", 9, 0): 1, ("words", None, 0): 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"bench.{c.id}.jsonl" for c in swept.cells)


def test_the_module_is_callable_as_ef_sweep() -> None:
    import ef.sweep

    result = ef.sweep({"k": [5, 10]}, demo_dataset(), show_progress=False)  # type: ignore[operator]
    assert [c.label for c in result.cells] == ["bm25 k1=1.2 b=0.75 | whole docs | k=5",
                                               "bm25 k1=1.2 b=0.75 | whole docs | k=10"]


def test_two_cells_are_one_comparison_in_the_summary(tmp_path: Path) -> None:
    result = sweep({"size": [3, 5], "k": 10}, demo_dataset(), tmp_path, show_progress=False, measures=["ndcg@10"])
    assert result.versus_best is not None
    assert result.versus_best.family_size == 1
    assert ", holm correction over 1 comparison, alpha 0.05)" in result.summary_text()
