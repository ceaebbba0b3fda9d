"""Issue 10: one evaluation path, DataFrames in and out, the (qrels, run) argument-order trap."""

from __future__ import annotations

import ast
import importlib
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pandas as pd
import polars as pl
import pytest

from ef.evaluation import RETRIEVAL_METRICS, RagEvalReport, RunEvalReport, evaluate_retrieval, evaluate_run
from ef.evaluation.scoring import RunScores, load_run_and_qrels, score_run
from ef.io.frames import long_frame, qrels_from_frame, run_from_frame
from ef.measures import parse_measure
from ef.segments import Segment
from ef.source_manager import SearchHit

SRC = Path(__file__).resolve().parents[1] / "src"


def _hit(doc_id: str, score: float, rank: int) -> SearchHit:
    return SearchHit(Segment(source_id=doc_id, index=0, text=doc_id, start=0, end=len(doc_id)), score, rank)


# --- one evaluation path ------------------------------------------------------------------------


def test_evaluate_retrieval_agrees_with_the_per_query_functions() -> None:
    rng = random.Random(10)
    docs = [f"d{i}" for i in range(30)]
    grades = (0, 1, 2, 3, 0.5, -1)  # fractional and negative grades too: relevant means > 0
    qrels = {}
    rankings = {}
    for q in range(40):
        judged = {d: rng.choice(grades) for d in rng.sample(docs, rng.randint(1, 8))}
        judged[rng.choice(docs)] = rng.choice((1, 2, 0.5))  # at least one positive judgement... maybe
        qrels[f"q{q}"] = judged
        rankings[f"text {q}"] = rng.sample(docs, rng.randint(0, 25))
    queries = {f"q{q}": f"text {q}" for q in range(40)}
    report = evaluate_retrieval(lambda text, *, limit: rankings[text][:limit], qrels, queries, k_values=(1, 3, 10, 25))
    scored = [q for q, judged in qrels.items() if any(g > 0 for g in judged.values())]
    assert list(report.per_query) == scored
    for q in scored:
        ranked = rankings[queries[q]]
        for name, fn in RETRIEVAL_METRICS.items():
            for k in (1, 3, 10, 25):
                assert report.per_query[q][f"{name}@{k}"] == pytest.approx(fn(ranked, qrels[q], k), abs=1e-12)
    for key, mean in report.metrics.items():
        assert mean == pytest.approx(sum(v[key] for v in report.per_query.values()) / len(scored), abs=1e-12)


def test_the_retrievers_order_wins_over_trec_evals_tie_order() -> None:
    # Tied scores: trec_eval would put 'z' (the greater doc id) first; the retriever put 'a' first.
    hits = [_hit("a", 1.0, 1), _hit("z", 1.0, 2), _hit("m", 0.5, 3)]
    qrels = {"q1": {"a": 1}}
    report = evaluate_retrieval(
        lambda q, *, limit: hits[:limit], qrels, {"q1": "x"}, k_values=(1,), metrics=("mrr",), limit=3
    )
    assert report.per_query == {"q1": {"mrr@1": 1.0}}
    # the run keeps the real scores, in the retriever's order; rescored as a TREC run, ties go by doc id
    assert report.run == {"q1": {"a": 1.0, "z": 1.0, "m": 0.5}}
    assert list(report.run["q1"]) == report.ranking("q1") == ["a", "z", "m"]
    assert report.rank_scores == ()
    assert evaluate_run(report.run, qrels, ["mrr@1"]).metrics == {"mrr@1": 0.0}


def test_results_without_scores_keep_their_rank_with_rank_scores() -> None:
    # bare ids: 'b' before 'a' although 'a' < 'b'; the stored scores are n - rank + 1
    report = evaluate_retrieval(
        lambda q, *, limit: ["b", "a", "c"][:limit], {"q1": {"a": 1}}, {"q1": "x"}, k_values=(2,), metrics=("mrr",)
    )
    assert report.per_query == {"q1": {"mrr@2": 0.5}}
    assert report.run == {"q1": {"b": 2.0, "a": 1.0}}
    assert report.rank_scores == ("q1",)
    assert evaluate_run(report.run, {"q1": {"a": 1}}, ["mrr@2"]).metrics == {"mrr@2": 0.5}  # the same order


