"""ef.evaluation against its contract (spec/ef.evaluation.md) on inputs the examples do not show."""

from __future__ import annotations

import pytest

from ef.evaluation import RetrievalEvalReport, as_ragas_dataset, evaluate_retrieval

QRELS = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
QUERIES = {"q1": "alpha", "q2": "beta"}
RANKINGS = {"alpha": ["d1", "d2"], "beta": ["d1", "d2"]}


def test_a_plain_query_to_results_callable_is_a_retriever() -> None:
    # The spec: "retriever – ... or any callable query -> ranked results".
    report = evaluate_retrieval(lambda query: RANKINGS[query], QRELS, QUERIES, k_values=(1, 2))
    assert (report.metrics["recall@2"], report.metrics["recall@1"], report.n_queries) == (1.0, 0.5, 2)


def test_a_callable_that_takes_limit_still_gets_it() -> None:
    limits: list[int] = []

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        limits.append(limit)
        return RANKINGS[query][:limit]

    evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1, 2))
    assert limits == [2, 2]


def test_a_callable_that_takes_limit_by_position_or_kwargs_gets_it() -> None:
    seen: list[object] = []

    def by_position(query: str, limit: int) -> list[str]:
        seen.append(limit)
        return RANKINGS[query]

    def by_kwargs(query: str, **options: object) -> list[str]:
        seen.append(options)
        return RANKINGS[query]

    evaluate_retrieval(by_position, QRELS, QUERIES, k_values=(2,))
    evaluate_retrieval(by_kwargs, QRELS, QUERIES, k_values=(2,))
    assert seen == [2, 2, {"limit": 2}, {"limit": 2}]


@pytest.mark.parametrize("k", ["10", True, 1.0, None])
def test_primary_at_refuses_a_cutoff_that_is_not_an_integer(k: object) -> None:
    report = RetrievalEvalReport(metrics={"ndcg@10": 0.5, "ndcg@1": 0.25}, per_query={}, n_queries=1, k_values=(1, 10))
    with pytest.raises(TypeError, match=rf"^'k' must be a positive integer \(got {k!r}\)$"):
        report.primary_at(k)  # type: ignore[arg-type]


def test_primary_at_is_none_for_a_cutoff_not_computed() -> None:
    report = RetrievalEvalReport(metrics={"ndcg@10": 0.5}, per_query={}, n_queries=1, k_values=(10,))
    assert (report.primary_at(10), report.primary_at(5)) == (0.5, None)


@pytest.mark.parametrize(("samples", "kind"), [(None, "NoneType"), (3, "int")])
def test_as_ragas_dataset_names_samples_that_are_not_iterable(samples: object, kind: str) -> None:
    pytest.importorskip("ragas")
    with pytest.raises(
        TypeError,
        match=rf"^'samples' must be an iterable of samples \(mappings of RagSample fields\) "
        rf"\(got {kind}\)$",
    ):
        as_ragas_dataset(samples)  # type: ignore[arg-type]


SAMPLES = [
    {
        "user_input": "capital of France?",
        "response": "Paris",
        "reference": "Paris",
        "retrieved_contexts": ["Paris is the capital of France."],
    },
    {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
]


def test_evaluate_rag_says_how_to_pass_a_dataframe() -> None:
    # Iterating a DataFrame gives its column names: the error named samples[0] a str.
    pd = pytest.importorskip("pandas")
    from ef.evaluation import evaluate_rag

    frame = pd.DataFrame(SAMPLES)
    with pytest.raises(
        TypeError,
        match=r"^'samples' is a DataFrame, and iterating one gives its column names, not its "
        r"rows: pass samples\.to_dict\('records'\) \(pandas\) or samples\.to_dicts\(\) \(polars\)$",
    ):
        evaluate_rag(frame)
    assert evaluate_rag(frame.to_dict("records")).metrics["exact_match"] == 0.5


def test_as_ragas_dataset_says_how_to_pass_a_dataframe() -> None:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("ragas")
    with pytest.raises(TypeError, match=r"^'samples' is a DataFrame, and iterating one gives its column names"):
        as_ragas_dataset(pd.DataFrame(SAMPLES))
