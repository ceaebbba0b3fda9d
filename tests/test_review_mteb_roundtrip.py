"""read_mteb's metrics written back by mteb_result: they hold "main_score" (read_mteb gives it),
refused as "MTEB's own key" once the metrics were checked; a main_score that is not the main
metric's value is still refused (it was overwritten silently before)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ef.io.mteb import mteb_result, read_mteb


def test_read_mteb_s_metrics_are_written_back_as_they_were(tmp_path: Path) -> None:
    first = mteb_result({"ndcg_at_10": 0.5, "recall_at_100": 0.9}, task_name="SciFact")
    path = tmp_path / "SciFact.json"
    path.write_text(json.dumps(first))
    metrics = read_mteb(path)["test"]["default"]
    assert metrics == {"ndcg_at_10": 0.5, "recall_at_100": 0.9, "main_score": 0.5}
    again = mteb_result(metrics, task_name="SciFact")
    assert again["scores"] == first["scores"]
    assert list(again["scores"]["test"][0]) == ["ndcg_at_10", "recall_at_100", "main_score", "hf_subset", "languages"]


def test_a_main_score_of_another_value_is_refused() -> None:
    message = (
        "'metrics'['main_score'] is 0.7, not the value of the main score 'ndcg_at_10' (0.5): MTEB's result "
        "keeps that key for the main score's value"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        mteb_result({"ndcg_at_10": 0.5, "main_score": 0.7}, task_name="SciFact")
    with pytest.raises(ValueError, match=r"^'metrics'\['main_score'\] must be a finite number \(got 'x'\)$"):
        mteb_result({"ndcg_at_10": 0.5, "main_score": "x"}, task_name="SciFact")  # type: ignore[dict-item]
