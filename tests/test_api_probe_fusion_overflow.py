"""Finite scores whose normalisation or fusion overflows a float: fuse names the run, query and
doc instead of returning an infinite score silently or failing inside on a NaN it made."""

from __future__ import annotations

import re
import warnings

import pytest

from ef.fusion import fuse

HUGE = {"q1": {"d1": 1.7e308, "d2": -1.7e308}}
OTHER = {"q1": {"d1": 1.0, "d3": 0.5}}


@pytest.mark.parametrize("norm", ["min-max", "min-max-inverted", "sum", "z-score", "l2", "dbsf"])
def test_a_normalisation_that_overflows_names_the_run_and_query(norm: str) -> None:
    message = (
        f"runs[0], query 'q1': norm={norm!r} overflows a float on these scores (they lie beyond what it can "
        "compute with, about 1.8e308); scale them down first"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from numpy on the way
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            fuse([HUGE, OTHER], method="combsum", norm=norm)


@pytest.mark.parametrize(
    ("method", "weights"), [("combsum", None), ("combmnz", None), ("wsum", [1.0, 1.0]), ("wsum", [1e300, 1.0])]
)
def test_a_fused_score_that_overflows_names_the_query_and_doc(method: str, weights: list[float] | None) -> None:
    runs = [{"q1": {"d1": 1.7e308, "d2": 1.0}}, {"q1": {"d1": 1.7e308}}]
    if weights is not None and weights[0] > 1:
        runs = [{"q1": {"d1": 1e10, "d2": 1.0}}, {"q1": {"d1": 1.0}}]
    message = (
        f"method={method!r} with norm='none' overflows a float: the fused score of doc 'd1' in query 'q1' "
        "is beyond about 1.8e308; normalise the scores (norm='min-max') or scale them down"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            fuse(runs, method=method, norm="none", weights=weights)


def test_large_scores_that_do_not_overflow_are_fused() -> None:
    fused = fuse([{"q1": {"d1": 8e307, "d2": 1.0}}, {"q1": {"d1": 8e307}}], method="combsum", norm="none")
    assert fused.to_dict() == {"q1": {"d1": 1.6e308, "d2": 1.0}}
