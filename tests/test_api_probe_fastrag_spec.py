"""The contract of spec/fastrag.benchmark.metrics.retrieval.md: names, signatures, defaults,
bases, summary keys and each metric's formula (checked against a direct reading of it)."""

from __future__ import annotations

import asyncio
import inspect
import math
import re
from pathlib import Path

import pytest

import fastrag.benchmark.metrics.retrieval as retrieval
from fastrag.benchmark import EvalSample, QueryOutcome
from fastrag.benchmark.metrics import Metric
from fastrag.benchmark.summary import DistributionSummary
from fastrag.documents import Chunk

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "fastrag.benchmark.metrics.retrieval.md"
NAMES = ["HitRate", "MRR", "NDCG", "Precision", "Recall", "RetrievalMetric"]
LABELS = {"Recall": "recall", "Precision": "precision", "MRR": "mrr", "NDCG": "ndcg", "HitRate": "hit_rate"}

pytestmark = pytest.mark.skipif(not SPEC.exists(), reason="../shared/spec is not beside the checkout")


def _spec() -> str:
    return SPEC.read_text(encoding="utf-8")


def _bare(signature: inspect.Signature) -> str:
    """The signature as the rendered spec shows it: no annotations."""
    plain = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
    return str(signature.replace(parameters=plain, return_annotation=inspect.Signature.empty))


def test_the_spec_lists_these_classes_with_these_signatures() -> None:
    listed = re.findall(r"^class fastrag\.benchmark\.metrics\.retrieval\.(\w+)(\(.*?\))\[source\]#$", _spec(), re.M)
    assert sorted(listed) == sorted((name, "(*, k=5, key='id')") for name in NAMES)
    for name, signature in listed:
        assert _bare(inspect.signature(getattr(retrieval, name))) == signature


@pytest.mark.parametrize("name", NAMES)
def test_class_attributes_and_bases_are_the_specs(name: str) -> None:
    cls = getattr(retrieval, name)
    assert cls.__bases__ == ((Metric,) if name == "RetrievalMetric" else (retrieval.RetrievalMetric,))
    assert (cls.k, cls.key, cls.needs_relevant_ids, cls.higher_is_better, cls.needs_answer) == (
        5,
        "id",
        True,
        True,
        False,
    )
    assert inspect.iscoroutinefunction(cls.score)
    assert list(inspect.signature(cls.score).parameters) == ["self", "sample", "outcome"]
    assert list(inspect.signature(cls.aggregate).parameters) == ["self", "scores"]
    assert isinstance(inspect.getattr_static(cls, "name"), property)


def test_retrieval_metric_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        retrieval.RetrievalMetric()  # type: ignore[abstract]


@pytest.mark.parametrize("name", sorted(LABELS))
def test_summary_keys(name: str) -> None:
    cls = getattr(retrieval, name)
    assert (cls().name, cls(k=7).name) == (f"{LABELS[name]}@5", f"{LABELS[name]}@7")
    with pytest.raises(TypeError):
        cls(5)  # keyword-only, as the spec's (*, k=5, key='id')


def _oracle(name: str, window: list[str], relevant: set[str], k: int) -> float:
    """Each formula as the spec states it, over the window of the first k distinct documents."""
    hits = [doc in relevant for doc in window]
    if name == "Recall":  # |relevant ∩ retrieved| / |relevant|
        return sum(hits) / len(relevant)
    if name == "Precision":  # |relevant ∩ retrieved| / len(retrieved)
        return sum(hits) / len(window) if window else 0.0
    if name == "MRR":  # 1 / (position of the first relevant), else 0.0
        return next((1 / (i + 1) for i, hit in enumerate(hits) if hit), 0.0)
    if name == "HitRate":  # 1.0 if any relevant document is in the window
        return 1.0 if any(hits) else 0.0
    # Binary-gain NDCG, the ideal ranking over min(len(relevant), k)
    dcg = sum(1 / math.log2(i + 2) for i, hit in enumerate(hits) if hit)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal


PAGES = ["a", "b", "a", "c", "d", "b", "e", "f"]  # pages of the retrieved chunks, best first (a and b twice)


@pytest.mark.parametrize("name", sorted(LABELS))
@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 50])
@pytest.mark.parametrize("relevant", [["b"], ["c", "f"], ["z"], ["a", "b", "c", "d", "e", "f", "g"], ["f", "y"]])
def test_each_metric_is_its_formula(name: str, k: int, relevant: list[str]) -> None:
    chunks = [Chunk(page, i, f"{page}{i}") for i, page in enumerate(PAGES)]
    outcome = QueryOutcome("q", "?", chunks)
    window = list(dict.fromkeys(PAGES))[:k]  # each page at its first position
    metric = getattr(retrieval, name)(k=k, key="source_uri")
    got = asyncio.run(metric.score(EvalSample("q", "?", relevant), outcome))
    assert got == pytest.approx(_oracle(name, window, set(relevant), k), abs=1e-12)
    # By chunk id: the same formula over the chunks themselves.
    ids = [chunk.id for chunk in chunks]
    relevant_ids = [chunks[i].id for i, page in enumerate(PAGES) if page in relevant]
    if relevant_ids:
        by_id = asyncio.run(getattr(retrieval, name)(k=k).score(EvalSample("q", "?", relevant_ids), outcome))
        assert by_id == pytest.approx(_oracle(name, ids[:k], set(relevant_ids), k), abs=1e-12)


@pytest.mark.parametrize("name", sorted(LABELS))
def test_no_relevant_ids_is_none_and_an_empty_retrieval_is_zero(name: str) -> None:
    metric = getattr(retrieval, name)()
    assert asyncio.run(metric.score(EvalSample("q", "?"), QueryOutcome("q", "?", [Chunk("a", 0, "x")]))) is None
    assert asyncio.run(metric.score(EvalSample("q", "?", ["a"]), QueryOutcome("q", "?", []))) == 0.0


def test_aggregate_returns_a_distribution_summary() -> None:
    summary = retrieval.Recall().aggregate([1.0, None, 0.0])
    assert isinstance(summary, DistributionSummary)
    assert (summary.count, summary.missing, summary.mean) == (2, 1, 0.5)
