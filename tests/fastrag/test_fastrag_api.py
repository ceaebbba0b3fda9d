"""The public surface: import paths from the issue and the spec, sorted __all__, spec attributes."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "fastrag",
    "fastrag.documents",
    "fastrag.adapters",
    "fastrag.benchmark",
    "fastrag.benchmark.samples",
    "fastrag.benchmark.summary",
    "fastrag.benchmark.result",
    "fastrag.benchmark.harness",
    "fastrag.benchmark.metrics",
    "fastrag.benchmark.metrics.retrieval",
    "fastrag.benchmark.metrics.answer",
    "fastrag.benchmark.metrics.operational",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__, key=lambda n: (not n.isupper(), n)) or module.__all__ == sorted(
        module.__all__
    )
    for attribute in module.__all__:
        assert getattr(module, attribute) is not None


def test_documented_import_paths() -> None:
    from fastrag.benchmark import BenchmarkResult, EvalSample, QueryOutcome, run_benchmark
    from fastrag.benchmark.metrics import Metric
    from fastrag.benchmark.metrics.retrieval import Recall

    assert inspect.iscoroutinefunction(run_benchmark)
    assert inspect.iscoroutinefunction(Recall.score)
    assert issubclass(Recall, Metric)
    assert {BenchmarkResult.__name__, EvalSample.__name__, QueryOutcome.__name__} == {
        "BenchmarkResult",
        "EvalSample",
        "QueryOutcome",
    }


def test_spec_signatures_and_defaults() -> None:
    from fastrag.benchmark.metrics.retrieval import MRR, NDCG, HitRate, Precision, Recall, RetrievalMetric

    for cls in (RetrievalMetric, Recall, Precision, MRR, NDCG, HitRate):
        assert str(inspect.signature(cls)) == "(*, k: 'int' = 5, key: 'Key' = 'id') -> None"
        assert (cls.k, cls.key) == (5, "id")
        assert (cls.higher_is_better, cls.needs_answer, cls.needs_relevant_ids) == (True, False, True)


def test_answer_and_operational_attributes() -> None:
    from fastrag.benchmark.metrics import Cost, ExactMatch, Latency, TokenF1, TotalTokens

    assert [(m().name, m.higher_is_better, m.needs_answer) for m in (ExactMatch, TokenF1)] == [
        ("exact_match", True, True),
        ("token_f1", True, True),
    ]
    assert [(m().name, m.higher_is_better, m.needs_relevant_ids) for m in (Latency, TotalTokens, Cost)] == [
        ("latency_ms", False, False),
        ("total_tokens", False, False),
        ("cost_usd", False, False),
    ]


def test_every_metric_name_parses_back_to_an_equal_metric() -> None:
    from fastrag.benchmark.metrics import METRICS, MRR, NDCG, HitRate, Precision, Recall, parse_metric

    ranking = [cls(k=k, key=key) for cls in (Recall, Precision, MRR, NDCG, HitRate) for k in (1, 5, 10, 100)
               for key in ("id", "source_uri")]  # fmt: skip
    others = [cls() for cls in METRICS.values() if cls not in (Recall, Precision, MRR, NDCG, HitRate)]
    assert sorted(m.name for m in others) == [
        "answer_contains", "chrf", "claim_f1", "claim_precision", "claim_recall", "context_utilization", "cost_usd",
        "exact_match", "faithfulness", "hallucination", "latency_ms", "noise_sensitivity_in_irrelevant",
        "noise_sensitivity_in_relevant", "rouge_l", "token_f1", "total_tokens",
    ]
    for metric in ranking + others:
        assert parse_metric(metric.name) == metric
    assert parse_metric("ndcg") == NDCG(k=5)


LABELS = (
    "answer_contains, chrf, claim_f1, claim_precision, claim_recall, context_utilization, cost_usd, exact_match, "
    "faithfulness, hallucination, hit_rate, latency_ms, mrr, ndcg, noise_sensitivity_in_irrelevant, "
    "noise_sensitivity_in_relevant, precision, recall, rouge_l, token_f1, total_tokens"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bleu", f"unknown metric 'bleu': the labels are {LABELS}"),
        ("recall@", f"unknown metric 'recall@': the labels are {LABELS}"),
        ("recall@0", "'k' must be a positive integer (got 0)"),
        ("recall@5[url]", "'key' must be one of 'id', 'source_uri' (got 'url')"),
        ("latency_ms@5", "metric 'latency_ms' takes no cutoff or key (got 'latency_ms@5')"),
    ],
)
def test_parse_errors_name_the_text(text: str, message: str) -> None:
    from fastrag.benchmark.metrics import parse_metric

    with pytest.raises(ValueError) as error:
        parse_metric(text)
    assert str(error.value) == message


def test_register_rejects_a_taken_label() -> None:
    from fastrag.benchmark.metrics import Recall, register

    class Recall2(Recall):
        pass

    with pytest.raises(ValueError, match=r"^metric label 'recall' is already registered to Recall$"):
        register(Recall2)
