"""The command line as a new user types it: ``--json FILE`` as usage shows it, one standard input,
the same long option for the same concept across commands (found by probing the CLI on SciFact)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from _cli import run, write_files
from ef.cli import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d2 1 0.9 r\nq1 Q0 d1 2 0.8 r\nq2 Q0 d3 1 0.5 r\nq2 Q0 d4 2 0.4 r\n"
OTHER = "q1 Q0 d1 1 0.9 s\nq1 Q0 d2 2 0.8 s\nq2 Q0 d4 1 0.5 s\nq2 Q0 d3 2 0.4 s\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "run": RUN, "other": OTHER})


# --- ef trec-eval --json FILE / --csv FILE: the usage line says [--json [FILE] | --csv [FILE]] ---------------


@pytest.mark.parametrize("flag", ["--json", "--csv"])
@pytest.mark.parametrize("where", ["before", "after"])
def test_trec_eval_output_flag_takes_the_file_after_it(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path, flag: str, where: str
) -> None:
    out = tmp_path / "out.txt"
    inputs = [files["qrels"], files["run"]]
    argv = ["-m", "P.1", flag, str(out), *inputs] if where == "before" else ["-m", "P.1", *inputs, flag, str(out)]
    status, printed, err = run(capsys, "trec-eval", *argv)
    assert (status, printed, err) == (0, "", "")
    expected = run(capsys, "trec-eval", "-m", "P.1", f"{flag}=-", *inputs)[1]
    assert out.read_text() == expected
    if flag == "--json":
        assert json.loads(expected)["measures"] == {"P_1": 0.5}
    else:
        assert expected == "measure,query,value\nP_1,all,0.5000\n"


def test_trec_eval_bare_json_and_json_dash_still_print(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    inputs = [files["qrels"], files["run"]]
    bare = run(capsys, "trec-eval", "-m", "P.1", "--json", *inputs)
    assert bare[0] == 0
    assert json.loads(bare[1])["measures"] == {"P_1": 0.5}
    assert run(capsys, "trec-eval", "-m", "P.1", "--json", "-", *inputs) == bare
    assert run(capsys, "trec-eval", "-m", "P.1", *inputs, "--json") == bare


def test_trec_eval_a_word_too_many_is_still_refused(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    with pytest.raises(SystemExit) as exit_info:  # argparse's usage error
        main(["trec-eval", files["qrels"], files["run"], "extra.txt"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "ef trec-eval: error: unrecognized arguments: extra.txt"


# --- one standard input ------------------------------------------------------------------------------------


def test_trec_eval_refuses_qrels_and_run_both_from_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((QRELS + RUN).encode())))
    assert run(capsys, "trec-eval", "-", "-") == (
        2,
        "",
        "ef trec-eval: error: QRELS and RUN are both '-': standard input can be only one of them\n",
    )


# --- --level: the long form ef eval has, on every command that takes -l ------------------------------------


@pytest.mark.parametrize("spelling", ["-l", "--level"])
def test_compare_reads_level(capsys: pytest.CaptureFixture[str], files: dict[str, str], spelling: str) -> None:
    status, out, _ = run(
        capsys,
        "compare",
        "-q",
        "-m",
        "P_1",
        "--format",
        "json",
        spelling,
        "2",
        files["qrels"],
        files["run"],
        files["other"],
    )
    assert status == 0
    document = json.loads(out)
    # At level 2 only q2's d3 is relevant: run has it at rank 1 (P_1 = 0.5 over two queries), other at rank 2.
    means = [
        (row["system"], row["baseline"], row["system_mean"], row["baseline_mean"]) for row in document["comparisons"]
    ]
    assert means == [("other", "run", 0.0, 0.5)]


@pytest.mark.parametrize("spelling", ["-l", "--level"])
def test_gate_reads_level(capsys: pytest.CaptureFixture[str], files: dict[str, str], spelling: str) -> None:
    status, out, _ = run(
        capsys,
        "gate",
        "-q",
        "-m",
        "P_1",
        "--json",
        "-",
        spelling,
        "2",
        "--qrels",
        files["qrels"],
        files["run"],
        files["other"],
    )
    assert status == 3  # two queries cannot tell
    (verdict,) = json.loads(out)["measures"]
    assert (verdict["measure"], verdict["baseline_mean"], verdict["candidate_mean"]) == ("P_1", 0.5, 0.0)


# --- ef fuse --tune's --step and --seed: a bad value names the flag, never a traceback -----------------------


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--step", "0", "argument --step: expected a number in (0, 1] such as 0.1 or 0.05 (got '0')"),
        ("--step", "nan", "argument --step: expected a number in (0, 1] such as 0.1 or 0.05 (got 'nan')"),
        ("--step", "x", "argument --step: expected a number in (0, 1] such as 0.1 or 0.05 (got 'x')"),
        ("--seed", "-1", "argument --seed: expected an integer >= 0 (got '-1')"),
    ],
)
def test_fuse_tune_options_are_checked_as_flags(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], flag: str, value: str, message: str
) -> None:
    argv = ["fuse", "-q", "--tune", files["qrels"], "--method", "wsum", "--folds", "2", flag, value]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, files["run"], files["other"]])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ef fuse: error: {message}"


def test_fuse_tune_step_half_is_a_two_point_grid(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    argv = ["fuse", "-q", "--tune", files["qrels"], "--method", "wsum", "--folds", "2", "--step", "0.5"]
    status, out, _ = run(capsys, *argv, files["run"], files["other"])
    assert status == 0
    assert out.splitlines()[-1].startswith("fusion ")


# --- ef datasets list --json NAME: the word after --json is a dataset's name, not a file to write -----------


def test_datasets_list_json_before_a_name_prints_that_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "datasets", "list", "--json", "beir/scifact")
    assert status == 0
    assert [d["name"] for d in json.loads(out)["datasets"]] == ["beir/scifact"]
    assert run(capsys, "datasets", "list", "beir/scifact", "--json") == (status, out, "")
    both = json.loads(run(capsys, "datasets", "list", "--json", "beir/scifact", "beir/nfcorpus")[1])
    assert [d["name"] for d in both["datasets"]] == ["beir/scifact", "beir/nfcorpus"]


def test_datasets_list_json_file_is_checked_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "no" / "list.json"
    assert run(capsys, "datasets", "list", "--json", str(target)) == (
        2,
        "",
        f"ef datasets: error: --json {target}: directory {target.parent} does not exist\n",
    )
    status, out, _ = run(capsys, "datasets", "list", "--json", str(tmp_path / "list.json"), "beir/scifact")
    assert (status, out.splitlines()[2].split()[0]) == (0, "beir/scifact")  # the table is printed besides
    assert [d["name"] for d in json.loads((tmp_path / "list.json").read_text())["datasets"]] == ["beir/scifact"]


# --- ef sweep: an output folder that cannot be made is a usage error naming it, before any work -------------


def test_sweep_out_under_a_file_names_the_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from ef.datasets import demo_dataset

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    config = tmp_path / "sweep.toml"
    config.write_text(f'dataset = "{demo_dataset()}"\nout = "{blocker / "cfg"}"\n[grid]\nk1 = [1.2]\n')
    assert run(capsys, "sweep", "-q", str(config), "--out", str(blocker / "sw")) == (
        2,
        "",
        f"ef sweep: error: --out {blocker / 'sw'}: {blocker} is not a directory\n",
    )
    assert run(capsys, "sweep", "-q", str(config)) == (
        2,
        "",
        f"ef sweep: error: {config}: 'out' {blocker / 'cfg'}: {blocker} is not a directory\n",
    )
    assert not (tmp_path / "cells").exists()


def test_fuse_output_that_cannot_be_written_names_the_flag(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    assert run(capsys, "fuse", "-q", files["run"], files["other"], "-o", "/dev/full") == (
        2,
        "",
        "ef fuse: error: -o /dev/full: cannot write the fused run (No space left on device)\n",
    )


# --- one measure under two spellings is tested once: the correction's family is not inflated ----------------


@pytest.mark.parametrize(
    "spellings", [["ndcg@10", "ndcg_cut_10"], ["P_1", "P@1", "precision@1"], ["mrr", "recip_rank"]]
)
def test_compare_tests_a_measure_once_whatever_its_spellings(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], spellings: list[str]
) -> None:
    status, out, _ = run(
        capsys,
        "compare",
        "-q",
        "--format",
        "json",
        "-m",
        ",".join(spellings),
        files["qrels"],
        files["run"],
        files["other"],
    )
    assert status == 0
    document = json.loads(out)
    assert [row["measure"] for row in document["comparisons"]] == spellings[:1]
    assert document["family"]["size"] == 1


def test_gate_tests_a_measure_once_whatever_its_spellings(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    status, out, _ = run(
        capsys,
        "gate",
        "-q",
        "--json",
        "-",
        "-m",
        "ndcg@10",
        "-m",
        "ndcg_cut_10",
        "--qrels",
        files["qrels"],
        files["run"],
        files["other"],
    )
    assert status == 3
    assert [m["measure"] for m in json.loads(out)["measures"]] == ["ndcg@10"]
