"""The :class:`Metric` base class every benchmark metric derives from."""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from fastrag.benchmark.samples import EvalSample, QueryOutcome
from fastrag.benchmark.summary import DistributionSummary

__all__ = ["Metric"]


class Metric(ABC):
    """A per-sample measurement the harness computes and aggregates into a distribution.

    Subclasses set the class attributes that describe them and implement :attr:`name` and
    :meth:`score`. ``score`` is async so that metrics which call out (an LLM judge) fit the same
    interface; deterministic metrics compute synchronously inside it and never suspend.

    Examples
    --------
    >>> import asyncio
    >>> class AnswerLength(Metric):
    ...     @property
    ...     def name(self) -> str:
    ...         return "answer_length"
    ...     async def score(self, sample, outcome):
    ...         return None if outcome.answer is None else float(len(outcome.answer))
    >>> metric = AnswerLength()
    >>> asyncio.run(metric.score(EvalSample("q", "?"), QueryOutcome("q", "?", answer="Paris")))
    5.0
    >>> metric.aggregate([5.0, None]).missing
    1
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Check the arguments of each subclass's own :meth:`score` before it runs.

        A dict for the sample or ``None`` for the outcome would otherwise fail inside every
        metric with an AttributeError; the check is done once here for all of them, and for
        metrics of one's own.
        """
        super().__init_subclass__(**kwargs)
        score = cls.__dict__.get("score")
        if score is None or getattr(score, "__isabstractmethod__", False):
            return

        @functools.wraps(score)
        async def checked(self: Metric, sample: EvalSample, outcome: QueryOutcome) -> float | None:
            if not isinstance(sample, EvalSample):
                raise TypeError(f"'sample' must be an EvalSample (got {type(sample).__name__})")
            if not isinstance(outcome, QueryOutcome):
                raise TypeError(f"'outcome' must be a QueryOutcome (got {type(outcome).__name__})")
            result: float | None = await score(self, sample, outcome)
            return result

        cls.score = checked  # type: ignore[method-assign]

    higher_is_better: ClassVar[bool] = True
    """Which direction improves. False for latency_ms, total_tokens, and cost_usd."""
    needs_answer: ClassVar[bool] = False
    """True when score() reads outcome.answer — never satisfied by a bare Retriever."""
    needs_relevant_ids: ClassVar[bool] = False
    """True when score() reads sample.relevant_ids."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Key this metric occupies in BenchmarkResult.summary."""

    @abstractmethod
    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """This sample's score, or None when it is not measurable."""

    def aggregate(self, scores: Sequence[float | None]) -> DistributionSummary:
        """Aggregate this metric's per-sample scores. Override to change how."""
        return DistributionSummary.from_scores(scores)
