"""The one registry of metric names: canonical strings parse back to equal metric objects."""

from __future__ import annotations

import re

from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.metrics.answer import ExactMatch, TokenF1
from fastrag.benchmark.metrics.operational import Cost, Latency, TotalTokens
from fastrag.benchmark.metrics.retrieval import MRR, NDCG, HitRate, Precision, Recall, RetrievalMetric

__all__ = ["METRICS", "parse_metric", "register"]

METRICS: dict[str, type[Metric]] = {}
"""Metric label → class: ``"recall"`` → :class:`Recall`, ``"latency_ms"`` → :class:`Latency`, …

Ranking metrics are labelled without their cutoff (``"ndcg"``); the others by their fixed
:attr:`Metric.name`. :func:`parse_metric`, its error messages and the tests all read this dict.
"""

_PATTERN = re.compile(r"(?P<label>[a-z_0-9]+)(?:@(?P<k>[0-9]+))?(?:\[(?P<key>[a-z_]+)\])?")


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


for _cls in (Recall, Precision, MRR, NDCG, HitRate, ExactMatch, TokenF1, Latency, TotalTokens, Cost):
    register(_cls)


def parse_metric(text: str) -> Metric:
    """The metric a canonical name stands for; ``parse_metric(m.name) == m`` for every metric.

    Parameters
    ----------
    text
        ``"<label>"``, or for a ranking metric ``"<label>@<k>"`` with an optional
        ``"[source_uri]"`` (``k`` defaults to 5 when omitted).

    Raises
    ------
    ValueError
        For an unknown label (the message lists the known ones) or a malformed name.

    Examples
    --------
    >>> parse_metric("ndcg@10[source_uri]")
    NDCG(k=10, key='source_uri')
    >>> parse_metric("latency_ms")
    Latency()
    >>> parse_metric("bleu@4")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown metric 'bleu@4': the labels are cost_usd, exact_match, hit_rate, ..., total_tokens
    """
    match = _PATTERN.fullmatch(text) if isinstance(text, str) else None
    cls = METRICS.get(match["label"]) if match else None
    if match is None or cls is None:
        raise ValueError(f"unknown metric {text!r}: the labels are {', '.join(sorted(METRICS))}")
    if issubclass(cls, RetrievalMetric):
        k = int(match["k"]) if match["k"] is not None else 5
        return cls(k=k, key=match["key"] or "id")  # type: ignore[arg-type]  # key is validated there
    if match["k"] is not None or match["key"] is not None:
        raise ValueError(f"metric {match['label']!r} takes no cutoff or key (got {text!r})")
    return cls()  # registered non-ranking metrics take no arguments
