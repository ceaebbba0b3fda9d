"""A RankedRun made by hand takes no array a cast would change (1.5 read as 1, '1.0' as 1.0, True
as 1) and no query id that is not a str: each is a TypeError naming the argument."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ef.io.ranked import RankedRun


@pytest.mark.parametrize(
    ("bounds", "doc", "score", "message"),
    [
        (np.array([0.0, 1.5]), np.array([0]), np.array([1.0]), "'bounds' must hold integers (got an array of float64)"),
        (np.array([0, 1]), np.array([0.7]), np.array([1.0]), "'doc' must hold integers (got an array of float64)"),
        (np.array([0, 1]), np.array([True]), np.array([1.0]), "'doc' must hold integers (got an array of bool)"),
        (np.array([0, 1]), np.array([0]), np.array(["1.0"]), "'score' must hold real numbers (got an array of <U3)"),
        (np.array([0, 1]), np.array([0]), np.array([True]), "'score' must hold real numbers (got an array of bool)"),
        (np.array([0, 1]), np.array([0]), [None], "'score' must hold real numbers (got an array of object)"),
        ([0, 1], [0], [1 + 2j], "'score' must hold real numbers (got an array of complex128)"),
    ],
)
def test_arrays_a_cast_would_change_are_refused(bounds: object, doc: object, score: object, message: str) -> None:
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        RankedRun(("q1",), bounds, ["d1"], doc, score)  # type: ignore[arg-type]


@pytest.mark.parametrize("query_id", [1, None, b"q1"])
def test_a_query_id_that_is_not_a_str_is_refused(query_id: object) -> None:
    message = f"'queries' must hold str query ids (got {query_id!r}, {type(query_id).__name__})"
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        RankedRun((query_id,), np.array([0, 1]), ["d1"], np.array([0]), np.array([1.0]))  # type: ignore[arg-type]


def test_lists_of_integers_and_an_empty_run_are_taken() -> None:
    assert RankedRun(("q1",), [0, 2], ["d1", "d2"], [1, 0], [2, 1]).to_dict() == {"q1": {"d2": 2.0, "d1": 1.0}}  # type: ignore[arg-type]
    assert RankedRun((), [0], [], [], []).to_dict() == {}  # type: ignore[arg-type]
