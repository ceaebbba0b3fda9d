"""``ef eval DATASET --engine ray``: the driver's memory does not grow with the corpus's text.

The corpus streams from disk into the index, whose texts stay on disk (a scratch file while it
is built, ``sources.jsonl`` once saved) and are read back for the hits a search returns. Ray is a
stand-in here (the Arrow blocks are encoded as the driver makes them, as Ray Data's actors would)
and so is the model (a SHA-256 of each text as its embedding), so that a 40 MB corpus runs in
seconds; the local engine, given the same model, must score every query exactly as Ray does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ef.cli import _scale, main
from ef.source_manager._texts import DiskTexts, SegmentTexts

WIDTH = 20_000  # characters per document
DIM = 16


class _Model:
    """A stand-in sentence-transformers model: a text's embedding is its SHA-256, as 16 floats."""

    def get_embedding_dimension(self) -> int:
        return DIM

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:DIM], dtype=np.uint8) for t in texts]
        matrix = np.array(rows, dtype=np.float32) - 127.5
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)  # type: ignore[no-any-return]


class _Data:
    """What ``ray.data.from_arrow(blocks).map_batches(_Encoder, ...)`` returns: the blocks are taken
    one at a time and encoded by the actor class, in the driver."""

    def __init__(self, tables: Iterator[Any]) -> None:
        self.tables = tables
        self.actor: Any = None

    def map_batches(self, fn: Any, *, fn_constructor_kwargs: dict[str, Any], **_: Any) -> _Data:
        self.actor = fn(**fn_constructor_kwargs)
        return self

    def iter_batches(self, **_: Any) -> Iterator[dict[str, np.ndarray]]:
        for table in self.tables:
            texts = np.array(table.column("text").to_pylist(), dtype=object)
            yield self.actor({"row": table.column("row").to_numpy(), "text": texts})


class _Ray:
    __version__ = "stand-in"

    class data:  # noqa: N801 - ray.data's own spelling
        ActorPoolStrategy = staticmethod(lambda size: ("pool", size))
        from_arrow = staticmethod(_Data)

    @staticmethod
    def cluster_resources() -> dict[str, float]:
        return {"CPU": 2.0}


def _search(parts: list[np.ndarray], vectors: np.ndarray, *, limit: int, **_: Any) -> list[Any]:
    from ef.source_manager._topk import top_k

    return [top_k(row, limit) for row in vectors @ np.concatenate(parts).T]


@pytest.fixture
def stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("pyarrow")
    import ef.io._source
    from ef.source_manager import _dense, _models, _ray, scale

    @contextlib.contextmanager
    def session(*_: Any, **__: Any) -> Iterator[type[_Ray]]:
        yield _Ray

    for module in (_models, _dense):
        monkeypatch.setattr(module, "load_model", lambda name, device=None: _Model())
    for module in (_ray, scale):
        monkeypatch.setattr(module, "ray_session", session)
        monkeypatch.setattr(module, "require_ray", lambda: _Ray)
    monkeypatch.setattr(_ray, "_quiet_data", lambda: None)
    monkeypatch.setattr(_ray, "search_on_ray", _search)
    monkeypatch.setattr(_scale, "CORPUS_BLOCK", 100)  # 2 MB of text at a time
    # ef's line reader takes 8 MB at a time (a constant); 64 kB here, so the bound shows at this size.
    monkeypatch.setattr(ef.io._source.iter_chunks, "__defaults__", (1 << 16,))


