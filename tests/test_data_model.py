"""One data model for ef and fastrag: one retriever protocol, one hit type, one chunker, one validation template."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ef._console
import ef._validate
import ef.retrieval
from ef.evaluation import evaluate_retrieval
from ef.retrieval import Retriever, SearchHit
from ef.segments import Chunk, Segment, segment_text, window_spans
from ef.source_manager import SearchableCorpus, SourceManager, ingest
from ef.source_manager._ann import AnnSpec
from ef.source_manager._embedders import EmbedderSpec
from ef.source_manager._ray import RayEngine
from fastrag.benchmark import (
    BenchmarkResult,
    DistributionSummary,
    EvalSample,
    PipelineResponse,
    QueryOutcome,
    run_benchmark_sync,
)
from fastrag.benchmark.metrics import MRR, HitRate, Recall
from fastrag.benchmark.samples import OutcomesHeader
from fastrag.documents import chunk_text

CORPUS = {
    "ferns": "Water the ferns weekly and keep them in shade.",
    "taxes": "Taxes are due in April.",
    "cats": "Cats sleep in the shade all afternoon.",
}
# q3's relevant page comes second: the numbers below are not all ones.
SAMPLES = [
    EvalSample("q1", "watering ferns", ["ferns"]),
    EvalSample("q2", "when are taxes due", ["taxes"]),
    EvalSample("q3", "shade", ["ferns"]),
]
METRICS = [Recall(k=2, key="source_uri"), MRR(k=2, key="source_uri"), HitRate(k=1, key="source_uri")]
EXPECTED = {
    "recall@2[source_uri]": (1.0, 1.0, 1.0),
    "mrr@2[source_uri]": (1.0, 1.0, 0.5),
    "hit_rate@1[source_uri]": (1.0, 1.0, 0.0),
}


def bench(target: object, **options: Any) -> BenchmarkResult:
    return run_benchmark_sync(target, SAMPLES, METRICS, show_progress=False, **options)  # type: ignore[arg-type]


# --- one retriever protocol ------------------------------------------------------------------


def test_ef_indexes_and_managers_are_retrievers_and_fastrag_uses_the_same_protocol() -> None:
    import fastrag.benchmark

    manager = SourceManager()
    manager.add_many(CORPUS)
    assert isinstance(manager, Retriever)
    assert isinstance(ingest(CORPUS, show_progress=False), Retriever)
    assert fastrag.benchmark.Retriever is Retriever


def test_a_source_manager_runs_in_run_benchmark_with_real_numbers() -> None:
    manager = SourceManager()
    manager.add_many(CORPUS)
    result = bench(manager)
    assert result.errors == {}
    assert result.scores == EXPECTED
    assert result.summary["mrr@2[source_uri]"].mean == pytest.approx(2.5 / 3)
    assert [c.source_uri for c in result.outcomes[2].retrieved] == ["cats", "ferns"]
    from fastrag.benchmark._results import default_run_name

    # A resumed results file tells this manager from one holding other sources.
    assert default_run_name(manager) == (
        f"ef.source_manager._manager.SourceManager embedder=bm25 fingerprint={manager.fingerprint}"
    )


def test_an_ef_index_runs_in_run_benchmark_with_its_scores_recorded() -> None:
    index = ingest(CORPUS, show_progress=False)
    result = bench(index)
    assert result.errors == {}
    assert result.scores == EXPECTED
    hits = index.search("shade", limit=2)
    recorded = result.outcomes[2].retrieved
    assert [(c.source_uri, c.metadata["score"], c.metadata["rank"]) for c in recorded] == [
        (h.segment.source_id, h.score, h.rank) for h in hits
    ]
    # The older wrapper records the very same chunks.
    from fastrag.adapters import CorpusRetriever

    assert [o.retrieved for o in bench(CorpusRetriever(index)).outcomes] == [o.retrieved for o in result.outcomes]


class FastragRetriever:
    """A fastrag-style retriever: retrieve(query, k) returning Chunks, scores in metadata."""

    def __init__(self) -> None:
        self.rankings = {"alpha": ["d1", "d9", "d2"], "beta": ["d9", "d3"]}

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        ids = self.rankings[query][:k]
        return [Chunk(doc_id, 0, f"text of {doc_id}", {"score": 10.0 - rank}) for rank, doc_id in enumerate(ids)]


QRELS = {"q1": {"d1": 1.0, "d2": 1.0}, "q2": {"d3": 1.0}}
QUERIES = {"q1": "alpha", "q2": "beta"}


def test_a_fastrag_retriever_runs_in_evaluate_retrieval() -> None:
    report = evaluate_retrieval(FastragRetriever(), QRELS, QUERIES, k_values=(1, 3), metrics=("recall", "mrr"))
    assert report.metrics == {"recall@1": 0.25, "recall@3": 1.0, "mrr@1": 0.5, "mrr@3": 0.75}
    assert report.n_queries == 2


def test_an_async_fastrag_retriever_runs_in_evaluate_retrieval_too() -> None:
    class Async(FastragRetriever):
        async def retrieve(self, query: str, k: int) -> list[Chunk]:  # type: ignore[override]
            await asyncio.sleep(0)
            return FastragRetriever.retrieve(self, query, k)

    report = evaluate_retrieval(Async(), QRELS, QUERIES, k_values=(3,), metrics=("recall",))
    assert report.metrics == {"recall@3": 1.0}


def test_a_fastrag_retrievers_chunk_scores_reach_the_run_file(tmp_path: Any) -> None:
    from ef.trec import read_run

    evaluate_retrieval(FastragRetriever(), QRELS, QUERIES, k_values=(3,), run_path=tmp_path / "run.trec")
    assert read_run(tmp_path / "run.trec") == {"q1": {"d1": 10.0, "d9": 9.0, "d2": 8.0}, "q2": {"d9": 10.0, "d3": 9.0}}


# --- a broken retriever gives a named error, never a missing score ---------------------------


def test_a_retrieve_that_cannot_take_k_by_position_is_refused_before_anything_runs() -> None:
    calls: list[str] = []

    class KeywordOnly:
        def retrieve(self, query, *, limit=10):  # type: ignore[no-untyped-def]  # the message shows the signature
            calls.append(query)
            return []

    with pytest.raises(TypeError) as error:
        bench(KeywordOnly())
    assert str(error.value) == (
        "'target' must accept retrieve(query, k) with k by position; "
        "KeywordOnly.retrieve(query, *, limit=10) does not"
    )
    assert calls == []


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (
            [42],
            "the result of Bad.retrieve('watering ferns', k) for sample 'q1' at rank 1: retriever returned a int; "
            "expected Chunk, SearchHit or Segment",
        ),
        (
            ["ferns"],
            "the result of Bad.retrieve('watering ferns', k) for sample 'q1' at rank 1: retriever returned a str; "
            "expected Chunk, SearchHit or Segment (a benchmark records content, which a bare doc id lacks)",
        ),
        (
            None,
            "the result of Bad.retrieve('watering ferns', k) for sample 'q1' must be a sequence of Chunk or "
            "SearchHit, best first (got NoneType)",
        ),
    ],
)
def test_a_wrong_return_type_stops_the_benchmark_named(returned: object, message: str) -> None:
    class Bad:
        def retrieve(self, query: str, k: int) -> object:
            return returned

    with pytest.raises(TypeError) as error:
        run_benchmark_sync(Bad(), SAMPLES[:1], METRICS, show_progress=False, concurrency=1)
    assert str(error.value) == message


def test_a_wrong_return_type_in_evaluate_retrieval_names_the_query_and_rank() -> None:
    class Bad:
        def retrieve(self, query: str, k: int) -> list[object]:
            return [Chunk("d1", 0, "x"), 3.5]

    with pytest.raises(TypeError) as error:
        evaluate_retrieval(Bad(), QRELS, QUERIES)
    assert str(error.value) == "retriever returned a float; expected SearchHit, Chunk, Segment or str doc ids"
    assert error.value.__notes__ == ["while retrieving for query 'q1' (rank 2)"]


def test_a_retriever_that_raises_is_named_in_evaluate_retrieval() -> None:
    class Down:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            raise ConnectionError("index unreachable")

    with pytest.raises(ConnectionError) as error:
        evaluate_retrieval(Down(), QRELS, QUERIES)
    assert str(error.value) == "index unreachable"
    assert error.value.__notes__ == ["while retrieving for query 'q1'"]


# --- every record refuses a bad value, with the one template ---------------------------------

TEMPLATE = re.compile(r"^'[^']+'(\[[^\]]+\])? must .+ \(got .+\)$")
SEGMENT = Segment("d", 0, "x", 0, 1)


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: Segment("d", np.int64(-1), "x", 0, 1), ValueError,
         "'index' must be a non-negative integer (got np.int64(-1))"),
        (lambda: Segment("d", 0, "x", 0.0, 1), TypeError, "'start' must be a non-negative integer (got 0.0)"),
        (lambda: Segment(None, 0, "x", 0, 1), TypeError, "'source_id' must be a non-empty str (got None)"),
        (lambda: Chunk("p", 0, "x", [("a", 1)]), TypeError, "'metadata' must be a mapping (got list)"),
        (lambda: Chunk("p", -2, "x"), ValueError, "'chunk_index' must be a non-negative integer (got -2)"),
        (lambda: SearchHit(SEGMENT, "1.0", 1), TypeError, "'score' must be a finite number (got '1.0')"),
        (lambda: SearchHit(SEGMENT, 1.0, 0), ValueError, "'rank' must be a positive integer (got 0)"),
        (lambda: SearchHit("d", 1.0, 1), TypeError, "'segment' must be a Segment (got 'd')"),
        (lambda: EvalSample("", "q"), ValueError, "'id' must be a non-empty str (got '')"),
        (lambda: EvalSample("q1", 7), TypeError, "'query' must be a str (got 7)"),
        (lambda: EvalSample("q1", "q", [1]), TypeError, "'relevant_ids' must hold str ids (got 1)"),
        (lambda: EvalSample("q1", "q", metadata=[]), TypeError, "'metadata' must be a mapping (got list)"),
        (lambda: QueryOutcome("q1", "q", total_tokens=-1), ValueError,
         "'total_tokens' must be a non-negative integer (got -1)"),
        (lambda: QueryOutcome("q1", "q", error=1), TypeError, "'error' must be a str or None (got 1)"),
        (lambda: OutcomesHeader(True, "retriever"), TypeError, "'top_k' must be a positive integer (got True)"),
        (lambda: OutcomesHeader(5, "agent"), ValueError,
         "'target' must be one of 'retriever', 'pipeline' (got 'agent')"),
        (lambda: PipelineResponse(None), TypeError, "'answer' must be a str (got None)"),
        (lambda: PipelineResponse("a", cost_usd=-1), ValueError, "'cost_usd' must be a finite number >= 0 (got -1)"),
        (lambda: PipelineResponse("a", [1]), TypeError,
         "'retrieved' at rank 1: retriever returned a int; expected Chunk, SearchHit or Segment"),
        (lambda: DistributionSummary(-1, 0, *[None] * 10), ValueError,
         "'count' must be a non-negative integer (got -1)"),
        (lambda: DistributionSummary(1, 0, float("nan"), *[None] * 9), ValueError,
         "'mean' must be a finite number (got nan)"),
        (lambda: DistributionSummary(0, 0, 1.0, *[None] * 9), ValueError,
         "'mean' must be None with count=0 (got 1.0)"),
        (lambda: BenchmarkResult({}, (), {}, {"x": 1}), TypeError, "'higher_is_better'['x'] must be a bool (got 1)"),
        (lambda: BenchmarkResult({}, ("q1",), {}), TypeError, "'outcomes'[0] must be a QueryOutcome (got 'q1')"),
        (lambda: RayEngine(workers=0), ValueError, "'workers' must be a positive integer or None (got 0)"),
        (lambda: RayEngine(address=" "), ValueError, "'ray_address' must be a non-empty str or None (got '')"),
        (lambda: AnnSpec("hnsw", {"M": 1.5}), TypeError, "'ann_params'['M'] must be a positive integer (got 1.5)"),
        (lambda: EmbedderSpec("tfidf"), ValueError, "'kind' must be one of 'bm25', 'st', 'hybrid' (got 'tfidf')"),
    ],
)
def test_every_record_refuses_bad_values_with_the_template(
    build: Callable[[], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        build()
    assert str(raised.value) == message
    assert TEMPLATE.match(message) or message.startswith("'retrieved' at rank"), message


def test_records_store_plain_python_numbers() -> None:
    segment = Segment("d", np.int64(1), "x", np.int64(2), np.int64(3))
    assert (type(segment.index), type(segment.start), type(segment.end)) == (int, int, int)
    response = PipelineResponse("a", [SearchHit(SEGMENT, 0.5, 1)], total_tokens=np.int64(7), cost_usd=np.float32(0.5))
    assert (type(response.total_tokens), type(response.cost_usd)) == (int, float)
    assert response.retrieved == (Chunk("d", 0, "x"),)  # an ef hit is recorded as the Chunk it is
    assert RayEngine(workers=np.int64(2)).workers == 2


# --- one chunker, both units named -----------------------------------------------------------

TEXT = "one two three four five six"


def test_the_chunker_counts_words_or_characters() -> None:
    assert window_spans(TEXT, size=3, overlap=1) == [(0, 13), (8, 23), (19, 27)]
    assert window_spans(TEXT, size=10, overlap=2, unit="chars") == [(0, 8), (6, 14), (12, 19), (17, 27)]
    with pytest.raises(ValueError, match=r"^'unit' must be one of 'words', 'chars' \(got 'tokens'\)$"):
        window_spans(TEXT, size=3, unit="tokens")  # type: ignore[arg-type]


def test_segments_and_chunks_cut_the_same_windows_in_either_unit() -> None:
    for unit, size, overlap in (("words", 3, 1), ("chars", 10, 2)):
        segments = segment_text("p", TEXT, size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
        chunks = chunk_text("p", TEXT, size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
        assert [(s.start, s.end) for s in segments] == window_spans(TEXT, size=size, overlap=overlap, unit=unit)  # type: ignore[arg-type]
        assert [(c.metadata["start"], c.metadata["end"], c.content) for c in chunks] == [
            (s.start, s.end, s.text) for s in segments
        ]


def test_the_spec_defaults_of_each_unit_hold() -> None:
    words = " ".join(f"w{i}" for i in range(300))
    assert [(s.start, s.end) for s in segment_text("d", words)] == window_spans(words, size=200, overlap=40)
    assert [c.metadata["end"] for c in chunk_text("p", "x" * 2500)] == [1000, 1800, 2500]


def test_a_blank_page_is_no_chunk_but_still_one_segment() -> None:
    assert chunk_text("p", "   ") == []
    assert segment_text("d", "   ", size=10, overlap=0, unit="chars") == [Segment("d", 0, "   ", 0, 3)]
    assert segment_text("d", "", size=10, overlap=0, unit="chars") == [Segment("d", 0, "", 0, 0)]


# --- public homes ------------------------------------------------------------------------------


def test_the_shared_helpers_have_one_home_each_and_the_old_paths_are_gone() -> None:
    import importlib

    from fastrag.documents import Chunk as FastragChunk

    # Issue 34: argument checks, progress, lazy names, atomic writes and input opening are
    # plumbing no user needs, private to the distribution; their public paths of issue 10 are gone.
    gone = ("ef.validate", "ef.console", "ef.lazy", "ef.io.atomic", "ef.io.source")
    for old in (*gone, "ef._progress", "ef._table", "ef.source_manager._hit"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)
    assert FastragChunk is Chunk
    for module in (ef._validate, ef._console, ef.retrieval):
        assert sorted(module.__all__) == sorted(set(module.__all__))
        assert all(hasattr(module, name) for name in module.__all__)


def test_no_fastrag_module_imports_a_private_ef_module() -> None:
    import pathlib

    import fastrag

    # The distribution's own plumbing (issue 34) is shared with fastrag; no other private module is.
    plumbing = r"(?!_validate\b|_console\b|_lazy\b|io\._atomic\b|io\._source\b)"
    private = re.compile(rf"^\s*(from|import) ef\.{plumbing}(\w+\.)*_\w+", re.MULTILINE)
    root = pathlib.Path(fastrag.__file__).parent
    offenders = {
        str(path.relative_to(root)): private.findall(path.read_text(encoding="utf-8"))
        for path in root.rglob("*.py")
    }
    # Left to the other parts of issue 10: the metric classes (the measure registry) and compare (the
    # evaluation path) still reach into ef.evaluation's private modules.
    others = ("benchmark/metrics/", "benchmark/compare.py")
    assert {name: found for name, found in offenders.items() if found and not name.startswith(others)} == {}


def test_searchable_corpus_retrieve_is_search() -> None:
    index: SearchableCorpus = ingest(CORPUS, show_progress=False)
    assert index.retrieve("shade", 2) == index.search("shade", limit=2)
