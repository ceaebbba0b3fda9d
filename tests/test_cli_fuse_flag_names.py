"""ef fuse's errors name the flag the user typed (``--norm``, ``--weights``, ``--method`` with
``--tune``), where they said ef.fusion's keyword (``'norm' must be one of ...``); the Python API's
messages are unchanged (tests/test_fusion.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import run, write_files
from ef.fusion import METHODS, NORMS

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
A = "".join(f"q{i} Q0 d{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\n" for i in range(6))
B = "".join(f"q{i} Q0 x{i} 1 3.5 b\nq{i} Q0 d{i} 2 0.5 b\nq{i} Q0 y{i} 3 0.25 b\n" for i in range(6))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B})


def test_fuse_errors_name_the_flags(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    runs = [files["a"], files["b"]]
    methods = ", ".join(map(repr, METHODS))
    assert run(capsys, "fuse", *runs, "--norm", "nope", "-o", "-") == (
        2, "", f"ef fuse: error: --norm must be one of {', '.join(map(repr, NORMS))} (got 'nope')\n"
    )
    assert run(capsys, "fuse", *runs, "--weights", "1,2,3", "-o", "-") == (
        2, "", "ef fuse: error: --weights must hold one weight per run (2) (got 3)\n"
    )
    assert run(capsys, "fuse", *runs, "--tune", files["qrels"], "--method", "nope", "--folds", "2") == (
        2, "", f"ef fuse: error: --method must be one of {methods} (got 'nope')\n"
    )


def test_tune_errors_name_the_step_flag(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    assert run(capsys, "fuse", files["a"], files["b"], "--tune", files["qrels"], "--folds", "2", "--step", "0.3") == (
        2, "", "ef fuse: error: --step must be 1 / n for a whole n >= 1, such as 0.1 or 0.05 (got 0.3)\n"
    )
