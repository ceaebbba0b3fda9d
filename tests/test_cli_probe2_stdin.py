"""``-`` (standard input) as a RUN or QRELS of ``ef compare``, ``ef gate`` and ``ef fuse``: read once,
named ``stdin`` (or ``-`` where the command shows paths), and given to one argument only (found by
probing the CLI on SciFact: ``ef compare QRELS A -`` said ``-: no such file``, ``ef gate`` too)."""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from _cli import run, write_files
from ef.cli import main

N = 12
QRELS = "".join(f"q{i} 0 d{i} 1\nq{i} 0 e{i} {1 + i % 2}\n" for i in range(N))
# A finds d_i first on every query; B on the odd ones only (and e_i on the even ones).
A = "".join(f"q{i} Q0 d{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\nq{i} Q0 e{i} 3 1 a\n" for i in range(N))
B = "".join(
    f"q{i} Q0 {'d' if i % 2 else 'x'}{i} 1 3 b\nq{i} Q0 e{i} 2 2 b\nq{i} Q0 {'x' if i % 2 else 'd'}{i} 3 1 b\n"
    for i in range(N)
)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B})


def stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    # A BufferedReader, as a real standard input is (it can peek).
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(text.encode()))))


# --- ef compare ---------------------------------------------------------------------------------------------


def test_compare_reads_a_run_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    options = ["-m", "ndcg@10,mrr", "--resamples", "200", "--format", "csv"]
    expected = run(capsys, "compare", files["qrels"], files["a"], f"stdin={files['b']}", *options)
    assert expected[0] == 0
    stdin(monkeypatch, B)
    assert run(capsys, "compare", files["qrels"], files["a"], "-", *options) == expected
    assert expected[1].splitlines()[1].startswith("stdin,a,ndcg@10,True,12,0.")
    stdin(monkeypatch, B)
    named = run(capsys, "compare", files["qrels"], files["a"], "bm25=-", *options)[1]
    assert named == expected[1].replace("stdin,", "bm25,")


def test_compare_reads_qrels_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    options = ["-m", "ndcg@10", "--resamples", "200", "--format", "json"]
    expected = run(capsys, "compare", files["qrels"], files["a"], files["b"], *options)
    stdin(monkeypatch, QRELS)
    assert run(capsys, "compare", "-", files["a"], files["b"], *options) == expected
    assert json.loads(expected[1])["systems"] == ["a", "b"]


def test_compare_html_report_with_a_run_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    # The report shows the rankings again: standard input is read once and kept for it.
    pytest.importorskip("altair")
    page = tmp_path / "c.html"
    stdin(monkeypatch, B)
    status, out, err = run(capsys, "compare", files["qrels"], files["a"], "-", "-m", "ndcg@10", "--resamples", "200",
                           "--html", str(page), "-q")
    assert (status, err) == (0, "")
    assert out.splitlines()[3].startswith("stdin   a   ndcg@10")
    assert "Comparison: a, stdin" in page.read_text(encoding="utf-8")


def test_compare_html_report_with_qrels_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("altair")
    page = tmp_path / "c.html"
    stdin(monkeypatch, QRELS)
    status, _, err = run(capsys, "compare", "-", files["a"], files["b"], "-m", "mrr", "--resamples", "200",
                         "--html", str(page), "-q")
    assert (status, err) == (0, "")
    assert "Comparison: a, b" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["QRELS", "A", "-", "-"], "two RUNs are '-': standard input can be only one of them"),
        (["QRELS", "x=-", "y=-"], "two RUNs are '-': standard input can be only one of them"),
        (["-", "A", "-"], "QRELS and RUN are both '-': standard input can be only one of them"),
    ],
)
def test_compare_takes_standard_input_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], argv: list[str],
    message: str,
) -> None:
    stdin(monkeypatch, B)
    argv = [files["qrels"] if a == "QRELS" else files["a"] if a == "A" else a for a in argv]
    assert run(capsys, "compare", *argv) == (2, "", f"ef compare: error: {message}\n")


# --- ef gate ------------------------------------------------------------------------------------------------


def _gate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    status, out, err = run(capsys, "gate", *argv, "-m", "ndcg@10", "--resamples", "200", "--json", "-", "-q")
    assert err == ""
    return status, json.loads(out)


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_gate_reads_a_run_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], side: str
) -> None:
    status, expected = _gate_json(capsys, "--qrels", files["qrels"], files["a"], files["b"])
    stdin(monkeypatch, A if side == "baseline" else B)
    argv = ["-", files["b"]] if side == "baseline" else [files["a"], "-"]
    got_status, got = _gate_json(capsys, "--qrels", files["qrels"], *argv)
    assert (got_status, got[side]) == (status, "-")
    assert got["measures"] == expected["measures"]
    assert got["measures"][0]["candidate_mean"] < got["measures"][0]["baseline_mean"]


