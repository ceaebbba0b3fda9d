"""MTEB result files in and out (issue 34): what MTEB writes for a retrieval task, read; ef's numbers
written in MTEB's layout, read back by the same reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ef
from ef.evaluation import evaluate_run
from ef.io.mteb import MTEB_MEASURES, mteb_result, read_mteb, write_mteb

RUN = {"q1": {"d1": 0.9, "d5": 0.1}, "q2": {"d9": 0.8, "d2": 0.7}}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 2}}


def test_the_measures_are_mtebs_keys() -> None:
    assert MTEB_MEASURES[:3] == ("ndcg_at_1", "ndcg_at_3", "ndcg_at_5")
    assert len(MTEB_MEASURES) == 35
    scores = evaluate_run(RUN, QRELS, MTEB_MEASURES, missing="skip").metrics
    assert scores["precision_at_1"] == 0.5
    assert scores["mrr_at_10"] == 0.75
    assert scores["recall_at_1000"] == 1.0


def test_written_in_mtebs_layout_and_read_back(tmp_path: Path) -> None:
    metrics = evaluate_run(RUN, QRELS, ["ndcg_at_10", "recall_at_100"], missing="skip").metrics
    path = tmp_path / "SciFact.json"
    write_mteb(path, metrics, task_name="SciFact", evaluation_time=1.5)
    document = json.loads(path.read_text())
    assert document == {
        "dataset_revision": None,
        "task_name": "SciFact",
        "mteb_version": None,
        "scores": {"test": [{
            "ndcg_at_10": metrics["ndcg_at_10"], "recall_at_100": 1.0, "main_score": metrics["ndcg_at_10"],
            "hf_subset": "default", "languages": ["eng-Latn"],
        }]},
        "evaluation_time": 1.5,
        "kg_co2_emissions": None,
        "ef_version": ef.__version__,
    }
    assert read_mteb(path) == {"test": {"default": {"ndcg_at_10": metrics["ndcg_at_10"], "recall_at_100": 1.0,
                                                    "main_score": metrics["ndcg_at_10"]}}}


def test_reads_mtebs_older_layout(tmp_path: Path) -> None:
    path = tmp_path / "old.json"  # mteb < 1.11: the split at the top, its metrics in it
    path.write_text(json.dumps({"dataset_revision": "r", "mteb_dataset_name": "NFCorpus", "mteb_version": "1.1.1",
                                "test": {"ndcg_at_10": 0.3, "map_at_10": 0.2, "evaluation_time": 9.0}}))
    assert read_mteb(path) == {"test": {"default": {"ndcg_at_10": 0.3, "map_at_10": 0.2}}}


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^'main_score' must be one of the metrics \(got 'ndcg_at_10'; the metrics"):
        mteb_result({"map_at_10": 0.5}, task_name="T")
    with pytest.raises(ValueError, match=r"^'metrics'\['x'\] must be a finite number \(got nan\)$"):
        mteb_result({"x": float("nan")}, task_name="T", main_score="x")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"task_name": "T", "scores": {"test": [{"hf_subset": "default", "ndcg_at_10": "x"}]}}))
    entry = r"scores\['test'\]\[0\]\['ndcg_at_10'\]"
    with pytest.raises(ValueError, match=rf"bad\.json: {entry} must be a number \(got 'x'\)$"):
        read_mteb(path)
    path.write_text("[1]")
    with pytest.raises(ValueError, match=r"bad\.json: not an MTEB result \(a JSON object with 'scores' or a split\)$"):
        read_mteb(path)
