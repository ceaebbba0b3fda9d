"""Command-line outputs: '-' is standard output, paths are checked first, a closed pipe ends quietly."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import run
from ef.cli import main
from ef.trec import read_run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
TREC = ROOT.parent / "shared" / "data" / "trec_eval"
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "EF_NO_PROGRESS": "1"}


def test_ef_eval_json_dash_is_stdout_alone(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run(capsys, "eval", "--quiet", "--k", "1,10", "--json", "-")
    assert status == 0
    report = json.loads(out)  # nothing but the JSON on stdout
    assert (report["n_queries"], round(report["metrics"]["ndcg@10"], 4)) == (27, 0.8078)
    assert err.startswith("the demo dataset, split test: 100 documents")  # the tables moved to stderr
    assert not (Path.cwd() / "-").exists()


def test_ef_eval_run_out_dash_is_the_same_run_on_stdout(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "eval", "--quiet", "--k", "10", "--run-out", str(tmp_path / "run.trec"))[0] == 0
    status, out, _ = run(capsys, "eval", "--quiet", "--k", "10", "--run-out", "-")
    assert status == 0
    assert out == (tmp_path / "run.trec").read_text()
    (tmp_path / "stdout.trec").write_text(out)
    assert len(read_run(tmp_path / "stdout.trec")) == 27


def test_two_outputs_cannot_share_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "eval", "--json", "-", "--run-out", "-") == (
        2, "", "ef eval: error: --json and --run-out cannot both write to standard output ('-')\n"
    )


def test_an_index_dir_that_cannot_be_created_fails_before_indexing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def no_indexing(*args: object, **kwargs: object) -> None:
        raise AssertionError("indexed before --index-dir was checked")

    monkeypatch.setattr("ef.source_manager.ingest", no_indexing)
    monkeypatch.setattr("ef.evaluation.read_beir", no_indexing)
    (tmp_path / "file").write_text("")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("keep")
    cases = [
        (tmp_path / "file" / "idx", f"--index-dir {tmp_path}/file/idx: {tmp_path}/file is not a directory"),
        (tmp_path / "file", f"--index-dir {tmp_path}/file exists and is not a directory"),
        (tmp_path / "notes", f"--index-dir {tmp_path}/notes exists and is not an ef index"),
    ]
    for path, message in cases:
        assert run(capsys, "eval", "--quiet", "--index-dir", str(path)) == (2, "", f"ef eval: error: {message}\n")
    # Root may write anywhere, so an unwritable folder is what os.access says.
    monkeypatch.setattr("ef.cli._output.os.access", lambda path, mode: False)
    assert run(capsys, "eval", "--quiet", "--index-dir", str(tmp_path / "new" / "idx")) == (
        2, "", f"ef eval: error: --index-dir {tmp_path}/new/idx: cannot create files in directory {tmp_path}\n"
    )


def test_ef_eval_json_to_dev_stdout_adds_to_a_redirected_output(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with open(out, "wb") as handle:
        done = subprocess.run([sys.executable, "-m", "ef", "eval", "--quiet", "--k", "1", "--json", "/dev/stdout"],
                              stdout=handle, stderr=subprocess.PIPE, env=ENV, cwd=tmp_path, check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    text = out.read_text()
    assert text.startswith("the demo dataset, split test:")  # the tables, not replaced by the JSON
    assert json.loads(text[text.index("\n{") + 1:])["n_queries"] == 27
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_a_full_device_is_reported_and_stays_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "eval", "--quiet", "--k", "1", "--json", "/dev/full")
    assert (status, err) == (2, "ef eval: error: --json /dev/full: cannot write the report (No space left on device)\n")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_ef_compare_output_is_written_as_every_other_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # -o goes through the one CLI writer (atomic, errors naming the flag), not a copy of it.
    files = [str(TREC / "qrels.test"), f"a={TREC / 'results.test'}", f"b={TREC / 'results.trunc'}"]
    status, printed, _ = run(capsys, "compare", "-m", "P_5", *files)
    assert (status, printed.splitlines()[3]) == (
        0, "b       a   P_5      0.2000   0.2667  -0.0667  [-0.8000, +0.6000]  -0.09  0.8845    0.8845  1/1/1"
    )
    assert run(capsys, "compare", "-m", "P_5", *files, "-o", str(tmp_path / "out.txt")) == (0, "", "")
    assert (tmp_path / "out.txt").read_text() == printed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temporary left beside it
    assert run(capsys, "compare", "-m", "P_5", *files, "-o", "/dev/full") == (
        2, "", "ef compare: error: --output /dev/full: cannot write the report (No space left on device)\n"
    )


@pytest.mark.parametrize("argv", [
    ["rag", str(EXAMPLE), "--json", "-"],
    ["rag", "--json", "-", str(EXAMPLE)],
    ["rag", "--json", str(EXAMPLE)],
    ["rag", str(EXAMPLE), "--json"],
])
def test_ef_rag_json_dash_and_bare_json_print_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    status, out, _ = run(capsys, *argv)
    assert status == 0
    assert json.loads(out)["n_samples"] == 8


def test_ef_rag_json_file_is_written(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run(capsys, "rag", str(EXAMPLE), "--json", str(tmp_path / "r.json"))
    assert (status, out) == (0, "")
    assert json.loads((tmp_path / "r.json").read_text())["n_samples"] == 8
    assert run(capsys, "rag", "--json") == (
        2, "", "ef rag: error: the following arguments are required: SAMPLES.jsonl\n"
    )


def test_ef_trec_eval_json_and_csv_take_a_file_or_dash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    files = [str(TREC / "qrels.test"), str(TREC / "results.test")]
    status, printed, _ = run(capsys, "trec-eval", "-m", "P.5", "--json", *files)  # bare: stdout
    assert status == 0
    assert run(capsys, "trec-eval", "-m", "P.5", "--json=-", *files) == (0, printed, "")
    assert run(capsys, "trec-eval", "-m", "P.5", f"--json={tmp_path / 'r.json'}", *files) == (0, "", "")
    assert (tmp_path / "r.json").read_text() == printed
    assert json.loads(printed)["measures"] == {"P_5": 4 / 15}
    assert run(capsys, "trec-eval", "-m", "P.5", "--csv=-", *files) == (
        0, "measure,query,value\nP_5,all,0.2667\n", ""
    )
    assert run(capsys, "trec-eval", "--csv=/no/such/dir/r.csv", *files) == (
        2, "", "ef trec-eval: error: --csv /no/such/dir/r.csv: directory /no/such/dir does not exist\n"
    )


@pytest.mark.parametrize("argv", [
    ["eval", "--quiet"],
    ["rag", str(EXAMPLE), "--json"],
    ["trec-eval", "-q", str(TREC / "qrels.test"), str(TREC / "results.test")],
])
def test_a_reader_that_left_ends_the_command_quietly(argv: list[str]) -> None:
    # The pipe is closed before the command writes: like `ef ... | head -1` with a quick head.
    child = subprocess.Popen([sys.executable, "-m", "ef", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=ENV)
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.close()
    err = child.stderr.read()
    assert (child.wait(timeout=60), err) == (128 + signal.SIGPIPE, b"")


def test_calling_main_leaves_the_callers_environment_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a command, ef trec-eval turns OpenBLAS's thread pool off; a program calling main() keeps its own.
    for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    run, qrels = tmp_path / "run", tmp_path / "qrels"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    qrels.write_text("q1 0 d1 1\n")
    assert main(["trec-eval", "-m", "map", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == "map                   \tall\t1.0000\n"
    assert "OPENBLAS_NUM_THREADS" not in os.environ
