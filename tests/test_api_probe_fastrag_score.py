"""Every fastrag metric's score() names a sample or outcome of the wrong type instead of failing
inside with an AttributeError; a subclass of one's own is checked the same way."""

from __future__ import annotations

import asyncio
import inspect

import pytest

import fastrag.benchmark.metrics as metrics
from fastrag.benchmark import EvalSample, QueryOutcome
from fastrag.benchmark.metrics import Metric

SAMPLE = EvalSample("q", "?", ["a"], reference_answer="Paris")
OUTCOME = QueryOutcome("q", "?", [], answer="Paris")


def _instances() -> list[Metric]:
    made: list[Metric] = []
    for name in metrics.__all__:
        cls = getattr(metrics, name)
        if isinstance(cls, type) and issubclass(cls, Metric) and not inspect.isabstract(cls):
            made.append(metrics.RankingMeasure("ERR@10") if cls is metrics.RankingMeasure else cls())
    return made


METRICS = _instances()


def test_every_concrete_metric_is_probed() -> None:
    assert len(METRICS) >= 20


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: type(m).__name__)
@pytest.mark.parametrize(
    ("sample", "outcome", "message"),
    [
        (None, OUTCOME, "'sample' must be an EvalSample (got NoneType)"),
        ({"relevant_ids": ["a"]}, OUTCOME, "'sample' must be an EvalSample (got dict)"),
        (SAMPLE, None, "'outcome' must be a QueryOutcome (got NoneType)"),
        (SAMPLE, ["a"], "'outcome' must be a QueryOutcome (got list)"),
    ],
    ids=["sample-None", "sample-dict", "outcome-None", "outcome-list"],
)
def test_score_names_an_argument_of_the_wrong_type(
    metric: Metric, sample: object, outcome: object, message: str
) -> None:
    with pytest.raises(TypeError, match="^" + message.replace("(", r"\(").replace(")", r"\)") + "$"):
        asyncio.run(metric.score(sample, outcome))  # type: ignore[arg-type]


def test_a_metric_of_ones_own_is_checked_and_keeps_its_signature() -> None:
    class AnswerLength(Metric):
        @property
        def name(self) -> str:
            return "answer_length"

        async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
            return None if outcome.answer is None else float(len(outcome.answer))

    metric = AnswerLength()
    assert asyncio.run(metric.score(SAMPLE, OUTCOME)) == 5.0
    assert inspect.iscoroutinefunction(AnswerLength.score)
    assert list(inspect.signature(AnswerLength.score).parameters) == ["self", "sample", "outcome"]
    with pytest.raises(TypeError, match=r"^'outcome' must be a QueryOutcome \(got str\)$"):
        asyncio.run(metric.score(SAMPLE, "Paris"))  # type: ignore[arg-type]
