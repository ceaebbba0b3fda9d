"""Values a numpy or pandas user passes to ef.gate, as they pass them to evaluate_run: a numpy
bool for a direction, a numpy integer for max_docs or relevance_level (each refused, or a JSON
error after the scoring, once the gate's arguments were checked by type)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ef.gate import gate, save_result

BASE = {"per_query": {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 7)} for i in range(40)}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "d1": 0.5}}
QRELS = {"q1": {"d1": 1}, "q2": {"d1": 1}}


def test_a_numpy_bool_says_the_direction() -> None:
    # latency_ms: a measure neither ef nor the results know the direction of (ndcg@10's is ef's own)
    base = {"per_query": {q: {"latency_ms": v["ndcg@10"]} for q, v in BASE["per_query"].items()}}
    lower = {"per_query": {q: {"latency_ms": v["ndcg@10"] - 0.2} for q, v in BASE["per_query"].items()}}
    # lower-is-better read from np.False_: the candidate's lower values are a gain, so it passes
    report = gate(base, lower, margin=0.01, higher_is_better={"latency_ms": np.False_})  # type: ignore[dict-item]
    assert (report.outcome, report.verdicts[0].higher_is_better) == ("pass", False)
    report = gate(base, lower, margin=0.01, higher_is_better={"latency_ms": np.True_})  # type: ignore[dict-item]
    assert report.outcome == "fail"


def test_numpy_integers_in_the_options_are_saved_as_json_numbers(tmp_path: Path) -> None:
    path = save_result(
        RUN,
        tmp_path / "r.json",
        qrels=QRELS,
        measures=["ndcg_cut_10"],
        relevance_level=np.int64(1),  # type: ignore[arg-type]
        max_docs=np.int64(10),  # type: ignore[arg-type]
    )
    options = json.loads(path.read_text())["options"]
    assert (options["relevance_level"], options["max_docs"]) == (1, 10)
    assert type(options["relevance_level"]) is int


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"max_docs": 1.5}, TypeError, "'max_docs' must be a positive integer or None (got 1.5)"),
        ({"max_docs": "10"}, TypeError, "'max_docs' must be a positive integer or None (got '10')"),
        # recorded as 0 while the run was scored at level 1 (save_result's `relevance_level or 1`)
        ({"relevance_level": 0}, ValueError, "'relevance_level' must be a finite number > 0 or None (got 0)"),
    ],
)
def test_save_result_names_the_option(
    tmp_path: Path, keywords: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        save_result(RUN, tmp_path / "r.json", qrels=QRELS, measures=["ndcg_cut_10"], **keywords)
    assert not (tmp_path / "r.json").exists()
