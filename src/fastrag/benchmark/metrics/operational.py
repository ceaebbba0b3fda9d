"""Operational metrics: what a query cost — lower is better for all three.

They read what the harness measured (``latency_ms``) or what a pipeline reported
(``total_tokens``, ``cost_usd``); a value that was not reported scores ``None`` (missing), so a
bare Retriever's ``total_tokens`` summary has ``count == 0``.

Examples
--------
>>> import asyncio
>>> from fastrag.benchmark import EvalSample, QueryOutcome
>>> outcome = QueryOutcome("q", "?", latency_ms=12.5, total_tokens=310)
>>> sample = EvalSample("q", "?")
>>> [asyncio.run(m.score(sample, outcome)) for m in (Latency(), TotalTokens(), Cost())]
[12.5, 310.0, None]
>>> Latency().name, Latency.higher_is_better
('latency_ms', False)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.samples import EvalSample, QueryOutcome

__all__ = ["Cost", "Latency", "TotalTokens"]


@dataclass(frozen=True)
class Latency(Metric):
    """Milliseconds the target took to answer this sample, measured by the harness."""

    higher_is_better: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """Always ``"latency_ms"``."""
        return "latency_ms"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The measured latency in ms, or None if none was recorded."""
        return outcome.latency_ms


@dataclass(frozen=True)
class TotalTokens(Metric):
    """Tokens the pipeline reported using for this sample (prompt plus completion)."""

    higher_is_better: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """Always ``"total_tokens"``."""
        return "total_tokens"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The reported token count, or None if none was reported."""
        return None if outcome.total_tokens is None else float(outcome.total_tokens)


@dataclass(frozen=True)
class Cost(Metric):
    """US dollars the pipeline reported spending on this sample."""

    higher_is_better: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """Always ``"cost_usd"``."""
        return "cost_usd"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The reported cost in USD, or None if none was reported."""
        return outcome.cost_usd
