"""ef sweep / ef.sweep.sweep take a dataset as ef eval does: a BEIR folder, a zip, a name, or what
ef.datasets.load returns. A zip was 'dataset directory d.zip does not exist' (it did), a name the
same, and a loaded Dataset a TypeError; a dataset whose conventions a sweep does not apply is refused."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.datasets import DatasetFacts, demo_dataset, load
from ef.sweep import read_config, sweep


@pytest.fixture
def ef_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty caches in tmp_path, and the demo dataset as ef's cache folder of 'beir/scifact'."""
    for variable, name in (("IR_DATASETS_HOME", "irds"), ("HF_HOME", "hf"), ("EF_HOME", "ef")):
        monkeypatch.setenv(variable, str(tmp_path / name))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    shutil.copytree(demo_dataset(), tmp_path / "ef" / "datasets" / "beir" / "scifact")
    return tmp_path / "ef"


def test_a_zip_a_name_and_a_loaded_dataset_are_swept_as_the_folder(ef_home: Path, tmp_path: Path) -> None:
    shutil.copytree(demo_dataset(), tmp_path / "demo")
    archive = shutil.make_archive(str(tmp_path / "demo"), "zip", tmp_path, "demo")
    swept = []
    for given in (demo_dataset(), archive, "beir/scifact", load(demo_dataset())):
        result = sweep({"k": 10}, given, show_progress=False)
        swept.append((result.dataset, result.n_queries, round(result.cells[0].metrics["ndcg@10"], 4)))
    folder = str(demo_dataset())
    assert swept == [(folder, 27, 0.8078), (archive, 27, 0.8078), ("beir/scifact", 27, 0.8078),
                     (folder, 27, 0.8078)]


def test_a_name_in_the_config_file_is_a_name_not_a_folder_beside_it(ef_home: Path, tmp_path: Path) -> None:
    config = tmp_path / "sweep.toml"
    config.write_text('dataset = "beir/scifact"\nout = "out"\n[grid]\nk = 10\n', encoding="utf-8")
    assert read_config(config).dataset == "beir/scifact"  # it was str(tmp_path / "beir/scifact")
    assert main(["sweep", str(config), "-q", "--json", str(tmp_path / "r.json")]) == 0


def test_a_dataset_of_conventions_a_sweep_does_not_apply_is_refused() -> None:
    dataset = load(demo_dataset())
    arguana = dataclasses.replace(dataset, name="beir/arguana", facts=DatasetFacts(1, False, True))
    with pytest.raises(ValueError) as raised:
        sweep({"k": 10}, arguana, show_progress=False)
    assert str(raised.value) == ("beir/arguana: its reference numbers drop each query's own document from its "
                                 "ranking (ignore_identical_ids), which a sweep does not do; evaluate it with ef eval")
    trec_dl = dataclasses.replace(dataset, name="trec-dl-2019", facts=DatasetFacts(2, True, False))
    with pytest.raises(ValueError) as raised:
        sweep({"k": 10}, trec_dl, show_progress=False)
    assert str(raised.value) == ("trec-dl-2019: its reference numbers count grade >= 2 as relevant, which a sweep "
                                 "does not do; evaluate it with ef eval")


def test_a_path_that_is_nothing_says_where_ef_looked(ef_home: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        sweep({"k": 5}, tmp_path / "nowhere", show_progress=False)
    assert str(raised.value) == (f"dataset directory {tmp_path / 'nowhere'} does not exist, nor a zip, and it is "
                                 "not a dataset name ef knows (see: ef datasets list)")


def test_the_same_dataset_spelled_another_way_resumes(
    ef_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The folder's manifest kept the dataset's spelling, and a sweep of the same files given as
    # 'data' here and '../data' from a subfolder (or by name) was refused as "another dataset".
    shutil.copytree(demo_dataset(), tmp_path / "data")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    first = sweep({"k": [5, 10]}, "data", tmp_path / "out", show_progress=False)
    monkeypatch.chdir(tmp_path / "sub")
    again = sweep({"k": [5, 10]}, "../data", tmp_path / "out", show_progress=False)
    by_name = sweep({"k": [5, 10]}, "beir/scifact", tmp_path / "out", show_progress=False)  # the demo, in ef_home
    assert (len(first.scored), again.scored, by_name.scored) == (2, (), ())
    assert set(again.loaded) == set(by_name.loaded) == set(first.scored)
