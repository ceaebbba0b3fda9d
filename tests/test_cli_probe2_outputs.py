"""Two output flags that name one path are refused before any work (found by probing the CLI on
SciFact: ``ef eval --json r.out --run-out r.out`` exited 0 with the JSON alone in r.out, the run
written and then replaced; ``ef compare -o c.out --html c.out`` kept the page, ``ef gate --json
g.out --markdown g.out`` the JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ef.cli import main

QRELS = "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n"
A = "q1 Q0 d1 1 2 a\nq2 Q0 x 1 2 a\nq2 Q0 d2 2 1 a\nq3 Q0 d3 1 1 a\n"
B = "q1 Q0 x 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d2 1 2 b\nq3 Q0 d3 1 1 b\n"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    for name, text in (("qrels.txt", QRELS), ("a.trec", A), ("b.trec", B)):
        (tmp_path / name).write_text(text)
    return tmp_path


CASES = [
    (["eval", "-q", "--json", "r.out", "--run-out", "r.out"], "--json and --run-out both name r.out"),
    (["eval", "-q", "--run-out", "r.out", "--index-dir", "./r.out"], "--run-out and --index-dir both name ./r.out"),
    (["trec-eval", "-m", "map", "--json", "r.out", "--html", "r.out", "qrels.txt", "a.trec"],
     "--json and --html both name r.out"),
    (["compare", "qrels.txt", "a.trec", "b.trec", "-o", "r.out", "--html", "r.out"],
     "--output and --html both name r.out"),
    (["gate", "--qrels", "qrels.txt", "a.trec", "b.trec", "--json", "r.out", "--markdown", "r.out"],
     "--markdown and --json both name r.out"),
    (["gate", "--qrels", "qrels.txt", "a.trec", "b.trec", "--junit", "r.out", "--html", "sub/../r.out"],
     "--junit and --html both name sub/../r.out"),
    (["report", "r.json", "--html", "r.out", "--png", "r.out"], "--html and --png both name r.out"),
]


@pytest.mark.parametrize(("argv", "message"), CASES)
def test_two_outputs_on_one_path_are_refused(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    if argv[0] == "report" or "--html" in argv:
        pytest.importorskip("altair")
    (folder / "sub").mkdir()
    (folder / "r.json").write_text(json.dumps({"metrics": {"ndcg@10": 0.5}, "per_query": {"q1": {"ndcg@10": 0.5}}}))
    assert main(argv) == 2
    assert capsys.readouterr() == ("", f"ef {argv[0]}: error: {message}: give each output its own path\n")
    assert not (folder / "r.out").exists()


def test_sweep_json_in_place_of_its_folder_is_refused(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "s.toml").write_text('dataset = "data"\nout = "runs"\n\n[grid]\nk1 = [0.9, 1.2]\n')
    assert main(["sweep", "s.toml", "--json", "runs"]) == 2
    assert capsys.readouterr() == (
        "", "ef sweep: error: s.toml: 'out' and --json both name runs: give each output its own path\n"
    )


def test_distinct_outputs_still_write(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--qrels", "qrels.txt", "a.trec", "a.trec", "--json", "g.json", "--markdown", "g.md",
                 "-q"]) == 3  # three queries cannot settle it
    assert json.loads((folder / "g.json").read_text())["outcome"] == "inconclusive"
    assert (folder / "g.md").read_text().startswith("#")
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    "argv",
    [["eval", "-q"], ["trec-eval", "qrels.txt", "a.trec"], ["compare", "qrels.txt", "a.trec", "b.trec"],
     ["report", "r.json"], ["gate", "--qrels", "qrels.txt", "a.trec", "b.trec"]],
)
def test_html_dash_is_refused_not_a_file_named_dash(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    (folder / "r.json").write_text(json.dumps({"metrics": {"ndcg@10": 0.5}, "per_query": {"q1": {"ndcg@10": 0.5}}}))
    assert main([*argv, "--html", "-"]) == 2
    assert capsys.readouterr() == ("", f"ef {argv[0]}: error: --html writes a file, not standard output ('-')\n")
    assert not (folder / "-").exists()


@pytest.mark.parametrize(
    ("argv", "flag", "target"),
    [
        (["fuse", "a.trec", "b.trec", "--tune", "qrels.txt", "--folds", "2", "-o", "qrels.txt"], "-o", "qrels.txt"),
        (["fuse", "a.trec", "b.trec", "--method", "bayesfuse", "--qrels", "qrels.txt", "-o", "qrels.txt"], "-o",
         "qrels.txt"),
        (["sweep", "s.toml", "--json", "s.toml"], "--json", "s.toml"),
        (["trec-eval", "-Z", "z.txt", "--json", "z.txt", "qrels.txt", "a.trec"], "--json", "z.txt"),
    ],
)
def test_an_output_may_not_replace_an_input_the_command_reads(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str], flag: str, target: str
) -> None:
    # ef fuse --tune q.txt -o q.txt tuned on the qrels, then wrote the fused run over them.
    (folder / "s.toml").write_text(f'dataset = "{folder}"\nout = "runs"\n\n[grid]\nk1 = [0.9, 1.2]\n')
    (folder / "z.txt").write_text("q1 map 0.5 0.1\n")
    before = (folder / target).read_bytes()
    assert main(argv) == 2
    assert capsys.readouterr() == ("", (
        f"ef {argv[0]}: error: {flag} {target} is the same file as the input {target}; it would be replaced: "
        "write elsewhere\n"
    ))
    assert (folder / target).read_bytes() == before


def test_compare_output_may_not_replace_the_dataset_qrels(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    from ef.datasets import demo_dataset

    shutil.copytree(demo_dataset(), folder / "ds")
    for name in ("a", "b"):
        lines = (f"q{i:02d} Q0 coffee-0{i % 9 + 1} 1 1 {name}\n" for i in range(1, 28))
        (folder / f"{name}.run").write_text("".join(lines))
    before = (folder / "ds" / "qrels" / "test.tsv").read_bytes()
    assert main(["compare", "--dataset", "ds", "a.run", "b.run", "-o", "ds/qrels/test.tsv"]) == 2
    assert capsys.readouterr().err == (
        "ef compare: error: --output ds/qrels/test.tsv is the same file as the input ds/qrels/test.tsv; it would be "
        "replaced: write elsewhere\n"
    )
    assert (folder / "ds" / "qrels" / "test.tsv").read_bytes() == before
