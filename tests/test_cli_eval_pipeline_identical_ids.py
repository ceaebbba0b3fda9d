"""ef eval with a pipeline flag and --ignore-identical-ids (on by itself for ArguAna and Quora by name):
it asks for k + 1 hits so that k remain, past what a reranker orders; it failed after the index was built,
"'k' must be at most 'rerank_depth': the reranker orders only its top 3 (got k=4)". And a --device the
model refuses is said with the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ef.cli import main


def _dataset(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "red apples grow on trees", "d2": "green pears are sweet", "d3": "a red apple pie recipe"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items()), encoding="utf-8")
    (folder / "queries.jsonl").write_text(  # 'd1' is a query and a document, as ArguAna's are
        json.dumps({"_id": "d1", "text": "red apple"}) + "\n" + json.dumps({"_id": "q2", "text": "green pear"}) + "\n",
        encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nd1\td3\t1\nq2\td2\t1\n", encoding="utf-8")
    return folder


@pytest.mark.slow
def test_a_reranked_pipeline_with_identical_ids_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    dataset, run = _dataset(tmp_path / "data"), tmp_path / "run.trec"
    argv = ["eval", str(dataset), "--rerank", "minilm", "--rerank-depth", "3", "--k", "3", "--ignore-identical-ids",
            "--run-out", str(run), "--json", "-", "-q"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["n_queries"], report["metrics"]["ndcg@3"]) == (2, 1.0)
    # BM25 finds d1 and d3 for 'red apple' (d2 shares no word); d1, the query's own document, is dropped
    assert [line.split()[:3] for line in run.read_text(encoding="utf-8").splitlines()] == [
        ["d1", "Q0", "d3"], ["q2", "Q0", "d2"]]


@pytest.mark.parametrize("flags", [["--rerank", "minilm"], ["--embedder", "st:all-MiniLM-L6-v2"]])
def test_a_bad_device_names_the_flag(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # The model's check names its keyword: "'device' 'bogus' is not a torch device (...)"; here --device was typed.
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as raised:
        torch.device("bogus")
    assert main(["eval", *flags, "--device", "bogus", "-q"]) == 2
    assert capsys.readouterr().err == f"ef eval: error: --device 'bogus' is not a torch device ({raised.value})\n"


@pytest.mark.slow
def test_at_a_cutoff_equal_to_the_rerank_depth_a_dropped_self_match_leaves_one_hit_fewer(tmp_path: Path) -> None:
    # docs/ingest-and-eval.md: the request of k + 1 is capped at --rerank-depth, so with k equal to it a
    # query whose own document is reranked keeps k - 1 hits; one deeper, k remain.
    pytest.importorskip("sentence_transformers")
    folder = tmp_path / "data"
    (folder / "qrels").mkdir(parents=True)
    docs = {"d1": "red apple tree", "d2": "red apple pie", "d3": "red apple juice", "d4": "red apple cider",
            "d5": "red apple jam"}
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items()), encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "d1", "text": "red apple tree"}) + "\n", encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nd1\td5\t1\n", encoding="utf-8")
    lines = {}
    for depth in (3, 4):
        run = tmp_path / f"run{depth}.trec"
        argv = ["eval", str(folder), "--rerank", "minilm", "--rerank-depth", str(depth), "--k", "3",
                "--ignore-identical-ids", "--run-out", str(run), "-q"]
        assert main(argv) == 0
        lines[depth] = [line.split()[2] for line in run.read_text(encoding="utf-8").splitlines()]
    assert (len(lines[3]), len(lines[4]), "d1" in lines[3] + lines[4]) == (2, 3, False)
