"""Hostile input to the TREC writers: every fault is an exception naming the argument, not an
AttributeError or OverflowError from inside, and nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ef.io.trec import format_run, run_lines, write_lines
from ef.trec import write_qrels, write_run

NOT_MAPPINGS = [None, [("q1", "d1", 1.0)], (x for x in [("q1", {"d1": 1.0})])]
IDS = ["None", "list", "generator"]


@pytest.mark.parametrize("run", NOT_MAPPINGS, ids=IDS)
def test_run_lines_refuses_a_run_that_is_not_a_mapping(run: object) -> None:
    kind = type(run).__name__
    with pytest.raises(
        TypeError, match=rf"^'run' must be a mapping \{{query_id: \{{doc_id: score\}}\}} \(got {kind}\)$"
    ):
        run_lines(run)  # type: ignore[arg-type]


@pytest.mark.parametrize("run", NOT_MAPPINGS, ids=IDS)
def test_format_run_refuses_a_run_that_is_not_a_mapping(run: object) -> None:
    with pytest.raises(TypeError, match=r"^'run' must be a mapping"):
        format_run(run)  # type: ignore[arg-type]


def test_write_run_refuses_a_dataframe_and_writes_nothing(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0]})
    with pytest.raises(TypeError, match=r"^'run' must be a mapping .* \(got DataFrame\)$"):
        write_run(tmp_path / "run.trec", frame)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("qrels", NOT_MAPPINGS, ids=IDS)
def test_write_qrels_refuses_qrels_that_are_not_a_mapping(tmp_path: Path, qrels: object) -> None:
    kind = type(qrels).__name__
    with pytest.raises(
        TypeError, match=rf"^'qrels' must be a mapping \{{query_id: \{{doc_id: grade\}}\}} \(got {kind}\)$"
    ):
        write_qrels(tmp_path / "qrels.txt", qrels)  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


def test_write_qrels_refuses_judgements_that_are_not_a_mapping(tmp_path: Path) -> None:
    with pytest.raises(
        TypeError, match=r"^the judgements of query 'q1' must be a mapping \{doc_id: grade\} \(got list\)$"
    ):
        write_qrels(tmp_path / "qrels.txt", {"q1": ["d1"]})  # type: ignore[dict-item]
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("grade", [10**400, 2**63, -(2**63) - 1, 1e300], ids=["10**400", "2**63", "-2**63-1", "1e300"])
def test_write_qrels_refuses_a_grade_beyond_64_bits(tmp_path: Path, grade: float) -> None:
    # read_qrels refuses such a grade (trec_eval reads grades as 64-bit integers): the writer must too.
    with pytest.raises(
        ValueError,
        match=r"^grade of doc 'd1' in query 'q1' does not fit a 64-bit integer, as trec_eval "
        r"reads it \(got ",
    ):
        write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": grade}})
    assert os.listdir(tmp_path) == []


def test_write_qrels_writes_the_64_bit_extremes(tmp_path: Path) -> None:
    from ef.trec import read_qrels

    path = tmp_path / "qrels.txt"
    write_qrels(path, {"q1": {"d1": 2**63 - 1, "d2": -(2**63)}})
    assert read_qrels(path) == {"q1": {"d1": 2**63 - 1, "d2": -(2**63)}}


def test_write_lines_refuses_a_line_that_is_not_a_str_and_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "out.txt"
    path.write_text("old\n")
    with pytest.raises(TypeError, match=r"^'lines'\[1\] must be a str \(got int\)$"):
        write_lines(path, ["a\n", 1])  # type: ignore[list-item]
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_lines_refuses_a_single_str(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"^'lines' must be an iterable of str lines, not a single str$"):
        write_lines(tmp_path / "out.txt", "q1 Q0 d1 1 1.0 ef\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("path", [None, 3, b"/tmp/run.trec"], ids=["None", "int", "bytes"])
def test_write_run_refuses_a_path_that_is_not_a_str_or_pathlike(path: object) -> None:
    kind = type(path).__name__
    with pytest.raises(TypeError, match=rf"^'path' must be a str or os\.PathLike\[str\] \(got {kind}\)$"):
        write_run(path, {"q1": {"d1": 1.0}})  # type: ignore[arg-type]
