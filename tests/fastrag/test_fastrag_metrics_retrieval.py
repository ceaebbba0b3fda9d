"""The five retrieval metrics: hand-computed values at both keys, edge cases, ties to ef's kernels."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank
from fastrag.benchmark import EvalSample, QueryOutcome
from fastrag.benchmark.metrics import Metric
from fastrag.benchmark.metrics.retrieval import MRR, NDCG, HitRate, Precision, Recall, RetrievalMetric
from fastrag.documents import Chunk

A0, A1 = Chunk("a", 0, "a zero"), Chunk("a", 1, "a one")
B0, C0, D0 = Chunk("b", 0, "b zero"), Chunk("c", 0, "c zero"), Chunk("d", 0, "d zero")
# a0 is retrieved twice; a1 is a second chunk of page a.
RETRIEVED = (A0, B0, A0, C0, D0, A1)
LOG2_3, LOG2_4, LOG2_6 = math.log2(3), math.log2(4), math.log2(6)


def score(metric: Metric, relevant: list[str], retrieved: tuple[Chunk, ...] = RETRIEVED) -> float | None:
    return asyncio.run(metric.score(EvalSample("q", "?", relevant), QueryOutcome("q", "?", retrieved)))


CHUNK_RELEVANT = [B0.id, A1.id, "never-retrieved"]
PAGE_RELEVANT = ["c", "e"]


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # window: a0, b0, c0 (the repeated a0 keeps its first position); relevant: b0 at rank 2.
        (Recall(k=3), 1 / 3),
        (Precision(k=3), 1 / 3),
        (MRR(k=3), 1 / 2),
        (HitRate(k=3), 1.0),
        (NDCG(k=3), (1 / LOG2_3) / (1 + 1 / LOG2_3 + 1 / LOG2_4)),  # 0.29608
        # window: a0, b0, c0, d0, a1; relevant: b0 at rank 2, a1 at rank 5.
        (Recall(k=5), 2 / 3),
        (Precision(k=5), 2 / 5),
        (MRR(k=5), 1 / 2),
        (HitRate(k=5), 1.0),
        (NDCG(k=5), (1 / LOG2_3 + 1 / LOG2_6) / (1 + 1 / LOG2_3 + 1 / LOG2_4)),  # 0.47762
        # k=1: only a0, not relevant.
        (Recall(k=1), 0.0),
        (Precision(k=1), 0.0),
        (MRR(k=1), 0.0),
        (HitRate(k=1), 0.0),
        (NDCG(k=1), 0.0),
    ],
    ids=lambda value: value.name if isinstance(value, Metric) else "",
)
def test_chunk_level_hand_computed(metric: Metric, expected: float) -> None:
    assert score(metric, CHUNK_RELEVANT) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # pages in order: a, b, c, d (a0 twice and a1 all map to page a at rank 1); c at rank 3.
        (Recall(k=3, key="source_uri"), 1 / 2),
        (Precision(k=3, key="source_uri"), 1 / 3),
        (MRR(k=3, key="source_uri"), 1 / 3),
        (HitRate(k=3, key="source_uri"), 1.0),
        (NDCG(k=3, key="source_uri"), (1 / LOG2_4) / (1 + 1 / LOG2_3)),  # 0.30657
        # k=5 but only 4 distinct pages: precision divides by 4, not 5.
        (Recall(k=5, key="source_uri"), 1 / 2),
        (Precision(k=5, key="source_uri"), 1 / 4),
        (MRR(k=5, key="source_uri"), 1 / 3),
        (HitRate(k=5, key="source_uri"), 1.0),
        (NDCG(k=5, key="source_uri"), (1 / LOG2_4) / (1 + 1 / LOG2_3)),
        (HitRate(k=2, key="source_uri"), 0.0),
    ],
    ids=lambda value: value.name if isinstance(value, Metric) else "",
)
def test_page_level_hand_computed(metric: Metric, expected: float) -> None:
    assert score(metric, PAGE_RELEVANT) == pytest.approx(expected, abs=1e-12)


def test_decimal_values_of_the_ndcg_cases() -> None:
    assert round(score(NDCG(k=3), CHUNK_RELEVANT) or 0, 5) == 0.29608
    assert round(score(NDCG(k=5), CHUNK_RELEVANT) or 0, 5) == 0.47762
    assert round(score(NDCG(k=3, key="source_uri"), PAGE_RELEVANT) or 0, 5) == 0.30657


def test_page_repeats_do_not_count_twice() -> None:
    # Three chunks of one relevant page: one hit, not three.
    retrieved = (A0, A1, Chunk("a", 2, "a two"), B0)
    assert score(Recall(k=5, key="source_uri"), ["a"], retrieved) == 1.0
    assert score(Precision(k=5, key="source_uri"), ["a"], retrieved) == 0.5
    assert score(NDCG(k=5, key="source_uri"), ["a"], retrieved) == 1.0


def test_chunk_repeated_counts_once_at_its_first_position() -> None:
    retrieved = (B0, B0, B0)
    assert score(Precision(k=3), [B0.id]) == pytest.approx(1 / 3)  # RETRIEVED: a0, b0, c0
    assert score(Precision(k=3), [B0.id], retrieved) == 1.0  # window is just [b0]
    assert score(Recall(k=3), [B0.id, C0.id], retrieved) == 0.5


def test_ndcg_ideal_is_cut_at_k() -> None:
    relevant = [B0.id, C0.id, D0.id, "x", "y", "z", "w"]
    assert score(NDCG(k=2), relevant, (B0, C0)) == 1.0  # ideal over min(7, 2) = 2 documents
    assert score(Recall(k=2), relevant, (B0, C0)) == pytest.approx(2 / 7)


@pytest.mark.parametrize("cls", [Recall, Precision, MRR, NDCG, HitRate])
@pytest.mark.parametrize("key", ["id", "source_uri"])
def test_empty_retrieval_scores_zero(cls: type[RetrievalMetric], key: str) -> None:
    assert score(cls(k=5, key=key), ["a", B0.id], ()) == 0.0  # type: ignore[arg-type]


@pytest.mark.parametrize("cls", [Recall, Precision, MRR, NDCG, HitRate])
@pytest.mark.parametrize("retrieved", [RETRIEVED, ()])
def test_no_relevant_ids_is_none(cls: type[RetrievalMetric], retrieved: tuple[Chunk, ...]) -> None:
    assert score(cls(), [], retrieved) is None


def test_names_defaults_and_class_attributes() -> None:
    assert [m.name for m in (Recall(), Precision(), MRR(), NDCG(), HitRate())] == [
        "recall@5",
        "precision@5",
        "mrr@5",
        "ndcg@5",
        "hit_rate@5",
    ]
    assert MRR(k=10, key="source_uri").name == "mrr@10[source_uri]"
    metric = Recall()
    assert (metric.k, metric.key) == (5, "id")
    assert (metric.higher_is_better, metric.needs_answer, metric.needs_relevant_ids) == (True, False, True)
    assert RetrievalMetric.k == 5
    assert RetrievalMetric.key == "id"


def test_metrics_are_values() -> None:
    assert Recall(k=3) == Recall(k=3)
    assert hash(Recall(k=3)) == hash(Recall(k=3))
    assert Recall(k=3) != Recall(k=4)
    assert Recall(k=3) != Precision(k=3)  # type: ignore[comparison-overlap]
    assert repr(NDCG(k=3, key="source_uri")) == "NDCG(k=3, key='source_uri')"
    with pytest.raises(AttributeError):
        Recall().k = 3  # type: ignore[misc]


def test_retrieval_metric_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        RetrievalMetric()  # type: ignore[abstract]


@pytest.mark.parametrize(("k", "error_type"), [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                               ("5", TypeError), (True, TypeError), (None, TypeError)])
def test_bad_k_names_it(k: object, error_type: type[Exception]) -> None:
    with pytest.raises(error_type) as error:
        Recall(k=k)  # type: ignore[arg-type]
    assert str(error.value) == f"'k' must be a positive integer (got {k!r})"


def test_bad_key_names_it() -> None:
    with pytest.raises(ValueError, match=r"^'key' must be one of 'id', 'source_uri' \(got 'url'\)$"):
        HitRate(key="url")  # type: ignore[arg-type]


def test_positional_arguments_are_refused() -> None:
    with pytest.raises(TypeError):
        Recall(5)  # type: ignore[call-arg]


# --- properties: at key="id" the metrics are ef's kernels on the same (distinct) ranked list ---

ids = st.integers(min_value=0, max_value=25)


def chunks_for(numbers: list[int]) -> tuple[Chunk, ...]:
    return tuple(Chunk(f"page-{n % 7}", n, f"text {n}") for n in numbers)


@settings(max_examples=200, deadline=None)
@given(
    ranked=st.lists(ids, unique=True, max_size=15),
    relevant=st.sets(ids, min_size=1, max_size=8),
    k=st.integers(min_value=1, max_value=12),
)
def test_key_id_agrees_with_ef_kernels(ranked: list[int], relevant: set[int], k: int) -> None:
    retrieved = chunks_for(ranked)
    ranked_ids = [chunk.id for chunk in retrieved]
    relevant_ids = sorted(chunk.id for chunk in chunks_for(sorted(relevant)))
    grades = dict.fromkeys(relevant_ids, 1.0)
    recall = score(Recall(k=k), relevant_ids, retrieved)
    assert recall == recall_at_k(ranked_ids, grades, k)
    assert score(MRR(k=k), relevant_ids, retrieved) == reciprocal_rank(ranked_ids, grades, k)
    assert score(HitRate(k=k), relevant_ids, retrieved) == (1.0 if reciprocal_rank(ranked_ids, grades, k) else 0.0)
    assert score(HitRate(k=k), relevant_ids, retrieved) == (1.0 if recall else 0.0)
    assert score(NDCG(k=k), relevant_ids, retrieved) == ndcg_at_k(ranked_ids, grades, k)
    window = min(k, len(ranked_ids))
    expected_precision = precision_at_k(ranked_ids, grades, k) * k / window if window else 0.0
    assert score(Precision(k=k), relevant_ids, retrieved) == pytest.approx(expected_precision, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    ranked=st.lists(ids, max_size=20),
    relevant=st.sets(st.integers(min_value=0, max_value=6), min_size=1, max_size=4),
    k=st.integers(min_value=1, max_value=8),
)
def test_source_uri_key_is_ef_kernels_on_first_distinct_pages(ranked: list[int], relevant: set[int], k: int) -> None:
    retrieved = chunks_for(ranked)
    pages = list(dict.fromkeys(chunk.source_uri for chunk in retrieved))
    relevant_pages = [f"page-{n}" for n in sorted(relevant)]
    grades = dict.fromkeys(relevant_pages, 1.0)
    assert score(Recall(k=k, key="source_uri"), relevant_pages, retrieved) == recall_at_k(pages, grades, k)
    assert score(MRR(k=k, key="source_uri"), relevant_pages, retrieved) == reciprocal_rank(pages, grades, k)
    assert score(NDCG(k=k, key="source_uri"), relevant_pages, retrieved) == ndcg_at_k(pages, grades, k)
    for metric in (Recall, Precision, MRR, NDCG, HitRate):
        value = score(metric(k=k, key="source_uri"), relevant_pages, retrieved)
        assert value is not None
        assert 0.0 <= value <= 1.0


# --- an independent reference: the documented definitions from scratch, no ef kernel in sight ---


def reference_scores(retrieved_ids: list[str], relevant: set[str], k: int) -> dict[str, float]:
    """The five metrics as documented, written out longhand.

    The window is the first `k` distinct ids of the retrieved list, each at its first position;
    ranks are 1-based within it. Binary gain; the ideal DCG covers min(|relevant|, k) documents;
    precision divides by the window's length (0.0 for an empty window).
    """
    window: list[str] = []
    for doc_id in retrieved_ids:
        if doc_id not in window:
            window.append(doc_id)
        if len(window) == k:
            break
    hits = [rank for rank, doc_id in enumerate(window, start=1) if doc_id in relevant]
    dcg = 0.0
    for rank in hits:
        dcg += 1.0 / math.log2(rank + 1)
    ideal = 0.0
    for rank in range(1, min(len(relevant), k) + 1):
        ideal += 1.0 / math.log2(rank + 1)
    return {
        "recall": len(hits) / len(relevant),
        "precision": len(hits) / len(window) if window else 0.0,
        "mrr": 1.0 / hits[0] if hits else 0.0,
        "ndcg": dcg / ideal,
        "hit_rate": 1.0 if hits else 0.0,
    }


def test_reference_on_a_hand_worked_case() -> None:
    # window x, a, b (the second x and a are repeats); relevant a, b, c -> hits at ranks 2 and 3.
    got = reference_scores(["x", "a", "x", "a", "b", "c"], {"a", "b", "c"}, 3)
    ideal = 1 + 1 / LOG2_3 + 1 / LOG2_4
    assert got == pytest.approx(
        {"recall": 2 / 3, "precision": 2 / 3, "mrr": 1 / 2, "ndcg": (1 / LOG2_3 + 1 / LOG2_4) / ideal, "hit_rate": 1.0}
    )


@settings(max_examples=300, deadline=None)
@given(
    # Few distinct numbers, long lists: duplicates are common, as are windows shorter than k.
    ranked=st.lists(st.integers(min_value=0, max_value=12), max_size=20),
    relevant=st.sets(st.integers(min_value=0, max_value=15), min_size=1, max_size=8),
    k=st.integers(min_value=1, max_value=12),
)
def test_key_id_matches_an_independent_reference(ranked: list[int], relevant: set[int], k: int) -> None:
    retrieved = chunks_for(ranked)
    relevant_ids = sorted(chunk.id for chunk in chunks_for(sorted(relevant)))
    expected = reference_scores([chunk.id for chunk in retrieved], set(relevant_ids), k)
    for cls in (Recall, Precision, MRR, NDCG, HitRate):
        metric = cls(k=k)
        assert score(metric, relevant_ids, retrieved) == pytest.approx(
            expected[metric.name.split("@")[0]], abs=1e-12
        ), metric.name


@settings(max_examples=200, deadline=None)
@given(
    ranked=st.lists(st.integers(min_value=0, max_value=25), max_size=20),
    relevant=st.sets(st.integers(min_value=0, max_value=8), min_size=1, max_size=4),
    k=st.integers(min_value=1, max_value=8),
)
def test_key_source_uri_matches_an_independent_reference(ranked: list[int], relevant: set[int], k: int) -> None:
    retrieved = chunks_for(ranked)  # several chunks per page: page repeats are common
    relevant_pages = [f"page-{n}" for n in sorted(relevant)]  # page-7, page-8 are never retrieved
    expected = reference_scores([chunk.source_uri for chunk in retrieved], set(relevant_pages), k)
    for cls in (Recall, Precision, MRR, NDCG, HitRate):
        metric = cls(k=k, key="source_uri")
        assert score(metric, relevant_pages, retrieved) == pytest.approx(
            expected[metric.name.split("@")[0]], abs=1e-12
        ), metric.name