def test_mixed_results_are_scored_by_rank_and_an_empty_ranking_is_kept() -> None:
    results = {"one": [_hit("d1", 3.0, 1), "d2"], "two": []}
    report = evaluate_retrieval(
        lambda q, *, limit: results[q], {"q1": {"d2": 1}, "q2": {"d3": 1}}, {"q1": "one", "q2": "two"},
        k_values=(2,), metrics=("mrr",),
    )
    assert report.per_query == {"q1": {"mrr@2": 0.5}, "q2": {"mrr@2": 0.0}}
    assert report.run == {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {}}
    assert report.rank_scores == ("q1",)


def test_retrieval_report_repr_leaves_out_the_run() -> None:
    report = evaluate_retrieval(lambda q, *, limit: ["d1"], {"q1": {"d1": 1}}, {"q1": "x"}, k_values=(1,),
                                metrics=("ndcg",))
    assert repr(report) == (
        "RetrievalEvalReport(metrics={'ndcg@1': 1.0}, per_query={'q1': {'ndcg@1': 1.0}}, n_queries=1, "
        "k_values=(1,), missing_texts=(), rank_scores=('q1',))"
    )


def test_score_run_returns_arrays_per_measure() -> None:
    run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.4}}
    qrels = {"q1": {"d2": 1}, "q2": {"d3": 1}, "q3": {"d4": 1}}
    scores = score_run(run, qrels, [parse_measure("mrr"), "num_rel_ret"], missing="skip")
    assert isinstance(scores, RunScores)
    assert scores.query_ids == ("q1", "q2")
    assert scores.skipped == 1
    assert scores.per_query() == {"q1": {"recip_rank": 0.5, "num_rel_ret": 1}, "q2": {"recip_rank": 1.0,
                                                                                       "num_rel_ret": 1}}
    assert scores.means() == {"recip_rank": 0.75, "num_rel_ret": 2}


def test_score_run_reads_files_once_through_load_run_and_qrels(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n")
    (tmp_path / "qrels").write_text("q1 0 d2 1\n")
    run, qrels = load_run_and_qrels(tmp_path / "run", tmp_path / "qrels")
    assert qrels == {"q1": {"d2": 1}}
    assert run.to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}
    scores = score_run(run, qrels, ["P_2"])
    assert scores.means() == {"P_2": 0.5}
    assert scores.run_id == "sys"
    assert score_run(tmp_path / "run", tmp_path / "qrels", ["P_1"]).means() == {"P_1": 0.0}  # paths too
    assert score_run({"q1": {"d2": 1.0}}, qrels, ["P_1"]).run_id == ""


@pytest.mark.parametrize(
    ("measures", "error", "message"),
    [
        ("mrr", TypeError, r"^'measures' must be a sequence of measures, not a str \(got 'mrr'\)$"),
    ],
)
def test_score_run_rejects_bad_measures(measures, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        score_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, measures)


def test_score_run_with_no_measure_gives_the_queries_and_the_run_id(tmp_path: Path) -> None:
    (tmp_path / "run").write_text("q1 Q0 d1 1 1.0 first\nq2 Q0 d1 1 1.0 last\n")
    scores = score_run(*load_run_and_qrels(tmp_path / "run", {"q1": {"d1": 1}, "q2": {"d2": 1}}), [])
    assert (scores.query_ids, scores.means(), scores.run_id) == (("q1", "q2"), {}, "last")


# --- DataFrames in ------------------------------------------------------------------------------

RUN = {"q1": {"d1": 0.9, "d2": 0.5, "d3": 0.1}, "q2": {"d4": 0.7, "d5": 0.3}}
QRELS = {"q1": {"d2": 1, "d3": 2}, "q2": {"d5": 1}}


def _run_rows() -> dict[str, list[object]]:
    rows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    return {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "score": [r[2] for r in rows]}


