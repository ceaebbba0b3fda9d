"""ef sweep takes ef eval's --split, --device and --batch-size (the same concepts, the same flags): a
split was only CONFIG's 'split', and a sweep's dense models encoded at batch 32 on the default device."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.datasets import demo_dataset


@pytest.fixture
def config(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    shutil.copytree(demo_dataset(), folder)
    lines = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "qrels" / "train.tsv").write_text("\n".join(lines[:6]) + "\n", encoding="utf-8")  # header + 5 rows
    path = tmp_path / "sweep.toml"
    path.write_text('dataset = "data"\nout = "out"\n[grid]\nk = 10\n', encoding="utf-8")
    return path


def test_split_picks_the_qrels(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(config), "--split", "train", "--json", "-", "-q"]) == 0
    train = json.loads(capsys.readouterr().out)
    assert (train["n_queries"], train["settings"]["split"]) == (3, "train")  # q01, q02, q03; test has 27


@pytest.mark.parametrize(("flags", "message"), [
    (["--split", "dev"], "--split dev: {data} has no qrels/dev.tsv (its splits: test, train)"),
    (["--batch-size", "0"], "--batch-size must be a positive integer (got 0)"),
])
def test_bad_flags_are_named(config: Path, flags: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(config), *flags, "-q"]) == 2
    data = config.parent / "data"
    assert capsys.readouterr().err == f"ef sweep: error: {message.format(data=data)}\n"


def test_a_split_from_the_config_file_is_named_so(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config.write_text(config.read_text(encoding="utf-8").replace('out = "out"', 'out = "out"\nsplit = "dev"'),
                      encoding="utf-8")
    assert main(["sweep", str(config), "-q"]) == 2
    assert capsys.readouterr().err == (f"ef sweep: error: {config}: 'split' dev: {config.parent / 'data'} has no "
                                       "qrels/dev.tsv (its splits: test, train)\n")


@pytest.mark.slow
def test_device_reaches_the_dense_models(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    with pytest.raises(RuntimeError) as raised:
        torch.device("bogus")
    config.write_text(config.read_text(encoding="utf-8").replace("k = 10", 'k = 10\nretriever = "dense"'),
                      encoding="utf-8")
    assert main(["sweep", str(config), "--device", "bogus", "-q"]) == 2
    assert capsys.readouterr().err == f"ef sweep: error: --device 'bogus' is not a torch device ({raised.value})\n"
