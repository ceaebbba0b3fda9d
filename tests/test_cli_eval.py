"""`ef eval`: the main job, on the bundled demo dataset and on small hand-made datasets."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from ef.cli import main
from ef.cli.eval import DEMO_DATASET
from ef.evaluation import evaluate_retrieval, read_beir
from ef.source_manager import ingest
from ef.trec import read_run

DEMO_TABLE = """\
Retrieval evaluation over 27 queries
metric         @1      @3      @5     @10    @100
---------  ------  ------  ------  ------  ------
ndcg       0.8519  0.7715  0.7984  0.8078  0.8153
recall     0.4877  0.6667  0.7346  0.7716  0.8086
precision  0.8889  0.4198  0.2815  0.1481  0.0156
mrr        0.8889  0.9074  0.9148  0.9148  0.9148
map        0.4877  0.6409  0.6687  0.6793  0.6852
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["eval", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_demo_dataset_is_bundled_and_judged_as_documented() -> None:
    corpus, queries, qrels = read_beir(DEMO_DATASET)
    assert (len(corpus), len(queries), len(qrels)) == (100, 27, 27)
    grades = {grade for judged in qrels.values() for grade in judged.values()}
    assert grades == {1.0, 2.0}
    assert all(any(g == 2 for g in judged.values()) for judged in qrels.values())


def test_without_a_dataset_it_evaluates_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--quiet")
    assert status == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == (
        "the demo dataset, split test: 100 documents (100 segments), 27 queries scored; "
        "embedder bm25; index built"
    )
    assert "\n".join(lines[1:9]) + "\n" == DEMO_TABLE
    assert lines[9:12] == ["", "stage         seconds", "------------  -------"]
    assert [line.split()[0] for line in lines[12:]] == ["read", "build", "retrieve", "score", "total"]
    assert all(re.fullmatch(r"[a-z ]+ +\d+\.\d\d", line) for line in lines[12:])


def test_the_numbers_are_evaluate_retrievals(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, _ = run(capsys, "--quiet", "--k", "10,1", "--metrics", "ndcg,recall", "--json",
                       str(tmp_path / "r.json"))
    corpus, queries, qrels = read_beir(DEMO_DATASET)
    expected = evaluate_retrieval(ingest(corpus, show_progress=False), qrels, queries, k_values=(1, 10),
                                  metrics=("ndcg", "recall"))
    report = json.loads((tmp_path / "r.json").read_text())
    assert status == 0
    assert report["metrics"] == dict(expected.metrics)
    assert report["per_query"] == {q: dict(v) for q, v in expected.per_query.items()}
    assert (report["dataset"], report["split"], report["embedder"]) == (str(DEMO_DATASET), "test", "bm25")
    assert (report["n_documents"], report["n_segments"], report["n_queries"], report["k_values"]) == (
        100, 100, 27, [1, 10])
    assert set(report["seconds"]) == {"read dataset", "build index", "retrieve", "score", "total"}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # written atomically, nothing left over


def test_run_out_writes_the_rankings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, _ = run(capsys, "--quiet", "--k", "5", "--run-out", str(tmp_path / "run.trec"))
    run_file = read_run(tmp_path / "run.trec")
    corpus, queries, _ = read_beir(DEMO_DATASET)
    index = ingest(corpus, show_progress=False)
    assert status == 0
    assert len(run_file) == 27
    for query_id, docs in run_file.items():
        hits = index.search(queries[query_id], limit=5)
        # the retriever's own scores, ties included (issue 9: never n - rank stand-ins for SearchHits)
        assert docs == {hit.segment.source_id: hit.score for hit in hits}


@pytest.mark.parametrize("flag", ["--json", "--run-out"])
@pytest.mark.parametrize(
    ("make", "path", "message"),
    [
        (None, "{tmp}/missing/out", "{flag} {tmp}/missing/out: directory {tmp}/missing does not exist"),
        (lambda t: (t / "file").write_text(""), "{tmp}/file/out",
         "{flag} {tmp}/file/out: {tmp}/file is not a directory"),
        (lambda t: (t / "out").mkdir(), "{tmp}/out", "{flag} {tmp}/out is a directory"),
    ],
)
def test_an_unwritable_output_path_fails_before_any_work(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    flag: str, make: object, path: str, message: str,
) -> None:
    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the dataset was read before the output path was checked")

    monkeypatch.setattr("ef.evaluation.read_beir", no_reading)
    if make is not None:
        make(tmp_path)  # type: ignore[operator]
    status, out, err = run(capsys, "--quiet", flag, path.format(tmp=tmp_path))
    assert (status, out) == (2, "")
    assert err == f"ef eval: error: {message.format(tmp=tmp_path, flag=flag)}\n"


def test_written_files_get_the_usual_permissions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        status, _, _ = run(capsys, "--quiet", "--k", "1", "--json", str(tmp_path / "r.json"))
    finally:
        os.umask(previous)
    assert status == 0
    assert stat.S_IMODE((tmp_path / "r.json").stat().st_mode) == 0o644  # as open() makes it, not mkstemp's 0o600


def test_a_report_that_cannot_be_written_names_the_users_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ef.io._atomic

    def full_disk(target: str) -> object:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"{target}.1234.tmp")

    monkeypatch.setattr(ef.io._atomic, "create_temporary", full_disk)
    status, _, err = run(capsys, "--quiet", "--k", "1", "--json", str(tmp_path / "r.json"))
    assert status == 2
    assert err == f"ef eval: error: --json {tmp_path / 'r.json'}: cannot write the report (No space left on device)\n"
    assert list(tmp_path.iterdir()) == []


def test_a_run_that_cannot_be_written_names_the_users_path(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import ef.trec

    def full_disk(path: object, run: object, *, run_id: str = "ef") -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"{tmp_path}/.ef-1234.tmp")

    monkeypatch.setattr(ef.trec, "write_run", full_disk)
    status, _, err = run(capsys, "--quiet", "--k", "1", "--run-out", str(tmp_path / "run.trec"))
    assert status == 2
    assert err == f"ef eval: error: --run-out {tmp_path / 'run.trec'}: cannot write the run (No space left on device)\n"


def test_index_dir_caches_the_index(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = run(capsys, "--quiet", "--index-dir", str(cache))
    second = run(capsys, "--quiet", "--index-dir", str(cache))
    assert first[0] == second[0] == 0
    assert first[1].splitlines()[0].endswith(f"index built, saved to {cache}")
    assert second[1].splitlines()[0].endswith(f"index loaded from {cache}")
    assert first[1].splitlines()[1:9] == second[1].splitlines()[1:9]
    assert "load index" in second[1]
    status, _, err = run(capsys, "--quiet", "--index-dir", str(cache), "--embedder", "st:all-MiniLM-L6-v2")
    assert status == 2
    assert err == (f"ef eval: error: {cache} holds an index built with embedder 'bm25', not "
                   f"'st:all-MiniLM-L6-v2': use another directory or delete this one\n")


def test_index_dir_of_another_corpus_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ingest({"x": "something else"}, show_progress=False).save(tmp_path / "cache")
    status, _, err = run(capsys, "--quiet", "--index-dir", str(tmp_path / "cache"))
    assert status == 2
    assert err == (f"ef eval: error: --index-dir {tmp_path / 'cache'} holds an index of another corpus than "
                   f"the demo dataset: delete it or choose another directory\n")


def test_progress_bars_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys)
    assert status == 0
    # Off a terminal (captured), a start line and a summary line per stage and no "\r" redraws.
    lines = err.splitlines()
    assert "\r" not in err
    assert [line.split(" [")[0] for line in lines] == [
        "indexing (bm25): 0/100 started", "indexing (bm25): 100/100",
        "retrieving (bm25): 0/27 started", "retrieving (bm25): 27/27",
    ]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(DEMO_DATASET, root)
    return root


def test_a_dataset_directory_and_split(capsys: pytest.CaptureFixture[str], dataset: Path) -> None:
    (dataset / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq12\tspace-05\t1\n")
    status, out, _ = run(capsys, str(dataset), "--split", "dev", "--quiet", "--k", "1", "--metrics", "ndcg")
    assert status == 0
    assert out.splitlines()[0].startswith(f"{dataset}, split dev: 100 documents (100 segments), 1 queries scored")
    assert out.splitlines()[4] == "ndcg       1.0000"


def test_ignore_identical_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "argu"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        '{"_id": "a", "title": "", "text": "solar power"}\n{"_id": "b", "title": "", "text": "solar panels"}\n')
    (root / "queries.jsonl").write_text('{"_id": "a", "text": "solar power"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\na\tb\t1\n")
    args = (str(root), "--quiet", "--k", "1", "--metrics", "recall")
    assert run(capsys, *args)[1].splitlines()[4] == "recall     0.0000"
    assert run(capsys, *args, "--ignore-identical-ids")[1].splitlines()[4] == "recall     1.0000"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["{root}/missing"], "dataset directory {root}/missing does not exist"),
        (lambda d: (d / "corpus.jsonl").unlink(), ["{root}"], "corpus.jsonl"),
        (lambda d: (d / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{oops\n'), ["{root}"],
         "corpus.jsonl:2"),
        (None, ["{root}", "--split", "train"], "qrels/train.tsv"),
        (lambda d: (d / "corpus.jsonl").write_text(""), ["{root}"], "{root}/corpus.jsonl holds no documents"),
        (None, ["{root}", "--embedder", "tfidf"],
         "ef eval: error: --embedder must be 'bm25', 'st:<model name or directory>' "
         "or 'hybrid:st:<model name or directory>' (got 'tfidf')\n"),
        (None, ["{root}", "--batch-size", "0"], "--batch-size must be a positive integer (got 0)"),
    ],
)
def test_bad_input_is_one_line_naming_the_problem(
    capsys: pytest.CaptureFixture[str], dataset: Path, setup: object, args: list[str], message: str
) -> None:
    if setup is not None:
        setup(dataset)  # type: ignore[operator]
    status, out, err = run(capsys, "--quiet", *(a.format(root=dataset) for a in args))
    assert status == 2
    assert out == ""
    assert err.startswith("ef eval: error: ")
    assert err.count("\n") == 1
    assert message.format(root=dataset) in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--k", "1,x"], "argument --k: expected comma-separated positive integers such as 1,10,100 (got '1,x')"),
        (["--k", "0"], "argument --k: expected comma-separated positive integers"),
        (["--metrics", "ndcg,bleu"], "argument --metrics: unknown metric name(s) ['bleu']"),
    ],
)
def test_bad_flags_are_usage_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["eval", *args])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_dense_embedder_with_a_cached_index(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    (root / "qrels").mkdir(parents=True)
    docs = {"k": "A young cat naps on the couch.", "b": "The central bank raised borrowing costs.",
            "v": "Volcanoes erupt molten rock called lava."}
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items()))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "kitten sleeping on a sofa"}\n'
                                        '{"_id": "q2", "text": "interest rates went up"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tk\t2\nq2\tb\t1\n")
    args = (str(root), "--embedder", "st:all-MiniLM-L6-v2", "--device", "cpu", "--k", "1", "--metrics",
            "ndcg", "--index-dir", str(tmp_path / "cache"), "--quiet")
    first, second = run(capsys, *args), run(capsys, *args)
    assert first[0] == second[0] == 0
    assert first[1].splitlines()[0].endswith("embedder st:all-MiniLM-L6-v2; index built, saved to "
                                             f"{tmp_path / 'cache'}")
    assert second[1].splitlines()[0].endswith(f"index loaded from {tmp_path / 'cache'}")
    assert first[1].splitlines()[4] == second[1].splitlines()[4] == "ndcg       1.0000"


def test_run_out_names_the_flag_when_nothing_was_retrieved(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / "zebra"
    (dataset / "qrels").mkdir(parents=True)
    (dataset / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "apples and pears"}\n')
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "zebra"}\n')  # no word of the corpus
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    out = tmp_path / "x.run"
    status, _, err = run(capsys, str(dataset), "--run-out", str(out), "-q")
    assert status == 2
    assert err.splitlines()[-1] == (
        f"ef eval: error: cannot write --run-out {out}: no query retrieved any document, and a run file with no "
        "ranking line is one trec_eval, evaluate_run and ef trec-eval refuse to score (nothing was written)"
    )
    assert not out.exists()
