"""The Ragas bridge: :class:`RagSample`\\ s to a ``ragas.EvaluationDataset``, losslessly; repeated runs.

:func:`evaluate_ragas_repeated` runs the user's (LLM-judged, so stochastic) Ragas metrics N
times on the same samples and keeps every run, so that each sample's mean and spread can be
reported and averaged (:class:`RepeatedScores`).

Ragas is an optional extra and heavy to import (seconds), so it is imported inside
:func:`as_ragas_dataset`, never when ``ef.evaluation`` is imported. Before it is, Ragas'
telemetry is turned off (``RAGAS_DO_NOT_TRACK=true``) unless the user set that variable.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ef.evaluation._rag import RagSample, _check_sample, _check_samples

__all__ = ["RepeatedScores", "as_ragas_dataset", "evaluate_ragas_repeated"]

_INSTALL_HINT = "pip install 'ef-eval[ragas]'"
_DO_NOT_TRACK = "RAGAS_DO_NOT_TRACK"


def _as_plain(value: Any) -> Any:
    # Ragas stores lists and dicts; a tuple or other mapping would come back as one, equal in content.
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [_as_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _as_plain(item) for key, item in value.items()}
    return value


def _same(stored: Any, given: Any) -> bool:
    """Equal in value *and* type, recursively (``1 == 1.0 == True`` would hide a coercion)."""
    if type(stored) is not type(given):
        return False
    if isinstance(given, list):
        return len(stored) == len(given) and all(_same(a, b) for a, b in zip(stored, given, strict=True))
    if isinstance(given, dict):
        return stored.keys() == given.keys() and all(_same(stored[k], given[k]) for k in given)
    return bool(stored == given)


def _no_telemetry() -> None:
    """Turn Ragas' usage tracking off unless the user chose: ef promises to stay offline.

    Ragas sends a usage event over the network from ``evaluate`` unless ``RAGAS_DO_NOT_TRACK``
    is ``true``. Set only when absent, so an explicit choice (``false`` included) stands. Ragas
    caches its reading of the variable, so a cache filled before this ran is cleared.
    """
    if _DO_NOT_TRACK in os.environ:
        return
    os.environ[_DO_NOT_TRACK] = "true"
    analytics = sys.modules.get("ragas._analytics")
    cached = getattr(analytics, "do_not_track", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()


def as_ragas_dataset(samples: Iterable[RagSample | Mapping[str, Any]]) -> Any:
    """Convert :class:`RagSample`\\ s into a Ragas ``EvaluationDataset``.

    The hookpoint for the *LLM-judged* RAG metrics ``ef`` deliberately does not compute itself
    (faithfulness, answer relevancy, …). :class:`RagSample` already mirrors Ragas'
    ``SingleTurnSample`` field-for-field, so this is a thin, lossless adapter: every field of
    every sample reaches the dataset unchanged, including the ``SingleTurnSample`` fields
    :class:`RagSample` does not list (``retrieved_context_ids``, ``reference_context_ids``, …)
    that Ragas' ID-based metrics read. A key ``SingleTurnSample`` has no field for is a
    ``ValueError`` rather than dropped, which is what Ragas itself would silently do.

    Ragas sends usage telemetry over the network unless ``RAGAS_DO_NOT_TRACK=true``; ef sets it
    to ``true`` here unless it is already set (set it to ``false`` yourself to allow tracking). A
    field holding NaN or ``pd.NA`` — how a pandas DataFrame marks an absent value — is absent.

    Run the evaluation with your own LLM::

        from ragas import evaluate
        from ragas.metrics import faithfulness, answer_relevancy
        dataset = as_ragas_dataset(samples)
        result = evaluate(dataset, metrics=[faithfulness, answer_relevancy])

    Parameters
    ----------
    samples
        An iterable of :class:`RagSample`\\ s (or plain mappings).

    Returns
    -------
    ragas.EvaluationDataset
        One ``SingleTurnSample`` per sample, in order.

    Raises
    ------
    ImportError
        If the optional ``ragas`` package is not installed (or fails to import); the message
        gives the install command, ``pip install 'ef-eval[ragas]'``.
    ValueError
        If `samples` is empty, or a sample has a key Ragas' ``SingleTurnSample`` cannot hold or
        a value Ragas would not store unchanged (the message names the sample's index and key).
    TypeError
        If `samples` is not an iterable of mappings, or one of the :class:`RagSample` fields has
        the wrong type.
    """
    _no_telemetry()
    try:
        from ragas.dataset_schema import EvaluationDataset, SingleTurnSample
    except ImportError as error:
        raise ImportError(
            f"as_ragas_dataset needs the optional 'ragas' package, which could not be imported "
            f"({error}); install it with: {_INSTALL_HINT}"
        ) from error
    from pydantic import ValidationError  # a dependency of ragas, so present once ragas imports

    _check_samples(samples)
    # The installed ragas is the authority on what a SingleTurnSample can hold.
    fields = tuple(SingleTurnSample.model_fields)
    converted: list[Any] = []
    for i, sample in enumerate(samples):
        where = f"samples[{i}]"
        if isinstance(sample, Mapping):
            for key in sample:
                if key not in fields:
                    raise ValueError(
                        f"{where} has key {key!r}, which Ragas' SingleTurnSample cannot hold "
                        f"(Ragas would drop it silently); its fields are: {', '.join(fields)}"
                    )
        checked = _check_sample(sample, where, fields=fields)
        plain = {key: _as_plain(value) for key, value in checked.items()}
        try:
            ragas_sample = SingleTurnSample(**plain)
        except ValidationError as error:
            first = error.errors()[0]
            field = first["loc"][0] if first["loc"] else "?"
            raise ValueError(f"{where}[{field!r}]: Ragas rejected the value: {first['msg']}") from None
        # Pydantic may coerce a value (e.g. 1 -> '1' in an id list); that would not be lossless.
        stored = ragas_sample.model_dump(include=set(plain))
        for key, value in plain.items():
            if not _same(stored[key], value):
                raise ValueError(
                    f"{where}[{key!r}]: Ragas would store {stored[key]!r} instead of {value!r}"
                )
        converted.append(ragas_sample)
    if not converted:
        raise ValueError("'samples' is empty; a Ragas EvaluationDataset needs at least one sample")
    return EvaluationDataset(samples=converted)


# --- repeated runs of stochastic judges -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RepeatedScores:
    """Every run's score of every sample, per metric: ``scores[metric][sample][run]``.

    A score a run could not produce (Ragas gives NaN when the judge fails) is ``None``: missing,
    never averaged in. :meth:`mean` and :meth:`spread` summarise each sample over its runs;
    :meth:`to_records` gives one row per sample for a table, ``ef compare`` or a harness.

    >>> scores = RepeatedScores({"faithfulness": ((1.0, 0.5), (0.0, None))})  # 2 samples, 2 runs
    >>> scores.mean("faithfulness"), scores.spread("faithfulness"), scores.repeats
    ((0.75, 0.0), (0.25, None), 2)
    >>> scores.to_records()[1]
    {'faithfulness': 0.0, 'faithfulness_std': None, 'faithfulness_runs': 1}
    """

    scores: Mapping[str, tuple[tuple[float | None, ...], ...]]

    def __post_init__(self) -> None:
        lengths = {len(per_sample) for per_sample in self.scores.values()}
        runs = {len(values) for per_sample in self.scores.values() for values in per_sample}
        if len(lengths) > 1 or len(runs) > 1:
            raise ValueError("'scores' must hold the same number of samples and of runs for every metric")
        for name, per_sample in self.scores.items():
            for i, values in enumerate(per_sample):
                for value in values:
                    if value is not None and (not isinstance(value, float) or not math.isfinite(value)):
                        raise ValueError(f"'scores'[{name!r}][{i}] must hold finite floats or None (got {value!r})")

    @property
    def repeats(self) -> int:
        """How many runs there were."""
        for per_sample in self.scores.values():
            for values in per_sample:
                return len(values)
        return 0

    def _values(self, metric: str) -> tuple[tuple[float | None, ...], ...]:
        if metric not in self.scores:
            raise KeyError(f"no metric {metric!r}; the metrics are {list(self.scores)}")
        return self.scores[metric]

    def mean(self, metric: str) -> tuple[float | None, ...]:
        """Each sample's mean over the runs that scored it; ``None`` if none did."""
        out: list[float | None] = []
        for values in self._values(metric):
            present = [v for v in values if v is not None]
            out.append(math.fsum(present) / len(present) if present else None)
        return tuple(out)

    def spread(self, metric: str) -> tuple[float | None, ...]:
        """Each sample's standard deviation over the runs that scored it (population form: the runs
        are all there is to describe); ``None`` with fewer than two scores."""
        out: list[float | None] = []
        for values, mean in zip(self._values(metric), self.mean(metric), strict=True):
            present = [v for v in values if v is not None]
            if len(present) < 2 or mean is None:
                out.append(None)
            else:
                out.append(math.sqrt(math.fsum((v - mean) ** 2 for v in present) / len(present)))
        return tuple(out)

    def to_records(self) -> list[dict[str, float | int | None]]:
        """One dict per sample: ``<metric>`` (the mean), ``<metric>_std``, ``<metric>_runs`` (scores present)."""
        n_samples = len(next(iter(self.scores.values()), ()))
        records: list[dict[str, float | int | None]] = [{} for _ in range(n_samples)]
        for metric, per_sample in self.scores.items():
            for record, values, mean, spread in zip(
                records, per_sample, self.mean(metric), self.spread(metric), strict=True
            ):
                record[metric] = mean
                record[f"{metric}_std"] = spread
                record[f"{metric}_runs"] = sum(v is not None for v in values)
        return records


def _score(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{where}: Ragas returned {value!r}, not a number")
    number = float(value)
    return None if math.isnan(number) else number  # NaN: the judge failed on this sample


def evaluate_ragas_repeated(
    samples: Iterable[RagSample | Mapping[str, Any]],
    metrics: Sequence[Any],
    *,
    repeats: int = 3,
    **evaluate_kwargs: Any,
) -> RepeatedScores:
    """Run Ragas' ``evaluate`` `repeats` times on the same samples and keep every sample's every score.

    An LLM judge gives another score when asked again; one run hides that. Each run is
    ``ragas.evaluate(as_ragas_dataset(samples), metrics=metrics, **evaluate_kwargs)`` (pass your
    ``llm=``, ``embeddings=`` … there); its per-sample scores are collected, a NaN (a failed
    judgement) kept as a missing value. The result gives each sample's mean and spread over the
    runs.

    Parameters
    ----------
    samples
        :class:`RagSample`\\ s, as for :func:`as_ragas_dataset`.
    metrics
        Ragas metric objects.
    repeats
        How many runs, at least 1.
    **evaluate_kwargs
        Passed to every ``ragas.evaluate`` call (``show_progress`` defaults to ``False``).

    Returns
    -------
    RepeatedScores

    Raises
    ------
    ValueError
        If `repeats` is not a positive integer or `metrics` is empty, or for the samples'
        errors of :func:`as_ragas_dataset`.
    ImportError
        Without the ``ragas`` extra.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"'repeats' must be a positive integer (got {repeats!r})")
    if isinstance(metrics, str | bytes) or not isinstance(metrics, Sequence) or not metrics:
        raise ValueError(f"'metrics' must be a non-empty list of Ragas metrics (got {metrics!r})")
    dataset = as_ragas_dataset(samples)
    from ragas import evaluate

    evaluate_kwargs.setdefault("show_progress", False)
    runs: list[list[Mapping[str, Any]]] = []
    for _ in range(repeats):
        result = evaluate(dataset, metrics=list(metrics), **evaluate_kwargs)
        per_sample = getattr(result, "scores", None)
        if not isinstance(per_sample, list):  # return_executor=True gives an Executor
            raise ValueError("ragas.evaluate gave no per-sample scores; do not pass return_executor=True")
        runs.append(per_sample)
    names = list(runs[0][0]) if runs and runs[0] else []
    scores: dict[str, tuple[tuple[float | None, ...], ...]] = {}
    for name in names:
        scores[name] = tuple(
            tuple(_score(run[i].get(name), f"run {r}, sample {i}, {name!r}") for r, run in enumerate(runs))
            for i in range(len(dataset))
        )
    return RepeatedScores(scores)
