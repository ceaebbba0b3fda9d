"""MTEB result files in and out: a retrieval task's scores in the layout MTEB writes and reads.

MTEB (1.11 and later) writes one JSON file per task: ``task_name``, ``dataset_revision``,
``mteb_version``, ``evaluation_time``, ``kg_co2_emissions`` and ``scores``, which maps each split to
a list of one dict per subset (``hf_subset``, ``languages``, ``main_score`` and the metrics, keyed
``ndcg_at_10``, ``map_at_100``, ``recall_at_1000``, ``precision_at_1``, ``mrr_at_10`` ...). Older
MTEB put each split at the top, its metrics in it. :func:`read_mteb` reads both; :func:`write_mteb`
writes the first, with ``ef_version`` beside, from any ``{metric: value}`` mapping (ef reads MTEB's
metric names, so ``evaluate_run(run, qrels, MTEB_MEASURES, missing="skip").metrics`` is one).

>>> from ef.evaluation import evaluate_run
>>> metrics = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, ["ndcg_at_10"], missing="skip").metrics
>>> mteb_result(metrics, task_name="SciFact")["scores"]
{'test': [{'ndcg_at_10': 1.0, 'main_score': 1.0, 'hf_subset': 'default', 'languages': ['eng-Latn']}]}
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

__all__ = ["MTEB_MEASURES", "mteb_result", "read_mteb", "write_mteb"]

MTEB_MEASURES: tuple[str, ...] = tuple(
    f"{name}_at_{k}" for name in ("ndcg", "map", "recall", "precision", "mrr") for k in (1, 3, 5, 10, 20, 100, 1000)
)
"""The retrieval metrics MTEB reports, by MTEB's names (which :func:`ef.measures.parse_measure` reads)."""

_NOT_METRICS = frozenset({"hf_subset", "languages", "evaluation_time", "main_score_name"})


def mteb_result(
    metrics: Mapping[str, float],
    *,
    task_name: str,
    split: str = "test",
    hf_subset: str = "default",
    languages: Sequence[str] = ("eng-Latn",),
    main_score: str = "ndcg_at_10",
    dataset_revision: str | None = None,
    mteb_version: str | None = None,
    evaluation_time: float | None = None,
) -> dict[str, Any]:
    """The MTEB result document of `metrics` for one task, split and subset (see the module)."""
    import ef

    if not isinstance(task_name, str) or not task_name:
        raise ValueError(f"'task_name' must be a non-empty str (got {task_name!r})")
    if not isinstance(metrics, Mapping):  # a list of pairs failed inside, on .items()
        raise TypeError(f"'metrics' must be a mapping {{metric: value}} (got {type(metrics).__name__})")
    for option, text in (("split", split), ("hf_subset", hf_subset), ("main_score", main_score)):
        if not isinstance(text, str):  # split=3 became a JSON key "3", read back as a str
            raise TypeError(f"{option!r} must be a non-empty str (got {text!r})")
        if not text:
            raise ValueError(f"{option!r} must be a non-empty str (got '')")
    if isinstance(languages, str) or not isinstance(languages, Sequence) or not all(
        isinstance(language, str) for language in languages
    ):  # a str was written as its characters: ['e', 'n', 'g', ...]
        raise TypeError(f"'languages' must be a sequence of language codes as str (got {languages!r})")
    for option, optional in (("dataset_revision", dataset_revision), ("mteb_version", mteb_version)):
        if optional is not None and not isinstance(optional, str):
            raise TypeError(f"{option!r} must be a str or None (got {optional!r})")
    seconds: object = evaluation_time  # typed float, but a caller's may be anything
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, Real) or not _finite(seconds) or float(seconds) < 0
    ):
        raise ValueError(f"'evaluation_time' must be a finite number of seconds >= 0, or None (got {seconds!r})")
    scores: dict[str, Any] = {}
    for name, value in metrics.items():
        if not isinstance(name, str):  # 1 was written as "1"
            raise TypeError(f"'metrics' must have str metric names (got {name!r})")
        if name in _NOT_METRICS or name == "languages":  # overwritten below, silently
            raise ValueError(f"'metrics' must not hold {name!r}: MTEB's result keeps that key for itself")
        given: object = value  # a caller's mapping may hold anything: checked as such
        if isinstance(given, bool) or not isinstance(given, Real) or not _finite(given):
            raise ValueError(f"'metrics'[{name!r}] must be a finite number (got {value!r:.80})")
        scores[name] = float(given)
    # read_mteb gives a subset's "main_score" among its metrics: written back, it must be the main one's
    given_main = scores.pop("main_score", None)
    if main_score not in scores:
        raise ValueError(f"'main_score' must be one of the metrics (got {main_score!r}; the metrics are "
                         f"{sorted(scores)})")
    if given_main is not None and given_main != scores[main_score]:  # it was overwritten, silently
        raise ValueError(
            f"'metrics'['main_score'] is {given_main!r}, not the value of the main score {main_score!r} "
            f"({scores[main_score]!r}): MTEB's result keeps that key for the main score's value"
        )
    scores.update(main_score=scores[main_score], hf_subset=hf_subset, languages=list(languages))
    return {
        "dataset_revision": dataset_revision,
        "task_name": task_name,
        "mteb_version": mteb_version,
        "scores": {split: [scores]},
        "evaluation_time": evaluation_time,
        "kg_co2_emissions": None,
        "ef_version": ef.__version__,
    }


