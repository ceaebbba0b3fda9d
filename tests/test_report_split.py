"""``ef report``: the qrels split, taken from the saved report or --split, stays inside --dataset."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ef.cli import main

DEMO_DATASET = Path(__file__).resolve().parents[1] / "src" / "ef" / "data" / "demo"

pytest.importorskip("vl_convert")


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    dataset = tmp_path / "ds"
    shutil.copytree(DEMO_DATASET, dataset)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.tsv").write_text("query-id\tcorpus-id\tscore\nq01\tTOP-SECRET-DOC\t1\n")
    run = tmp_path / "ev.run"
    run.write_text("q01 Q0 coffee-02 1 1.0 r\n")
    return {"dataset": dataset, "outside": outside, "run": run, "tmp": tmp_path}


def _saved(where: Path, split: str) -> Path:
    path = where / "evil.json"
    path.write_text(json.dumps(
        {"metrics": {"ndcg@10": 0.5}, "n_queries": 1, "per_query": {"q01": {"ndcg@10": 0.5}}, "split": split}
    ))
    return path


def _report(capsys: pytest.CaptureFixture[str], layout: dict[str, Path], saved: Path, *extra: str) -> tuple[int, str]:
    out = layout["tmp"] / "out.html"
    argv = ["report", str(saved), "--dataset", str(layout["dataset"]), "--run", str(layout["run"]), "--html", str(out)]
    status = main([*argv, *extra])
    err = capsys.readouterr().err
    if status != 0:
        assert not out.exists()
    else:
        assert "TOP-SECRET-DOC" not in out.read_text()
    return status, err


@pytest.mark.parametrize("split", ["../../outside/secret", "/etc/hostname", "..", "a/../../../outside/secret"])
def test_a_split_from_the_saved_report_cannot_leave_the_dataset(
    capsys: pytest.CaptureFixture[str], layout: dict[str, Path], split: str
) -> None:
    saved = _saved(layout["tmp"], split)
    status, err = _report(capsys, layout, saved)
    assert (status, err) == (
        2,
        f"ef report: error: {saved}: field 'split' must name a file of {layout['dataset'] / 'qrels'} "
        f"(got {split!r})\n",
    )


def test_a_symlinked_split_file_pointing_out_is_refused(
    capsys: pytest.CaptureFixture[str], layout: dict[str, Path]
) -> None:
    (layout["dataset"] / "qrels" / "link.tsv").symlink_to(layout["outside"] / "secret.tsv")
    saved = _saved(layout["tmp"], "link")
    status, err = _report(capsys, layout, saved)
    assert (status, err) == (
        2,
        f"ef report: error: {saved}: field 'split' 'link' reads {layout['dataset'] / 'qrels' / 'link.tsv'}, "
        f"a symbolic link out of the dataset folder {layout['dataset']}\n",
    )


def test_the_split_flag_is_confined_too(capsys: pytest.CaptureFixture[str], layout: dict[str, Path]) -> None:
    saved = _saved(layout["tmp"], "test")
    status, err = _report(capsys, layout, saved, "--split", "../../outside/secret")
    assert (status, err) == (
        2,
        f"ef report: error: --split must name a file of {layout['dataset'] / 'qrels'} (got '../../outside/secret')\n",
    )


def test_a_plain_split_still_reads_its_qrels(capsys: pytest.CaptureFixture[str], layout: dict[str, Path]) -> None:
    saved = _saved(layout["tmp"], "test")
    assert _report(capsys, layout, saved) == (0, "")
    assert "coffee-02" in (layout["tmp"] / "out.html").read_text()