def _qrels_rows() -> dict[str, list[object]]:
    rows = [(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    return {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "relevance": [r[2] for r in rows]}


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_evaluate_run_reads_dataframes(frame) -> None:  # type: ignore[no-untyped-def]
    expected = evaluate_run(RUN, QRELS, ["ndcg@10", "mrr"])
    assert evaluate_run(frame(_run_rows()), frame(_qrels_rows()), ["ndcg@10", "mrr"]) == expected
    assert evaluate_run(frame(_run_rows()), QRELS, ["ndcg@10", "mrr"]) == expected
    assert score_run(frame(_run_rows()), frame(_qrels_rows()), ["mrr"]).means() == {"recip_rank": 0.5}
    assert run_from_frame(frame(_run_rows())) == RUN
    assert qrels_from_frame(frame(_qrels_rows())) == QRELS


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_a_frame_with_other_columns_is_a_named_error(frame) -> None:  # type: ignore[no-untyped-def]
    # Issue 34: PyTerrier's qid/docno and extra columns are read (tests/test_peer_inputs.py); a frame
    # with no column for a role is still refused, by name.
    rows = _run_rows()
    bad = frame({"topic": rows["query_id"], "docno": rows["doc_id"], "score": rows["score"]})
    with pytest.raises(ValueError, match=(
        r"^'run' DataFrame has no query_id column \(query_id or qid or q_id\) "
        r"\(found \['topic', 'docno', 'score'\]\); name it with columns=\{'query_id': \.\.\.\}$"
    )):
        evaluate_run(bad, QRELS)
    extra = frame({**_qrels_rows(), "iteration": [0, 0, 0]})
    assert evaluate_run(RUN, extra) == evaluate_run(RUN, QRELS)


def test_a_frame_with_int_ids_or_a_repeated_doc_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^'run' column 'query_id' must hold str ids \(got 1 of type int in row 0\)$"):
        evaluate_run(pd.DataFrame({"query_id": [1], "doc_id": ["d1"], "score": [1.0]}), QRELS)
    twice = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1, 2]})
    with pytest.raises(ValueError, match=r"^'qrels' lists doc 'd1' twice for query 'q1' \(row 1\)$"):
        evaluate_run(RUN, twice)


# --- DataFrames out -----------------------------------------------------------------------------


def test_reports_to_long_frames() -> None:
    report = evaluate_run(RUN, QRELS, ["mrr", "num_rel_ret"])
    frame = report.to_pandas()
    assert list(frame.columns) == ["query_id", "measure", "value"]
    assert frame.to_dict("records") == [
        {"query_id": "q1", "measure": "mrr", "value": 0.5},
        {"query_id": "q1", "measure": "num_rel_ret", "value": 2.0},
        {"query_id": "q2", "measure": "mrr", "value": 0.5},
        {"query_id": "q2", "measure": "num_rel_ret", "value": 1.0},
    ]
    assert report.to_polars().to_dicts() == frame.to_dict("records")
    retrieval = evaluate_retrieval(lambda q, *, limit: ["d1", "d2"], QRELS, {"q1": "a", "q2": "b"}, k_values=(2,),
                                   metrics=("precision",))
    assert retrieval.to_polars().rows() == [("q1", "precision@2", 0.5), ("q2", "precision@2", 0.0)]
    assert retrieval.to_pandas().shape == (2, 3)


def test_rag_report_to_frames() -> None:
    report = RagEvalReport(metrics={"exact_match": 0.5}, coverage={"exact_match": 4}, n_samples=4)
    assert report.to_pandas().to_dict("records") == [{"measure": "exact_match", "value": 0.5, "n_samples": 4}]
    assert report.to_polars().rows() == [("exact_match", 0.5, 4)]


def test_empty_report_gives_an_empty_frame_with_the_columns() -> None:
    frame = RunEvalReport({}, {}, 0).to_polars()
    assert frame.columns == ["query_id", "measure", "value"]
    assert frame.height == 0


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_missing_library_is_an_import_error_with_the_install_hint(library, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, library, None)
    hint = rf"^this needs {library}, an optional dependency of ef: pip install 'ef-eval\[{library}\]'$"
    with pytest.raises(ImportError, match=hint):
        long_frame({"q1": {"mrr": 1.0}}, library)
    with pytest.raises(ImportError, match=rf"pip install 'ef-eval\[{library}\]'"):
        getattr(RunEvalReport({}, {}, 0), f"to_{library}")()


# --- the argument-order trap --------------------------------------------------------------------

