"""Every peer's runs and qrels go into evaluate_run as they are (issue 34): ranx Run/Qrels, ir_measures
ScoredDoc/Qrel iterables, PyTerrier frames, frames with extra columns and a column mapping."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

from ef.evaluation import evaluate_run
from ef.io.frames import qrels_from_frame, run_from_frame

RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d4": 0.5, "d5": 0.4}}
QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d5": 1}, "q3": {"d6": 1}}
MEASURES = ["ndcg@10", "map", "P@2", "num_ret"]


def _expected():  # type: ignore[no-untyped-def]
    return evaluate_run(RUN, QRELS, MEASURES)


@pytest.mark.slow  # ranx compiles its Run and Qrels with numba on first use (~30 s)
def test_ranx_run_and_qrels() -> None:
    ranx = pytest.importorskip("ranx")
    assert evaluate_run(ranx.Run(RUN), ranx.Qrels(QRELS), MEASURES) == _expected()
    with pytest.raises(ValueError, match=r"pass them as run=\.\.\., qrels=\.\.\. \(the 'run' is a ranx Qrels\)$"):
        evaluate_run(ranx.Qrels(QRELS), ranx.Run(RUN), MEASURES)


def test_ir_measures_namedtuples_lists_and_generators() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    assert evaluate_run(run, qrels, MEASURES) == _expected()
    assert evaluate_run(iter(run), (row for row in qrels), MEASURES) == _expected()
    with pytest.raises(ValueError, match=r"\(the 'run' holds Qrel rows, with a relevance field\)$"):
        evaluate_run(qrels, run, MEASURES)


def test_ef_compat_namedtuples_too() -> None:
    from ef.compat.ir_measures import Qrel, ScoredDoc

    run = [ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    qrels = [Qrel(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    assert evaluate_run(run, qrels, MEASURES) == _expected()


def test_rows_of_another_kind_are_refused_by_name() -> None:
    with pytest.raises(TypeError) as info:
        evaluate_run([("q1", "d1", 0.5)], QRELS, MEASURES)
    assert str(info.value) == (
        "'run' must be a mapping, a path, a DataFrame, a ranx Run or rows with the fields query_id, doc_id, score "
        "(ir_measures' ScoredDoc); got an iterable of tuple"
    )


def _rows(mapping: dict, value: str) -> dict[str, list]:
    rows: dict[str, list] = {"query_id": [], "doc_id": [], value: []}
    for q, docs in mapping.items():
        for d, v in docs.items():
            rows["query_id"].append(q)
            rows["doc_id"].append(d)
            rows[value].append(v)
    return rows


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_pyterrier_frames(frame) -> None:  # type: ignore[no-untyped-def]
    run = _rows(RUN, "score")
    pt_run = frame({
        "qid": run["query_id"], "query": ["text"] * 5, "docid": list(range(5)), "docno": run["doc_id"],
        "rank": [0, 1, 2, 0, 1], "score": run["score"],
    })
    qrels = _rows(QRELS, "relevance")
    pt_qrels = frame({"qid": qrels["query_id"], "docno": qrels["doc_id"], "label": qrels["relevance"]})
    assert evaluate_run(pt_run, pt_qrels, MEASURES) == _expected()


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_extra_columns_and_a_column_mapping(frame) -> None:  # type: ignore[no-untyped-def]
    run = _rows(RUN, "score")
    assert run_from_frame(frame({**run, "rank": [1, 2, 3, 1, 2], "run_name": ["bm25"] * 5})) == RUN
    mine = frame({"topic": run["query_id"], "doc": run["doc_id"], "sim": run["score"]})
    assert run_from_frame(mine, columns={"query_id": "topic", "doc_id": "doc", "score": "sim"}) == RUN
    qrels = _rows(QRELS, "relevance")
    assert qrels_from_frame(frame({**qrels, "iteration": ["0"] * 4}), columns={"relevance": "relevance"}) == QRELS


@pytest.mark.parametrize("frame", [pd.DataFrame, pl.DataFrame], ids=["pandas", "polars"])
def test_a_frame_without_a_column_or_with_two_says_so(frame) -> None:  # type: ignore[no-untyped-def]
    run = _rows(RUN, "score")
    with pytest.raises(ValueError) as info:
        run_from_frame(frame({"topic": run["query_id"], "doc_id": run["doc_id"], "score": run["score"]}))
    assert str(info.value) == (
        "'run' DataFrame has no query_id column (query_id or qid or q_id) (found ['topic', 'doc_id', 'score']); "
        "name it with columns={'query_id': ...}"
    )
    with pytest.raises(ValueError) as info:
        run_from_frame(frame({**run, "qid": run["query_id"]}))
    assert str(info.value) == (
        "'run' DataFrame has two columns for query_id: ['query_id', 'qid'] (found ['query_id', 'doc_id', "
        "'score', 'qid']); name it with columns={'query_id': ...}"
    )
    with pytest.raises(ValueError) as info:
        run_from_frame(frame(run), columns={"query_id": "topic"})
    assert str(info.value) == (
        "'columns' names 'topic' for query_id but the 'run' DataFrame has no such column "
        "(found ['query_id', 'doc_id', 'score'])"
    )
    with pytest.raises(ValueError, match=r"^'columns' must map some of \['query_id', 'doc_id', 'score'\] to column"):
        run_from_frame(frame(run), columns={"label": "score"})
    with pytest.raises(TypeError, match=r"^'columns' must be a mapping of roles to column names \(got \[\('query_id'"):
        run_from_frame(frame(run), columns=[("query_id", "topic")])  # type: ignore[arg-type]


def test_a_named_call_the_values_call_swapped_has_a_way_through() -> None:
    # Issue 34: integer scores against fractional grades look swapped whether or not the call names them;
    # the message no longer says "name them" (that cannot help), and rows of a type settle it.
    from ef.compat.ir_measures import ScoredDoc

    run = {"q1": {"d1": 3, "d2": 1}}
    qrels = {"q1": {"d1": 0.5, "d2": 0.25, "d3": 0.75}}
    with pytest.raises(ValueError) as info:
        evaluate_run(run=run, qrels=qrels, measures=["P@1"])
    assert "If each is already in its place (named or not), say which is which by its type" in str(info.value)
    assert "pass them as run=" not in str(info.value)
    rows = [ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    assert evaluate_run(run=rows, qrels=qrels, measures=["P@1"], relevance_level=0.5).metrics == {"P@1": 1.0}


def test_reports_show_as_html_tables_in_notebooks() -> None:
    from types import SimpleNamespace

    from ef.evaluation import RetrievalEvalReport
    from ef.io.frames import PerQueryFrames

    report = evaluate_run(RUN, QRELS, ["mrr", "P@2"])
    mrr = (1 + 0.5 + 0) / 3  # q3 is not in the run: 0
    assert report._repr_html_() == (
        '<table class="ef-report"><caption>Mean over 3 queries</caption>\n'
        "<thead><tr><th>measure</th><th>value</th></tr></thead>\n"
        f"<tbody><tr><td>mrr</td><td>{mrr:.4f}</td></tr><tr><td>P@2</td><td>0.3333</td></tr></tbody></table>"
    )
    retrieval = RetrievalEvalReport(metrics={"ndcg@10": 0.83}, per_query={}, n_queries=1, k_values=(10,))
    assert "<caption>Mean over 1 query</caption>" in retrieval._repr_html_()
    odd = SimpleNamespace(metrics={"<b>": 1.0}, per_query={}, n_queries=1)
    assert "<td>&lt;b&gt;</td><td>1.0000</td>" in PerQueryFrames._repr_html_(odd)  # type: ignore[arg-type]
