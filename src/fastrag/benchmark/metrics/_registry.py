"""fastrag's metric names: canonical strings parse back to equal metric objects.

fastrag's own labels (``recall``, ``ndcg``, ``latency_ms`` …) name its metric classes; any other
name is read by ef's measure registry (:func:`ef.measures.resolve`) and runs as a
:class:`~fastrag.benchmark.metrics.retrieval.RankingMeasure` (``ERR@10``, ``RBP(p=0.8)`` …). The
definitions behind the ranking labels are the registry's (each class's ``family``).
"""

from __future__ import annotations

import re

from fastrag.benchmark.metrics._base import Metric
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

__all__ = ["METRICS", "parse_metric", "register"]

METRICS: dict[str, type[Metric]] = {}
"""Metric label → class: ``"recall"`` → :class:`Recall`, ``"latency_ms"`` → :class:`Latency`, …

Ranking metrics are labelled without their cutoff (``"ndcg"``); the others by their fixed
:attr:`Metric.name`. :func:`parse_metric`, its error messages and the tests all read this dict.
"""

_PATTERN = re.compile(r"(?P<label>[a-z_0-9]+)(?:@(?P<k>[0-9]+))?(?:\[(?P<key>[a-z_]+)\])?")
_KEY_SUFFIX = re.compile(r"(?P<measure>.+?)(?:\[(?P<key>[a-z_]+)\])?")


def register(cls: type[Metric]) -> type[Metric]:
    """Add a metric class under its label; a label already taken is a ``ValueError``.

    A :class:`RetrievalMetric` subclass is labelled by its ``_label``; any other metric must
    construct without arguments and is labelled by its ``name``.
    """
    label = cls._label if issubclass(cls, RetrievalMetric) else cls().name
    if label in METRICS:
        raise ValueError(f"metric label {label!r} is already registered to {METRICS[label].__name__}")
    METRICS[label] = cls
    return cls


_BUILT_IN: tuple[type[Metric], ...] = (
    Recall, Precision, MRR, NDCG, HitRate, ExactMatch, TokenF1, Latency, TotalTokens, Cost,
    # ef's further answer metrics (issue 35): deterministic, no model.
    AnswerContains, RougeL, ChrF, ClaimRecall, ClaimPrecision, ClaimF1, Faithfulness, ContextUtilization,
    NoiseSensitivityInRelevant, NoiseSensitivityInIrrelevant, Hallucination,
)
for _cls in _BUILT_IN:
    register(_cls)


def parse_metric(text: str) -> Metric:
    """The metric a canonical name stands for; ``parse_metric(m.name) == m`` for every metric.

    Parameters
    ----------
    text
        ``"<label>"``, or for a ranking metric ``"<label>@<k>"`` with an optional
        ``"[source_uri]"`` (``k`` defaults to 5 when omitted); or any ranking measure name of ef's
        registry (``"ERR@10"``, ``"RBP(p=0.8)[source_uri]"``), a :class:`RankingMeasure`.

    Raises
    ------
    ValueError
        For an unknown name (the message lists fastrag's labels, then ef's valid forms) or a
        malformed one.

    Examples
    --------
    >>> parse_metric("ndcg@10[source_uri]")
    NDCG(k=10, key='source_uri')
    >>> parse_metric("latency_ms")
    Latency()
    >>> parse_metric("ERR@10[source_uri]")
    RankingMeasure(measure='ERR@10', key='source_uri')
    >>> parse_metric("bleu@4")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown metric 'bleu@4': the labels are answer_contains, chrf, claim_f1, ..., total_tokens
    """
    match = _PATTERN.fullmatch(text) if isinstance(text, str) else None
    cls = METRICS.get(match["label"]) if match else None
    if match is None or cls is None:
        return _ranking_measure(text)
    if issubclass(cls, RetrievalMetric):
        k = int(match["k"]) if match["k"] is not None else 5
        return cls(k=k, key=match["key"] or "id")  # type: ignore[arg-type]  # key is validated there
    if match["k"] is not None or match["key"] is not None:
        raise ValueError(f"metric {match['label']!r} takes no cutoff or key (got {text!r})")
    return cls()  # registered non-ranking metrics take no arguments


def _ranking_measure(text: object) -> Metric:
    """A name of ef's registry as a :class:`RankingMeasure`, or the ``ValueError`` for an unknown metric."""
    unknown = ValueError(f"unknown metric {text!r}: the labels are {', '.join(sorted(METRICS))}")
    # A malformed use of one of fastrag's own labels ("recall@") is fastrag's error, not ef's.
    if not isinstance(text, str) or re.split(r"[@\[]", text, maxsplit=1)[0] in METRICS:
        raise unknown
    match = _KEY_SUFFIX.fullmatch(text)
    measure, key = (match["measure"], match["key"] or "id") if match else (text, "id")
    try:
        return RankingMeasure(measure, key=key)  # type: ignore[arg-type]  # key is validated there
    except ValueError as error:
        if ": unknown measure" in str(error):  # "...: unknown measure; did you mean" or "(every spelling"
            raise unknown from None  # ef does not know it either
        raise ValueError(f"{unknown}; as an ef measure: {error}") from None
