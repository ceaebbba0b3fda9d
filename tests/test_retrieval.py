"""evaluate_retrieval over live retrievers: mapping results to sources, skipping, errors, reports."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence

import pytest

from ef.evaluation import RetrievalEvalReport, evaluate_retrieval
from ef.segments import Segment
from ef.source_manager import SearchHit

QRELS = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d3": 1.0, "d4": 0.0}, "q3": {"d5": 0.0}}
QUERIES = {"q1": "one", "q2": "two", "q3": "three"}


def _seg(source: str, index: int = 0) -> Segment:
    text = f"{source}#{index}"
    return Segment(source_id=source, index=index, text=text, start=0, end=len(text))


class Corpus:
    """A SearchableCorpus stand-in returning segment-level hits, several per source."""

    def __init__(self, hits: dict[str, list[tuple[str, int]]]) -> None:
        self.hits = hits
        self.batches: list[list[str]] = []

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        pairs = self.hits[query][:limit]
        return [SearchHit(_seg(s, i), score=10.0 - r, rank=r + 1) for r, (s, i) in enumerate(pairs)]

    def search_many(self, queries: Sequence[str], *, limit: int = 10) -> list[list[SearchHit]]:
        self.batches.append(list(queries))
        return [self.search(q, limit=limit) for q in queries]


def test_hand_computed_means_and_skipped_queries() -> None:
    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return {"one": ["d2", "x", "d1"], "two": ["d3"], "three": ["d5"]}[query][:limit]

    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 3))
    # q3 has no positive judgement: skipped
    assert report.n_queries == 2
    assert set(report.per_query) == {"q1", "q2"}
    q1 = report.per_query["q1"]
    ideal = 2 + 1 / math.log2(3)
    assert q1["ndcg@1"] == pytest.approx(1 / 2)
    assert q1["ndcg@3"] == pytest.approx((1 + 2 / 2) / ideal)
    assert q1["recall@1"] == 0.5
    assert q1["precision@3"] == pytest.approx(2 / 3)
    assert q1["mrr@3"] == 1.0
    assert q1["map@3"] == pytest.approx((1 + 2 / 3) / 2)
    assert report.metrics["recall@3"] == 1.0
    assert report.metrics["ndcg@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert report.primary is None  # NDCG@10 was not asked for
    assert report.primary_at(3) == pytest.approx(((1 + 2 / 2) / ideal + 1.0) / 2)
    assert list(report.metrics)[:2] == ["ndcg@1", "ndcg@3"]


def test_segments_are_deduplicated_to_best_rank_per_source() -> None:
    corpus = Corpus({"one": [("d2", 0), ("d2", 1), ("d1", 3), ("d1", 0)], "two": [("x", 0), ("d3", 2)]})
    report = evaluate_retrieval(corpus, QRELS, QUERIES, k_values=(2,), metrics=("recall", "mrr"), limit=4)
    # d2 twice collapses: the ranking is [d2, d1], both relevant within 2
    assert report.per_query["q1"] == {"recall@2": 1.0, "mrr@2": 1.0}
    assert report.per_query["q2"] == {"recall@2": 1.0, "mrr@2": 0.5}
    # one batched call through search_many, in qrels order
    assert corpus.batches == [["one", "two"]]
    # the documented caveat: with limit = max(k) = 2, the two hits are both d2's segments
    short = evaluate_retrieval(corpus, QRELS, QUERIES, k_values=(2,), metrics=("recall",))
    assert short.per_query["q1"] == {"recall@2": 0.5}


def test_segment_results_and_source_manager_style_retrieve() -> None:
    class Manager:
        def retrieve(self, query: str, *, limit: int = 10) -> list[Segment]:
            return [_seg("d3"), _seg("d1")][:limit]

    report = evaluate_retrieval(Manager(), QRELS, QUERIES, k_values=(1,), metrics=("precision",))
    assert report.per_query == {"q1": {"precision@1": 0.0}, "q2": {"precision@1": 1.0}}


def test_limit_defaults_to_max_k_and_can_be_raised() -> None:
    seen: list[int] = []

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        seen.append(limit)
        return ["d1"]

    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 7))
    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 7), limit=50)
    assert seen == [7, 7, 50, 50]


def test_ignore_identical_ids_drops_the_query_itself() -> None:
    qrels = {"q1": {"d1": 1.0}}

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return ["q1", "d1"]

    kept = evaluate_retrieval(retriever, qrels, {"q1": "t"}, k_values=(1,), metrics=("mrr",))
    dropped = evaluate_retrieval(
        retriever, qrels, {"q1": "t"}, k_values=(1,), metrics=("mrr",), ignore_identical_ids=True
    )
    assert kept.metrics["mrr@1"] == 0.0
    assert dropped.metrics["mrr@1"] == 1.0


def test_ignore_identical_ids_fetches_one_more_and_keeps_the_depth() -> None:
    asked: list[int] = []

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        asked.append(limit)
        return ["x", "y", "d1"][:limit]

    qrels, queries = {"q1": {"d1": 1.0}}, {"q1": "t"}
    report = evaluate_retrieval(
        retriever, qrels, queries, k_values=(2,), metrics=("recall",), ignore_identical_ids=True
    )
    # three fetched, none of them the query itself: the ranking is still cut at the depth of 2
    assert asked == [3]
    assert report.metrics["recall@2"] == 0.0


def test_unsupported_result_type_is_a_type_error() -> None:
    expected = "retriever returned a int; expected SearchHit, Chunk, Segment or str doc ids"
    with pytest.raises(TypeError, match=expected) as info:
        evaluate_retrieval(lambda q, *, limit: [1], QRELS, QUERIES)
    assert info.value.__notes__ == ["while retrieving for query 'q1' (rank 1)"]


@pytest.mark.parametrize(("results", "name"), [("d1", "str"), (None, "NoneType"), (b"d1", "bytes")])
def test_results_must_be_a_list_not_a_string(results, name) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(
        TypeError,
        match=rf"^retriever returned a {name} for query 'q1'; expected a list of SearchHit, Chunk, Segment or str "
        r"doc ids, best first$",
    ):
        evaluate_retrieval(lambda q, *, limit: results, QRELS, QUERIES)


def test_repeated_cutoffs_and_a_short_limit_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"^'k_values' lists a cutoff more than once \(got \(1, 1\)\)$"):
        evaluate_retrieval(lambda q, *, limit: [], QRELS, QUERIES, k_values=(1, 1))
    with pytest.raises(ValueError, match=r"^'limit' must be at least max\(k_values\) = 10 \(got 1\)$"):
        evaluate_retrieval(lambda q, *, limit: [], QRELS, QUERIES, k_values=(10,), limit=1)


def test_show_progress_reaches_search_many() -> None:
    seen: list[bool] = []

    class Quiet(Corpus):
        def search_many(  # type: ignore[override]
            self, queries: Sequence[str], *, limit: int = 10, show_progress: bool | None = None
        ) -> list[list[SearchHit]]:
            seen.append(bool(show_progress))
            return [self.search(q, limit=limit) for q in queries]

    corpus = Quiet({"one": [("d1", 0)], "two": [("d3", 0)]})
    evaluate_retrieval(corpus, QRELS, QUERIES, k_values=(1,))
    evaluate_retrieval(corpus, QRELS, QUERIES, k_values=(1,), show_progress=True)
    assert seen == [False, True]


def test_retriever_error_propagates_with_the_query_id() -> None:
    def retriever(query: str, *, limit: int = 10) -> list[str]:
        if query == "two":
            raise RuntimeError("index offline")
        return []

    with pytest.raises(RuntimeError, match="index offline") as info:
        evaluate_retrieval(retriever, QRELS, QUERIES)
    assert info.value.__notes__ == ["while retrieving for query 'q2'"]


def test_unknown_metric_lists_the_valid_names() -> None:
    with pytest.raises(ValueError, match=r"unknown metric name\(s\) \['dgc'\]; valid names are \['map', 'mrr'"):
        evaluate_retrieval(lambda q, *, limit: [], QRELS, QUERIES, metrics=("ndcg", "dgc"))


@pytest.mark.parametrize(("k_values", "message"), [((), "non-empty"), ((5, 0), r"'k_values' must be a positive")])
def test_bad_cutoffs_are_rejected(k_values, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        evaluate_retrieval(lambda q, *, limit: [], QRELS, QUERIES, k_values=k_values)


def test_no_scorable_query_is_an_error() -> None:
    with pytest.raises(ValueError, match="no query can be scored"):
        evaluate_retrieval(lambda q, *, limit: [], {"q3": {"d5": 0.0}}, QUERIES)
    with pytest.raises(ValueError, match="no query can be scored"):
        evaluate_retrieval(lambda q, *, limit: [], QRELS, {"other": "text"})


def test_report_is_frozen_and_serialises() -> None:
    report = evaluate_retrieval(lambda q, *, limit: ["d1", "d3"], QRELS, QUERIES, k_values=(1,), metrics=("ndcg",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.n_queries = 3  # type: ignore[misc]
    data = json.loads(json.dumps(report.to_dict()))
    assert data == {
        "metrics": {"ndcg@1": 0.5},
        "per_query": {"q1": {"ndcg@1": 1.0}, "q2": {"ndcg@1": 0.0}},
        "n_queries": 2,
        "k_values": [1],
        "n_missing_texts": 0,
        "missing_texts": [],
    }


def test_report_table() -> None:
    report = RetrievalEvalReport({"ndcg@1": 0.5, "ndcg@10": 0.75, "mrr@1": 1.0}, {}, 7, (1, 10))
    assert str(report).splitlines() == [
        "Retrieval evaluation over 7 queries",
        "metric         @1     @10",
        "---------  ------  ------",
        "ndcg       0.5000  0.7500",
        "mrr        1.0000       -",
    ]


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("d", 0.5, "x", 0, 1), TypeError, r"^'index' must be a non-negative integer \(got 0.5\)$"),
        (("d", True, "x", 0, 1), TypeError, r"^'index' must be a non-negative integer \(got True\)$"),
        (("d", 0, "x", 0, 2), ValueError, r"^'text' must have end - start = 2 characters \(got 1\)$"),
        (("", 0, "x", 0, 1), ValueError, r"^'source_id' must be a non-empty str \(got ''\)$"),
        (("d", -1, "x", 0, 1), ValueError, r"^'index' must be a non-negative integer \(got -1\)$"),
    ],
)
def test_segment_rejects_bad_fields(args, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        Segment(*args)


@pytest.mark.parametrize(
    ("score", "rank", "error", "message"),
    [
        (math.inf, 1, ValueError, r"^'score' must be a finite number \(got inf\)$"),
        (None, 1, TypeError, r"^'score' must be a finite number \(got None\)$"),
        (1.0, 1.5, TypeError, r"^'rank' must be a positive integer \(got 1.5\)$"),
        (1.0, True, TypeError, r"^'rank' must be a positive integer \(got True\)$"),
        (1.0, 0, ValueError, r"^'rank' must be a positive integer \(got 0\)$"),
    ],
)
def test_search_hit_rejects_bad_fields(score, rank, error, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=message):
        SearchHit(_seg("d1"), score, rank)


def test_run_path_saves_the_rankings_as_a_trec_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ef.trec import read_run

    corpus = Corpus({"one": [("d2", 0), ("d2", 1), ("d1", 0)], "two": [("x", 0), ("d3", 0)]})
    evaluate_retrieval(corpus, QRELS, QUERIES, k_values=(3,), run_path=tmp_path / "run.trec")
    # hit scores are kept (strictly decreasing after de-duplication); the duplicate d2 is gone
    assert read_run(tmp_path / "run.trec") == {"q1": {"d2": 10.0, "d1": 8.0}, "q2": {"x": 10.0, "d3": 9.0}}
    assert (tmp_path / "run.trec").read_text().splitlines()[0] == "q1 Q0 d2 1 10.0 ef"


def test_run_path_replaces_tied_or_missing_scores_by_rank(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ef.trec import read_run

    # bare ids have no score; TREC readers sort by score, so n - rank keeps the order (z before a)
    evaluate_retrieval(lambda q, *, limit: ["z", "d1", "a"], QRELS, QUERIES, k_values=(3,), run_path=tmp_path / "r")
    assert read_run(tmp_path / "r")["q1"] == {"z": 3.0, "d1": 2.0, "a": 1.0}


def test_run_path_leaves_out_queries_that_retrieved_nothing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ef.trec import read_run

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return ["d1"] if query == "one" else []

    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), metrics=("mrr",), run_path=tmp_path / "r")
    assert report.per_query == {"q1": {"mrr@1": 1.0}, "q2": {"mrr@1": 0.0}}
    assert read_run(tmp_path / "r") == {"q1": {"d1": 1.0}}


def test_ranked_hits_equal_hits_built_one_by_one() -> None:
    import numpy as np

    from ef.retrieval import SearchHit
    from ef.segments import Segment

    segments = [Segment("d1", 0, "a", 0, 1), Segment("d2", 0, "b", 0, 1), Segment("d3", 1, "c", 2, 3)]
    for scores in ([3.0, 2.5, -1.0], [np.float32(3.0), 2.5, 1]):  # the second: checked one by one
        hits = SearchHit.ranked(segments, scores)
        assert hits == [SearchHit(s, float(v), r) for r, (s, v) in enumerate(zip(segments, scores, strict=True), 1)]
        assert [type(h.score) for h in hits] == [float, float, float]
    with pytest.raises(ValueError, match=r"^'scores' must hold one score per segment \(got 2 for 3\)$"):
        SearchHit.ranked(segments, [1.0, 2.0])
    with pytest.raises(TypeError, match=r"^'segment' must be"):
        SearchHit.ranked(["d1"], [1.0])  # type: ignore[list-item]


@pytest.mark.parametrize("block", [None, 1])
def test_run_path_is_refused_when_no_query_retrieved_anything(tmp_path, block) -> None:  # type: ignore[no-untyped-def]
    class Empty:
        """Retrieves nothing, query by query (block None) or a block at a time (as an index on Ray)."""

        def __init__(self) -> None:
            if block is not None:
                self.query_block = block

        def __call__(self, query: str, *, limit: int = 10) -> list[str]:
            return []

        def search_many(self, queries: list[str], *, limit: int = 10) -> list[list[str]]:
            return [[] for _ in queries]

    kept = tmp_path / "kept.run"
    kept.write_text("a file the user had\n")
    with pytest.raises(ValueError) as error:
        evaluate_retrieval(Empty(), QRELS, QUERIES, k_values=(1,), metrics=("mrr",), run_path=kept)
    assert str(error.value) == (
        "cannot write 'run_path': no query retrieved any document, and a run file with no ranking line is one "
        "trec_eval, evaluate_run and ef trec-eval refuse to score (nothing was written)"
    )
    assert kept.read_text() == "a file the user had\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept.run"]
