"""Approximate search through FAISS (``ann="hnsw"`` / ``"ivf"``), the per-shard heap merge, the install hints."""

from __future__ import annotations

import itertools
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from ef.cli import main
from ef.source_manager import SearchableCorpus, ingest
from ef.source_manager._ann import ANN_FILE, AnnIndex, AnnSpec, recall_against_exact
from ef.source_manager._topk import merge_top_k, top_k

MODEL = "st:all-MiniLM-L6-v2"


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def vectors() -> tuple[np.ndarray, np.ndarray]:
    return unit_vectors(3000, 32, seed=1), unit_vectors(50, 32, seed=2)


def exact(corpus: np.ndarray, queries: np.ndarray, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
    return [top_k(row, k) for row in queries @ corpus.T]


def test_hnsw_finds_nearly_all_exact_neighbours(vectors: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = vectors
    index = AnnIndex.build(AnnSpec("hnsw"), [corpus[:1000], corpus[1000:]])  # two shards, one index
    assert len(index) == 3000
    assert index.params == {"M": 32, "ef_construction": 128, "ef_search": 128}
    found = index.search(queries, 10)
    assert recall_against_exact(found, exact(corpus, queries, 10), 10) >= 0.95
    positions, scores = found[0]
    assert scores.tolist() == pytest.approx((corpus[positions] @ queries[0]).tolist(), abs=1e-5)
    assert (np.diff(scores) <= 0).all()


def test_ivf_probing_every_list_is_exact_search(vectors: tuple[np.ndarray, np.ndarray]) -> None:
    corpus, queries = vectors
    spec = AnnSpec("ivf", {"nlist": 20, "nprobe": 20})
    index = AnnIndex.build(spec, [corpus])
    assert index.params == {"nlist": 20, "nprobe": 20, "train_size": 1280}
    found, truth = index.search(queries, 5), exact(corpus, queries, 5)
    assert [f[0].tolist() for f in found] == [t[0].tolist() for t in truth]
    assert recall_against_exact(found, truth, 5) == 1.0


def test_ivf_defaults_follow_the_corpus_size() -> None:
    assert AnnSpec("ivf").resolve(3000) == {"nlist": 76, "nprobe": 64, "train_size": 3000}
    assert AnnSpec("ivf").resolve(8) == {"nlist": 1, "nprobe": 1, "train_size": 8}
    assert AnnSpec("ivf").resolve(8_800_000) == {"nlist": 11866, "nprobe": 64, "train_size": 759424}
    assert AnnSpec("ivf", {"nlist": 50, "nprobe": 80}).resolve(10_000)["nprobe"] == 50  # at most nlist


def test_ann_index_saves_and_loads(vectors: tuple[np.ndarray, np.ndarray], tmp_path: Path) -> None:
    corpus, queries = vectors
    index = AnnIndex.build(AnnSpec("hnsw", {"M": 8}), [corpus])
    index.save(tmp_path)
    again = AnnIndex.load(tmp_path, index.info(), n_rows=3000, dimension=32)
    assert again.params == {"M": 8, "ef_construction": 128, "ef_search": 128}
    assert [r[0].tolist() for r in again.search(queries, 7)] == [r[0].tolist() for r in index.search(queries, 7)]
    with pytest.raises(ValueError, match=r"ann\.faiss: holds 3000 vectors of dimension 32, the manifest 2999"):
        AnnIndex.load(tmp_path, index.info(), n_rows=2999, dimension=32)
    (tmp_path / ANN_FILE).write_bytes(b"not faiss")
    with pytest.raises(ValueError, match=r"ann\.faiss: unreadable FAISS index"):
        AnnIndex.load(tmp_path, index.info(), n_rows=3000, dimension=32)


def test_ray_notices_go_to_stderr_while_ef_holds_a_ray_session(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    from ray._private import worker

    from ef.source_manager._ray import _notices_to_stderr

    monkeypatch.setenv("RAY_COLOR_PREFIX", "0")
    relay = worker.print_to_stdstream
    # What the driver's error listener thread prints when the raylet reports a dead worker.
    notice = "A worker died or was killed while executing a task by an unexpected system error. (test_ann)"
    with _notices_to_stderr():
        worker.print_to_stdstream({"lines": [notice], "pid": "raylet", "is_err": False}, ignore_prefix=False)
    assert worker.print_to_stdstream is relay  # Ray's own again after the session
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"(raylet) {notice}\n"


@pytest.mark.parametrize(
    ("device", "resource", "per_actor"),
    [("cuda", "GPU", {"num_cpus": 0, "num_gpus": 1}), ("cuda:1", "GPU", {"num_cpus": 0, "num_gpus": 1}),
     ("cpu", "CPU", {"num_cpus": 1, "num_gpus": 0}), (None, "CPU", {"num_cpus": 1, "num_gpus": 0})],
)
def test_ray_encoding_asks_one_gpu_per_actor_on_a_gpu_device(
    device: str | None, resource: str, per_actor: dict[str, int]
) -> None:
    # No GPU is lent here: what Ray Data is asked for is checked against a stand-in for Ray.
    pytest.importorskip("pyarrow")
    from ef.source_manager import _ray

    asked: dict[str, object] = {}

    class Dataset:
        def map_batches(self, fn: object, **options: object) -> Dataset:
            asked.update(options)
            return self

        def iter_batches(self, **_: object) -> list[dict[str, np.ndarray]]:
            return []

    class FakeRay:
        class data:  # noqa: N801 - ray.data's own spelling
            ActorPoolStrategy = staticmethod(lambda size: ("pool", size))
            from_arrow = staticmethod(lambda blocks: Dataset())

        @staticmethod
        def cluster_resources() -> dict[str, float]:
            return {"CPU": 6.0, "GPU": 3.0}

    texts = [f"text {i}" for i in range(1000)]
    batches = _ray._encoded_batches(
        FakeRay, texts, [(0, 1000)], model="m", device=device, batch_size=8, workers=None
    )
    assert list(batches) == []
    assert {k: asked[k] for k in ("num_cpus", "num_gpus")} == per_actor
    assert asked["compute"] == ("pool", 3 if resource == "GPU" else 6)  # one actor per GPU, or per CPU
    assert asked["fn_constructor_kwargs"] == {"model": "m", "device": device, "batch_size": 8}


@pytest.mark.parametrize(
    ("kind", "params", "message"),
    [
        ("flat", {}, "'ann' must be one of 'none', 'hnsw', 'ivf' (got 'flat')"),
        ("hnsw", {"nprobe": 4}, "'ann_params' for 'hnsw' takes M, ef_construction, ef_search (got 'nprobe')"),
        ("ivf", {"nlist": 0}, "'ann_params'['nlist'] must be a positive integer (got 0)"),
    ],
)
def test_bad_ann_specs_are_refused(kind: str, params: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        AnnSpec(kind, params)


def test_an_ann_parameter_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=re.escape("'ann_params'['nlist'] must be a positive integer (got True)")):
        AnnSpec("ivf", {"nlist": True})
    with pytest.raises(ValueError, match=re.escape("'ann' must be one of 'hnsw', 'ivf' (got 'none')")):
        AnnSpec("none")


def test_recall_against_exact_counts_the_overlap() -> None:
    empty = np.zeros(0, dtype=np.float32)
    approximate = [(np.array([1, 2, 9]), empty), (np.array([4, 5, 6]), empty)]
    truth = [(np.array([1, 2, 3]), empty), (np.array([4, 5, 6]), empty)]
    assert recall_against_exact(approximate, truth, 3) == pytest.approx((2 / 3 + 1) / 2)
    assert recall_against_exact(approximate, truth, 2) == 1.0
    with pytest.raises(ValueError, match="need the same, non-zero number of rankings"):
        recall_against_exact(approximate, truth[:1], 3)


def test_heap_merge_of_shard_rankings_equals_top_k_over_the_whole() -> None:
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 20, size=500).astype(np.float32)  # many ties: the tie order matters
    bounds = [0, 120, 121, 300, 500]
    per_shard = []
    for a, b in itertools.pairwise(bounds):
        positions, values = top_k(scores[a:b], 40)
        per_shard.append((positions + a, values))
    merged = merge_top_k(per_shard, 40)
    whole = top_k(scores, 40)
    assert merged[0].tolist() == whole[0].tolist()
    assert merged[1].tolist() == whole[1].tolist()
    assert len(merge_top_k(per_shard, 1000)[0]) == 40 + 1 + 40 + 40  # all there is, never more


def test_missing_faiss_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "faiss", None)
    with pytest.raises(ImportError, match=r"pip install 'ef-eval\[ann\]'"):
        ingest({"d1": "text"}, embedder=MODEL, ann="hnsw", show_progress=False)


def test_missing_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r"engine='ray' needs Ray Data, .*: pip install 'ef-eval\[ray\]'"):
        ingest({"d1": "text"}, embedder=MODEL, engine="ray", show_progress=False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ann": "hnsw"}, "ann='hnsw' applies to a dense index; embedder 'bm25' has none"),
        ({"engine": "ray"}, "engine='ray' applies to a dense index; embedder 'bm25' has none"),
        ({"ann": "annoy"}, "'ann' must be one of 'none', 'hnsw', 'ivf' (got 'annoy')"),
        ({"ann_params": {"M": 8}}, "'ann_params' needs ann='hnsw' or ann='ivf'"),
        ({"engine": "spark"}, "'engine' must be one of 'local', 'ray' (got 'spark')"),
        ({"workers": 2}, "'workers' is an option of engine='ray' (got engine='local')"),
        ({"shard_dir": "x"}, "'shard_dir' is an option of engine='ray'"),
    ],
)
def test_ingest_refuses_scale_options_that_do_not_apply(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        ingest({"d1": "text"}, show_progress=False, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--ann", "hnsw"],
         "ef eval: error: --ann hnsw applies to a dense index; --embedder bm25 has none (use st:MODEL or hybrid)"),
        (["--workers", "2"], "ef eval: error: --workers needs --engine ray"),
        (["--ray-address", "127.0.0.1:1"], "ef eval: error: --ray-address needs --engine ray"),
        (["--shard-rows", "100"], "ef eval: error: --shard-rows needs --engine ray"),
        (["--embedder", MODEL, "--ann-param", "M=8"], "ef eval: error: --ann-param needs --ann hnsw or --ann ivf"),
        (["--embedder", MODEL, "--ann", "ivf", "--ann-param", "M=8"],
         "ef eval: error: 'ann_params' for 'ivf' takes nlist, nprobe, train_size (got 'M')"),
    ],
)
def test_ef_eval_refuses_bad_scale_flags(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(["eval", "--quiet", *argv]) == 2
    assert capsys.readouterr().err.strip() == message


def test_ef_eval_ann_param_must_be_name_equals_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--ann-param", "M"])
    assert "expected NAME=POSITIVE_INTEGER such as M=32 or nprobe=16 (got 'M')" in capsys.readouterr().err


DENSE_CORPUS = {
    "d0": "The kitten is sleeping on the sofa.",
    "d1": "A puppy plays fetch in the park.",
    "d2": "Interest rates rose again this quarter.",
    "d3": "The central bank raised borrowing costs.",
    "d4": "Fresh bread is baked every morning.",
    "d5": "The bakery sells sourdough loaves.",
}
QUERIES = ["cat asleep on a couch", "the bank increased rates", "where to buy bread"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_dense_index_with_ann_saves_its_faiss_index_and_params(kind: str, tmp_path: Path) -> None:
    exact_index = ingest(DENSE_CORPUS, embedder=MODEL, device="cpu", show_progress=False)
    index = ingest(DENSE_CORPUS, embedder=MODEL, device="cpu", show_progress=False, ann=kind)
    # Six vectors: the graph reaches all of them and one IVF list holds them all, so ANN is exact here
    # (FAISS computes the inner products with kernels of its own: equal to float32 rounding).
    for approximate, exact_hits in zip(
        index.search_many(QUERIES, limit=6), exact_index.search_many(QUERIES, limit=6), strict=True
    ):
        assert [h.segment for h in approximate] == [h.segment for h in exact_hits]
        assert [h.score for h in approximate] == pytest.approx([h.score for h in exact_hits], abs=1e-6)
    index.save(tmp_path / "ann")
    manifest = json.loads((tmp_path / "ann" / "manifest.json").read_text())
    expected = {"hnsw": {"M": 32, "ef_construction": 128, "ef_search": 128},
                "ivf": {"nlist": 1, "nprobe": 1, "train_size": 6}}[kind]
    assert manifest["index"]["dense"]["ann"]["params"] == expected
    assert manifest["index"]["dense"]["ann"]["kind"] == kind
    assert manifest["files"][ANN_FILE] == (tmp_path / "ann" / ANN_FILE).stat().st_size
    loaded = SearchableCorpus.load(tmp_path / "ann", show_progress=False)
    assert loaded._collection.index.ann.kind == kind  # type: ignore[attr-defined]
    assert loaded.search_many(QUERIES, limit=3) == index.search_many(QUERIES, limit=3)


@pytest.mark.slow
def test_ef_eval_reports_ann_recall_and_keeps_the_ann_index(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cache, report = tmp_path / "index", tmp_path / "report.json"
    argv = ["eval", "--quiet", "--embedder", MODEL, "--device", "cpu", "--index-dir", str(cache), "--k", "1,10"]
    assert main([*argv, "--ann", "hnsw", "--ann-param", "M=16", "--json", str(report)]) == 0
    out = capsys.readouterr().out
    line = ("ANN hnsw (M=16, ef_construction=128, ef_search=128) against exact search over 27 queries: "
            "recall@10 1.0000")
    assert line in out.splitlines()
    assert json.loads(report.read_text())["ann_recall"] == {
        "kind": "hnsw", "params": {"M": 16, "ef_construction": 128, "ef_search": 128}, "n_queries": 27,
        "recall@10": 1.0,
    }
    assert main(argv) == 0  # loaded as saved, ANN and all
    assert line in capsys.readouterr().out.splitlines()
    assert main([*argv, "--ann", "ivf"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"ef eval: error: --index-dir {cache} holds an index with ann 'hnsw', not 'ivf': "
        f"delete it or choose another directory"
    )
