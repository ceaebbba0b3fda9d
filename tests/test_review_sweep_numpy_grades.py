"""A (corpus, queries, qrels) tuple whose grades are numpy integers (a frame's column) is swept as
the same grades in Python ints are: _check_triple takes them, but the dataset's id, of JSON,
failed on np.int64 naming 'data', an argument the caller never gave."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ef.datasets import demo_dataset
from ef.evaluation import read_beir
from ef.sweep import sweep

CORPUS, QUERIES, QRELS = read_beir(demo_dataset())


def test_numpy_grades_sweep_as_python_ones(tmp_path: Path) -> None:
    as_numpy = {q: {d: np.int64(g) for d, g in judged.items()} for q, judged in QRELS.items()}
    first = sorted(QRELS)[0]
    as_numpy[first] = {**as_numpy[first], "not-retrieved": np.int64(-1)}  # a negative grade, as trec_eval allows
    plain = {**QRELS, first: {**QRELS[first], "not-retrieved": -1}}
    rows = sweep({"k": 10}, (CORPUS, QUERIES, as_numpy), tmp_path / "out", show_progress=False).rows()  # type: ignore[arg-type]
    expected = sweep({"k": 10}, (CORPUS, QUERIES, plain), show_progress=False).rows()
    assert [round(row["mean"], 4) for row in rows] == [round(row["mean"], 4) for row in expected] == [0.8078]