def test_gate_reads_a_saved_result_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    saved = {}
    for name in ("a", "b"):
        saved[name] = tmp_path / f"{name}.json"
        assert main(["trec-eval", "-c", "-q", "-m", "ndcg@10", "--json", str(saved[name]), files["qrels"],
                     files[name]]) == 0
    status, expected = _gate_json(capsys, str(saved["a"]), str(saved["b"]))
    stdin(monkeypatch, "\n " + saved["b"].read_text())
    got_status, got = _gate_json(capsys, str(saved["a"]), "-")
    assert (got_status, got["candidate"], got["measures"]) == (status, "-", expected["measures"])


def test_gate_names_standard_input_that_is_not_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    stdin(monkeypatch, '{"per_query": ')
    assert run(capsys, "gate", files["a"], "-", "--qrels", files["qrels"]) == (
        2, "", "ef gate: error: <stdin>: malformed JSON: Expecting value (column 15)\n"
    )


def test_gate_refuses_an_empty_run_on_standard_input_or_a_pipe(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    # Worded as an empty run file is; before 63d781e gated as zeros (PASS against a zero baseline),
    # then "the baseline: 'run' holds no query ... {query_id: {}}", a Python mapping's words.
    stdin(monkeypatch, "")
    assert run(capsys, "gate", "--qrels", files["qrels"], "-", files["a"]) == (
        2, "", "ef gate: error: <stdin>: the run holds no ranking line (it would score 0 on every query)\n"
    )
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b""))
    writer.start()
    assert run(capsys, "gate", "--qrels", files["qrels"], files["a"], str(fifo)) == (
        2, "", f"ef gate: error: {fifo}: the run holds no ranking line (it would score 0 on every query)\n"
    )
    writer.join()


def test_gate_reads_qrels_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    # gate reads the qrels once per side and for their hash: standard input is read once, here.
    expected = _gate_json(capsys, "--qrels", files["qrels"], files["a"], files["b"])
    stdin(monkeypatch, QRELS)
    assert _gate_json(capsys, "--qrels", "-", files["a"], files["b"]) == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--qrels", "-", "A", "-"], "CANDIDATE and --qrels are both '-'"),
        (["--qrels", "Q", "-", "-"], "BASELINE and CANDIDATE are both '-'"),
        (["--qrels", "Q", "A", "-", "-"], "two CANDIDATEs are '-'"),
        (["--qrels", "Q", "--baseline-seed", "-", "-", "A"], "BASELINE and --baseline-seed are both '-'"),
    ],
)
def test_gate_takes_standard_input_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], argv: list[str],
    message: str,
) -> None:
    stdin(monkeypatch, B)
    argv = [files["qrels"] if a == "Q" else files["a"] if a == "A" else a for a in argv]
    assert run(capsys, "gate", *argv) == (
        2, "", f"ef gate: error: {message}: standard input can be only one of them\n"
    )


# --- ef fuse ------------------------------------------------------------------------------------------------


def test_fuse_reads_one_run_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    expected = run(capsys, "fuse", files["a"], files["b"], "-o", "-")
    assert expected[0] == 0
    assert expected[1].startswith("q0 Q0 ")
    stdin(monkeypatch, B)
    assert run(capsys, "fuse", files["a"], "-", "-o", "-") == expected
    stdin(monkeypatch, B)
    assert run(capsys, "fuse", files["a"], "-", "-", "-o", "-") == (
        2, "", "ef fuse: error: two RUNs are '-': standard input can be only one of them\n"
    )


def test_fuse_tune_names_standard_input_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    # The verdict names the best input: a run on standard input is 'stdin', not '-'.
    stdin(monkeypatch, A)
    status, out, err = run(capsys, "fuse", "-", files["b"], "--tune", files["qrels"], "--folds", "2",
                           "--method", "combsum")
    # ef compare's warning, which ef fuse --tune prints as ef compare does
    assert (status, err) == (0, "ef fuse: warning: only 12 queries: a paired test this small has low power, so "
                                "a real difference can easily come out not significant; look at the confidence "
                                "intervals\n")
    assert "the best input (stdin) on ndcg@10" in out.splitlines()[-1]


# --- ef report ----------------------------------------------------------------------------------------------


