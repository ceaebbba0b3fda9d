"""evaluate_retrieval of a retriever with a ``query_block`` (an index on Ray): the rankings of each block
of queries go to a run file that is scored streaming, with the numbers of the in-memory path."""

from __future__ import annotations

import gc
import gzip
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from _run_windows import spy_windows
from ef.evaluation import evaluate_retrieval
from ef.segments import Segment
from ef.source_manager import SearchHit
from ef.trec import read_run

# Graded judgements (the relevance level is the smallest positive grade, 1), a query judged but
# never retrieved for, one whose judgements are all 0 (not scored), and one without a text.
QRELS = {
    "q1": {"d1": 2.0, "d2": 1.0},
    "q2": {"d3": 1.0, "d4": 0.0},
    "q3": {"d5": 2.0},
    "q4": {"d2": 1.0, "d6": 2.0, "d7": 1.0},
    "q5": {"d9": 1.0},
    "q6": {"d1": 0.0},
    "q7": {"d8": 2.0},
    "q8": {"d4": 1.0},
}
QUERIES = {f"q{i}": f"text {i}" for i in range(1, 8)}  # q8 has no text
# (source, segment, score) per query, best first: duplicate segments of a source, tied scores
# (q4's d0 and d7 at 0.5: the retriever's order is scored, not trec_eval's doc id order), the
# query's own id (q3), and nothing at all for q5.
HITS: dict[str, list[tuple[str, int, float]]] = {
    "text 1": [("d2", 0, 0.9), ("d2", 1, 0.8), ("d9", 0, 0.7), ("d1", 0, 0.6)],
    "text 2": [("d4", 0, 0.9), ("d3", 0, 0.2)],
    "text 3": [("q3", 0, 0.95), ("d5", 0, 0.9), ("d1", 0, 0.1)],
    "text 4": [("d0", 0, 0.5), ("d7", 0, 0.5), ("d2", 0, 0.4), ("d6", 0, 0.3)],
    "text 5": [],
    "text 7": [("d1", 0, 0.3), ("d8", 0, 0.3), ("d8", 1, 0.2)],
}


def _seg(source: str, index: int) -> Segment:
    text = f"{source}#{index}"
    return Segment(source_id=source, index=index, text=text, start=0, end=len(text))


class Retriever:
    """A SearchableCorpus stand-in; with a ``query_block`` it is evaluated block by block."""

    def __init__(self, query_block: object = None) -> None:
        if query_block is not None:
            self.query_block = query_block
        self.batches: list[list[str]] = []

    def search_many(self, queries: Sequence[str], *, limit: int = 10) -> list[list[SearchHit]]:
        self.batches.append(list(queries))
        return [
            [SearchHit(_seg(s, i), score, r) for r, (s, i, score) in enumerate(HITS[q][:limit], start=1)]
            for q in queries
        ]


@pytest.fixture
def windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[bytes]]]:
    return spy_windows(monkeypatch)


@pytest.mark.parametrize("ignore_identical_ids", [False, True])
def test_blocks_score_exactly_as_the_in_memory_path(ignore_identical_ids: bool) -> None:
    options: dict[str, Any] = {
        "k_values": (1, 3, 10), "metrics": ("ndcg", "recall", "precision", "mrr", "map"),
        "ignore_identical_ids": ignore_identical_ids,
    }
    memory = evaluate_retrieval(Retriever(), QRELS, QUERIES, **options)
    blocks = evaluate_retrieval(Retriever(query_block=3), QRELS, QUERIES, **options)
    # Equal to the last digit, mean and per query, in the same key order.
    assert list(blocks.metrics.items()) == list(memory.metrics.items())
    assert list(blocks.per_query) == list(memory.per_query) == ["q1", "q2", "q3", "q4", "q5", "q7"]
    for query_id, values in memory.per_query.items():
        assert list(blocks.per_query[query_id].items()) == list(values.items())
    assert (blocks.n_queries, blocks.k_values, blocks.missing_texts) == (6, (1, 3, 10), ("q8",))
    assert blocks.rank_scores == memory.rank_scores == ()
    assert blocks.run == memory.run
    # q4's tie: scored in the retriever's order (the unjudged d0 first), which trec_eval's doc id
    # order would swap.
    assert blocks.per_query["q4"]["mrr@1"] == 0.0
    assert blocks.per_query["q7"]["precision@1"] == 0.0  # d1 before the tied d8, as retrieved
    assert blocks.per_query["q5"] == dict.fromkeys(memory.per_query["q5"], 0.0)
    # q1 .. q7 in trec_eval's order, summed as it sums them
    assert blocks.metrics["mrr@10"] == (1 + 1 / 2 + (1 if ignore_identical_ids else 1 / 2) + 1 / 2 + 0 + 1 / 2) / 6


