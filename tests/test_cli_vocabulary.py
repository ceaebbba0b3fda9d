"""One vocabulary across the ``ef`` command line: the distribution name its hints install, ``--version``,
``-q/--quiet``, no prefix-guessing, did-you-mean for commands (issue 34)."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest

import ef
from ef.cli import _parser, main

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "ef-eval"  # free on PyPI when chosen; `ef` there is Embeddings Flow


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_name_is_not_someone_elses() -> None:
    project = _pyproject()["project"]
    assert project["name"] == DISTRIBUTION
    assert project["optional-dependencies"]["dev"] == [f"{DISTRIBUTION}[dense,ragas,test,ray,ann,report]"]
    assert project["version"] == ef.__version__


def test_every_install_hint_names_the_distribution() -> None:
    # `pip install 'ef[report]'` would install Embeddings Flow; every hint must name ef-eval.
    wrong = re.compile(r"""(?<![\w.-])ef\\?\[""")
    offenders = []
    paths = [*ROOT.glob("src/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("tests/*.py")]
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if wrong.search(line) and path.name != "test_cli_vocabulary.py":
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []
    hints = [p for p in ROOT.glob("src/**/*.py") if "pip install 'ef-eval[" in p.read_text(encoding="utf-8")]
    assert len(hints) >= 10


def test_the_docs_say_how_to_live_beside_intels_fastrag() -> None:
    page = (ROOT / "docs" / "fastrag.md").read_text(encoding="utf-8")
    assert "ef's `fastrag` is not Intel's fastRAG" in page
    assert "pip install ef-eval" in page
    assert "pip install ef-eval" in (ROOT / "README.md").read_text(encoding="utf-8")


# --- the command line ---------------------------------------------------------------------------


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"ef (ef-eval) {ef.__version__}\n"


def test_an_unknown_command_suggests_the_near_one(capsys: pytest.CaptureFixture[str]) -> None:
    line = _fails(["evl"], capsys)
    assert line.startswith("ef: error: argument COMMAND: invalid choice: 'evl' (choose from 'eval', 'trec-eval', ")
    assert line.endswith("); did you mean 'eval'?")
    assert _fails(["compre", "q", "a", "b"], capsys).endswith("; did you mean 'compare'?")


def test_no_prefix_guessing_and_a_flag_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse's default would read --jso as --json and write a report the user did not name.
    assert _fails(["eval", "--jso", "x.json"], capsys) == (
        "ef eval: error: unrecognized arguments: --jso; did you mean '--json' or '--svg'?"
    )
    assert _fails(["rag", "--metric", "f1", "s.jsonl"], capsys) == (
        "ef rag: error: unrecognized arguments: --metric s.jsonl; did you mean '--metrics'?"
    )
    assert _fails(["eval", "-z"], capsys) == "ef eval: error: unrecognized arguments: -z"


@pytest.mark.parametrize("command", ["eval", "rag", "compare", "report"])
@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_quiet_on_every_command(command: str, flag: str) -> None:
    positional = {"eval": [], "rag": ["s.jsonl"], "compare": ["qrels", "a", "b"], "report": ["r.json"]}[command]
    args = _parser().parse_args([command, *positional, flag])
    assert args.quiet is True
    assert _parser().parse_args([command, *positional]).quiet is False


def test_quiet_turns_progress_off_only_while_the_command_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str | None] = []
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)

    def fake_run(args: object) -> int:
        seen.append(os.environ.get("EF_NO_PROGRESS"))
        return 0

    monkeypatch.setattr("ef.cli.rag.run", fake_run)
    assert main(["rag", "--quiet", "s.jsonl"]) == 0
    assert main(["rag", "s.jsonl"]) == 0
    assert seen == ["1", None]
    assert "EF_NO_PROGRESS" not in os.environ


def test_saved_json_names_the_version(tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"user_input": "q", "response": "a b", "reference": "a b"}) + "\n")
    out = tmp_path / "r.json"
    assert main(["rag", str(samples), "--json", str(out), "--metrics", "token_f1"]) == 0
    assert json.loads(out.read_text())["ef_version"] == ef.__version__


def test_compare_json_names_the_version_and_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(6)))
    for name, rank in (("a", 0), ("b", 1)):
        (tmp_path / name).write_text("".join(
            f"q{i} Q0 d{i} 1 {2 - rank} {name}\nq{i} Q0 x{i} 2 {1 + rank} {name}\n" for i in range(6)
        ))
    assert main(["compare", str(qrels), str(tmp_path / "a"), str(tmp_path / "b"), "-m", "mrr", "--format", "json",
                 "--resamples", "100"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ef_version"] == ef.__version__
    saved = tmp_path / "compare.json"
    saved.write_text(json.dumps(document))
    pytest.importorskip("altair")
    assert main(["report", str(saved), "--html", str(tmp_path / "r.html")]) == 0  # the key does not upset ef report
