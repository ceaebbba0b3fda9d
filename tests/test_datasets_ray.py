"""``ef eval NAME --engine ray`` on a real local Ray cluster (test_scale_ray's 2-CPU head node on
127.0.0.1): the dataset's corpus is read block by block into the build, and the scores are the local build's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ef.cli import _scale, main
from ef.datasets import KNOWN, Dataset
from ef.datasets._registry import _KNOWN  # KNOWN is a read-only view of it
from test_scale_ray import SCIFACT, Cluster, cluster, scifact_slice  # noqa: F401 - cluster is a fixture

pytestmark = pytest.mark.slow

MODEL = "st:all-MiniLM-L6-v2"


@pytest.fixture
def slice_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``beir/ray-slice``: 60 short SciFact documents and 10 of its test queries, in ef's cache folder."""
    from ef.evaluation import write_beir

    if not SCIFACT.is_dir():
        pytest.skip("needs ../shared/data/beir/scifact")
    docs, queries, qrels = scifact_slice(n_queries=10, n_docs=60)
    monkeypatch.setenv("EF_HOME", str(tmp_path / "ef"))
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    write_beir(tmp_path / "ef" / "datasets" / "beir" / "ray-slice", docs, queries, qrels)
    known = replace(KNOWN["beir/scifact"], name="beir/ray-slice", archive=None, hf_repo=None, irds_dir=None)
    monkeypatch.setitem(_KNOWN, "beir/ray-slice", known)
    return "beir/ray-slice"


def test_ef_eval_a_dataset_name_on_ray_streams_its_corpus_and_scores_as_the_local_build(
    cluster: Cluster, slice_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocks: list[int] = []
    streamed = Dataset.iter_corpus

    def spy(self: Dataset, block_size: int = 10_000) -> Iterator[list[tuple[str, str]]]:
        for block in streamed(self, block_size):
            blocks.append(len(block))
            yield block

    monkeypatch.setattr(Dataset, "iter_corpus", spy)
    monkeypatch.setattr(_scale, "CORPUS_BLOCK", 16)
    common = ["eval", slice_dataset, "--embedder", MODEL, "--device", "cpu", "--batch-size", "8", "--quiet",
              "--k", "10"]
    local = tmp_path / "local.json"
    assert main([*common, "--json", str(local)]) == 0
    assert blocks == []  # the local build reads the corpus whole
    on_ray, page = tmp_path / "ray.json", tmp_path / "ray.html"
    assert main([*common, "--engine", "ray", "--ray-address", cluster.address, "--workers", "2",
                 "--json", str(on_ray), "--html", str(page)]) == 0
    capsys.readouterr()
    # 60 documents in blocks of 16 for the build; one more pass for the HTML page's passages. (Had
    # anything read the corpus whole, Dataset.corpus would have raised: it was loaded without it.)
    assert blocks == [16, 16, 16, 12] * 2
    ray_report, local_report = json.loads(on_ray.read_text()), json.loads(local.read_text())
    assert (ray_report["n_documents"], ray_report["n_queries"]) == (60, 10)
    assert ray_report["per_query"].keys() == local_report["per_query"].keys()
    for query, values in local_report["per_query"].items():
        assert ray_report["per_query"][query]["ndcg@10"] == pytest.approx(values["ndcg@10"], abs=1e-6)
    docs, _, _ = scifact_slice(n_queries=10, n_docs=60)
    shown = [text for text in docs.values() if text[:60] in page.read_text()]
    assert shown  # the page shows passages of the streamed corpus