SCORES = {"q1": {"d1": 12.31, "d2": 11.07, "d3": 9.84, "d4": 7.5}, "q2": {"d5": 3.25, "d6": 2.125, "d7": 1.4}}
GRADES = {"q1": {"d2": 1}, "q2": {"d7": 2, "d9": 0}}


def test_keywords_run_and_qrels_work_in_any_order() -> None:
    expected = evaluate_run(SCORES, GRADES, ["ndcg@10"])
    assert evaluate_run(qrels=GRADES, run=SCORES, measures=["ndcg@10"]) == expected
    scores = score_run(qrels=GRADES, run=SCORES, measures=["ndcg@10"])
    assert scores.means() == {"ndcg_cut_10": expected.metrics["ndcg@10"]}


def test_a_swapped_call_is_refused() -> None:
    with pytest.raises(ValueError, match=(
        r"^the arguments look swapped: ef takes \(run, qrels\), while ranx, BEIR and ir_measures take \(qrels, run\) "
        r"\(the 'run' holds only integers and 1\.5 docs per query, the 'qrels' distinct fractional values and 3\.5 "
        r"docs per query\)\. If each is already in its place \(named or not\), say which is which by its type: the "
        r"run as a ranx Run, ScoredDoc rows \(ir_measures, ef\.compat\.ir_measures\) or a DataFrame with a 'score' "
        r"column$"
    )):
        evaluate_run(GRADES, SCORES)  # ranx / BEIR order
    with pytest.raises(ValueError, match="look swapped"):
        score_run(GRADES, SCORES, ["mrr"])


def test_swapped_frames_are_refused_by_their_columns() -> None:
    run, qrels = pd.DataFrame(_run_rows()), pd.DataFrame(_qrels_rows())
    with pytest.raises(ValueError, match=(
        r"look swapped.*\(the 'run' DataFrame has the columns \['query_id', 'doc_id', 'relevance'\], the layout of "
        r"qrels \['query_id', 'doc_id', 'relevance'\]; a run has \['query_id', 'doc_id', 'score'\]\)$"
    )):
        evaluate_run(qrels, run)
    with pytest.raises(ValueError, match=r"look swapped.*the 'qrels' DataFrame has the columns"):
        evaluate_run(RUN, pl.DataFrame(_run_rows()))


@pytest.mark.parametrize(
    ("run", "qrels"),
    [
        # a reranker's integer scores against integer grades: never a false alarm
        ({"q1": {"d1": 10, "d2": 7, "d3": 7, "d4": 2}}, {"q1": {"d1": 1, "d3": 2}}),
        # integer scores against fractional grades that repeat (graded judgements do)
        ({"q1": {"d1": 3, "d2": 2}}, {"q1": {"d1": 0.5, "d2": 0.5, "d3": 1.5, "d4": 0.5}}),
        # integer scores, distinct fractional grades, but a longer run than the qrels
        ({"q1": {"d1": 5, "d2": 4, "d3": 3, "d4": 2, "d5": 1}}, {"q1": {"d1": 0.25, "d2": 0.75}}),
        # a run with fractional scores: not qrels
        ({"q1": {"d1": 0.5, "d2": 0.25}}, {"q1": {"d1": 0.3, "d2": 0.9}}),
        # mostly integer "qrels" values
        ({"q1": {"d1": 3}}, {"q1": {"d1": 1, "d2": 2, "d3": 0.5}}),
    ],
)
def test_no_false_alarm_on_legitimate_runs(run, qrels) -> None:  # type: ignore[no-untyped-def]
    report = evaluate_run(run, qrels, ["P_1"])
    assert report.n_queries == 1


def test_swap_is_not_guessed_for_evaluate_retrievals_own_run() -> None:
    # rank-derived integer scores against distinct fractional grades: the shape of a swap, but ef built it
    qrels = {"q1": {"d1": 0.25, "d2": 0.75, "d3": 0.5}}
    report = evaluate_retrieval(lambda q, *, limit: ["d2"], qrels, {"q1": "x"}, k_values=(1,), metrics=("recall",))
    assert report.metrics == {"recall@1": pytest.approx(1 / 3)}


