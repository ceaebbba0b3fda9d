"""An input file that is not there, or is a folder, is refused before any work, naming the argument
and the path (found by probing the CLI on SciFact: ``ef gate --qrels typo.tsv`` said ``[Errno 2] No
such file or directory: 'typo.tsv'``, ``ef compare QRELS folder B`` ``[Errno 21] Is a directory``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.cli import main

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
RUN = "q1 Q0 d1 1 2 r\nq2 Q0 x 1 2 r\nq2 Q0 d2 2 1 r\n"

CASES = [
    ("compare", ["NOPE", "A", "B"], "QRELS NOPE: no such file"),
    ("compare", ["Q", "A", "NOPE"], "RUN NOPE: no such file"),
    ("compare", ["Q", "A", "x=NOPE"], "RUN NOPE: no such file"),
    ("compare", ["Q", "DIR", "B"], "RUN DIR: is a directory, not a file"),
    ("gate", ["--qrels", "NOPE", "A", "B"], "--qrels NOPE: no such file"),
    ("gate", ["--qrels", "Q", "NOPE", "B"], "BASELINE NOPE: no such file"),
    ("gate", ["--qrels", "Q", "A", "B", "NOPE"], "CANDIDATE NOPE: no such file"),
    ("gate", ["--qrels", "Q", "A", "B", "--baseline-seed", "DIR"], "--baseline-seed DIR: is a directory, not a file"),
    ("fuse", ["A", "NOPE", "-o", "-"], "RUN NOPE: no such file"),
    ("fuse", ["A", "B", "--tune", "NOPE"], "--tune NOPE: no such file"),
    ("fuse", ["A", "B", "--method", "bayesfuse", "--qrels", "DIR", "-o", "-"],
     "--qrels DIR: is a directory, not a file"),
    ("report", ["NOPE", "--html", "OUT"], "RESULT.json NOPE: no such file"),
    ("report", ["DIR", "--html", "OUT"], "RESULT.json DIR: is a directory, not a file"),
    ("sweep", ["NOPE"], "CONFIG NOPE: no such file"),
]


@pytest.mark.parametrize(("command", "argv", "message"), CASES)
def test_a_missing_input_names_its_argument(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, argv: list[str], message: str
) -> None:
    if command == "report":
        pytest.importorskip("altair")  # ef report checks for its extra first
    names = {"Q": tmp_path / "qrels.txt", "A": tmp_path / "a.trec", "B": tmp_path / "b.trec"}
    names["Q"].write_text(QRELS)
    names["A"].write_text(RUN)
    names["B"].write_text(RUN.replace(" r\n", " s\n"))
    paths = {**{k: str(v) for k, v in names.items()}, "NOPE": str(tmp_path / "typo.txt"), "DIR": str(tmp_path),
             "OUT": str(tmp_path / "out.html")}

    def real(word: str) -> str:
        name, equals, rest = word.partition("=")
        return f"{name}={paths[rest]}" if equals and rest in paths else paths.get(word, word)

    status = main([command, *(real(word) for word in argv)])
    out, err = capsys.readouterr()
    expected = message.replace("NOPE", paths["NOPE"]).replace("DIR", paths["DIR"])
    assert (status, out, err) == (2, "", f"ef {command}: error: {expected}\n")
    assert not (tmp_path / "out.html").exists()
