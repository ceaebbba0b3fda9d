"""rerank's hostile inputs: each is an exception naming the argument, never a bare TypeError from
inside, and a str of candidates is not reranked character by character."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest

from ef.rerank import rerank


def lengths(query: str, candidates: Sequence[str]) -> list[float]:
    return [float(len(c)) for c in candidates]


@pytest.mark.parametrize(
    ("candidates", "error", "message"),
    [
        ("abc", TypeError, "'candidates' must be a sequence of str texts, not a single str"),
        (None, TypeError, "'candidates' must be a sequence of str texts (got NoneType)"),
        ((c for c in ["a"]), TypeError, "'candidates' must be a sequence of str texts (got generator)"),
        ({"a": 1}, TypeError, "'candidates' must be a sequence of str texts (got dict)"),
        (["a", 1], TypeError, "'candidates'[1] must be a str (got 1)"),
        (["a", None], TypeError, "'candidates'[1] must be a str (got None)"),
    ],
)
def test_bad_candidates_are_refused(candidates: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        rerank("q", candidates, lengths)  # type: ignore[arg-type]


def test_a_reranker_that_is_not_callable_is_refused() -> None:
    with pytest.raises(
        TypeError,
        match=r"^'reranker' must be a Reranker or a callable \(query, candidates\) -> scores "
        r"\(got NoneType\)$",
    ):
        rerank("q", ["a"], None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("returned", "kind"), [(None, "None"), (1.0, "1.0"), ("ab", "'ab'")])
def test_a_reranker_that_returns_no_sequence_of_scores_is_refused(returned: object, kind: str) -> None:
    message = f"the reranker must return one score per candidate (got {kind})"
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        rerank("q", ["a", "b"], lambda query, candidates: returned)  # type: ignore[arg-type,return-value]


def test_a_tuple_of_candidates_and_a_numpy_result_are_taken() -> None:
    np = pytest.importorskip("numpy")
    assert rerank("q", ("a", "bbb"), lambda q, c: np.array([1.0, 3.0])) == [(1, 3.0), (0, 1.0)]
    assert rerank("q", [], lengths) == []
