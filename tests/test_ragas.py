"""as_ragas_dataset: lossless into real Ragas, Ragas' own non-LLM metrics offline, the missing-ragas path."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from ef.evaluation import as_ragas_dataset
from ef.evaluation._rag import _RAGAS_FIELDS

SAMPLES: list[dict[str, Any]] = [
    {
        "user_input": "What is the capital of France?",
        "response": "Paris",
        "retrieved_contexts": ["Paris is the capital of France.", "Lyon is a city in France."],
        "reference": "Paris",
        "reference_contexts": ["Paris is the capital of France."],
        "retrieved_context_ids": ["d1", "d2"],
        "reference_context_ids": ["d1"],
    },
    {
        "user_input": "Wie viel ist 2 + 2?",
        "response": "fünf",
        "retrieved_contexts": [],
        "reference": "vier",
        "reference_contexts": ["Zwei plus zwei ist vier."],
        "retrieved_context_ids": ["d3", "d4"],
        "reference_context_ids": ["d4", "d5", "d6"],
    },
]


@pytest.fixture
def ragas_offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Import ragas with its usage tracking off, and record any attempt to reach the network."""
    monkeypatch.setenv("RAGAS_DO_NOT_TRACK", "true")
    pytest.importorskip("ragas")
    import socket

    import ragas._analytics as analytics

    analytics.do_not_track.cache_clear()  # ragas caches the environment variable
    attempts: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(repr(args)[:200])
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(analytics.requests, "post", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield attempts
    analytics._analytics_batcher.buffer.clear()  # nothing left to send at exit, once tracking is back on
    analytics.do_not_track.cache_clear()


def test_the_field_list_matches_the_installed_ragas(ragas_offline: list[str]) -> None:
    from ragas.dataset_schema import SingleTurnSample

    assert tuple(SingleTurnSample.model_fields) == _RAGAS_FIELDS


def test_every_field_reaches_the_dataset(ragas_offline: list[str]) -> None:
    from ragas import EvaluationDataset, SingleTurnSample

    dataset = as_ragas_dataset(iter(SAMPLES))
    assert isinstance(dataset, EvaluationDataset)
    assert len(dataset) == 2
    for sample, given in zip(dataset, SAMPLES, strict=True):
        assert isinstance(sample, SingleTurnSample)
        assert sample.model_dump(exclude_none=True) == given
    assert set(dataset.features()) == set(SAMPLES[0])


def test_tuples_and_none_are_kept_in_content(ragas_offline: list[str]) -> None:
    dataset = as_ragas_dataset([{"user_input": "q", "retrieved_contexts": ("a", "b"), "reference": None}])
    assert dataset[0].model_dump(exclude_none=True) == {"user_input": "q", "retrieved_contexts": ["a", "b"]}


def test_ragas_evaluate_offline_with_non_llm_metrics(ragas_offline: list[str]) -> None:
    from ragas import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ragas 0.4 deprecates these import paths
        from ragas.metrics import ExactMatch, IDBasedContextPrecision, IDBasedContextRecall, StringPresence

    result = evaluate(
        as_ragas_dataset(SAMPLES),
        metrics=[ExactMatch(), StringPresence(), IDBasedContextPrecision(), IDBasedContextRecall()],
        show_progress=False,
        raise_exceptions=True,
    )
    # Sample 1: 'Paris' == 'Paris'; ids d1, d2 retrieved, d1 relevant: precision 1/2, recall 1/1.
    # Sample 2: 'fünf' != 'vier'; ids d3, d4 retrieved, d4, d5, d6 relevant: precision 1/2, recall 1/3.
    assert result.scores == [
        {"exact_match": 1.0, "string_present": 1.0, "id_based_context_precision": 0.5,
         "id_based_context_recall": 1.0},
        {"exact_match": 0.0, "string_present": 0.0, "id_based_context_precision": 0.5,
         "id_based_context_recall": pytest.approx(1 / 3)},
    ]
    assert ragas_offline == []


@pytest.mark.parametrize(
    ("samples", "error", "message"),
    [
        ([{"user_input": "q", "question_id": 7}], ValueError,
         r"^samples\[0\] has key 'question_id', which Ragas' SingleTurnSample cannot hold \(Ragas would drop it "
         r"silently\); its fields are: user_input, retrieved_contexts, reference_contexts, retrieved_context_ids, "
         r"reference_context_ids, response, multi_responses, reference, rubrics, persona_name, query_style, "
         r"query_length$"),
        ([{"user_input": "q"}, {"response": 3}], TypeError, r"^samples\[1\]\['response'\] must be a str \(got int\)$"),
        ([{"retrieved_contexts": "one passage"}], TypeError,
         r"^samples\[0\]\['retrieved_contexts'\] must be a list of str \(got str\)$"),
        ([{"persona_name": 3}], ValueError,
         r"^samples\[0\]\['persona_name'\]: Ragas rejected the value: Input should be a valid string$"),
        ([{"retrieved_context_ids": [1.0]}], ValueError,
         r"^samples\[0\]\['retrieved_context_ids'\]: Ragas would store \[1\] instead of \[1\.0\]$"),
        ([], ValueError, r"^'samples' is empty; a Ragas EvaluationDataset needs at least one sample$"),
        ({"user_input": "q"}, TypeError, r"^'samples' must be an iterable of samples, not a single mapping$"),
        (["q"], TypeError, r"^samples\[0\] must be a mapping of RagSample fields \(got str\)$"),
    ],
)
def test_bad_samples(ragas_offline: list[str], samples: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        as_ragas_dataset(samples)


def test_missing_ragas_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes `import ragas` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "ragas", None)
    monkeypatch.setitem(sys.modules, "ragas.dataset_schema", None)
    with pytest.raises(ImportError, match=r"install it with: pip install 'ef-eval\[ragas\]'$") as info:
        as_ragas_dataset([{"user_input": "q"}])
    assert str(info.value).startswith("as_ragas_dataset needs the optional 'ragas' package, which could not be")
    assert isinstance(info.value.__cause__, ImportError)


def test_importing_ef_evaluation_does_not_import_ragas() -> None:
    code = "import sys, ef.evaluation, ef.cli.rag; print(sorted(m for m in sys.modules if m.split('.')[0] == 'ragas'))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out == "[]\n"


def test_doc_ragas_example(ragas_offline: list[str]) -> None:
    import doctest
    import re
    from pathlib import Path

    doc = Path(__file__).resolve().parents[1] / "docs" / "rag-and-beir.md"
    (block,) = [b for b in re.findall(r"```pycon\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S)
                if "ragas" in b]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        runner.run(doctest.DocTestParser().get_doctest(block, {}, doc.name, str(doc), 0))
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=6)
    assert ragas_offline == []


# --- repeated runs of a stochastic judge (issue 35) -----------------------------------------------


def _scripted_metric(script: dict[str, list[float]]) -> Any:
    """A Ragas metric that answers, for each response, the next value of its script: a judge whose
    scores change from run to run, deterministically (Ragas may score the samples in any order)."""
    from dataclasses import dataclass, field

    from ragas.metrics.base import MetricType, SingleTurnMetric

    remaining = {response: list(values) for response, values in script.items()}

    @dataclass
    class Scripted(SingleTurnMetric):  # type: ignore[misc]
        name: str = "scripted"
        _required_columns: dict[Any, set[str]] = field(
            default_factory=lambda: {MetricType.SINGLE_TURN: {"response"}}
        )

        def init(self, run_config: Any) -> None:
            pass

        async def _single_turn_ascore(self, sample: Any, callbacks: Any) -> float:
            return remaining[sample.response].pop(0)

    return Scripted()


def test_repeated_runs_give_each_sample_its_mean_and_spread(ragas_offline: list[str]) -> None:
    import math

    from ef.evaluation import RepeatedScores, evaluate_ragas_repeated

    metric = _scripted_metric({"a": [1.0, 0.5, 0.0], "b": [1.0, 1.0, 1.0], "c": [math.nan, 0.25, 0.75]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = evaluate_ragas_repeated([{"response": r} for r in "abc"], [metric], repeats=3)
    assert isinstance(scores, RepeatedScores)
    assert scores.scores == {"scripted": ((1.0, 0.5, 0.0), (1.0, 1.0, 1.0), (None, 0.25, 0.75))}
    assert scores.repeats == 3
    assert scores.mean("scripted") == (0.5, 1.0, 0.5)
    spread = scores.spread("scripted")
    assert spread[0] == pytest.approx(math.sqrt(1 / 6), abs=1e-15)  # deviations 0.5, 0, -0.5 over 3 runs
    assert spread[1:] == (0.0, 0.25)  # a failed run (NaN) is missing, not a score
    assert scores.to_records()[2] == {"scripted": 0.5, "scripted_std": 0.25, "scripted_runs": 2}
    assert ragas_offline == []


def test_repeated_runs_errors(ragas_offline: list[str]) -> None:
    from ef.evaluation import RepeatedScores, evaluate_ragas_repeated

    with pytest.raises(ValueError, match=r"^'repeats' must be a positive integer \(got 0\)$"):
        evaluate_ragas_repeated([{"response": "a"}], [object()], repeats=0)
    with pytest.raises(ValueError, match=r"^'metrics' must be a non-empty list of Ragas metrics \(got \[\]\)$"):
        evaluate_ragas_repeated([{"response": "a"}], [])
    with pytest.raises(ValueError, match=r"same number of samples and of runs"):
        RepeatedScores({"x": ((1.0,), (1.0, 0.5))})
    with pytest.raises(ValueError, match=r"^'scores'\['x'\]\[0\] must hold finite floats or None \(got nan\)$"):
        RepeatedScores({"x": ((float("nan"),),)})
    with pytest.raises(KeyError, match=r"no metric 'y'; the metrics are \['x'\]"):
        RepeatedScores({"x": ((1.0,),)}).mean("y")
