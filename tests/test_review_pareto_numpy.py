"""pareto_front takes the (latency, quality) points as a numpy array, as it did before its points
were checked (an (n, 2) array was refused as "not a sequence", its rows as "not NaN")."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ef.sweep._report import pareto_front

POINTS = [(1.0, 0.5), (2.0, 0.7), (3.0, 0.6), (2.0, 0.4), (0.5, 0.5)]


def test_an_array_of_points_is_a_list_of_pairs() -> None:
    assert pareto_front(POINTS) == [4, 1]
    assert pareto_front(np.array(POINTS)) == [4, 1]  # type: ignore[arg-type]
    assert pareto_front(list(np.array(POINTS))) == [4, 1]
    assert pareto_front(np.array(POINTS), higher_is_better=False) == [4, 3]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("points", "message"),
    [
        (np.array([[1.0, 0.5, 9.0]]), "'points'[0] must be a (latency, quality) pair of numbers (got [1.0, 0.5, 9.0])"),
        (
            np.array([[1.0, np.nan]]),
            "'points'[0] must be a (latency, quality) pair of numbers, not NaN (got [1.0, nan])",
        ),
        ([(1.0, 0.5), "ab"], "'points'[1] must be a (latency, quality) pair of numbers (got 'ab')"),
    ],
)
def test_a_bad_point_of_an_array_is_named(points: object, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        pareto_front(points)  # type: ignore[arg-type]