def _dataset(folder: Path, n: int) -> Path:
    """A BEIR folder of `n` documents of 20 kB (distinct texts); 20 queries, each judging the documents
    the stand-in model ranks 2nd and 7th for it (so that the scores are neither 0 nor 1) and one other."""
    (folder / "qrels").mkdir(parents=True)
    texts = [(f"{i:06d} " + "lorem ipsum dolor " * (WIDTH // 18))[:WIDTH] for i in range(n)]
    with open(folder / "corpus.jsonl", "w") as out:
        out.writelines(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n" for i, text in enumerate(texts))
    queries = [f"query {q}" for q in range(20)]
    with open(folder / "queries.jsonl", "w") as out:
        out.writelines(json.dumps({"_id": f"q{q}", "text": text}) + "\n" for q, text in enumerate(queries))
    order = np.argsort(-(_Model().encode(queries) @ _Model().encode(texts).T), axis=1)
    judged = [(q, doc) for q in range(20) for doc in (order[q, 1], order[q, 6], (q * 37) % n)]
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{q}\td{doc}\t1\n" for q, doc in judged)
    )
    return folder


def _peak(work: Callable[[], int]) -> int:
    tracemalloc.start()
    try:
        assert work() == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _per_query(path: Path) -> dict[str, float]:
    return {q: v["ndcg@10"] for q, v in json.loads(path.read_text())["per_query"].items()}


@pytest.mark.usefixtures("stand_ins")
def test_the_ray_driver_holds_no_copy_of_the_corpus_and_scores_as_the_local_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--embedder", "st:stand-in", "--quiet", "--k", "10", "--batch-size", "8"]
    peaks: dict[int, tuple[int, int, int]] = {}
    for n in (1_000, 2_000):  # 20 MB and 40 MB of text
        folder = _dataset(tmp_path / f"c{n}", n)
        local, built, loaded = (tmp_path / f"{name}{n}.json" for name in ("local", "built", "loaded"))
        index = tmp_path / f"index{n}"
        ray = [*common, "--engine", "ray", "--index-dir", str(index)]
        whole = _peak(lambda: main(["eval", str(folder), *common, "--json", str(local)]))  # noqa: B023
        build = _peak(lambda: main(["eval", str(folder), *ray, "--json", str(built)]))  # noqa: B023
        load = _peak(lambda: main(["eval", str(folder), *ray, "--json", str(loaded)]))  # noqa: B023
        peaks[n] = whole, build, load
        assert json.loads(built.read_text())["index"] == f"built, saved to {index}"
        assert json.loads(loaded.read_text())["index"] == f"loaded from {index}"
        scores = _per_query(local)
        assert len(scores) == 20
        assert all(0 < value < 1 for value in scores.values())
        assert _per_query(built) == scores == _per_query(loaded)  # to the last digit
        saved = [json.loads(line) for line in (index / "sources.jsonl").read_text().splitlines()]
        assert [(r["_id"], r["text"][:7], len(r["text"])) for r in saved[:2]] == [
            ("d0", "000000 ", WIDTH), ("d1", "000001 ", WIDTH)]
    capsys.readouterr()
    (whole_small, build_small, load_small), (whole_large, build_large, load_large) = peaks[1_000], peaks[2_000]
    corpus = 2_000 * WIDTH  # 40 MB
    assert whole_large > corpus  # the local engine holds the corpus (at least once) ...
    assert whole_large - whole_small > 1_000 * WIDTH // 2  # ... and 20 MB more text costs it over 10 MB more
    # On Ray, 20 MB more text costs the driver only its 1,000 more ids and segment rows ...
    assert build_large - build_small < 1_000_000
    assert load_large - load_small < 1_000_000
    # ... and the peak is what one block of 100 documents (2 MB of text, parsed from JSON) takes, not
    # a copy of the 40 MB corpus.
    assert build_large < 7_000_000
    assert load_large < 7_000_000


def test_disk_texts_read_back_what_was_written(tmp_path: Path) -> None:
    texts = DiskTexts.spool()
    for text in ("a", "", "héllo wörld", "z" * 10_000):
        texts.append(text)
    assert (len(texts), texts[2], texts[-2], texts[1], len(texts[3])) == (4, "héllo wörld", "héllo wörld", "", 10_000)
    texts.truncate(2)
    texts.append("new")
    assert list(texts) == ["a", "", "new"]
    with pytest.raises(IndexError, match=r"^text 3 of 3$"):
        _ = texts[3]
    path = tmp_path / "sources.jsonl"
    path.write_text('{"_id": "d1", "text": "one"}\n\n{"_id": "d2", "text": "twö"}\n')
    store, records = DiskTexts.jsonl(path)
    assert [(number, record["_id"]) for number, record in records] == [(1, "d1"), (3, "d2")]
    assert store[0:2] == ["one", "twö"]
    path.write_text('{"_id": "d1", "text": "one"}\n{"_id": "d2", "text": tw}\n')
    store, records = DiskTexts.jsonl(path)
    message = f"{path}:2: not a JSON line (Expecting value: line 1 column 23 (char 22))"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        list(records)
    segments = SegmentTexts(["one two three", "four"], [0, 0, 1], [0, 4, 0], [3, 13, 4])
    assert (list(segments), segments[-1]) == (["one", "two three", "four"], "four")


@pytest.mark.usefixtures("stand_ins")
def test_an_index_on_ray_returns_the_segments_the_local_index_returns(tmp_path: Path) -> None:
    from ef.source_manager import SearchableCorpus, ingest

    corpus = {f"d{i}": " ".join(f"w{i}x{j}" for j in range(i + 1)) + " é" for i in range(12)}
    options: dict[str, Any] = {"embedder": "st:stand-in", "segment_size": 3, "segment_overlap": 1,
                               "show_progress": False}
    local, ray = ingest(corpus, **options), ingest(iter(corpus.items()), engine="ray", **options)
    assert isinstance(ray._collection.source_texts, DiskTexts)
    assert isinstance(local._collection.source_texts, list)  # the local engine keeps its texts, as before
    assert ray.segments == local.segments  # ids, numbers, texts and offsets, read back from the scratch file
    assert ray.fingerprint == local.fingerprint
    queries = ["w3x1", "w11x7 w11x8", "é"]
    assert ray.search_many(queries, limit=5) == local.search_many(queries, limit=5)
    ray.save(tmp_path / "index")
    again = SearchableCorpus.load(tmp_path / "index", engine="ray", show_progress=False)
    assert isinstance(again._collection.source_texts, DiskTexts)
    assert again.segments == local.segments
    assert again.search_many(queries, limit=5) == local.search_many(queries, limit=5)
    with pytest.raises(ValueError, match=r"^'corpus' lists doc id 'd1' more than once$"):
        ingest(iter([("d1", "a"), ("d1", "b")]), engine="ray", **options)
    with pytest.raises(ValueError, match=r"^'corpus' has no documents$"):
        ingest(iter([]), engine="ray", **options)
