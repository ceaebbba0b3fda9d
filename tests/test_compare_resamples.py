"""Too few resamples for the confidence interval are refused (resamples=1 gave an interval of width 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.cli import main
from ef.compare import compare

RUNS = {"a": {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}, "b": {"q1": {"d2": 1.0}, "q2": {"d2": 1.0}}}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}


@pytest.mark.parametrize(("resamples", "confidence", "least"), [(1, 0.95, 40), (39, 0.95, 40), (199, 0.99, 200),
                                                                   (19, 0.9, 20)])
def test_fewer_resamples_than_the_interval_needs_are_refused(resamples: int, confidence: float, least: int) -> None:
    with pytest.raises(ValueError) as error:
        compare(RUNS, QRELS, ["P_1"], resamples=resamples, confidence=confidence)
    assert str(error.value) == (
        f"'resamples' must be at least {least} for a {confidence:g} confidence interval, one resample in each tail "
        f"(got {resamples})"
    )


def test_enough_resamples_give_an_interval() -> None:
    report = compare(RUNS, QRELS, ["P_1"], resamples=40)
    assert report.comparisons[0].ci_low < report.comparisons[0].ci_high


def test_ef_compare_resamples_1_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 1.0 a\nq2 Q0 d2 1 1.0 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d2 1 1.0 b\nq2 Q0 d2 1 1.0 b\n")
    argv = ["compare", str(tmp_path / "qrels"), str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--resamples", "1"]
    assert main(argv) == 2
    assert capsys.readouterr() == ("", "ef compare: error: 'resamples' must be at least 40 for a 0.95 confidence "
                                       "interval, one resample in each tail (got 1)\n")
