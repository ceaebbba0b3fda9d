"""Answer metrics: the pipeline's answer against the sample's reference (SQuAD definitions).

Both are the ``exact_match`` and ``token_f1`` entries of ef's measure registry
(:func:`ef.measures.answers.exact_match`, :func:`ef.measures.answers.token_f1`: lower-cased,
punctuation and articles removed, whitespace collapsed). They need an answer, so a bare Retriever
cannot be benchmarked with them; a sample without a ``reference_answer`` scores ``None``.

Examples
--------
>>> import asyncio
>>> from fastrag.benchmark import EvalSample, QueryOutcome
>>> sample = EvalSample("q", "capital of France?", reference_answer="Paris")
>>> asyncio.run(ExactMatch().score(sample, QueryOutcome("q", "?", answer="paris.")))
1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ef.measures.answers import exact_match, token_f1
from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.samples import EvalSample, QueryOutcome

__all__ = ["ExactMatch", "TokenF1"]


@dataclass(frozen=True)
class ExactMatch(Metric):
    """``1.0`` if the answer equals the reference after SQuAD normalisation, else ``0.0``."""

    needs_answer: ClassVar[bool] = True

    @property
    def name(self) -> str:
        """Always ``"exact_match"``."""
        return "exact_match"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Exact match, or None without a reference answer or an answer."""
        if sample.reference_answer is None or outcome.answer is None:
            return None
        return exact_match(outcome.answer, sample.reference_answer)


@dataclass(frozen=True)
class TokenF1(Metric):
    """Token-overlap F1 of the answer against the reference (the SQuAD F1).

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> sample = EvalSample("q", "?", reference_answer="quick brown dog")
    >>> round(asyncio.run(TokenF1().score(sample, QueryOutcome("q", "?", answer="quick brown fox"))), 4)
    0.6667
    """

    needs_answer: ClassVar[bool] = True

    @property
    def name(self) -> str:
        """Always ``"token_f1"``."""
        return "token_f1"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Token F1, or None without a reference answer or an answer."""
        if sample.reference_answer is None or outcome.answer is None:
            return None
        return token_f1(outcome.answer, sample.reference_answer)
