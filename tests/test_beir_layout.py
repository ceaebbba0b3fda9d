"""write_beir, read_beir and `ef eval` agree on one layout, also in an existing BEIR folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ef.cli import main
from ef.cli.eval import DEMO_DATASET
from ef.evaluation import evaluate_retrieval, read_beir, write_beir
from ef.source_manager import ingest


def small_triple() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    corpus, queries, qrels = read_beir(DEMO_DATASET)
    query_id = next(iter(qrels))
    return corpus, {query_id: queries[query_id]}, {query_id: dict(qrels[query_id])}


def ef_eval_json(capsys: pytest.CaptureFixture[str], folder: Path) -> dict[str, object]:
    status = main(["eval", str(folder), "--quiet", "--k", "1,10", "--json", "-"])
    out, _ = capsys.readouterr()
    assert status == 0
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.parametrize("existing", [False, True])
def test_write_beir_round_trips_through_read_beir_and_ef_eval(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, existing: bool
) -> None:
    folder = tmp_path / "beir"
    if existing:  # a BEIR folder with 27 judged queries in qrels/test.tsv
        shutil.copytree(DEMO_DATASET, folder)
        assert len(read_beir(folder)[2]) == 27
    corpus, queries, qrels = small_triple()
    write_beir(folder, corpus, queries, qrels)
    expected = "qrels/test.tsv" if existing else "qrels.tsv"
    assert (folder / expected).read_text(encoding="utf-8").count("\n") == 1 + len(next(iter(qrels.values())))
    assert read_beir(folder) == (corpus, queries, qrels)
    report = ef_eval_json(capsys, folder)
    direct = evaluate_retrieval(ingest(corpus, show_progress=False), qrels, queries, k_values=(1, 10))
    assert (report["n_queries"], report["metrics"]) == (1, direct.metrics)


def test_other_splits_of_an_existing_folder_stay(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    shutil.copytree(DEMO_DATASET, folder)
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq\td\t1\n", encoding="utf-8")
    write_beir(folder, *small_triple())
    assert sorted(p.name for p in (folder / "qrels").iterdir()) == ["test.tsv", "train.tsv"]
    assert not (folder / "qrels.tsv").exists()
    assert (folder / "qrels" / "train.tsv").read_text(encoding="utf-8").endswith("q\td\t1\n")
