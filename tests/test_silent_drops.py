"""Issue 9: no NaN or inf from finite input, valid JSON, no silent drops, clear errors."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ef._validate import check_finite_number, check_id, check_positive_int
from ef.evaluation import (
    average_precision,
    dcg_at_k,
    evaluate_run,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

HUGE = {"d1": 1e308, "d2": 1e308, "d3": 1e308}
PER_QUERY = [ndcg_at_k, dcg_at_k, recall_at_k, precision_at_k, reciprocal_rank, average_precision]


# --- the shared validator -------------------------------------------------------------------


def test_check_positive_int_accepts_numpy_integers_and_names_the_argument() -> None:
    assert check_positive_int(np.int64(5), "k") == 5
    assert type(check_positive_int(np.int64(5), "k")) is int
    with pytest.raises(ValueError, match=r"^'k' must be a positive integer \(got 0\)$"):
        check_positive_int(0, "k")
    with pytest.raises(TypeError, match=r"^'limit' must be a positive integer \(got True\)$"):
        check_positive_int(True, "limit")
    with pytest.raises(TypeError, match=r"^'k' must be a positive integer \(got '5'\)$"):
        check_positive_int("5", "k")


def test_check_finite_number_and_check_id() -> None:
    assert check_finite_number(np.float32(0.5), "x") == 0.5
    with pytest.raises(TypeError, match=r"^'x' must be a finite number \(got np.True_\)$"):
        check_finite_number(np.True_, "x")
    with pytest.raises(ValueError, match=r"^'x' must be a finite number \(got inf\)$"):
        check_finite_number(math.inf, "x")
    with pytest.raises(TypeError, match=r"^'ranked' must hold str ids \(got 1\)$"):
        check_id(1, "ranked")


# --- overflow: three grades of 1e308 ----------------------------------------------------------


def test_ndcg_at_k_of_huge_grades_is_the_scale_free_value() -> None:
    # Equal grades: NDCG does not depend on their size. The unscaled sum would be inf / inf = NaN.
    value = ndcg_at_k(["d1", "d2", "x"], HUGE, 10)
    assert value == pytest.approx(ndcg_at_k(["d1", "d2", "x"], {"d1": 1, "d2": 1, "d3": 1}, 10), rel=1e-15)
    assert value == pytest.approx((1 + 1 / math.log2(3)) / (1 + 1 / math.log2(3) + 0.5), rel=1e-15)
    assert ndcg_at_k(["d1", "d2", "d3"], HUGE, 10) == 1.0


def test_ndcg_scaling_keeps_ordinary_values_to_the_last_bit() -> None:
    grades = {"a": 3.0, "b": 1.0, "c": 2.0, "d": 0.0}
    ranked = ["b", "x", "c", "a"]
    dcg = 1.0 / math.log2(2) + 2.0 / math.log2(4) + 3.0 / math.log2(5)
    ideal = 3.0 / math.log2(2) + 2.0 / math.log2(3) + 1.0 / math.log2(4)
    assert ndcg_at_k(ranked, grades, 10) == dcg / ideal


def test_dcg_at_k_that_overflows_is_refused() -> None:
    message = (
        r"^the DCG of these 'relevant' grades \(up to 1e\+308\) is larger than a float can hold; "
        r"ndcg_at_k, which does not depend on the scale of the grades, still scores them$"
    )
    with pytest.raises(ValueError, match=message):
        dcg_at_k(["d1", "d2", "d3"], HUGE, 3)


def test_float32_grades_give_python_floats() -> None:
    grades = {"d1": np.float32(2.0), "d2": np.float32(1.0)}
    for fn in PER_QUERY:
        assert type(fn(["d2", "d1"], grades, 2)) is float
    # computed in doubles, not float32
    assert ndcg_at_k(["d2", "d1"], grades, 2) == ndcg_at_k(["d2", "d1"], {"d1": 2.0, "d2": 1.0}, 2)


def test_evaluate_run_of_huge_grades_is_finite() -> None:
    run = {"q1": {"d1": 3.0, "d2": 2.0, "x": 1.0}}
    report = evaluate_run(run, {"q1": HUGE}, ["ndcg", "ndcg@2", "ndcg@10"])
    expected = ndcg_at_k(["d1", "d2", "x"], HUGE, 10)
    assert report.per_query["q1"] == {"ndcg": expected, "ndcg@2": 1.0, "ndcg@10": expected}
    assert report.metrics["ndcg"] == expected


def test_evaluate_run_ndcg_is_unchanged_for_ordinary_grades() -> None:
    run = {"q1": {"a": 0.4, "b": 0.9, "x": 0.5, "c": 0.1}}
    qrels = {"q1": {"a": 3, "b": 1, "c": 2, "d": 0}}
    ranked = ["b", "x", "a", "c"]
    assert evaluate_run(run, qrels, ["ndcg@10"]).metrics["ndcg@10"] == ndcg_at_k(ranked, qrels["q1"], 10)


def test_evaluate_run_scaling_leaves_other_queries_bit_identical() -> None:
    # One query with huge grades switches the table to scaled gains; the ordinary query's NDCG
    # must be the one it gets alone (scaling by a power of two is exact).
    run = {"q1": {"d1": 3.0, "d2": 2.0, "x": 1.0}, "q2": {"a": 0.4, "b": 0.9, "x": 0.5, "c": 0.1}}
    ordinary = {"a": 3, "b": 1, "c": 2, "d": 0}
    together = evaluate_run(run, {"q1": HUGE, "q2": ordinary}, ["ndcg", "ndcg@3"]).per_query["q2"]
    alone = evaluate_run({"q2": run["q2"]}, {"q2": ordinary}, ["ndcg", "ndcg@3"]).per_query["q2"]
    assert together == alone


def _ef(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ef", *args], capture_output=True, text=True, check=False)


def test_ef_trec_eval_of_huge_beir_grades_prints_finite_numbers_and_valid_json(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1e308\nq1\td2\t1e308\nq1\td3\t1e308\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 x 3 1.0 r\n")
    done = _ef("trec-eval", "-m", "ndcg", "-m", "ndcg_cut.10", str(qrels), str(run))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ndcg                  \tall\t0.7654\nndcg_cut_10           \tall\t0.7654\n"
    done = _ef("trec-eval", "-m", "ndcg", "--json", str(qrels), str(run))
    assert json.loads(done.stdout)["measures"] == {"ndcg": ndcg_at_k(["d1", "d2", "x"], HUGE, 10)}


def test_ef_trec_eval_agrees_with_trec_eval_on_large_integer_grades(tmp_path: Path) -> None:
    # trec_eval 10.0 prints 0.7654 for three grades of 1000 (checked with the binary built from
    # ../shared/tools/trec_eval-10.0); it cannot score grades near 1e18 at all ("Can't calculate").
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1000\nq1 0 d2 1000\nq1 0 d3 1000\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 x 3 1.0 r\n")
    done = _ef("trec-eval", "-m", "ndcg", "-m", "ndcg_cut.10", str(qrels), str(run))
    assert done.stdout == "ndcg                  \tall\t0.7654\nndcg_cut_10           \tall\t0.7654\n"


# --- evaluate_retrieval: nothing skipped or accepted silently ---------------------------------

QRELS = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0}}
QUERIES = {"q1": "one", "q2": "two"}


def _ids(query: str, *, limit: int = 10) -> list[str]:
    return {"one": ["d1", "x", "d2"], "two": ["d3"]}[query][:limit]


def test_metrics_as_a_generator_is_read_once() -> None:
    from ef.evaluation import evaluate_retrieval

    report = evaluate_retrieval(_ids, QRELS, QUERIES, k_values=(1,), metrics=(m for m in ["ndcg", "mrr"]))
    assert report.metrics == {"ndcg@1": 1.0, "mrr@1": 1.0}


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"metrics": "ndcg"}, TypeError, "'metrics' must be a sequence of metric names such as ('ndcg', 'recall') "
                                         "(got 'ndcg')"),
        ({"metrics": iter(())}, ValueError, "'metrics' must name at least one metric"),
        ({"metrics": ["ndcg", "mrr", "ndcg"]}, ValueError,
         "'metrics' names 'ndcg' more than once (got ('ndcg', 'mrr', 'ndcg'))"),
        ({"k_values": np.int64(5)}, TypeError, "'k_values' must be a non-empty sequence of positive integers (got "
                                               "np.int64(5))"),
        ({"k_values": (1, 2.0)}, TypeError, "'k_values' must be a positive integer (got 2.0)"),
        ({"limit": 0}, ValueError, "'limit' must be a positive integer (got 0)"),
    ],
)
def test_bad_options_are_named(options: dict[str, object], error: type[Exception], message: str) -> None:
    from ef.evaluation import evaluate_retrieval

    with pytest.raises(error) as info:
        evaluate_retrieval(_ids, QRELS, QUERIES, **{"k_values": (1,), **options})  # type: ignore[arg-type]
    assert str(info.value) == message


def test_numpy_integers_work_as_k_values_and_limit() -> None:
    from ef.evaluation import evaluate_retrieval

    report = evaluate_retrieval(_ids, QRELS, QUERIES, k_values=np.array([1, 3]), limit=np.int64(3))
    assert report.k_values == (1, 3)
    assert [type(k) for k in report.k_values] == [int, int]
    assert report.metrics["recall@3"] == 1.0


@pytest.mark.parametrize(
    ("qrels", "queries", "error", "message"),
    [
        ({"q1": {"d1": math.nan, "d2": math.nan}, "q2": {"d3": 1.0}}, QUERIES, ValueError,
         "'qrels'['q1']['d1'] must be a finite number (got nan)"),
        ({"q1": {"d1": np.bool_(True)}}, QUERIES, ValueError, "'qrels'['q1']['d1'] must be a finite number (got "
                                                               "np.True_)"),
        ({1: {"d1": 1.0}}, {1: "one"}, TypeError, "'qrels' must be keyed by str query ids (got 1)"),
        ({"q1": {b"d1": 1.0}}, QUERIES, TypeError, "'qrels'['q1'] must be keyed by str doc ids (got b'd1')"),
        ({"q1": ["d1"]}, QUERIES, TypeError, "'qrels'['q1'] must be a mapping {doc_id: grade} (got list)"),
        (QRELS, {"q1": None}, TypeError, "'queries'['q1'] must be a str (got NoneType)"),
        (QRELS, ["one", "two"], TypeError, "'queries' must be a mapping {query_id: text} (got list)"),
    ],
)
def test_bad_judgements_are_errors_not_skips(qrels: object, queries: object, error: type[Exception],
                                             message: str) -> None:
    from ef.evaluation import evaluate_retrieval

    with pytest.raises(error) as info:
        evaluate_retrieval(_ids, qrels, queries, k_values=(1,))  # type: ignore[arg-type]
    assert str(info.value) == message


def test_judged_queries_without_text_are_reported() -> None:
    from ef.evaluation import evaluate_retrieval

    qrels = {**QRELS, "q9": {"d9": 1.0}, "q8": {"d8": 0.0}}  # q8 has no positive judgement: not counted
    report = evaluate_retrieval(_ids, qrels, QUERIES, k_values=(1,), metrics=("mrr",))
    assert report.n_queries == 2
    assert report.missing_texts == ("q9",)
    assert report.to_dict()["n_missing_texts"] == 1
    assert report.to_dict()["missing_texts"] == ["q9"]
    assert str(report).splitlines()[0] == (
        "Retrieval evaluation over 2 queries (1 judged query had no text and was not scored)"
    )
    with pytest.raises(ValueError) as info:
        evaluate_retrieval(_ids, {"q9": {"d9": 1.0}}, QUERIES, k_values=(1,))
    assert str(info.value) == (
        "no query can be scored: no query in 'qrels' has a positive judgement and a text in 'queries' "
        "(1 judged query has no text, e.g. 'q9')"
    )


def test_ef_eval_reports_judged_queries_without_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "", "text": "alpha beta"}\n{"_id": "d2", "title": "", "text": "gamma delta"}\n'
    )
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n')
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td2\t1\n")
    report_path = tmp_path / "report.json"
    status = main(["eval", str(tmp_path), "--quiet", "--k", "1", "--json", str(report_path)])
    captured = capsys.readouterr()
    assert status == 0
    assert captured.err.splitlines()[-1] == (
        f"ef eval: warning: 2 judged queries have no text in {tmp_path / 'queries.jsonl'} and were not scored "
        "(first: 'q2')"
    )
    report = json.loads(report_path.read_text())
    assert (report["n_queries"], report["n_missing_texts"], report["missing_texts"]) == (1, 2, ["q2", "q3"])


# --- run_path: the retriever's own scores ----------------------------------------------------


def test_run_path_writes_the_retrievers_tied_scores(tmp_path: Path) -> None:
    from ef.evaluation import evaluate_retrieval
    from ef.segments import Segment
    from ef.source_manager import SearchHit
    from ef.trec import read_run

    def hit(doc: str, score: float, rank: int) -> SearchHit:
        return SearchHit(Segment(doc, 0, doc, 0, len(doc)), score, rank)

    def tied(query: str, *, limit: int = 10) -> list[SearchHit]:
        return [hit("d2", 7.5, 1), hit("d1", 7.5, 2), hit("x", 1.25, 3)][:limit]

    path = tmp_path / "run.trec"
    evaluate_retrieval(tied, QRELS, QUERIES, k_values=(3,), run_path=path)
    assert read_run(path) == {"q1": {"d2": 7.5, "d1": 7.5, "x": 1.25}, "q2": {"d2": 7.5, "d1": 7.5, "x": 1.25}}
    # TREC order: ties by doc id descending, the scores as given
    assert path.read_text().splitlines()[:3] == ["q1 Q0 d2 1 7.5 ef", "q1 Q0 d1 2 7.5 ef", "q1 Q0 x 3 1.25 ef"]


def test_run_path_refuses_mixed_scored_and_unscored_results(tmp_path: Path) -> None:
    from ef.evaluation import evaluate_retrieval
    from ef.segments import Segment
    from ef.source_manager import SearchHit

    def mixed(query: str, *, limit: int = 10) -> list[object]:
        return [SearchHit(Segment("d1", 0, "t", 0, 1), 2.0, 1), "d2"]

    with pytest.raises(ValueError) as info:
        evaluate_retrieval(mixed, QRELS, QUERIES, k_values=(2,), run_path=tmp_path / "r")
    assert str(info.value) == (
        "cannot write 'run_path': the retriever returned scored and unscored results for query 'q1'; "
        "return all SearchHits or none"
    )
    assert not (tmp_path / "r").exists()


def test_scifact_like_ties_keep_their_scores_through_ef_eval(tmp_path: Path) -> None:
    # The demo dataset's BM25 ranking has tied scores, as 67 of SciFact's 300 queries do.
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.source_manager import ingest
    from ef.trec import read_run

    path = tmp_path / "run.trec"
    done = _ef("eval", "--quiet", "--k", "10", "--run-out", str(path))
    assert done.returncode == 0, done.stderr
    corpus, queries, _ = read_beir(demo_dataset())
    index = ingest(corpus, show_progress=False)
    run = read_run(path)
    tied = 0
    for query_id, docs in run.items():
        hits = index.search(queries[query_id], limit=10)
        expected: dict[str, float] = {}
        for h in hits:
            expected.setdefault(h.segment.source_id, h.score)
        assert docs == expected
        tied += len(set(expected.values())) < len(expected)
    assert tied > 0  # the case that used to get made-up scores is exercised


# --- a saved index stays inside its folder; damage is one line from the CLI -------------------


@pytest.fixture(scope="module")
def saved_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ef.source_manager import ingest

    root = tmp_path_factory.mktemp("index") / "idx"
    ingest({"d1": "alpha beta", "d2": "gamma alpha", "d3": "delta"}, show_progress=False).save(root)
    return root


def _copy(saved: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "idx"
    shutil.copytree(saved, target)
    return target


@pytest.mark.parametrize("name", ["/etc/hostname", "../outside", "bm25/../../outside"])
def test_a_manifest_naming_a_file_outside_the_index_is_refused(saved_index: Path, tmp_path: Path, name: str) -> None:
    from ef.source_manager import SearchableCorpus

    root = _copy(saved_index, tmp_path)
    (tmp_path / "outside").write_text("secret")
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"][name] = 6
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError) as info:
        SearchableCorpus.load(root)
    assert str(info.value) == (
        f"{root / 'manifest.json'}: file {name!r} lies outside the index folder {root}; "
        "the index is damaged: delete the directory and build it again"
    )


def test_a_symlink_out_of_the_index_folder_is_refused(saved_index: Path, tmp_path: Path) -> None:
    from ef.source_manager import SearchableCorpus

    root = _copy(saved_index, tmp_path)
    (root / "sources.jsonl").rename(tmp_path / "sources.jsonl")
    (root / "sources.jsonl").symlink_to(tmp_path / "sources.jsonl")
    with pytest.raises(ValueError, match=r"file 'sources.jsonl' lies outside the index folder"):
        SearchableCorpus.load(root)
    (root / "sources.jsonl").unlink()
    (tmp_path / "sources.jsonl").rename(root / "sources.jsonl")
    (root / "extra").symlink_to("/etc")  # not in the manifest, still a way out
    with pytest.raises(ValueError) as info:
        SearchableCorpus.load(root)
    assert str(info.value) == (
        f"{root / 'manifest.json'}: {root / 'extra'} is a symbolic link out of the index folder {root}; "
        "the index is damaged: delete the directory and build it again"
    )


def _resize(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {name: (root / name).stat().st_size for name in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda r: (r / "sources.jsonl").write_text('{"_id": 1, "text": "x"}\n'),
         "sources.jsonl:1: a source record needs a new str '_id' and a str 'text'"),
        (lambda r: (r / "sources.jsonl").write_bytes(b"\xff\n"),
         "sources.jsonl:1: not valid UTF-8 (invalid start byte)"),
        (lambda r: (r / "bm25" / "vocab.index.json").write_text("[1, 2]"),
         "bm25: cannot read the bm25 index (AttributeError: 'list' object has no attribute 'values')"),
        (lambda r: (r / "bm25" / "params.index.json").write_text("{}"), "bm25: the document count is None"),
        (lambda r: np.save(r / "bm25" / "indptr.csc.index.npy", np.array([9, 1, 0, 0])),
         "bm25: the score matrix's column pointers do not fit its data"),
        (lambda r: np.save(r / "bm25" / "indices.csc.index.npy", np.array([0.5, 1.5])),
         "bm25: the score matrix's indices are not integers"),
        (lambda r: (r / "bm25" / "vocab.index.json").write_text('{"alpha": 0, "beta": 0}'),
         "bm25: the vocabulary's ids are not 0..1, each once"),
    ],
)
def test_a_damaged_index_is_one_line_from_the_cli(saved_index: Path, tmp_path: Path, damage: Any,
                                                  message: str) -> None:
    root = _copy(saved_index, tmp_path)
    damage(root)
    _resize(root)
    dataset = tmp_path / "data"
    (dataset / "qrels").mkdir(parents=True)
    (dataset / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                for d, t in {"d1": "alpha beta", "d2": "gamma alpha", "d3": "delta"}.items())
    )
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha"}\n')
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    done = _ef("eval", str(dataset), "--quiet", "--index-dir", str(root))
    assert done.returncode == 2
    assert done.stderr == (
        f"ef eval: error: {root}/{message}; the index is damaged: delete the directory and build it again\n"
    )


# --- Ragas: offline, complete extra, DataFrame round trips -------------------------------------


def test_as_ragas_dataset_turns_telemetry_off_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ragas")
    from ef.evaluation import as_ragas_dataset

    sample = {"user_input": "q?", "response": "a", "reference": "a"}
    monkeypatch.delenv("RAGAS_DO_NOT_TRACK", raising=False)
    import ragas._analytics as analytics

    analytics.do_not_track.cache_clear()
    assert analytics.do_not_track() is False  # cached: ragas would keep tracking
    as_ragas_dataset([sample])
    assert os.environ["RAGAS_DO_NOT_TRACK"] == "true"
    assert analytics.do_not_track() is True
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "false")
    analytics.do_not_track.cache_clear()
    as_ragas_dataset([sample])
    assert os.environ["RAGAS_DO_NOT_TRACK"] == "false"
    assert analytics.do_not_track() is False
    analytics.do_not_track.cache_clear()


def test_ragas_non_llm_metrics_run_with_the_extra() -> None:
    pytest.importorskip("ragas")
    from ragas import evaluate
    from ragas.metrics import BleuScore, NonLLMStringSimilarity, RougeScore

    from ef.evaluation import as_ragas_dataset

    text = "the cat sat on the mat"
    dataset = as_ragas_dataset([{"user_input": "q?", "response": text, "reference": text}])
    result = evaluate(dataset, metrics=[NonLLMStringSimilarity(), RougeScore(), BleuScore()], show_progress=False)
    scores = result.scores[0]
    assert scores["non_llm_string_similarity"] == 1.0
    assert scores["rouge_score(mode=fmeasure)"] == 1.0
    assert scores["bleu_score"] == pytest.approx(1.0)


def test_pyproject_ragas_extra_lists_the_non_llm_metric_dependencies() -> None:
    import tomllib

    extras = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["ragas"]
    names = {re.split(r"[<>=!~ \[]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in extras}
    assert {"rapidfuzz", "rouge-score", "sacrebleu"} <= names


def test_a_pandas_round_trip_marks_absent_fields_with_nan_and_they_are_absent() -> None:
    pd = pytest.importorskip("pandas")
    from ef.evaluation import evaluate_rag

    samples = [
        {"user_input": "capital of France?", "response": "Paris", "reference": "Paris",
         "retrieved_contexts": ["Paris is the capital of France."]},
        {"user_input": "2 + 2?", "response": "four"},
    ]
    records = pd.DataFrame(samples).to_dict("records")
    assert math.isnan(records[1]["reference"])  # what pandas gives back
    report = evaluate_rag(records)
    assert report.metrics == evaluate_rag(samples).metrics
    assert report.coverage == {"exact_match": 1, "token_f1": 1, "context_recall": 1, "context_precision": 1,
                               "non_empty_rate": 2}  # every sample: the NaN retrieved_contexts retrieved none
    with_na = [{**samples[1], "reference": pd.NA}, {**samples[0], "retrieved_contexts": np.array(["Paris."])}]
    assert evaluate_rag(with_na).coverage["exact_match"] == 1
    with pytest.raises(TypeError, match=r"^samples\[0\]\['reference'\] must be a str \(got float\)$"):
        evaluate_rag([{**samples[1], "reference": 2.5}])  # a real number is still not text


def test_as_ragas_dataset_accepts_a_pandas_round_trip() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("ragas")
    from ef.evaluation import as_ragas_dataset

    samples = [{"user_input": "a?", "response": "x", "reference": "x"}, {"user_input": "b?", "response": "y"}]
    dataset = as_ragas_dataset(pd.DataFrame(samples).to_dict("records"))
    assert [s.reference for s in dataset.samples] == ["x", None]


# --- probed: unclear errors turned into named ones; numpy integers accepted --------------------


def test_a_grade_too_large_for_a_float_is_named_not_an_overflow_error() -> None:
    for fn in PER_QUERY:
        with pytest.raises(ValueError, match=r"^'relevant' grade of doc id 'd1' must be a finite number \(got 1000"):
            fn(["d1"], {"d1": 10**400}, 1)


def test_a_set_or_none_as_ranking_is_a_type_error_naming_ranked() -> None:
    for fn in PER_QUERY:
        with pytest.raises(TypeError, match=r"^'ranked' must be a sequence of doc ids, best first \(got set\)$"):
            fn({"d1", "d2"}, {"d1": 1.0}, 2)
        with pytest.raises(TypeError, match=r"^'ranked' must hold str doc ids \(got b'd1'\)$"):
            fn([b"d1"], {"d1": 1.0}, 2)
        with pytest.raises(TypeError, match=r"^'relevant' must be keyed by str doc ids \(got 1\)$"):
            fn(["d1"], {1: 1.0}, 2)
        with pytest.raises(TypeError, match=r"^'ranked' must hold str doc ids \(got None\)$"):
            fn([None], {"d1": 1.0}, 2)
    # a numpy array of ids and a generator are read once, in order
    assert ndcg_at_k(np.array(["x", "d1"]), {"d1": 1.0}, 2) == ndcg_at_k(["x", "d1"], {"d1": 1.0}, 2)
    assert recall_at_k((d for d in ["d1"]), {"d1": 1.0}, np.int64(1)) == 1.0


def test_metric_names_must_be_str() -> None:
    from ef.evaluation import evaluate_rag, evaluate_retrieval

    with pytest.raises(TypeError, match=r"^'metrics' must hold metric names as str \(got \['ndcg'\]\)$"):
        evaluate_retrieval(_ids, QRELS, QUERIES, metrics=[["ndcg"]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^'metrics' must hold metric names as str \(got 1\)$"):
        evaluate_rag([{"user_input": "a"}], metrics=[1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"^'metrics' must be a sequence of metric names, not a single NoneType"):
        evaluate_rag([{"user_input": "a"}], metrics=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'samples' must be an iterable of samples .*\(got NoneType\)$"):
        evaluate_rag(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("returned", [None, (r for r in [["d1"]])])
def test_search_many_returning_odd_things(returned: object) -> None:
    from ef.evaluation import evaluate_retrieval

    class Batch:
        def search_many(self, queries: list[str], *, limit: int) -> object:
            return returned

    if returned is None:
        with pytest.raises(TypeError) as info:
            evaluate_retrieval(Batch(), {"q1": {"d1": 1.0}}, {"q1": "one"}, k_values=(1,))
        assert str(info.value) == "retriever.search_many returned a NoneType; expected one result list per query"
    else:  # a generator of result lists is read once
        report = evaluate_retrieval(Batch(), {"q1": {"d1": 1.0}}, {"q1": "one"}, k_values=(1,))
        assert report.metrics["ndcg@1"] == 1.0


def test_reports_refuse_what_they_could_not_print_or_write() -> None:
    from ef.evaluation import RagEvalReport, RetrievalEvalReport

    keys = r"^'metrics' must map '<metric>@<k>' keys to finite numbers "
    with pytest.raises(ValueError, match=keys + r"\(got 'ndcg@1': nan\)$"):
        RetrievalEvalReport({"ndcg@1": math.nan}, {}, 1, (1,))
    with pytest.raises(ValueError, match=keys + r"\(got 1: 0.5\)$"):
        RetrievalEvalReport({1: 0.5}, {}, 1, (1,))  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=r"^'k_values' must be a sequence of positive integers \(got 10\)$"):
        RetrievalEvalReport({"ndcg@10": 0.5}, {}, 1, 10)  # type: ignore[arg-type]
    assert RetrievalEvalReport({"ndcg@10": 0.5}, {}, 1, [np.int64(10)]).k_values == (10,)  # type: ignore[list-item]
    names = r"^'metrics' must map str names to finite numbers "
    with pytest.raises(ValueError, match=names + r"\(got 'exact_match': nan\)$"):
        RagEvalReport({"exact_match": math.nan}, {"exact_match": 1}, 1)
    with pytest.raises(TypeError, match=r"^'metrics' must be a mapping of metric name to value \(got NoneType\)$"):
        RagEvalReport(None, {}, 1)  # type: ignore[arg-type]


def test_source_manager_accepts_numpy_limits_and_names_bad_input() -> None:
    from ef.segments import Segment
    from ef.source_manager import SearchHit, ingest
    from fastrag.adapters import CorpusRetriever, hit_to_chunk

    index = ingest({"d1": "alpha beta", "d2": "gamma alpha"}, show_progress=False)
    assert [h.rank for h in index.search("alpha", limit=np.int64(1))] == [1]
    assert ingest({"d1": "alpha"}, batch_size=np.int64(4), show_progress=False).search("alpha")[0].rank == 1
    with pytest.raises(TypeError, match=r"^'batch_size' must be a positive integer \(got True\)$"):
        ingest({"d1": "alpha"}, batch_size=True, show_progress=False)
    assert len(index.search_many(["alpha"], limit=np.int64(2))[0]) == 2
    with pytest.raises(TypeError, match=r"^'limit' must be a positive integer \(got 2.0\)$"):
        index.search("alpha", limit=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'corpus' must be a mapping \{doc_id: text\} or an iterable of "
                                        r"\(doc_id, text\) pairs \(got NoneType\)$"):
        ingest(None, show_progress=False)  # type: ignore[arg-type]
    hit = SearchHit(Segment("d1", 0, "x", 0, 1), np.float32(0.5), np.int64(2))  # type: ignore[arg-type]
    assert (type(hit.score), type(hit.rank)) == (float, int)
    assert [c.source_uri for c in CorpusRetriever(index).retrieve("alpha", np.int64(1))] == ["d1"]  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'hit' must be an ef SearchHit \(got None\)$"):
        hit_to_chunk(None)  # type: ignore[arg-type]


def test_fastrag_values_accept_numpy_numbers() -> None:
    from fastrag.benchmark import DistributionSummary, QueryOutcome
    from fastrag.documents import Chunk, chunk_text

    chunk = Chunk("p", np.int64(2), "x")  # type: ignore[arg-type]
    assert type(chunk.chunk_index) is int
    assert chunk.id == Chunk("p", 2, "x").id
    assert [c.content for c in chunk_text("p", "ab cd", size=np.int64(3), overlap=np.int64(0))] == ["ab ", "cd"]
    outcome = QueryOutcome("q", "x", latency_ms=np.float32(1.5), total_tokens=np.int64(3), cost_usd=np.float64(0.25))
    assert json.loads(json.dumps(outcome.to_dict()))["total_tokens"] == 3
    assert (type(outcome.latency_ms), type(outcome.total_tokens)) == (float, int)
    with pytest.raises(ValueError, match=r"^'latency_ms' must be a finite number >= 0 \(got 1000"):
        QueryOutcome("q", "x", latency_ms=10**400)
    summary = DistributionSummary.from_scores(s for s in [np.float32(0.5), None, 1.0])
    assert (summary.count, summary.missing, summary.mean) == (2, 1, 0.75)
    with pytest.raises(ValueError, match=r"^'scores'\[0\] must be finite \(got 1000"):
        DistributionSummary.from_scores([10**400])
    with pytest.raises(TypeError, match=r"^'scores' must be a sequence of floats or None \(got NoneType\)$"):
        DistributionSummary.from_scores(None)  # type: ignore[arg-type]


def test_harness_timeout_accepts_numpy_and_result_checks_summaries() -> None:
    from fastrag.benchmark import BenchmarkResult, EvalSample, QueryOutcome, run_benchmark_sync
    from fastrag.benchmark.metrics import Recall
    from fastrag.documents import Chunk

    class One:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return [Chunk("p", 0, "x")]

    result = run_benchmark_sync(One(), [EvalSample("q", "x", ["p"])], [Recall(key="source_uri")],
                                timeout_s=np.float32(5), show_progress=False)
    assert result.summary["recall@5[source_uri]"].mean == 1.0
    with pytest.raises(TypeError, match=r"^'summary'\['a'\] must be a DistributionSummary \(got float\)$"):
        BenchmarkResult({"a": 1.0}, (QueryOutcome("q", "x"),), {"a": (1.0,)})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("measure", "grades"),
    [("dcg", "1e308"), ("ideal_dcg", "1e308"), ("ndcg_exp", "2000")],
)
def test_a_measure_that_overflows_is_refused_not_printed_as_inf(tmp_path: Path, measure: str, grades: str) -> None:
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q1\td{i}\t{grades}\n" for i in (1, 2, 3)))
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\n")
    done = _ef("trec-eval", "-m", measure, str(qrels), str(run))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        f"ef trec-eval: error: measure {measure!r}: a query's value is larger than a float can hold "
        "(its grades are too large for this gain); no finite number can be reported\n"
    )


def test_ratio_measures_of_huge_grades_are_finite(tmp_path: Path) -> None:
    report = evaluate_run({"q1": {"d1": 3.0, "d2": 2.0, "x": 1.0}}, {"q1": HUGE}, ["ndcg_rel", "Rndcg", "ndcg"])
    assert report.per_query["q1"]["Rndcg"] == ndcg_at_k(["d1", "d2", "x"], HUGE, 3)
    assert all(math.isfinite(v) for v in report.per_query["q1"].values())
    equal = evaluate_run({"q1": {"d1": 3.0, "d2": 2.0, "x": 1.0}}, {"q1": {"d1": 1, "d2": 1, "d3": 1}},
                         ["ndcg_rel", "Rndcg"])
    assert report.per_query["q1"]["ndcg_rel"] == pytest.approx(equal.per_query["q1"]["ndcg_rel"], rel=1e-15)


def test_every_json_dump_in_the_product_refuses_nan() -> None:
    # Python's json writes NaN and Infinity, which are not JSON; every dump in src/ must say allow_nan=False.
    import ast

    root = Path(__file__).parents[1] / "src"
    offenders = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("dump", "dumps")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "json"
            ):
                flags = {k.arg: k.value for k in node.keywords}
                value = flags.get("allow_nan")
                if not (isinstance(value, ast.Constant) and value.value is False):
                    # A dump of a constant that cannot hold a float is harmless.
                    if node.args and isinstance(node.args[0], ast.Dict) and all(
                        isinstance(v, ast.Constant) and not isinstance(v.value, float) for v in node.args[0].values
                    ):
                        continue
                    offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


@pytest.mark.slow
def test_a_nan_embedding_names_the_file(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from ef.source_manager import SearchableCorpus, ingest

    root = tmp_path / "dense"
    ingest({"d1": "a cat", "d2": "a dog"}, embedder="st:all-MiniLM-L6-v2", device="cpu",
           show_progress=False).save(root)
    np.save(root / "embeddings.npy", np.full((2, 384), np.nan, dtype=np.float32))
    _resize(root)
    with pytest.raises(ValueError) as info:
        SearchableCorpus.load(root, device="cpu")
    assert str(info.value) == (
        f"{root / 'embeddings.npy'}: an embedding holds NaN or infinity; "
        "the index is damaged: delete the directory and build it again"
    )


def test_source_manager_add_names_its_own_arguments() -> None:
    from ef.source_manager import SourceManager

    manager = SourceManager(show_progress=False)
    with pytest.raises(TypeError, match=r"^'source_id' must be a non-empty str \(got 1\)$"):
        manager.add(1, "x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^'source_id' must be a non-empty str \(got ''\)$"):
        manager.add("", "x")
    with pytest.raises(TypeError, match=r"^'text' must be a str \(got None\)$"):
        manager.add("a", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'sources' item 0 must be a \(doc_id, text\) pair \(got 'ab'\)$"):
        manager.add_many(["ab"])  # type: ignore[list-item]
    assert manager.source_ids == ()
