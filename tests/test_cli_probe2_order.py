"""Arguments in the wrong order, or QRELS left out, are said as such (found by probing the CLI on
SciFact: ``ef compare A.trec B.trec`` said "give at least 2 runs to compare (got 1)" to a user who
gave two, having read A as the qrels; ``ef trec-eval RUN QRELS`` said "expected TREC qrels ... got 6
columns")."""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import pytest

from _cli import run, write_files

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
A = "# a comment\n\nq1 Q0 d1 1 2 a\nq2 Q0 x 1 2 a\nq2 Q0 d2 2 1 a\n"
B = "q1 Q0 x 1 2 b\nq1 Q0 d1 2 1 b\nq2 Q0 d2 1 2 b\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B})
    with gzip.open(tmp_path / "a.txt.gz", "wt") as stream:
        stream.write(A)
    out["a.gz"] = str(tmp_path / "a.txt.gz")
    return out


@pytest.mark.parametrize(
    ("argv", "flag", "usage"),
    [
        (["compare", "A", "B"], "QRELS", "ef compare takes QRELS first, then two or more RUNs"),
        (["compare", "A.GZ", "B", "Q"], "QRELS", "ef compare takes QRELS first, then two or more RUNs"),
        (["trec-eval", "A", "Q"], "QRELS", "ef trec-eval takes QRELS first, then RUN"),
        (["gate", "--qrels", "A", "A", "B"], "--qrels",
         "the runs are BASELINE and CANDIDATE, --qrels QRELS judges them"),
        (["fuse", "A", "B", "--tune", "A"], "--tune", "--tune takes qrels; the runs to fuse are the RUNs"),
        (["fuse", "A", "B", "--method", "bayesfuse", "--qrels", "A", "-o", "-"], "--qrels",
         "--qrels takes qrels; the runs to fuse are the RUNs"),
    ],
)
def test_a_run_given_as_qrels_is_said_so(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], argv: list[str], flag: str, usage: str
) -> None:
    names = {"A": files["a"], "A.GZ": files["a.gz"], "B": files["b"], "Q": files["qrels"]}
    path = files["a.gz"] if "A.GZ" in argv else files["a"]
    assert run(capsys, *(names.get(word, word) for word in argv)) == (
        2, "", f"ef {argv[0]}: error: {flag} {path} looks like a TREC run (6 columns: 'q1 Q0 d1 1 2 a'): {usage}\n"
    )


def test_the_right_order_still_scores(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    expected = (0, "P_1                   \tall\t0.5000\n", "")
    assert run(capsys, "trec-eval", "-m", "P.1", files["qrels"], files["a"]) == expected


def test_a_dataset_zip_as_qrels_is_not_looked_into(files: dict[str, str], tmp_path: Path) -> None:
    from ef.cli._inputs import check_qrels_not_run

    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("x/qrels/test.tsv", "q Q0 d 1 2 r\n")
    check_qrels_not_run("QRELS", str(archive), "-")  # no error: ef compare reads a zip as a dataset


def test_one_system_given_as_seeds_is_said_so(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    assert run(capsys, "compare", files["qrels"], f"x={files['a']}", f"x={files['b']}") == (
        2, "", "ef compare: error: give at least 2 runs to compare (got 1: the 2 runs named 'x' are one system's "
               "seeds or folds)\n"
    )
