"""``ef report --dataset`` takes what ``ef eval`` and ``ef compare`` take: a BEIR folder, a zip or a
name (found by probing the CLI: ``ef report r.json --dataset beir/scifact`` said "[Errno 2] BEIR
file not found (nor its .gz): 'beir/scifact/corpus.jsonl'", and a zip the same)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.datasets import demo_dataset

pytest.importorskip("altair")


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, Path]:
    """The demo dataset zipped, and ef eval's JSON report on it."""
    archive = Path(shutil.make_archive(str(tmp_path / "demo"), "zip", Path(demo_dataset()).parent, "demo"))
    report = tmp_path / "eval.json"
    assert main(["eval", "-q", "--json", str(report), "-m", "ndcg@10", str(archive)]) == 0
    return archive, report


def test_report_reads_a_dataset_zip(capsys: pytest.CaptureFixture[str], saved: tuple[Path, Path],
                                    tmp_path: Path) -> None:
    archive, report = saved
    capsys.readouterr()
    page = tmp_path / "r.html"
    assert main(["report", str(report), "--dataset", str(archive), "--html", str(page)]) == 0
    assert capsys.readouterr() == ("", "")
    queries = [json.loads(line) for line in (Path(demo_dataset()) / "queries.jsonl").read_text().splitlines()]

    def texts_shown() -> int:
        text = page.read_text(encoding="utf-8")
        return len([q for q in queries if q["text"] in text])

    assert texts_shown() == 27  # every query's text, read from the zip
    assert main(["report", str(report), "--html", str(page)]) == 0
    assert texts_shown() == 0  # without the dataset, ids only


def test_report_html_must_not_replace_the_dataset_zip(
    capsys: pytest.CaptureFixture[str], saved: tuple[Path, Path]
) -> None:
    archive, report = saved
    capsys.readouterr()
    before = archive.read_bytes()
    assert main(["report", str(report), "--dataset", str(archive), "--html", str(archive)]) == 2
    assert capsys.readouterr().err == (
        f"ef report: error: --html {archive} is the same file as the input {archive}; it would be replaced: "
        "write elsewhere\n"
    )
    assert archive.read_bytes() == before