def test_evaluate_retrieval_says_when_qrels_and_queries_are_swapped() -> None:
    with pytest.raises(TypeError, match=(
        r"^'qrels' holds query texts and 'queries' judgements: the arguments look swapped; "
        r"evaluate_retrieval takes \(retriever, qrels, queries\)$"
    )):
        evaluate_retrieval(lambda q, *, limit: [], {"q1": "text"}, {"q1": {"d1": 1}})


def test_comparison_report_to_frames() -> None:
    from ef.compare import compare

    runs = {"a": {"q1": {"d1": 0.1, "x": 0.9}, "q2": {"d2": 0.5}}, "b": {"q1": {"d1": 0.9}, "q2": {"d2": 0.5}}}
    report = compare(runs, {"q1": {"d1": 1}, "q2": {"d2": 1}}, ["mrr"], baseline="a")
    assert report.to_pandas().equals(report.to_dataframe("pandas"))
    assert report.to_polars().equals(report.to_dataframe("polars"))
    assert report.to_polars()["system_mean"].to_list() == [1.0]


# --- the public mid-level API -------------------------------------------------------------------

OWN_MODULES = [
    *sorted(p for p in (SRC / "ef" / "cli").glob("*.py") if p.name not in ("trec_eval.py", "rag.py")),
    SRC / "fastrag" / "benchmark" / "__init__.py",
    SRC / "fastrag" / "benchmark" / "compare.py",
    *sorted((SRC / "ef" / "report").glob("*.py")),
]


def _private_imports(path: Path) -> list[str]:
    """Modules imported by `path` that are private to a package `path` is not inside."""
    module = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
            [a.name for a in node.names] if isinstance(node, ast.Import) else [])
        for name in names:
            parts = name.split(".")
            for i, part in enumerate(parts):
                owner = ".".join(parts[:i])
                if part.startswith("_") and not part.startswith("__") and not (
                    package == owner or package.startswith(owner + ".")
                ):
                    found.append(name)
    return found


# The distribution's shared plumbing (issue 34 made it private: no user needs it): atomic writes,
# opening sources, checks, progress, lazy imports. Any package of the distribution may use it.
PLUMBING = {"ef._validate", "ef._console", "ef._lazy", "ef.io._atomic", "ef.io._source"}


@pytest.mark.parametrize("path", OWN_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_module_crosses_a_package_boundary(path: Path) -> None:
    assert [name for name in _private_imports(path) if name not in PLUMBING] == []


@pytest.mark.parametrize(
    "module",
    ["ef.evaluation.scoring", "ef.io.frames", "ef.compare", "ef.source_manager.cache", "ef.source_manager.scale"],
)
def test_the_mid_level_api_is_public_and_documented(module: str) -> None:
    mod = importlib.import_module(module)
    assert mod.__doc__
    assert sorted(mod.__all__) == sorted(set(mod.__all__))
    for name in mod.__all__:
        value = getattr(mod, name)
        if callable(value) and not isinstance(value, type(Literal[""])):
            assert value.__doc__, f"{module}.{name} has no docstring"


def test_importing_the_packages_loads_no_numpy() -> None:
    code = (
        "import sys, fastrag.benchmark, ef.evaluation, ef.compare, ef.cli.compare\n"
        "print(sorted(m for m in ('numpy', 'ef.trec', 'ef.io.trec', 'ef.evaluation._run') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.stdout == "[]\n"


def test_cached_index_loads_builds_and_refuses(tmp_path: Path) -> None:
    from ef.source_manager.cache import cached_index, check_cache_dir

    corpus = {"d1": "Cats purr.", "d2": "Dogs bark."}
    index, how = cached_index(corpus, tmp_path / "index", build={"show_progress": False})
    assert how == f"built, saved to {tmp_path / 'index'}"
    again, how = cached_index(corpus, tmp_path / "index", load={"show_progress": False})
    assert how == f"loaded from {tmp_path / 'index'}"
    assert again.fingerprint == index.fingerprint
    with pytest.raises(ValueError, match=(
        rf"^{re.escape(str(tmp_path / 'index'))} holds an index of another corpus than this corpus: "
        r"delete it or choose another directory$"
    )):
        cached_index({"d3": "Birds sing."}, tmp_path / "index", load={"show_progress": False})
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"^--index-dir notes exists and is not an ef index$"):
        check_cache_dir(tmp_path / "notes", name="--index-dir notes")
    assert cached_index(corpus, None, build={"show_progress": False})[1] == "built"


def test_the_html_report_shows_a_retrieval_reports_run_as_retrieved() -> None:
    from ef.report import evaluation_data

    hits = [_hit("a", 1.0, 1), _hit("z", 1.0, 2)]
    report = evaluate_retrieval(lambda q, *, limit: hits[:limit], {"q1": {"z": 1}}, {"q1": "x"}, k_values=(2,),
                                metrics=("ndcg",))
    own = evaluation_data(report, qrels={"q1": {"z": 1}}).worst[0]
    assert [(d.rank, d.doc_id, d.score) for d in own.results] == [(1, "a", 1.0), (2, "z", 1.0)]
    # a run given explicitly (a TREC file) is ordered as trec_eval orders it: ties by doc id, descending
    given = evaluation_data(report, run=report.run, qrels={"q1": {"z": 1}}).worst[0]
    assert [d.doc_id for d in given.results] == ["z", "a"]


def test_compare_takes_dataframes() -> None:
    from ef.compare import compare

    runs = {"a": {"q1": {"d1": 0.1, "x": 0.9}, "q2": {"d2": 0.5}}, "b": {"q1": {"d1": 0.9}, "q2": {"d2": 0.5}}}
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}

    def frame(run: dict[str, dict[str, float]]) -> pl.DataFrame:
        rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
        return pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row")

    judged = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "relevance": [1, 1]})
    expected = compare(runs, qrels, ["mrr"], baseline="a").to_dict()
    assert compare({n: frame(r) for n, r in runs.items()}, judged, ["mrr"], baseline="a").to_dict() == expected
    with pytest.raises(TypeError, match=r"^'qrels' must be a mapping, a path, a DataFrame or None \(got int\)$"):
        compare(runs, 3, ["mrr"])  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["ignore_identical_ids", "show_progress"])
