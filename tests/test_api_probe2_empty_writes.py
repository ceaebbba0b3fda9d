"""A writer does not make a file ef itself refuses: write_run({}) wrote an empty file that
evaluate_run(path) then refused ("the run holds no ranking line"), write_qrels({}) one whose
qrels evaluate_run refused ("the qrels hold no judgement"). Both now refuse, naming the argument,
and write nothing (an old file stays as it was). ranx refuses an empty Run too (Run({}) is a
ValueError); trec_eval refuses an empty run file (exit 2), and evaluate_run an empty file, mapping or
DataFrame."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ef.evaluation import evaluate_run
from ef.io.ranked import RankedRun
from ef.io.trec import run_lines
from ef.pipeline import Pipeline
from ef.sweep._store import SweepStore
from ef.trec import read_run, write_qrels, write_run

RUN_MESSAGE = ("'run' holds no query: its file would hold no ranking line, which trec_eval, evaluate_run and "
               "ef trec-eval refuse to score")
QRELS_MESSAGE = ("'qrels' holds no query: its file would hold no judgement, which trec_eval, evaluate_run and "
                 "ef trec-eval refuse to score")


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


def test_an_empty_file_is_what_evaluate_run_refuses(tmp_path: Path) -> None:
    path = tmp_path / "empty.trec"
    path.write_text("")
    with pytest.raises(ValueError, match=exactly(
        f"{path}: the run holds no ranking line (it would score 0 on every query)"
    )):
        evaluate_run(str(path), {"q1": {"d1": 1}})


def test_an_empty_mapping_or_frame_is_refused_as_an_empty_file_is() -> None:
    message = ("'run' holds no query (it would score 0 on every query); a query that retrieved nothing is "
               "{query_id: {}}")
    with pytest.raises(ValueError, match=exactly(message)):
        evaluate_run({}, {"q1": {"d1": 1}})
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame({"query_id": [], "doc_id": [], "score": []})
    with pytest.raises(ValueError, match=exactly(message)):
        evaluate_run(frame, {"q1": {"d1": 1}})
    from ef.compare import compare

    with pytest.raises(ValueError, match=exactly("run 'b' holds no query; a query that retrieved nothing is "
                                                 "{query_id: {}}")):
        compare({"a": {"q1": {"d1": 1.0}}, "b": {}}, {"q1": {"d1": 1}}, ["mrr"])
    # A query that retrieved nothing is a ranking, scored 0 and counted (trec_eval -c's zeros).
    report = evaluate_run({"q1": {}}, {"q1": {"d1": 1}, "q2": {"d2": 1}}, ["recall@10", "num_ret"])
    assert report.per_query == {"q1": {"recall@10": 0.0, "num_ret": 0}, "q2": {"recall@10": 0.0, "num_ret": 0}}


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz"])
def test_write_run_refuses_an_empty_run_and_keeps_the_old_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write_run(path, {"q1": {"d1": 1.0}})
    before = path.read_bytes()
    with pytest.raises(ValueError, match=exactly(RUN_MESSAGE)):
        write_run(path, {})
    assert path.read_bytes() == before
    assert read_run(str(path)) == {"q1": {"d1": 1.0}}
    with pytest.raises(ValueError, match=exactly(RUN_MESSAGE)):
        write_run(tmp_path / "new.trec", {})
    assert not (tmp_path / "new.trec").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left behind


def test_run_lines_refuses_an_empty_run_as_write_run_does() -> None:
    with pytest.raises(ValueError, match=exactly(RUN_MESSAGE)):
        run_lines({})


def test_an_empty_ranked_run_is_refused_too(tmp_path: Path) -> None:
    empty = RankedRun((), np.zeros(1, dtype=np.int64), [], np.zeros(0, dtype=np.int64), np.zeros(0))
    assert len(empty) == 0
    with pytest.raises(ValueError, match=exactly(RUN_MESSAGE)):
        write_run(tmp_path / "fused.trec", empty)
    assert list(tmp_path.iterdir()) == []


def test_write_qrels_refuses_empty_qrels(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    with pytest.raises(ValueError, match=exactly(QRELS_MESSAGE)):
        write_qrels(path, {})
    assert not path.exists()


def test_a_query_without_documents_was_and_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="query 'q1'"):
        write_run(tmp_path / "run.trec", {"q1": {}})


def test_a_sweep_cell_that_retrieved_nothing_has_no_run_file(tmp_path: Path) -> None:
    store = SweepStore(tmp_path / "out", dataset={"name": "x"}, measures=["ndcg@10"], resume=True)
    cell = Pipeline()
    store.runs.joinpath(f"{cell.id}.trec").write_text("q1 Q0 d1 1 1.0 old\n")  # an older sweep's
    store.save(cell, {"id": cell.id}, {"q1": {}, "q2": {}})
    assert store.saved_run(cell) is None
    assert list(store.runs.iterdir()) == []
    assert store.cell_path(cell).is_file()
    store.save(cell, {"id": cell.id}, {"q1": {"d1": 2.0}, "q2": {}})
    assert store.saved_run(cell) == store.run_path(cell)
    assert store.run_path(cell).read_text() == f"q1 Q0 d1 1 2.0 {cell.id}\n"