def test_each_block_is_scored_from_its_rankings_and_its_run_goes_to_a_file(
    windows: list[tuple[str, list[bytes]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ef.evaluation import _retrieval

    scored_blocks: list[list[str]] = []
    real_scored = _retrieval._scored

    def spy(rankings: Any, *args: Any) -> Any:
        scored_blocks.append(list(rankings))
        return real_scored(rankings, *args)

    monkeypatch.setattr(_retrieval, "_scored", spy)
    retriever = Retriever(query_block=4)
    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 10))
    assert retriever.batches == [["text 1", "text 2", "text 3", "text 4"], ["text 5", "text 7"]]
    # Each block scored straight from its rankings as it comes: no file is read to score them.
    assert scored_blocks == [["q1", "q2", "q3", "q4"], ["q5", "q7"]]
    assert windows == []
    # The report's run is the retriever's scores, in the scratch folder's one file, read when asked for.
    assert isinstance(report.run, _retrieval._RunOnDisk)
    folder = Path(report.run._path).parent
    assert sorted(p.name for p in folder.iterdir()) == ["run.trec"]
    assert report.run["q4"] == {"d0": 0.5, "d7": 0.5, "d2": 0.4, "d6": 0.3}
    assert list(report.run["q4"]) == ["d7", "d0", "d2", "d6"]  # trec_eval's order of the tie: doc id descending
    assert report.run["q5"] == {}
    assert report.ranking("q1") == ["d2", "d9", "d1"]
    del report
    gc.collect()
    assert not folder.exists()  # the scratch folder goes with the report


def test_a_retriever_without_a_query_block_is_scored_in_memory(windows: list[tuple[str, list[bytes]]]) -> None:
    retriever = Retriever()
    report = evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), metrics=("mrr",))
    assert retriever.batches == [["text 1", "text 2", "text 3", "text 4", "text 5", "text 7"]]
    assert windows == []
    assert type(report.run) is dict


@pytest.mark.parametrize("name", ["run.trec", "run.trec.gz"])
def test_run_path_of_blocks_is_the_in_memory_run_file(tmp_path: Path, name: str) -> None:
    evaluate_retrieval(Retriever(), QRELS, QUERIES, k_values=(10,), run_path=tmp_path / f"memory-{name}")
    evaluate_retrieval(Retriever(query_block=2), QRELS, QUERIES, k_values=(10,), run_path=tmp_path / f"blocks-{name}")

    def text(path: Path) -> str:
        data = path.read_bytes()
        return (gzip.decompress(data) if name.endswith(".gz") else data).decode()

    assert text(tmp_path / f"blocks-{name}") == text(tmp_path / f"memory-{name}")
    assert text(tmp_path / f"blocks-{name}").splitlines()[:2] == ["q1 Q0 d2 1 0.9 ef", "q1 Q0 d9 2 0.7 ef"]
    assert read_run(tmp_path / f"blocks-{name}")["q4"] == {"d0": 0.5, "d7": 0.5, "d2": 0.4, "d6": 0.3}


def test_unscored_results_are_scored_by_rank_in_blocks_too(windows: list[tuple[str, list[bytes]]]) -> None:
    class Ids(Retriever):
        def search_many(self, queries: Sequence[str], *, limit: int = 10) -> list[list[Any]]:
            return [[hit.segment.source_id for hit in hits] for hits in super().search_many(queries, limit=limit)]

    memory = evaluate_retrieval(Ids(), QRELS, QUERIES, k_values=(1, 3))
    blocks = evaluate_retrieval(Ids(query_block=5), QRELS, QUERIES, k_values=(1, 3))
    assert blocks.metrics == memory.metrics
    assert blocks.per_query == memory.per_query
    assert blocks.rank_scores == memory.rank_scores == ("q1", "q2", "q3", "q4", "q7")  # q5 has no result
    assert blocks.run["q1"] == {"d2": 2.0, "d9": 1.0}  # 3 hits asked for, one a second segment of d2