def test_evaluate_retrieval_flags_must_be_bools(option: str) -> None:
    with pytest.raises(TypeError, match=rf"^'{option}' must be a bool \(got 1\)$"):
        evaluate_retrieval(lambda q, *, limit: [], {"q1": {"d1": 1}}, {"q1": "x"}, **{option: 1})  # type: ignore[arg-type]
    import numpy as np

    report = evaluate_retrieval(lambda q, *, limit: ["d1"], {"q1": {"d1": 1}}, {"q1": "x"}, k_values=(1,),
                                **{option: np.bool_(False)})  # type: ignore[arg-type]
    assert report.metrics["ndcg@1"] == 1.0


def test_the_library_is_named() -> None:
    from ef.io.frames import require

    with pytest.raises(TypeError, match=r"^'library' must be 'pandas' or 'polars' \(got 1\)$"):
        require(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^'library' must be 'pandas' or 'polars' \(got 'arrow'\)$"):
        long_frame({}, "arrow")


def test_a_swap_is_refused_for_one_decimal_scores_and_for_a_run_file_given_as_the_qrels(tmp_path: Path) -> None:
    """Review findings: one-decimal scores repeat within a query (100 docs, 100 values), and a run
    file passed as the qrels shows itself only once read."""
    rng = random.Random(0)
    qrels = {f"q{q}": {f"d{rng.randrange(1000)}": rng.randint(0, 2) for _ in range(3)} for q in range(50)}
    run = {q: {f"d{rng.randrange(1000)}": round(rng.random() * 10, 1) for _ in range(100)} for q in qrels}
    with pytest.raises(ValueError, match=r"^the arguments look swapped"):
        evaluate_run(qrels, run, ["ndcg@10"])
    assert evaluate_run(run, qrels, ["ndcg@10"]).n_queries == 50  # the right order passes
    path = tmp_path / "run.tsv"
    lines = (f"{q}\t{d}\t{s}\n" for q, docs in run.items() for d, s in docs.items())
    path.write_text("query-id\tcorpus-id\tscore\n" + "".join(lines))
    with pytest.raises(ValueError, match=r"^the arguments look swapped"):
        evaluate_run(qrels, path, ["ndcg@10"])
