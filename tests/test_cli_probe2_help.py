"""Every ``ef COMMAND --help`` ends with examples, and every example that needs no download runs as
written, in order, on small files named as the examples name them (``ef.cli._examples``).
Found by probing the CLI as a new user: no ``--help`` showed a single command line."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from ef.cli import main
from ef.cli._examples import EXAMPLES, examples_text
from ef.datasets import demo_dataset

N = 40
QRELS = "".join(f"q{i} 0 d{i} 1\nq{i} 0 e{i} 2\n" for i in range(N))
BM25 = "".join(f"q{i} Q0 d{i} 1 3.5 bm25\nq{i} Q0 x{i} 2 2.5 bm25\nq{i} Q0 e{i} 3 1.5 bm25\n" for i in range(N))
# dense: e_i first on every third query, else as BM25 with other scores
DENSE = "".join(
    f"q{i} Q0 {'e' if i % 3 == 0 else 'd'}{i} 1 0.9 dense\nq{i} Q0 x{i} 2 0.5 dense\n"
    f"q{i} Q0 {'d' if i % 3 == 0 else 'e'}{i} 3 0.25 dense\n"
    for i in range(N)
)
SAMPLES = "".join(
    json.dumps({"user_input": f"q{i}", "response": f"answer {i}", "reference": f"answer {i % 3}",
                "retrieved_contexts": [f"the answer is {i}"]}) + "\n"
    for i in range(5)
)
NEEDS_DOWNLOAD = ("beir/scifact",)  # a dataset not on a test machine (ef datasets fetch goes online)


def _lines() -> list[tuple[str, str]]:
    return [(command, line) for command, lines in EXAMPLES.items() for line, _ in lines]


@pytest.mark.parametrize("command", list(EXAMPLES))
def test_help_ends_with_the_examples(capsys: pytest.CaptureFixture[str], command: str) -> None:
    argv = [*command.split(), "--help"]
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: ef {command} ")
    assert out.endswith("\n\n" + examples_text(command))
    assert examples_text(command).count("\n  ef ") == len(EXAMPLES[command])


def test_every_command_has_examples() -> None:
    from ef.cli import _COMMANDS

    assert sorted(EXAMPLES) == sorted(_COMMANDS)
    assert examples_text("nope") == ""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EF_NO_PROGRESS", "1")
    for name, text in (("qrels.txt", QRELS), ("bm25.trec", BM25), ("dense.trec", DENSE), ("samples.jsonl", SAMPLES)):
        (tmp_path / name).write_text(text)
    for name, run in (("baseline.json", "bm25.trec"), ("candidate.json", "dense.trec")):
        assert main(["trec-eval", "-c", "-q", "-m", "ndcg@10", "--json", name, "qrels.txt", run]) == 0
    (tmp_path / "sweep.toml").write_text(
        f'dataset = "{Path(demo_dataset()).as_posix()}"\nout = "sweep-out"\nmeasures = ["ndcg@10"]\n\n'
        "[grid]\nk1 = [0.9, 1.2]\nk = 10\n"
    )
    capsys.readouterr()
    return tmp_path


def test_every_example_runs(folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    ran = []
    for command, line in _lines():
        if any(word in line for word in NEEDS_DOWNLOAD):
            continue
        if (command == "report" or "--html" in line) and not _has_report_extra():
            continue
        words = shlex.split(line)
        assert words[0] == "ef"
        words = words[1:]
        if "<" in words:  # `< FILE`: standard input
            at = words.index("<")
            data = (folder / words[at + 1]).read_bytes()
            words = words[:at] + words[at + 2 :]
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
        try:
            status = main(words)
        except SystemExit as error:  # a usage error
            status = error.code  # type: ignore[assignment]
        _, err = capsys.readouterr()
        assert (line, status) == (line, 0), err  # the gate examples pass: dense is better on a third
        ran.append(line)
    assert len(ran) >= 15
    # What some examples wrote, as they say.
    assert json.loads((folder / "eval.json").read_text())["metrics"].keys() == {
        "ndcg@10", "ndcg@100", "recall@10", "recall@100"
    }
    assert json.loads((folder / "compare.json").read_text())["systems"] == ["bm25", "dense"]
    assert (folder / "fused.trec").read_text().startswith("q0 Q0 ")
    assert json.loads((folder / "sweep.json").read_text())["cells"]


def _has_report_extra() -> bool:
    try:
        import altair  # noqa: F401
    except ImportError:
        return False
    return True
