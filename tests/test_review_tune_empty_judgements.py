"""tune leaves out a query whose judgements are empty ({'q5': {}}, as qrels filtered to grade > 0 give),
as evaluate_run (c939d8e) and ef.compare (d6e63d4) leave it out: it was folded, scored 0 in every
candidate and in the held-out scores, so the tuning (folds, choice, held-out mean) differed from that of
the same qrels without it, and TuneReport.queries disagreed with its own comparison's query count."""

from __future__ import annotations

import random

import pytest

from ef.fusion import tune

_DOCS = [f"d{i}" for i in range(8)]
_QUERIES = [f"q{i}" for i in range(6)]
_rng = random.Random(1)
RUNS = {name: {q: {d: _rng.random() for d in _DOCS} for q in _QUERIES} for name in ("a", "b")}
QRELS = {q: {_DOCS[i % 8]: 1, _DOCS[(i + 3) % 8]: 1} for i, q in enumerate(_QUERIES) if q != "q5"}


def test_tune_leaves_out_a_query_with_empty_judgements() -> None:
    plain = tune(RUNS, QRELS, folds=2, step=0.5)
    padded = tune(RUNS, {**QRELS, "q5": {}}, folds=2, step=0.5)
    assert padded.queries == ("q0", "q1", "q2", "q3", "q4")
    assert padded.held_out == plain.held_out
    assert padded.chosen == plain.chosen
    assert padded.final == plain.final


def test_tune_of_only_empty_judgements_is_refused() -> None:
    with pytest.raises(ValueError) as info:
        tune(RUNS, {"q0": {}, "q1": {}}, folds=2)
    assert str(info.value) == "'qrels' judge no query: there is nothing to tune on"


def test_a_trained_method_is_fitted_without_a_query_with_empty_judgements() -> None:
    # a trained method (probfuse) is folded, fitted and scored on the same queries either way
    plain = tune(RUNS, QRELS, method="probfuse", folds=2)
    padded = tune(RUNS, {**QRELS, "q5": {}}, method="probfuse", folds=2)
    assert padded.final == plain.final
    assert padded.held_out == plain.held_out
    assert padded.fused_run == plain.fused_run
