"""Issue 9: no NaN or inf from finite input, valid JSON, no silent drops, clear errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

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
