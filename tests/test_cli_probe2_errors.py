"""Errors that name the flag the user typed, not the keyword of the function behind it (found by
probing the CLI on SciFact: ``ef fuse --method bayesfuse`` said "pass qrels=", ``ef fuse --tune
OTHER.txt`` blamed 'qrels', ``ef eval --split dev`` said "[Errno 2] BEIR file not found")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from _cli import run, write_files
from ef.datasets import demo_dataset

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
A = "".join(f"q{i} Q0 d{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\n" for i in range(6))
B = "".join(f"q{i} Q0 x{i} 1 3 b\nq{i} Q0 d{i} 2 2 b\n" for i in range(6))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B, "other": "z1 0 d1 1\n"})


@pytest.mark.parametrize("method", ["bayesfuse", "mapfuse"])
def test_fuse_a_trained_method_asks_for_qrels_by_flag(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], method: str
) -> None:
    assert run(capsys, "fuse", files["a"], files["b"], "--method", method, "-o", "-") == (
        2, "", f"ef fuse: error: --method {method} is trained: give its training qrels with --qrels QRELS\n"
    )
    status, out, _ = run(capsys, "fuse", files["a"], files["b"], "--method", method, "--qrels", files["qrels"],
                         "-o", "-")
    assert (status, len(out.splitlines())) == (0, 12)  # trained on --qrels, every document of both runs


def test_fuse_tune_qrels_that_judge_no_run_query_name_tune(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    assert run(capsys, "fuse", files["a"], files["b"], "--tune", files["other"]) == (
        2, "", "ef fuse: error: --tune's qrels judge none of the runs' queries (they judge 1, first 'z1'): there is "
               "nothing to tune on\n"
    )


def test_eval_split_that_is_not_there_names_the_splits(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "data"
    shutil.copytree(demo_dataset(), folder)
    shutil.copy(folder / "qrels" / "test.tsv", folder / "qrels" / "train.tsv")
    assert run(capsys, "eval", str(folder), "--split", "dev", "-q") == (
        2, "", f"ef eval: error: --split dev: {folder} has no qrels/dev.tsv (its splits: test, train)\n"
    )
    status, out, _ = run(capsys, "eval", str(folder), "--split", "train", "-q", "-m", "ndcg@10")
    assert (status, out.splitlines()[0].split(", ")[1]) == (0, "split train: 100 documents (100 segments)")
