"""Outputs of the command line: files before standard output, every report output checked up front."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ef.cli import main

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "EF_NO_PROGRESS": "1"}
QRELS = "q1 0 d1 1\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"


def test_ef_eval_writes_its_json_file_even_when_stdout_is_closed(tmp_path: Path) -> None:
    # `ef eval --json x.json | (exec 0<&-; sleep 3)`: the reader of the tables is gone.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "ef", "eval", "--quiet", "--k", "10", "--json",
                               str(tmp_path / "x.json")], stdout=write, stderr=subprocess.PIPE, env=ENV, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 141  # 128 + SIGPIPE, as a shell reports `yes | head -1`
    report = json.loads((tmp_path / "x.json").read_text())
    assert (report["n_queries"], round(report["metrics"]["ndcg@10"], 4)) == (27, 0.8078)


@pytest.fixture
def unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder no file can be created in (as root, chmod does not stop writes: os.access says so)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    real = os.access

    def access(path: object, mode: int, **kwargs: object) -> bool:
        if Path(str(path)).resolve() == folder.resolve() and mode & os.W_OK:
            return False
        return real(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", access)
    return folder


def _no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the work started before the outputs were checked")

    monkeypatch.setattr("ef.evaluation.read_beir", boom)


def test_an_unwritable_html_folder_fails_before_ef_eval_works(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, unwritable: Path
) -> None:
    pytest.importorskip("vl_convert")
    _no_work(monkeypatch)
    out = unwritable / "x.html"
    assert main(["eval", "--quiet", "--html", str(out)]) == 2
    assert capsys.readouterr().err == f"ef eval: error: --html {out}: cannot create files in directory {unwritable}\n"


def test_an_unwritable_html_folder_fails_before_ef_trec_eval_reads(
    capsys: pytest.CaptureFixture[str], unwritable: Path, tmp_path: Path
) -> None:
    pytest.importorskip("vl_convert")
    out = unwritable / "x.html"
    missing = tmp_path / "not-read.run"  # would fail as a missing run if it were read first
    assert main(["trec-eval", "--html", str(out), str(tmp_path / "q"), str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"ef trec-eval: error: --html {out}: cannot create files in directory {unwritable}\n"
    )


@pytest.mark.parametrize("flag", ["--png", "--svg"])
def test_a_chart_folder_needs_its_parent_like_html(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flag: str
) -> None:
    pytest.importorskip("vl_convert")
    _no_work(monkeypatch)
    folder = tmp_path / "a" / "b" / "c"
    assert main(["eval", "--quiet", flag, str(folder)]) == 2
    assert capsys.readouterr().err == f"ef eval: error: {flag} {folder}: directory {folder.parent} does not exist\n"
    assert not (tmp_path / "a").exists()  # no folder made


def test_a_chart_folder_whose_parent_exists_is_made(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    folder = tmp_path / "charts"
    argv = ["trec-eval", "--svg", str(folder), "-q", str(tmp_path / "qrels"), str(tmp_path / "a.run")]
    assert main(argv) == 0
    capsys.readouterr()
    assert sorted(p.suffix for p in folder.iterdir()) == [".svg", ".svg", ".svg"]
