"""fuse / tune arguments of the wrong kind: each a TypeError or ValueError naming the argument,
not numpy's or dict()'s message, and no list of pairs taken as a mapping silently."""

from __future__ import annotations

import re

import pytest

from ef.fusion import fuse, tune

QRELS = {f"q{i}": {"d1": 1, "d2": 1} for i in range(6)}
A = {f"q{i}": {"d1": 2.0, "d2": 1.0, "x": 0.5} for i in range(6)}
B = {f"q{i}": {"x": 2.0, "d1": 1.0} for i in range(6)}


@pytest.mark.parametrize(("params", "kind"), [([("k", 1)], "list"), ("k", "str"), (5, "int")])
def test_fuse_refuses_params_that_are_not_a_mapping(params: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^'params' must be a mapping \{{name: value\}} \(got {kind}\)$"):
        fuse([A, B], method="rrf", params=params)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seed", "error", "message"),
    [
        (-1, ValueError, "'seed' must be a non-negative integer (got -1)"),
        (1.5, TypeError, "'seed' must be a non-negative integer (got 1.5)"),
        (True, TypeError, "'seed' must be a non-negative integer (got True)"),
        ("0", TypeError, "'seed' must be a non-negative integer (got '0')"),
    ],
)
def test_tune_names_a_bad_seed(seed: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        tune([A, B], QRELS, folds=2, seed=seed)  # type: ignore[arg-type]


def test_tune_refuses_an_empty_list_of_methods() -> None:
    with pytest.raises(ValueError, match=r"^'method' must name at least one method \(got \[\]\)$"):
        tune([A, B], QRELS, folds=2, method=[])


def test_tune_refuses_an_empty_list_of_norms() -> None:
    with pytest.raises(ValueError, match=r"^'norm' must name at least one norm, or be None \(got \[\]\)$"):
        tune([A, B], QRELS, folds=2, norm=[])


def test_tune_says_the_qrels_judge_no_query() -> None:
    with pytest.raises(ValueError, match=r"^'qrels' judge no query: there is nothing to tune on$"):
        tune([A, B], {}, folds=2)


@pytest.mark.parametrize(("measure", "kind"), [(["ndcg@10"], "list"), (None, "NoneType")])
def test_tune_names_a_measure_that_is_not_a_str(measure: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^'measure' must be one measure name as a str \(got {kind}\)$"):
        tune([A, B], QRELS, folds=2, measure=measure)  # type: ignore[arg-type]