def test_report_reads_the_saved_report_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("altair")
    saved = run(capsys, "compare", files["qrels"], files["a"], files["b"], "-m", "mrr", "--resamples", "100",
                "--format", "json")[1]
    stdin(monkeypatch, saved)
    page = tmp_path / "r.html"
    assert run(capsys, "report", "-", "--html", str(page)) == (0, "", "")
    assert "Comparison" in page.read_text(encoding="utf-8")
    for text, message in (("[1]", "<stdin>: expected a JSON object, got array"),
                          ('{"a":', "<stdin>: malformed JSON: Expecting value (column 6)"),
                          ('{\n"a": NaN}', "<stdin>: field a must be a finite number (got nan)"),
                          ('{"a": 1,\n "a": 2}', "<stdin>: key 'a' appears twice in one object")):
        stdin(monkeypatch, text)
        assert run(capsys, "report", "-", "--html", str(page)) == (2, "", f"ef report: error: {message}\n")
    stdin(monkeypatch, saved)
    assert run(capsys, "report", "-", "--html", str(page), "--run", "a=-") == (
        2, "", "ef report: error: RESULT.json and --run are both '-': standard input can be only one of them\n"
    )


def test_fuse_tune_qrels_from_standard_input_serve_the_final_trained_fusion(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str], tmp_path: Path
) -> None:
    # tune read '-', then the final fusion of a trained method read it again: empty.
    argv = ["fuse", files["a"], files["b"], "--folds", "2", "--method", "probfuse"]
    expected_out = tmp_path / "expected.trec"
    expected = run(capsys, *argv, "--tune", files["qrels"], "-o", str(expected_out))
    assert expected[0] == 0
    got_out = tmp_path / "got.trec"
    stdin(monkeypatch, QRELS)
    assert run(capsys, *argv, "--tune", "-", "-o", str(got_out)) == expected
    assert got_out.read_text() == expected_out.read_text()


def test_fuse_takes_standard_input_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    stdin(monkeypatch, A)
    assert run(capsys, "fuse", "-", files["b"], "--tune", "-") == (
        2, "", "ef fuse: error: RUN and --tune are both '-': standard input can be only one of them\n"
    )


def test_sweep_config_is_a_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "sweep", "-") == (
        2, "", "ef sweep: error: CONFIG is a file (.toml, .json, .yaml), not standard input ('-')\n"
    )


def _fifo(path: Path, text: str) -> threading.Thread:
    """A named pipe at `path` that gives `text` once, as ``<(cat FILE)`` does."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "w") as stream:
            stream.write(text)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


def test_gate_reads_pipes_once(capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path) -> None:
    # ef.gate takes regular files only ('/dev/fd/63: no such file') and reads the qrels once per side.
    status, expected = _gate_json(capsys, "--qrels", files["qrels"], files["a"], files["b"])
    feeders = [_fifo(tmp_path / "q.pipe", QRELS), _fifo(tmp_path / "b.pipe", B)]
    got_status, got = _gate_json(capsys, "--qrels", str(tmp_path / "q.pipe"), files["a"], str(tmp_path / "b.pipe"))
    for feeder in feeders:
        feeder.join(timeout=10)
    assert (got_status, got["candidate"], got["measures"]) == (status, str(tmp_path / "b.pipe"), expected["measures"])


def test_compare_html_reads_a_named_pipe_once(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    # The page read the run again: a FIFO's second open waited for a writer forever.
    pytest.importorskip("altair")
    argv = ["-m", "mrr", "--resamples", "100", "--format", "csv", "-q"]
    expected = run(capsys, "compare", files["qrels"], files["a"], files["b"], *argv)
    feeders = [_fifo(tmp_path / "q.pipe", QRELS), _fifo(tmp_path / "b.pipe", B)]
    page = tmp_path / "c.html"
    got = run(capsys, "compare", str(tmp_path / "q.pipe"), files["a"], f"b={tmp_path / 'b.pipe'}", *argv,
              "--html", str(page))
    for feeder in feeders:
        feeder.join(timeout=10)
    assert got == expected
    assert "Comparison: a, b" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("pipe", ["/dev/fd/63", "/proc/self/fd/7"])
def test_compare_asks_a_pipe_for_a_name(capsys: pytest.CaptureFixture[str], files: dict[str, str], pipe: str) -> None:
    number = pipe.rsplit("/", 1)[1]
    assert run(capsys, "compare", files["qrels"], files["a"], pipe) == (
        2, "", f"ef compare: error: RUN {pipe} is a pipe with no name of its own (the table would call it "
               f"'{number}'): name it, as NAME=<(zcat run.gz)\n"
    )
