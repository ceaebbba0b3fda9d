"""ef.pipeline_stages and ef eval's pipeline flags: the stages agree with ef's own indexes, and ef eval runs them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ef.datasets import demo_dataset
from ef.evaluation import read_beir
from ef.pipeline import Pipeline
from ef.pipeline_stages import PipelineRetriever, Workspace
from ef.source_manager import ingest


@pytest.fixture(scope="module")
def demo() -> tuple[dict[str, str], list[str]]:
    corpus, queries, qrels = read_beir(demo_dataset())
    return corpus, [queries[q] for q in sorted(qrels)]


def test_bm25_with_the_default_parameters_is_ef_evals_bm25(demo: tuple[dict[str, str], list[str]]) -> None:
    corpus, texts = demo
    index = ingest(corpus, segment_size=9, segment_overlap=3, show_progress=False)
    retriever = PipelineRetriever(Pipeline("bm25", size=9, overlap=3, k=50), corpus)
    for ours, theirs in zip(retriever.search_many(texts, limit=50), index.search_many(texts, limit=50), strict=True):
        assert [(h.segment, h.rank) for h in ours] == [(h.segment, h.rank) for h in theirs]
        assert [h.score for h in ours] == pytest.approx([h.score for h in theirs], rel=1e-6)


def test_k1_b_stemmer_and_stopwords_change_the_scores_as_bm25s_does(demo: tuple[dict[str, str], list[str]]) -> None:
    import bm25s
    import Stemmer

    corpus, texts = demo
    docs = list(corpus.values())
    workspace = Workspace(corpus)
    for k1, b, stemmer, stopwords in ((0.5, 0.3, "english", "english"), (2.0, 1.0, "none", "none")):
        pipeline = Pipeline("bm25", k1=k1, b=b, stemmer=stemmer, stopwords=stopwords, k=100)
        # The reference: bm25s's own tokenizer and index with the same settings.
        tokens = bm25s.tokenize(docs, stopwords="en" if stopwords == "english" else None,
                                stemmer=Stemmer.Stemmer("english") if stemmer == "english" else None,
                                show_progress=False)
        model = bm25s.BM25(k1=k1, b=b, method="lucene")
        model.index(tokens, show_progress=False)
        rankings, _ = workspace.first_stage(pipeline, texts)
        for text, (positions, scores) in zip(texts, rankings, strict=True):
            query = bm25s.tokenize([text], stopwords="en" if stopwords == "english" else None,
                                   stemmer=Stemmer.Stemmer("english") if stemmer == "english" else None,
                                   show_progress=False, return_ids=False)[0]
            expected = model.get_scores(query)
            assert scores.tolist() == pytest.approx(expected[positions].tolist(), rel=1e-5)
            assert len(positions) == int((expected > 0).sum())


@pytest.mark.slow
def test_hybrid_fusion_equals_ef_evals_hybrid_index(demo: tuple[dict[str, str], list[str]]) -> None:
    corpus, texts = demo
    index = ingest(corpus, embedder="hybrid", show_progress=False)
    retriever = PipelineRetriever(Pipeline("hybrid", k=100), corpus)
    ours, theirs = retriever.search_many(texts, limit=100), index.search_many(texts, limit=100)
    for a, b in zip(ours, theirs, strict=True):
        assert [h.segment.source_id for h in a] == [h.segment.source_id for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-7)
    dense = retriever.workspace.vectors(retriever.pipeline, "all-MiniLM-L6-v2")[0]
    assert dense.shape == (100, 384)
    assert np.allclose(np.linalg.norm(dense, axis=1), 1.0, atol=1e-5)


def test_a_deeper_first_stage_is_computed_once_and_shallower_ones_are_its_prefix(
    demo: tuple[dict[str, str], list[str]],
) -> None:
    corpus, texts = demo
    workspace = Workspace(corpus)
    deep, _ = workspace.first_stage(Pipeline(k=50), texts)
    shallow, _ = workspace.first_stage(Pipeline(k=5), texts)
    assert [p.tolist() for p, _ in shallow] == [p[:5].tolist() for p, _ in deep]
    assert list(workspace.counts["retrieved"].values()) == [1]
    fresh, _ = Workspace(corpus).first_stage(Pipeline(k=5), texts)
    assert [p.tolist() for p, _ in fresh] == [p.tolist() for p, _ in shallow]


def test_the_vector_cache_is_keyed_by_corpus_chunking_and_model(tmp_path: Path) -> None:
    calls: list[int] = []

    class Counting(Workspace):
        def _encode(self, model, texts, desc):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return lambda: np.eye(len(texts), 4, dtype=np.float32)

    corpus = {"a": "one two three four", "b": "five six"}
    first = Counting(corpus, cache_dir=tmp_path)
    vectors, _ = first.vectors(Pipeline("dense", size=2, k=3), "m")
    assert vectors.shape == (3, 4)
    assert calls == [3]
    second = Counting(corpus, cache_dir=tmp_path)
    second.vectors(Pipeline("dense", size=2, overlap=1, k=3), "m")  # another chunking
    second.vectors(Pipeline("dense", size=2, k=3), "m")  # read back
    second.vectors(Pipeline("dense", size=2, k=3), "other")  # another model
    Counting({**corpus, "c": "x"}, cache_dir=tmp_path).vectors(Pipeline("dense", size=2, k=3), "m")  # another corpus
    assert calls == [3, 4, 3, 4]  # chunks by hand: 3; size 2 overlap 1: 3 + 1; 3; 3 + 1
    assert dict(second.counts["loaded"]) == {("words", 2, 0, "m"): 1}
    meta = json.loads(next((tmp_path / "vectors").glob("*.json")).read_text())
    assert set(meta) == {"key", "rows", "seconds"}


def test_ef_eval_pipeline_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    assert main(["eval", "--bm25-k1", "1.2", "--bm25-b", "0.75", "--json", "-", "--quiet"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert round(data["metrics"]["ndcg@10"], 4) == 0.8078  # ef eval's default BM25 on the demo set
    assert data["pipeline"] == {"id": Pipeline(k=100).id, **Pipeline(k=100).to_dict()}
    assert main(["eval", "--segment-size", "9", "--overlap", "3", "--bm25-k1", "0.9", "--k", "10",
                 "--json", "-", "--quiet"]) == 0
    chunked = json.loads(capsys.readouterr().out)
    from ef.sweep import sweep

    cell = sweep({"size": 9, "overlap": 3, "k1": 0.9, "k": 10}, demo_dataset(), show_progress=False).cells[0]
    assert chunked["metrics"]["ndcg@10"] == pytest.approx(cell.metrics["ndcg@10"], abs=1e-12)
    assert chunked["n_segments"] > chunked["n_documents"] == 100


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--rerank-depth", "10"], "--rerank-depth needs --rerank MODEL"),
        # Each error names the flags typed, not Pipeline's fields ('overlap' needs a chunk 'size',
        # 'k' must be at most 'rerank_depth' with k the default cutoff the user never gave).
        (["--overlap", "3"], "--overlap needs --segment-size WORDS (got --overlap 3 alone)"),
        (["--segment-size", "10", "--overlap", "10"],
         "--overlap must be smaller than --segment-size (got --overlap 10, --segment-size 10)"),
        (["--segment-size", "0"], "--segment-size must be a positive integer (got 0)"),
        (["--bm25-k1", "-1"], "--bm25-k1 must be a number >= 0.0 (got -1.0)"),
        (["--bm25-b", "2"], "--bm25-b must be a number between 0.0 and 1.0 (got 2.0)"),
        (["--bm25-k1", "1", "--embedder", "st:all-MiniLM-L6-v2"],
         "--bm25-k1 and --bm25-b apply to --embedder bm25 or hybrid, not 'st:all-MiniLM-L6-v2'"),
        (["--bm25-b", "0.5", "--index-dir", "/tmp/x"],
         "--bm25-b runs the pipeline in memory: it cannot be combined with --index-dir"),
        (["--rerank", "minilm", "--rerank-depth", "5", "--k", "10"],
         "--rerank-depth 5 is less than the deepest cutoff, 10 (--k 10): the reranker orders only its top 5; "
         "give cutoffs up to 5 or a deeper --rerank-depth"),
        (["--rerank", "minilm", "--rerank-depth", "50"],  # --k's default reaches 100
         "--rerank-depth 50 is less than the deepest cutoff, 100 (--k 1,3,5,10,100): the reranker orders only "
         "its top 50; give cutoffs up to 50 or a deeper --rerank-depth"),
        (["--rerank", "minilm", "--rerank-depth", "0"], "--rerank-depth must be a positive integer (got 0)"),
        (["--rerank", "colbert"], "--rerank must be 'bi:MODEL' (bi-encoder cosine), 'cross:PATH' "
                                  "(a local CrossEncoder) or 'minilm' (got 'colbert')"),
    ],
)
def test_ef_eval_pipeline_flag_errors(flags: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    assert main(["eval", *flags, "--quiet"]) == 2
    assert capsys.readouterr().err == f"ef eval: error: {message}\n"


@pytest.mark.parametrize(
    ("flags", "fusion_depth"),
    [(["--k", "10,200"], 200), (["--rerank", "minilm", "--rerank-depth", "300", "--k", "10"], 300),
     (["--k", "10"], 100)],
)
def test_ef_eval_hybrid_pipeline_fuses_as_deep_as_plain_hybrid(flags: list[str], fusion_depth: int) -> None:
    """--embedder hybrid fuses each list's top max(k, 100); with a pipeline flag it was refused past 100:
    "hybrid fuses each list's top 100 ('fusion_depth'): k must be at most that (got 200)", a field no flag sets."""
    from ef.cli import _parser
    from ef.cli.eval import _grid
    from ef.cli.sweep import pipeline_from_args

    args = _parser().parse_args(["eval", "--embedder", "hybrid", "--bm25-k1", "1.2", *flags])
    _grid(args)
    pipeline = pipeline_from_args(args)
    assert pipeline is not None
    assert (pipeline.retriever, pipeline.fusion_depth, pipeline.k) == ("hybrid", fusion_depth, max(args.k))


def test_a_pipeline_runs_in_the_fastrag_harness(demo: tuple[dict[str, str], list[str]]) -> None:
    from ef.sweep import sweep
    from fastrag.benchmark import EvalSample, run_benchmark_sync
    from fastrag.benchmark.metrics import Latency, Recall

    corpus, _ = demo
    _, queries, qrels = read_beir(demo_dataset())
    samples = [EvalSample(q, queries[q], sorted(d for d, g in qrels[q].items() if g > 0)) for q in sorted(qrels)]
    pipeline = Pipeline("bm25", size=9, overlap=3, k=10)
    result = run_benchmark_sync(PipelineRetriever(pipeline, corpus), samples,
                                [Recall(k=10, key="source_uri"), Latency()], show_progress=False)
    cell = sweep(pipeline, demo_dataset(), measures=["recall@10"], show_progress=False).cells[0]
    # The harness's recall of the 10 chunks' sources is the sweep's recall@10 of the collapsed run.
    assert result.scores["recall@10[source_uri]"] == tuple(cell.per_query[q]["recall@10"] for q in sorted(qrels))
    assert result.summary["latency_ms"].count == len(samples)


def test_a_reranked_pipeline_gives_its_depth_for_one_hit_past_it_and_evaluate_retrieval_drops_the_self_match() -> None:
    # evaluate_retrieval(ignore_identical_ids=True) asks for one hit more than its deepest cutoff: a
    # reranked pipeline said "'k' must be at most 'rerank_depth' ... (got k=11)" for k_values up to 10.
    from ef.evaluation import evaluate_retrieval

    corpus, queries, qrels = read_beir(demo_dataset())
    retriever = PipelineRetriever(Pipeline("bm25", rerank="minilm", rerank_depth=10, k=10), corpus)
    texts = list(queries.values())[:2]
    assert [len(hits) for hits in retriever.search_many(texts, limit=11)] == [10, 10]  # one past: the depth
    with pytest.raises(ValueError, match=r"^'k' must be at most 'rerank_depth': the reranker orders only its top "
                                         r"10 \(got k=20\)$"):
        retriever.search_many(texts, limit=20)  # deeper cutoffs are not scored on 10 hits, silently
    report = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 10), ignore_identical_ids=True)
    plain = evaluate_retrieval(retriever, qrels, queries, k_values=(1, 10))
    assert report.metrics == plain.metrics  # the demo's queries are not its documents: nothing to drop