def _finite(value: Real) -> bool:
    """Whether `value` is finite (an int beyond a float's range is not: float() overflows)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def write_mteb(path: str | os.PathLike[str], metrics: Mapping[str, float], **options: Any) -> None:
    """Write :func:`mteb_result` of `metrics` to `path`, atomically (`options` as that function takes)."""
    from ef.io._atomic import atomic_writer

    if not isinstance(path, str | os.PathLike):  # os.fspath's own message names no argument
        raise TypeError(f"'path' must be a str or os.PathLike path (got {type(path).__name__})")
    document = mteb_result(metrics, **options)
    with atomic_writer(path) as stream:
        stream.write((json.dumps(document, indent=2, allow_nan=False) + "\n").encode("utf-8"))


def read_mteb(path: str | os.PathLike[str]) -> dict[str, dict[str, dict[str, float]]]:
    """``{split: {hf_subset: {metric: value}}}`` of an MTEB result file, either layout.

    ``main_score`` is kept where the file has it; ``hf_subset``, ``languages`` and
    ``evaluation_time`` are not metrics and are left out. ``ValueError`` naming the file and the
    entry for anything else.
    """
    if not isinstance(path, str | os.PathLike):  # os.fspath's own message names no argument
        raise TypeError(f"'path' must be a str or os.PathLike path (got {type(path).__name__})")
    from ef.io.jsonl import read_json  # strict: NaN, Infinity and a key given twice are refused

    where = os.fspath(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{where}: not an MTEB result (a JSON object with 'scores' or a split)")
    out: dict[str, dict[str, dict[str, float]]] = {}
    if isinstance(data.get("scores"), dict):
        for split, subsets in data["scores"].items():
            if not isinstance(subsets, list):
                raise ValueError(f"{where}: scores[{split!r}] must be a list of subsets")
            for i, entry in enumerate(subsets):
                if not isinstance(entry, dict):
                    raise ValueError(f"{where}: scores[{split!r}][{i}] must be an object")
                subset = str(entry.get("hf_subset", "default"))
                if subset in out.get(split, {}):  # the later one replaced the first, silently
                    raise ValueError(f"{where}: scores[{split!r}] lists subset {subset!r} twice (entry {i})")
                out.setdefault(split, {})[subset] = _metrics(entry, f"{where}: scores[{split!r}][{i}]")
        return out
    splits = {key: value for key, value in data.items() if isinstance(value, dict)}
    if not splits:
        raise ValueError(f"{where}: not an MTEB result (a JSON object with 'scores' or a split)")
    for split, entry in splits.items():
        out[split] = {"default": _metrics(entry, f"{where}: {split!r}")}
    return out


def _metrics(entry: Mapping[str, Any], where: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for name, value in entry.items():
        if name in _NOT_METRICS:
            continue
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ValueError(f"{where}[{name!r}] must be a number (got {value!r})")
        values[name] = float(value)
    return values
