"""Per-query ranking metrics: hand-computed values, edge cases, invariants and pytrec_eval parity."""

from __future__ import annotations

import math

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    RETRIEVAL_METRICS,
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

ALL = [dcg_at_k, ndcg_at_k, recall_at_k, precision_at_k]
OPTIONAL_K = [reciprocal_rank, average_precision]


# --- hand-computed values -------------------------------------------------------------------


def test_dcg_graded_gains_and_log_discount() -> None:
    # 2/log2(2) + 0 + 3/log2(4) = 2 + 1.5
    assert dcg_at_k(["a", "x", "b"], {"a": 2.0, "b": 3.0}, 3) == pytest.approx(3.5, abs=1e-15)
    assert dcg_at_k(["a", "x", "b"], {"a": 2.0, "b": 3.0}, 2) == 2.0


def test_ndcg_ideal_includes_unretrieved_relevant_docs() -> None:
    # ranked finds only 'a' (grade 1) at rank 1; ideal = 3/1 + 1/log2(3)
    value = ndcg_at_k(["a"], {"a": 1.0, "b": 3.0}, 10)
    assert value == pytest.approx(1.0 / (3.0 + 1.0 / math.log2(3)), abs=1e-15)


def test_ndcg_ideal_is_cut_at_k() -> None:
    # at k=1 the ideal is the single best grade (3); the ranking's top doc has grade 1
    assert ndcg_at_k(["a", "b"], {"a": 1.0, "b": 3.0}, 1) == pytest.approx(1 / 3, abs=1e-15)


def test_negative_grades_count_as_unjudged() -> None:
    qrels = {"a": -1.0, "b": 1.0}
    assert dcg_at_k(["a", "b"], qrels, 2) == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert ndcg_at_k(["b"], qrels, 2) == 1.0
    assert recall_at_k(["a"], qrels, 1) == 0.0
    assert precision_at_k(["a", "b"], qrels, 2) == 0.5


def test_no_relevant_judged_gives_zero_everywhere() -> None:
    judged = {"a": 0.0, "b": -2.0}
    for name, fn in RETRIEVAL_METRICS.items():
        assert fn(["a", "b"], judged, 2) == 0.0, name
    assert ndcg_at_k(["a"], {}, 1) == 0.0


def test_precision_divides_by_k_for_short_rankings() -> None:
    assert precision_at_k(["a"], {"a": 1.0}, 4) == 0.25
    assert precision_at_k([], {"a": 1.0}, 3) == 0.0


def test_recall_counts_only_top_k() -> None:
    assert recall_at_k(["x", "a", "b"], {"a": 1, "b": 1, "c": 1}, 2) == pytest.approx(1 / 3)


def test_reciprocal_rank_whole_ranking_unless_k() -> None:
    ranked = ["x", "y", "z", "a"]
    assert reciprocal_rank(ranked, {"a": 1.0}) == 0.25
    assert reciprocal_rank(ranked, {"a": 1.0}, k=3) == 0.0
    assert reciprocal_rank(ranked, {"a": 1.0}, k=4) == 0.25


def test_average_precision_divides_by_all_relevant_judged() -> None:
    # relevant at ranks 1 and 3 of 3 judged relevant: (1/1 + 2/3) / 3
    value = average_precision(["a", "x", "b"], {"a": 1, "b": 1, "c": 1})
    assert value == pytest.approx((1 + 2 / 3) / 3, abs=1e-15)
    # the cutoff drops the hit at rank 3 but keeps the denominator
    assert average_precision(["a", "x", "b"], {"a": 1, "b": 1, "c": 1}, k=2) == pytest.approx(1 / 3)


def test_graded_relevance_is_binary_outside_ndcg() -> None:
    assert recall_at_k(["a"], {"a": 3.0, "b": 1.0}, 1) == 0.5
    assert average_precision(["b", "a"], {"a": 3.0, "b": 1.0}) == 1.0


def test_registry_holds_exactly_the_documented_metrics() -> None:
    assert sorted(RETRIEVAL_METRICS) == ["map", "mrr", "ndcg", "precision", "recall"]
    ranked, judged = ["x", "a", "b"], {"a": 1.0, "b": 1.0}
    assert RETRIEVAL_METRICS["mrr"](ranked, judged, 1) == 0.0
    assert RETRIEVAL_METRICS["mrr"](ranked, judged, 2) == 0.5
    assert RETRIEVAL_METRICS["map"](ranked, judged, 2) == 0.25


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", ALL)
@pytest.mark.parametrize("k", [0, -1])
def test_k_below_one_is_rejected(fn, k) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=rf"^'k' must be a positive integer \(got {k}\)$"):
        fn(["a"], {"a": 1.0}, k)


@pytest.mark.parametrize("fn", OPTIONAL_K)
def test_optional_k_below_one_is_rejected(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"^'k' must be a positive integer \(got 0\)$"):
        fn(["a"], {"a": 1.0}, 0)


@pytest.mark.parametrize("fn", [*ALL, *OPTIONAL_K])
def test_duplicate_doc_id_is_rejected(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"^'ranked' lists doc id 'a' more than once$"):
        fn(["a", "b", "a"], {"a": 1.0}, 3)


