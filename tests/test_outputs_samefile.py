"""An output that is the same file as an input is refused before any work (as ``gcc x.c -o x.c`` is).

Same file means ``os.path.samefile``: the path itself, a symlink to it or a hard link. The input is
left byte for byte as it was, and nothing else is written.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ef.cli import main

DEMO_DATASET = Path(__file__).resolve().parents[1] / "src" / "ef" / "data" / "demo"

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN_A = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\n"
RUN_B = "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d4 1 1.0 b\n"


def _alias(kind: str, target: Path) -> Path:
    """`target` itself, a symlink to it or a hard link to it, in another folder."""
    if kind == "same":
        return target
    other = target.parent / "elsewhere"
    other.mkdir(exist_ok=True)
    alias = other / f"{kind}-{target.name}"
    if kind == "symlink":
        alias.symlink_to(target)
    else:
        os.link(target, alias)
    return alias


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"qrels": tmp_path / "qrels.txt", "a": tmp_path / "a.run", "b": tmp_path / "b.run"}
    out["qrels"].write_text(QRELS)
    out["a"].write_text(RUN_A)
    out["b"].write_text(RUN_B)
    return out


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], victim: Path, flag: str, shown: Path) -> None:
    before = victim.read_bytes()
    folder = sorted(p.name for p in victim.parent.iterdir())
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.endswith(
        f"error: {flag} {shown} is the same file as the input {victim}; it would be replaced: write elsewhere\n"
    ), err
    assert victim.read_bytes() == before
    assert sorted(p.name for p in victim.parent.iterdir()) == folder  # no temporary left behind


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_compare_output_naming_a_run(capsys: pytest.CaptureFixture[str], files: dict[str, Path], kind: str) -> None:
    out = _alias(kind, files["a"])
    argv = ["compare", str(files["qrels"]), str(files["a"]), str(files["b"]), "--output", str(out)]
    _refused(capsys, argv, files["a"], "--output", out)


@pytest.mark.parametrize("kind", ["same", "symlink", "hardlink"])
def test_trec_eval_json_naming_the_run(capsys: pytest.CaptureFixture[str], files: dict[str, Path], kind: str) -> None:
    out = _alias(kind, files["b"])
    _refused(capsys, ["trec-eval", f"--json={out}", str(files["qrels"]), str(files["b"])], files["b"], "--json", out)


def test_trec_eval_csv_naming_the_qrels(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    out = files["qrels"]
    _refused(capsys, ["trec-eval", f"--csv={out}", str(out), str(files["b"])], files["qrels"], "--csv", out)


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_eval_run_out_naming_a_dataset_file(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    dataset = tmp_path / "ds"
    shutil.copytree(DEMO_DATASET, dataset)
    victim = dataset / name
    _refused(capsys, ["eval", str(dataset), "--quiet", "--run-out", str(victim)], victim, "--run-out", victim)


def test_eval_json_naming_the_corpus_by_symlink(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    shutil.copytree(DEMO_DATASET, dataset)
    out = _alias("symlink", dataset / "corpus.jsonl")
    _refused(capsys, ["eval", str(dataset), "--quiet", "--json", str(out)], dataset / "corpus.jsonl", "--json", out)


def test_report_html_naming_the_result(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    result = tmp_path / "x.json"
    result.write_text(json.dumps({"metrics": {"ndcg@10": 0.5}, "n_queries": 1}))
    _refused(capsys, ["report", str(result), "--html", str(result)], result, "--html", result)


def test_report_html_naming_the_run(capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, Path]) -> None:
    pytest.importorskip("vl_convert")
    result = tmp_path / "x.json"
    result.write_text(json.dumps({"metrics": {"ndcg@10": 0.5}, "n_queries": 1}))
    out = _alias("hardlink", files["a"])
    argv = ["report", str(result), "--run", str(files["a"]), "--html", str(out)]
    _refused(capsys, argv, files["a"], "--html", out)


def test_compare_html_naming_the_qrels(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    pytest.importorskip("vl_convert")
    argv = ["compare", str(files["qrels"]), str(files["a"]), str(files["b"]), "--html", str(files["qrels"])]
    _refused(capsys, argv, files["qrels"], "--html", files["qrels"])


@pytest.mark.parametrize("make_argv", [
    lambda s: ["rag", str(s), "--json", str(s)],
    lambda s: ["rag", "--json", str(s), str(s)],
])
def test_rag_json_naming_the_samples(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make_argv: Callable[[Path], list[str]]
) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"user_input": "q", "response": "a b", "reference": "a b"}) + "\n")
    _refused(capsys, make_argv(samples), samples, "--json", samples)


def test_another_file_of_the_same_content_is_fine(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    copy = files["a"].parent / "copy.run"
    shutil.copy(files["a"], copy)
    argv = ["compare", str(files["qrels"]), str(files["a"]), str(files["b"]), "--output", str(copy)]
    argv += ["--resamples", "100"]
    assert main(argv) == 0
    assert capsys.readouterr() == ("", "")
    assert copy.read_text().startswith("paired Student t-test over 2 queries")