def test_a_mixed_ranking_cannot_be_written_in_blocks_either(tmp_path: Path) -> None:
    class Mixed(Retriever):
        def search_many(self, queries: Sequence[str], *, limit: int = 10) -> list[list[Any]]:
            return [[*hits, "d8"] for hits in super().search_many(queries, limit=limit)]

    message = (
        "cannot write 'run_path': the retriever returned scored and unscored results for query 'q1'; "
        "return all SearchHits or none"
    )
    with pytest.raises(ValueError, match=f"^{message}$"):
        evaluate_retrieval(Mixed(query_block=2), QRELS, QUERIES, k_values=(1,), run_path=tmp_path / "run")
    assert not (tmp_path / "run").exists()
    # Without a run file to write there is nothing to refuse: scored by rank, as in memory.
    assert evaluate_retrieval(Mixed(query_block=2), QRELS, QUERIES).metrics == evaluate_retrieval(
        Mixed(), QRELS, QUERIES
    ).metrics


def test_ids_a_run_file_cannot_hold_score_as_in_memory(tmp_path: Path) -> None:
    # Whitespace, a leading '#', '%', a lone surrogate: the scratch files hold them percent-encoded.
    odd = ["d 1", "#d2", "50%", "d\ud800", "d%20"]
    qrels = {"q 1": {"d 1": 2.0, "50%": 1.0, "d%20": 1.0}, "#q2": {"#d2": 1.0, "d\ud800": 2.0}}
    queries = {"q 1": "first", "#q2": "second"}

    class Odd:
        def __init__(self, query_block: int | None = None) -> None:
            if query_block is not None:
                self.query_block = query_block

        def search_many(self, texts: Sequence[str], *, limit: int = 10) -> list[list[SearchHit]]:
            ranked = {"first": [odd[4], odd[0], odd[2], odd[1]], "second": [odd[3], odd[1], odd[0]]}
            scores = [3.0, 2.0, 2.0, 1.0]
            return [SearchHit.ranked([_seg(d, 0) for d in ranked[t]], scores[: len(ranked[t])]) for t in texts]

    memory = evaluate_retrieval(Odd(), qrels, queries, k_values=(1, 3))
    blocks = evaluate_retrieval(Odd(query_block=1), qrels, queries, k_values=(1, 3))
    assert blocks.per_query == memory.per_query
    assert list(blocks.per_query) == ["q 1", "#q2"]
    assert blocks.metrics == memory.metrics
    assert blocks.per_query["q 1"]["ndcg@1"] == 0.5  # d%20 first, grade 1 of the best 2: matched as judged
    assert dict(blocks.run) == {q: dict(docs) for q, docs in memory.run.items()}
    # A run file of the user's holds the ids themselves: refused, as the in-memory path refuses them.
    errors = []
    for retriever in (Odd(), Odd(query_block=1)):
        with pytest.raises(ValueError) as caught:
            evaluate_retrieval(retriever, qrels, queries, run_path=tmp_path / "run.txt")
        errors.append(str(caught.value))
    assert errors[0] == errors[1] == "a query id must not hold a space, which separates TREC columns (got 'q 1')"
    assert not (tmp_path / "run.txt").exists()
    # Ids a line holds, '%' included, go into the user's file and the report's run as themselves.
    safe = {"q1": {"d%20": 1.0, "50%": 2.0}}
    odd[:] = ["d%20", "50%", "x", "y", "z"]
    written = evaluate_retrieval(Odd(query_block=1), safe, {"q1": "first"}, run_path=tmp_path / "run.txt")
    assert dict(written.run["q1"]) == {"z": 3.0, "d%20": 2.0, "x": 2.0, "50%": 1.0}
    assert read_run(tmp_path / "run.txt") == {"q1": {"z": 3.0, "d%20": 2.0, "x": 2.0, "50%": 1.0}}


@pytest.mark.parametrize(
    ("block", "error", "message"),
    [
        (0, ValueError, "'retriever.query_block' must be a positive integer (got 0)"),
        ("2", TypeError, "'retriever.query_block' must be a positive integer (got '2')"),
        (True, TypeError, "'retriever.query_block' must be a positive integer (got True)"),
    ],
)
def test_a_bad_query_block_is_refused(block: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        evaluate_retrieval(Retriever(query_block=block), QRELS, QUERIES)
    assert str(caught.value) == message
