"""tune names an input run that holds no query, before any fold is fused: since evaluate_run refuses
an empty run (63d781e) it said "'run' holds no query ..." after every fusion, naming no run; ef fuse
--tune with an empty run file says the file, as ef fuse without --tune does."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import run, write_files
from ef.fusion import fuse, tune

A = {f"q{i}": {"d1": 3.0, "d2": 2.0, "d3": 1.0} for i in range(4)}
QRELS = {f"q{i}": {"d3": 1} for i in range(4)}


@pytest.mark.parametrize(("runs", "label"), [({"a": A, "b": {}}, "runs['b']"), ([{}, A], "runs[0]")])
def test_tune_names_an_empty_input(runs: object, label: str) -> None:
    with pytest.raises(ValueError) as info:
        tune(runs, QRELS, method="rrf", folds=2)
    assert str(info.value) == (f"{label} holds no query: an empty run adds nothing to a fusion and cannot be scored "
                               "(a query that retrieved nothing is {query_id: {}})")


@pytest.mark.parametrize(("runs", "label"), [({"a": A, "b": {}}, "runs['b']"), ([{}, A], "runs[0]")])
def test_fuse_names_an_empty_input_as_it_names_an_empty_file(runs: object, label: str) -> None:
    # fuse([{}, A]) was A re-scored, without a word, where an empty run file is refused
    with pytest.raises(ValueError) as info:
        fuse(runs, method="rrf")
    assert str(info.value).startswith(f"{label} holds no query: an empty run adds nothing to a fusion")


def test_fuse_tune_names_an_empty_run_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    files = write_files(tmp_path, {"qrels": "q0 0 d3 1\nq1 0 d3 1\n", "a": "q0 Q0 d1 1 3 a\nq1 Q0 d3 1 3 a\n",
                                   "empty": ""})
    said = f"ef fuse: error: {files['empty']}: the run holds no ranking line (runs['empty'])\n"
    assert run(capsys, "fuse", "--tune", files["qrels"], files["a"], files["empty"]) == (2, "", said)
    assert run(capsys, "fuse", files["a"], files["empty"], "-o", "-") == (2, "", said)  # the same words
