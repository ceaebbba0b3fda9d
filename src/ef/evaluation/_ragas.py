"""The Ragas bridge: :class:`RagSample`\\ s to a ``ragas.EvaluationDataset``, losslessly.

Ragas is an optional extra and heavy to import (seconds), so it is imported inside
:func:`as_ragas_dataset`, never when ``ef.evaluation`` is imported. Before it is, Ragas'
telemetry is turned off (``RAGAS_DO_NOT_TRACK=true``) unless the user set that variable.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ef.evaluation._rag import RagSample, _check_sample

__all__ = ["as_ragas_dataset"]

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
        If a sample is not a mapping or one of the :class:`RagSample` fields has the wrong type.
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

    if isinstance(samples, Mapping):
        raise TypeError("'samples' must be an iterable of samples, not a single mapping")
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
