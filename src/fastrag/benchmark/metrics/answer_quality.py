"""Answer metrics beyond EM and F1: answer-contains-reference, ROUGE-L, chrF and the claim diagnostics.

Each is the entry of the same name in ef's measure registry (:mod:`ef.measures.answers`,
:mod:`ef.measures.overlap`, :mod:`ef.measures.claims`): deterministic, no model. The claim
metrics split the answer and the reference answer into sentences and call a sentence supported by
a text when the text holds at least half of its content words (``ef.measures.claims``); the
retrieved contexts are the outcome's chunks, in rank order. A sample scores ``None`` where a
metric is not defined (no reference answer, no answer, an answer without any sentence).

Examples
--------
>>> import asyncio
>>> from fastrag.benchmark import EvalSample, QueryOutcome
>>> from fastrag.documents import Chunk
>>> sample = EvalSample("q", "capital of France?", reference_answer="Paris is the capital of France.")
>>> outcome = QueryOutcome("q", "?", [Chunk("w", 0, "Paris, capital of France")],
...                        answer="Paris is the capital of France. It has ten bridges.")
>>> [asyncio.run(m.score(sample, outcome)) for m in (ClaimRecall(), ClaimPrecision(), Faithfulness())]
[1.0, 0.5, 0.5]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ef.measures.answers import answer_contains
from ef.measures.claims import lexical_analysis
from ef.measures.overlap import chrf, rouge_l
from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.samples import EvalSample, QueryOutcome

__all__ = [
    "AnswerContains",
    "ChrF",
    "ClaimF1",
    "ClaimPrecision",
    "ClaimRecall",
    "ContextUtilization",
    "Faithfulness",
    "Hallucination",
    "NoiseSensitivityInIrrelevant",
    "NoiseSensitivityInRelevant",
    "RougeL",
]


class _ReferenceMetric(Metric):
    """The answer against the reference answer with one of ef's pure kernels."""

    needs_answer: ClassVar[bool] = True
    _name: ClassVar[str]

    def _kernel(self, answer: str, reference: str) -> float:
        raise NotImplementedError

    @property
    def name(self) -> str:
        """The registry's name of the metric."""
        return self._name

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The metric, or None without a reference answer or an answer."""
        if sample.reference_answer is None or outcome.answer is None:
            return None
        return self._kernel(outcome.answer, sample.reference_answer)


@dataclass(frozen=True)
class AnswerContains(_ReferenceMetric):
    """``1.0`` if the answer contains the reference's words in order (SQuAD normalization)."""

    _name: ClassVar[str] = "answer_contains"

    def _kernel(self, answer: str, reference: str) -> float:
        return answer_contains(answer, reference)


@dataclass(frozen=True)
class RougeL(_ReferenceMetric):
    """ROUGE-L F-measure of the answer against the reference (``rouge_score``'s, Unicode-aware words)."""

    _name: ClassVar[str] = "rouge_l"

    def _kernel(self, answer: str, reference: str) -> float:
        return rouge_l(answer, reference)


@dataclass(frozen=True)
class ChrF(_ReferenceMetric):
    """chrF of the answer against the reference (sacreBLEU's sentence chrF, as a fraction)."""

    _name: ClassVar[str] = "chrf"

    def _kernel(self, answer: str, reference: str) -> float:
        return chrf(answer, reference)


class _ClaimMetric(Metric):
    """One metric of :class:`ef.measures.claims.ClaimAnalysis`, the contexts being the retrieved chunks."""

    needs_answer: ClassVar[bool] = True
    _name: ClassVar[str]
    _needs_reference: ClassVar[bool] = True

    @property
    def name(self) -> str:
        """The registry's name of the metric."""
        return self._name

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The metric, or None where it is not defined for this sample."""
        if outcome.answer is None or (self._needs_reference and sample.reference_answer is None):
            return None
        contexts = tuple(chunk.content for chunk in outcome.retrieved)
        return lexical_analysis(outcome.answer, sample.reference_answer, contexts).metric(self._name)


@dataclass(frozen=True)
class ClaimRecall(_ClaimMetric):
    """Share of the reference answer's sentences the answer supports."""

    _name: ClassVar[str] = "claim_recall"


@dataclass(frozen=True)
class ClaimPrecision(_ClaimMetric):
    """Share of the answer's sentences the reference answer supports."""

    _name: ClassVar[str] = "claim_precision"


@dataclass(frozen=True)
class ClaimF1(_ClaimMetric):
    """Harmonic mean of claim precision and claim recall."""

    _name: ClassVar[str] = "claim_f1"


@dataclass(frozen=True)
class Faithfulness(_ClaimMetric):
    """Share of the answer's sentences some retrieved chunk supports (no reference needed)."""

    _name: ClassVar[str] = "faithfulness"
    _needs_reference: ClassVar[bool] = False


@dataclass(frozen=True)
class ContextUtilization(_ClaimMetric):
    """Of the reference sentences some chunk supports, the share the answer supports too."""

    _name: ClassVar[str] = "context_utilization"


@dataclass(frozen=True)
class NoiseSensitivityInRelevant(_ClaimMetric):
    """Share of wrong answer sentences that a relevant chunk supports (lower is better)."""

    _name: ClassVar[str] = "noise_sensitivity_in_relevant"
    higher_is_better: ClassVar[bool] = False


@dataclass(frozen=True)
class NoiseSensitivityInIrrelevant(_ClaimMetric):
    """Share of wrong answer sentences that only irrelevant chunks support (lower is better)."""

    _name: ClassVar[str] = "noise_sensitivity_in_irrelevant"
    higher_is_better: ClassVar[bool] = False


@dataclass(frozen=True)
class Hallucination(_ClaimMetric):
    """Share of answer sentences neither the reference nor any chunk supports (lower is better)."""

    _name: ClassVar[str] = "hallucination"
    higher_is_better: ClassVar[bool] = False