def test_non_integer_k_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"got 2.5"):
        ndcg_at_k(["a"], {"a": 1.0}, 2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got True"):
        ndcg_at_k(["a"], {"a": 1.0}, True)


def test_a_bare_string_ranking_is_rejected() -> None:
    with pytest.raises(TypeError, match="'ranked' must be a sequence of doc ids, not a single str"):
        recall_at_k("abc", {"a": 1.0}, 2)


# --- properties -----------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(12)]
rankings = st.lists(st.sampled_from(DOCS), unique=True, max_size=12)
judgements = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3).map(float), max_size=12)
cutoffs = st.integers(1, 15)


def _all_values(ranked: list[str], judged: dict[str, float], k: int) -> dict[str, float]:
    return {name: fn(ranked, judged, k) for name, fn in RETRIEVAL_METRICS.items()}


@given(rankings, judgements, cutoffs)
def test_every_metric_lies_in_unit_interval(ranked, judged, k) -> None:  # type: ignore[no-untyped-def]
    for name, value in _all_values(ranked, judged, k).items():
        assert 0.0 <= value <= 1.0 + 1e-12, name


@given(judgements, cutoffs)
def test_a_perfect_ranking_scores_one(judged, k) -> None:  # type: ignore[no-untyped-def]
    relevant = sorted((d for d, g in judged.items() if g > 0), key=lambda d: -judged[d])
    if not relevant:
        return
    assert ndcg_at_k(relevant, judged, k) == pytest.approx(1.0)
    assert reciprocal_rank(relevant, judged) == 1.0
    assert average_precision(relevant, judged) == pytest.approx(1.0)
    assert recall_at_k(relevant, judged, max(k, len(relevant))) == 1.0
    assert precision_at_k(relevant, judged, min(k, len(relevant))) == 1.0


@given(rankings, judgements, cutoffs, st.data())
def test_moving_a_relevant_doc_up_never_hurts(ranked, judged, k, data) -> None:  # type: ignore[no-untyped-def]
    positions = [i for i, d in enumerate(ranked) if judged.get(d, 0) > 0]
    if not positions:
        return
    i = data.draw(st.sampled_from(positions))
    j = data.draw(st.integers(0, i))
    # swapping with a doc above of lower grade: metrics can only improve
    if judged.get(ranked[j], 0) > judged[ranked[i]]:
        return
    better = list(ranked)
    better[i], better[j] = better[j], better[i]
    before, after = _all_values(ranked, judged, k), _all_values(better, judged, k)
    for name in before:
        assert after[name] >= before[name] - 1e-12, name


def _pytrec(ranked: list[str], judged: dict[str, float], measures: set[str]) -> dict[str, float]:
    qrels = {"q": {d: int(g) for d, g in judged.items()}}
    # strictly decreasing scores reproduce the list order exactly
    run = {"q": {d: float(len(ranked) - i) for i, d in enumerate(ranked)}}
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)["q"]  # type: ignore[no-any-return]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=12), judgements, st.integers(1, 12))
def test_parity_with_pytrec_eval(ranked, judged, k) -> None:  # type: ignore[no-untyped-def]
    if not judged:
        return  # pytrec_eval needs at least one judgement for the query
    ref = _pytrec(ranked, judged, {f"ndcg_cut.{k}", f"recall.{k}", f"P.{k}", "recip_rank", f"map_cut.{k}", "map"})
    assert ndcg_at_k(ranked, judged, k) == pytest.approx(ref[f"ndcg_cut_{k}"], abs=1e-12)
    assert recall_at_k(ranked, judged, k) == pytest.approx(ref[f"recall_{k}"], abs=1e-12)
    assert precision_at_k(ranked, judged, k) == pytest.approx(ref[f"P_{k}"], abs=1e-12)
    assert reciprocal_rank(ranked, judged) == pytest.approx(ref["recip_rank"], abs=1e-12)
    assert average_precision(ranked, judged, k) == pytest.approx(ref[f"map_cut_{k}"], abs=1e-12)
    assert average_precision(ranked, judged) == pytest.approx(ref["map"], abs=1e-12)


@pytest.mark.parametrize("fn", [*ALL, *OPTIONAL_K])
@pytest.mark.parametrize("grade", [math.inf, math.nan, "1", True, None])
def test_a_grade_must_be_a_finite_number(fn, grade) -> None:  # type: ignore[no-untyped-def]
    message = rf"^'relevant' grade of doc id 'd1' must be a finite number \(got {grade!r}\)$"
    with pytest.raises(ValueError, match=message):
        fn(["d1"], {"d1": grade}, 1)


def test_relevant_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match=r"^'relevant' must be a mapping \{doc_id: grade\} \(got list\)$"):
        recall_at_k(["d1"], ["d1"], 1)  # type: ignore[arg-type]


def test_numpy_grades_are_numbers() -> None:
    import numpy as np

    assert ndcg_at_k(["d1"], {"d1": np.float32(2.0), "d2": np.int64(0)}, 1) == 1.0
