"""An output named like the BEIR zip a command reads is refused, as a folder's files are:
'ef eval data.zip --json data.zip' replaced the dataset with the report, exit 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.datasets import demo_dataset


@pytest.fixture
def demo_zip(tmp_path: Path) -> Path:
    shutil.copytree(demo_dataset(), tmp_path / "demo")
    return Path(shutil.make_archive(str(tmp_path / "demo"), "zip", tmp_path, "demo"))


@pytest.mark.parametrize("flag", ["--json", "--run-out"])
def test_ef_eval_will_not_write_over_the_zip_it_reads(
    demo_zip: Path, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = demo_zip.read_bytes()
    assert main(["eval", str(demo_zip), flag, str(demo_zip), "--quiet"]) == 2
    assert capsys.readouterr().err == (
        f"ef eval: error: {flag} {demo_zip} is the same file as the input {demo_zip}; it would be replaced: "
        "write elsewhere\n"
    )
    assert demo_zip.read_bytes() == before


def test_ef_compare_will_not_write_over_the_dataset_zip(
    demo_zip: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [tmp_path / "a.trec", tmp_path / "b.trec"]
    for run, k1 in zip(runs, ("1.2", "0.5"), strict=True):
        assert main(["eval", "--bm25-k1", k1, "--run-out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    before = demo_zip.read_bytes()
    assert main(["compare", "--dataset", str(demo_zip), *map(str, runs), "--output", str(demo_zip), "-q"]) == 2
    assert capsys.readouterr().err == (
        f"ef compare: error: --output {demo_zip} is the same file as the input {demo_zip}; it would be replaced: "
        "write elsewhere\n"
    )
    assert demo_zip.read_bytes() == before
