"""Benchmark metrics: the :class:`Metric` base and the ready-made metrics.

- Retrieval (:mod:`fastrag.benchmark.metrics.retrieval`): :class:`Recall`, :class:`Precision`,
  :class:`MRR`, :class:`NDCG`, :class:`HitRate` — ``RetrievalMetric(*, k=5, key="id")`` — and
  :class:`RankingMeasure` for any other ranking measure of ef's registry (``ERR@10`` …).
- Answer (:mod:`fastrag.benchmark.metrics.answer`): :class:`ExactMatch`, :class:`TokenF1` —
  ``needs_answer=True``; and (:mod:`fastrag.benchmark.metrics.answer_quality`)
  :class:`AnswerContains`, :class:`RougeL`, :class:`ChrF` and the lexical claim diagnostics
  :class:`ClaimRecall`, :class:`ClaimPrecision`, :class:`ClaimF1`, :class:`Faithfulness`,
  :class:`ContextUtilization`, :class:`NoiseSensitivityInRelevant`,
  :class:`NoiseSensitivityInIrrelevant`, :class:`Hallucination`.
- Operational (:mod:`fastrag.benchmark.metrics.operational`): :class:`Latency`
  (``latency_ms``), :class:`TotalTokens` (``total_tokens``), :class:`Cost` (``cost_usd``) —
  ``higher_is_better=False``.

Every metric has a canonical name that :func:`parse_metric` turns back into an equal metric;
:data:`METRICS` is the registry of labels behind it.

>>> [m.name for m in (Recall(), NDCG(k=10), ExactMatch(), Latency())]
['recall@5', 'ndcg@10', 'exact_match', 'latency_ms']
>>> parse_metric("hit_rate@3[source_uri]") == HitRate(k=3, key="source_uri")
True
"""

from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.metrics._registry import METRICS, parse_metric, register
from fastrag.benchmark.metrics.answer import ExactMatch, TokenF1
from fastrag.benchmark.metrics.answer_quality import (
    AnswerContains,
    ChrF,
    ClaimF1,
    ClaimPrecision,
    ClaimRecall,
    ContextUtilization,
    Faithfulness,
    Hallucination,
    NoiseSensitivityInIrrelevant,
    NoiseSensitivityInRelevant,
    RougeL,
)
from fastrag.benchmark.metrics.operational import Cost, Latency, TotalTokens
from fastrag.benchmark.metrics.retrieval import MRR, NDCG, HitRate, Precision, RankingMeasure, Recall, RetrievalMetric

__all__ = [
    "METRICS",
    "MRR",
    "NDCG",
    "AnswerContains",
    "ChrF",
    "ClaimF1",
    "ClaimPrecision",
    "ClaimRecall",
    "ContextUtilization",
    "Cost",
    "ExactMatch",
    "Faithfulness",
    "Hallucination",
    "HitRate",
    "Latency",
    "Metric",
    "NoiseSensitivityInIrrelevant",
    "NoiseSensitivityInRelevant",
    "Precision",
    "RankingMeasure",
    "Recall",
    "RetrievalMetric",
    "RougeL",
    "TokenF1",
    "TotalTokens",
    "parse_metric",
    "register",
]
