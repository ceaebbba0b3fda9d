"""Lexical RAG metrics. SKELETON: being written (issue 2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

__all__ = [
    "RagEvalReport",
    "RagSample",
    "context_precision",
    "context_recall",
    "evaluate_rag",
    "exact_match",
    "token_f1",
]


class RagSample(TypedDict, total=False):
    user_input: str
    response: str
    retrieved_contexts: list[str]
    reference: str
    reference_contexts: list[str]


@dataclass(frozen=True)
class RagEvalReport:
    metrics: Mapping[str, float]
    coverage: Mapping[str, int]
    n_samples: int


def exact_match(response: str, reference: str) -> float:
    raise NotImplementedError


def token_f1(response: str, reference: str) -> float:
    raise NotImplementedError


def context_recall(reference: str, retrieved_contexts: Sequence[str]) -> float:
    raise NotImplementedError


def context_precision(reference: str, retrieved_contexts: Sequence[str]) -> float:
    raise NotImplementedError


def evaluate_rag(
    samples: Iterable[RagSample | Mapping[str, Any]],
    *,
    metrics: Sequence[str] = ("exact_match", "token_f1", "context_recall", "context_precision", "non_empty_rate"),
) -> RagEvalReport:
    raise NotImplementedError
