"""CorpusRetriever: an ef SearchableCorpus benchmarked with the fastrag metrics."""

from __future__ import annotations

import pytest

from ef.segments import Segment
from ef.source_manager import SearchHit
from fastrag.adapters import CorpusRetriever, hit_to_chunk
from fastrag.benchmark import EvalSample, run_benchmark_sync
from fastrag.benchmark.metrics import MRR, Recall
from fastrag.documents import Chunk

TEXTS = {"doc-a": "alpha beta", "doc-b": "beta gamma", "doc-c": "gamma delta"}


class FakeCorpus:
    """Ranks segments by how many query words they contain; two segments per document."""

    def __init__(self) -> None:
        self.limits: list[int] = []
        self.segments = [
            Segment(doc_id, index, word, start, start + len(word))
            for doc_id, text in TEXTS.items()
            for index, (word, start) in enumerate(zip(text.split(), (0, text.index(" ") + 1), strict=True))
        ]

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        self.limits.append(limit)
        words = set(query.split())
        ranked = sorted(self.segments, key=lambda s: (-(s.text in words), s.source_id, s.index))
        return [SearchHit(seg, float(seg.text in words), rank) for rank, seg in enumerate(ranked[:limit], start=1)]


def test_hits_become_chunks() -> None:
    chunks = CorpusRetriever(FakeCorpus()).retrieve("gamma", 3)
    assert [(c.source_uri, c.chunk_index, c.content) for c in chunks] == [
        ("doc-b", 1, "gamma"),
        ("doc-c", 0, "gamma"),
        ("doc-a", 0, "alpha"),
    ]
    assert chunks[0] == Chunk("doc-b", 1, "gamma")
    assert chunks[0].metadata == {"score": 1.0, "rank": 1, "start": 5, "end": 10}
    assert hit_to_chunk(SearchHit(Segment("d", 4, "x", 2, 3), 0.5, 7)).id == Chunk("d", 4, "x").id


def test_an_ef_corpus_benchmarks_at_page_and_chunk_level() -> None:
    corpus = FakeCorpus()
    gamma_b = Chunk("doc-b", 1, "gamma").id
    samples = [
        EvalSample("q1", "delta", ["doc-c"]),
        EvalSample("q2", "gamma", ["doc-c"]),
        EvalSample("q3", "gamma", [gamma_b]),
    ]
    metrics = [Recall(k=1, key="source_uri"), MRR(k=3, key="source_uri"), MRR(k=3)]
    result = run_benchmark_sync(CorpusRetriever(corpus), samples, metrics, show_progress=False)
    assert result.scores["recall@1[source_uri]"] == (1.0, 0.0, 0.0)
    assert result.scores["mrr@3[source_uri]"] == (1.0, 0.5, 0.0)
    assert result.scores["mrr@3"] == (0.0, 0.0, 1.0)  # chunk ids: only q3 names one
    assert corpus.limits == [3, 3, 3]


def test_corpus_without_search_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^'corpus' must have search\(query, \*, limit\) \(got dict\)$"):
        CorpusRetriever({})  # type: ignore[arg-type]


def test_a_real_ef_bm25_index_benchmarks() -> None:
    from ef.source_manager import ingest

    corpus = ingest(
        {"d1": "Rust is a systems language.", "d2": "Python is a scripting language.", "d3": "Paris is in France."},
        show_progress=False,
    )
    samples = [
        EvalSample("q1", "python scripting", ["d2"]),
        EvalSample("q2", "capital of france paris", ["d3"]),
        EvalSample("q3", "rust systems", ["d1"]),
    ]
    result = run_benchmark_sync(CorpusRetriever(corpus), samples, [MRR(k=3, key="source_uri")], show_progress=False)
    assert result.scores["mrr@3[source_uri]"] == (1.0, 1.0, 1.0)
    assert result.errors == {}
