"""evaluate_run: hand-computed values, options, errors, and parity with pytrec_eval and ef's per-query functions."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import (
    RunEvalReport,
    average_precision,
    evaluate_run,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ef.trec import write_qrels, write_run

RUN = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}, "q2": {"x": 1.0, "y": 1.0}, "q9": {"a": 1.0}}
QRELS = {"q1": {"a": 0, "b": 2, "d": 1, "e": 1}, "q2": {"x": 1}, "q3": {"z": 1}}


# --- hand-computed values --------------------------------------------------------------------


def test_hand_computed_values() -> None:
    report = evaluate_run(
        RUN,
        QRELS,
        ["map", "mrr", "precision@2", "recall@4", "Rprec", "bpref", "num_rel", "num_ret", "num_q"],
        missing="skip",
    )
    q1 = report.per_query["q1"]
    # q1 ranks a(0) b(1,rel) c d(3,rel); R = 3 (b, d, e); judged non-relevant: a.
    assert q1["map"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert (q1["mrr"], q1["precision@2"], q1["recall@4"], q1["Rprec"]) == (0.5, 0.5, 2 / 3, 1 / 3)
    assert q1["bpref"] == pytest.approx((1 - 1 / 1) + (1 - 1 / 1) / 3)  # a is above both relevant
    # q2: x and y tie; ties go to the greater doc id, so y ranks first and x second.
    assert report.per_query["q2"]["mrr"] == 0.5
    assert (report.metrics["num_rel"], report.metrics["num_ret"], report.metrics["num_q"]) == (4, 6, 2)
    assert report.n_queries == 2
    assert set(report.per_query) == {"q1", "q2"}


def test_ndcg_uses_grades_as_gains() -> None:
    report = evaluate_run({"q": {"a": 2.0, "b": 1.0}}, {"q": {"a": 1, "b": 3}}, ["ndcg", "ndcg@1"])
    ideal = 3 + 1 / math.log2(3)
    assert report.metrics["ndcg"] == pytest.approx((1 + 3 / math.log2(3)) / ideal)
    assert report.metrics["ndcg@1"] == pytest.approx(1 / 3)


def test_missing_zero_counts_the_query_and_skip_leaves_it_out() -> None:
    zero = evaluate_run(RUN, QRELS, ["mrr", "num_q", "num_rel"])
    skip = evaluate_run(RUN, QRELS, ["mrr", "num_q", "num_rel"], missing="skip")
    assert zero.metrics == {"mrr": pytest.approx(1 / 3), "num_q": 3, "num_rel": 5}
    assert skip.metrics == {"mrr": 0.5, "num_q": 2, "num_rel": 4}
    assert zero.per_query["q3"] == {"mrr": 0.0, "num_q": 1, "num_rel": 1}


def test_relevance_level_and_max_docs() -> None:
    level2 = evaluate_run(RUN, QRELS, ["num_rel", "map"], relevance_level=2, missing="skip")
    assert level2.per_query["q1"] == {"num_rel": 1, "map": 0.5}
    top2 = evaluate_run(RUN, QRELS, ["num_ret", "num_rel_ret", "recall@10"], max_docs=2, missing="skip")
    assert top2.per_query["q1"] == {"num_ret": 2, "num_rel_ret": 1, "recall@10": 1 / 3}


def test_gm_map_is_the_geometric_mean_of_floored_average_precision() -> None:
    report = evaluate_run(RUN, QRELS, ["gm_map", "map"])
    aps = [report.per_query[q]["map"] for q in ("q1", "q2", "q3")]
    assert [report.per_query[q]["gm_map"] for q in ("q1", "q2", "q3")] == aps
    assert report.metrics["gm_map"] == pytest.approx(math.exp(sum(math.log(max(a, 1e-5)) for a in aps) / 3))


def test_keys_are_the_names_as_given_and_the_report_is_frozen() -> None:
    report = evaluate_run(RUN, QRELS, ["ndcg@10", "ndcg_cut_10", "P_5", "hit_rate@1"])
    assert list(report.metrics) == ["ndcg@10", "ndcg_cut_10", "P_5", "hit_rate@1"]
    assert report.metrics["ndcg@10"] == report.metrics["ndcg_cut_10"]
    with pytest.raises(AttributeError):
        report.n_queries = 1  # type: ignore[misc]
    assert report.to_dict()["per_query"]["q3"] == {"ndcg@10": 0.0, "ndcg_cut_10": 0.0, "P_5": 0.0, "hit_rate@1": 0.0}


def test_report_text() -> None:
    report = evaluate_run(RUN, QRELS, ["map", "num_rel"], missing="skip")
    assert str(report) == (
        "Run evaluation over 2 queries\nmeasure   value\n-------  ------\nmap      0.4167\nnum_rel       4"
    )
    assert isinstance(report, RunEvalReport)


def test_files_and_mappings_give_the_same_report(tmp_path: Path) -> None:
    write_run(tmp_path / "run.txt", RUN)
    write_qrels(tmp_path / "qrels.txt", QRELS)
    names = ["map", "ndcg", "bpref", "iprec_at_recall_0.50", "num_rel_ret"]
    assert evaluate_run(tmp_path / "run.txt", str(tmp_path / "qrels.txt"), names) == evaluate_run(RUN, QRELS, names)


def test_iprec_rounds_like_trec_eval_10() -> None:
    # R = 5: recall 0.25 needs lround(1.25) = 1 relevant doc (trec_eval 9 needed int(1.25 + 0.9) = 2).
    run, qrels = {"q": {"a": 1.0}}, {"q": dict.fromkeys("abcde", 1)}
    report = evaluate_run(run, qrels, ["iprec_at_recall_0.25", "iprec_at_recall_0.30", "iprec_at_recall_0.00"])
    assert report.metrics == {"iprec_at_recall_0.25": 1.0, "iprec_at_recall_0.30": 0.0, "iprec_at_recall_0.00": 1.0}


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"measures": ["ndgc@10"]}, ValueError,
            "measure 'ndgc@10': unknown measure; did you mean 'ndcg@10' or 'dcg@10'?",
        ),
        ({"measures": "map"}, TypeError, "'measures' must be a sequence of measure names, not a str (got 'map')"),
        ({"measures": []}, ValueError, "'measures' must name at least one measure"),
        ({"measures": ["map", "map"]}, ValueError, "'measures' lists 'map' twice"),
        ({"missing": "ignore"}, ValueError, "'missing' must be one of 'zero', 'skip' (got 'ignore')"),
        ({"relevance_level": 0}, ValueError, "'relevance_level' must be a finite number > 0 (got 0)"),
        ({"max_docs": 0}, ValueError, "'max_docs' must be a positive integer or None (got 0)"),
        ({"max_docs": 1.5}, TypeError, "'max_docs' must be a positive integer or None (got 1.5)"),
        ({"relevance_level": "1"}, TypeError, "'relevance_level' must be a finite number > 0 (got '1')"),
        ({"missing": 1}, TypeError, "'missing' must be one of 'zero', 'skip' (got 1)"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type[Exception], message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(error) as info:
        evaluate_run(RUN, QRELS, **kwargs)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        ({"q": {"a": float("nan")}}, {"q": {"a": 1}}, "run: score of doc 'a' in query 'q' is NaN"),
        ({"q": {"a": "high"}}, {"q": {"a": 1}}, "run: score of doc 'a' in query 'q' is not a number (got 'high')"),
        ({"q": {"a": "1.5"}}, {"q": {"a": 1}}, "run: score of doc 'a' in query 'q' is not a number (got '1.5')"),
        ({"q": {"a": 1.0}}, {"q": {"a": "2"}}, "qrels: a grade of query 'q' is not a number (got '2')"),
        ({"q": {"a": 1.0}}, {"q": {"a": float("nan")}}, "qrels: a grade of query 'q' is NaN"),
        ({"q": {"a": 1.0}}, {"q": {"a": None}}, "qrels: a grade of query 'q' is not a number (got None)"),
        ({"p": {"a": 1.0}}, {}, "no query to evaluate: 'qrels' is empty"),
    ],
)
def test_bad_values_are_errors_naming_the_query(run: dict, qrels: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError) as info:
        evaluate_run(run, qrels, ["map"])
    assert str(info.value) == message


def test_no_judged_query_in_the_run_with_skip() -> None:
    with pytest.raises(
        ValueError, match=r"^no query to evaluate: no query of the run is judged in 'qrels' \(missing='skip'\)$"
    ):
        evaluate_run({"p": {"a": 1.0}}, {"q": {"a": 1}}, ["map"], missing="skip")


def test_bad_input_types() -> None:
    with pytest.raises(TypeError, match=r"^'run' must be a mapping or a path \(got list\)$"):
        evaluate_run([], QRELS)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'qrels' must be a mapping or a path \(got int\)$"):
        evaluate_run(RUN, 3)  # type: ignore[arg-type]


# --- parity with pytrec_eval -----------------------------------------------------------------

PYTREC = {
    "P.1,5": ["P_1", "P_5"],
    "recall.3,10": ["recall_3", "recall_10"],
    "ndcg": ["ndcg"],
    "ndcg_cut.3,10": ["ndcg_cut_3", "ndcg_cut_10"],
    "map": ["map"],
    "map_cut.5": ["map_cut_5"],
    "recip_rank": ["recip_rank"],
    "Rprec": ["Rprec"],
    "bpref": ["bpref"],
    "success.1,3": ["success_1", "success_3"],
    # iprec_at_recall is left out: pytrec_eval (trec_eval 9) turns a recall level into a number of
    # relevant docs by adding 0.9 and truncating, trec_eval 10.0 rounds (see test_iprec_rounds_like_trec_eval_10).
    "num_rel": ["num_rel"],
    "num_ret": ["num_ret"],
    "num_rel_ret": ["num_rel_ret"],
}
NAMES = [name for names in PYTREC.values() for name in names]

docs = st.sampled_from([f"d{i}" for i in range(12)])
# Quarter steps are exact in float32, as pytrec_eval compares; few values, so ties are common.
scores = st.integers(-8, 8).map(lambda i: i / 4)
grades = st.integers(-1, 3)
query_ids = st.sampled_from(["q1", "q2", "q3", "q10"])
rankings = st.dictionaries(docs, scores, min_size=1, max_size=12)
# At least one grade >= 0 per query: pytrec_eval's ndcg_cut loops forever on a query whose every
# judgement is negative (its ideal-gain loop indexes rel_levels[-1]).
judgements = st.dictionaries(docs, grades, min_size=1, max_size=8).filter(lambda j: max(j.values()) >= 0)


@settings(max_examples=150, deadline=None)
@given(
    run=st.dictionaries(query_ids, rankings, min_size=1, max_size=4),
    qrels=st.dictionaries(query_ids, judgements, min_size=1, max_size=4),
    level=st.sampled_from([1, 2]),
)
def test_equals_pytrec_eval(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]], level: int) -> None:
    evaluated = sorted(set(run) & set(qrels))
    if not evaluated:
        return
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC) | {"gm_map"}, relevance_level=level).evaluate(run)
    report = evaluate_run(run, qrels, [*NAMES, "gm_map"], missing="skip", relevance_level=level)
    assert sorted(report.per_query) == sorted(expected) == evaluated
    for query_id in evaluated:
        for name in NAMES:
            assert report.per_query[query_id][name] == pytest.approx(expected[query_id][name], abs=1e-12), (
                query_id,
                name,
            )
    for name in NAMES:
        mean = sum(expected[q][name] for q in evaluated) / len(evaluated)
        if name.startswith("num_"):
            mean *= len(evaluated)  # trec_eval's summary of a count is its sum
        assert report.metrics[name] == pytest.approx(mean, abs=1e-12), name
    geometric = math.exp(sum(expected[q]["gm_map"] for q in evaluated) / len(evaluated))
    assert report.metrics["gm_map"] == pytest.approx(geometric, rel=1e-12)


# Tie-heavy distributions real runs have (LLM/reranker integers, one decimal, all tied), on rankings
# long enough for big tie groups, with ids of mixed widths whose byte order is not numeric order.
# Every score is exact in float32, so pytrec_eval (float32 comparisons) ranks as ef does.
_TIE_SCORES = {
    "integers": st.integers(0, 10).map(float),
    "one decimal": st.integers(0, 30).map(lambda i: float(np.float32(i / 10))),
    "all tied": st.just(1.0),
    "two values": st.sampled_from([0.0, 1.0]),  # big groups that are not the whole query
}
_wide_docs = st.sampled_from([f"d{i}" for i in range(40)] + ["dxxxxxxx", "dxxxxxxxx", "dxxxxxxxxxxxxxxxxx", "é", "z"])


def _one_width_docs(data: st.DataObject) -> st.SearchStrategy[str]:
    """Ids of one byte width (the vectorised comparison's case), sharing a prefix or not, short or
    longer than a word once the prefix is dropped, with multi-byte UTF-8 among them."""
    prefix = data.draw(st.sampled_from(["", "doc00", "é", "MED-", "urn:uuid:"]))
    width = data.draw(st.sampled_from([1, 2, 7, 8, 9, 17]))
    alphabet = data.draw(st.sampled_from(["01", "0a9zZ~", "éü"]))  # "éü": two bytes each, one width still
    return st.text(alphabet, min_size=width, max_size=width).map(lambda tail: prefix + tail)


@pytest.mark.parametrize("ids", ["mixed widths", "one width"])
@pytest.mark.parametrize("distribution", sorted(_TIE_SCORES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_tie_heavy_runs_equal_pytrec_eval(distribution: str, ids: str, data: st.DataObject) -> None:
    # Judged and ranked docs are drawn from one pool, so judged docs are found and tie.
    pool = data.draw(
        st.lists(_wide_docs if ids == "mixed widths" else _one_width_docs(data), min_size=2, max_size=60, unique=True)
    )
    docs = st.sampled_from(pool)
    run = data.draw(
        st.dictionaries(
            query_ids, st.dictionaries(docs, _TIE_SCORES[distribution], min_size=1, max_size=45), min_size=1, max_size=4
        )
    )
    qrels = data.draw(
        st.dictionaries(
            query_ids,
            st.dictionaries(docs, grades, min_size=1, max_size=10).filter(lambda j: max(j.values()) >= 0),
            min_size=1,
            max_size=4,
        )
    )
    evaluated = sorted(set(run) & set(qrels))
    if not evaluated:
        return
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    report = evaluate_run(run, qrels, NAMES, missing="skip")
    for query_id in evaluated:
        for name in NAMES:
            assert report.per_query[query_id][name] == pytest.approx(expected[query_id][name], abs=1e-12), (
                query_id,
                name,
            )


@settings(max_examples=60, deadline=None)
@given(
    run=st.dictionaries(query_ids, rankings, min_size=1, max_size=4),
    qrels=st.dictionaries(query_ids, judgements, min_size=1, max_size=4),
    missing=st.sampled_from(["zero", "skip"]),
    max_docs=st.sampled_from([None, 1, 3]),
)
def test_run_file_and_mapping_agree(
    tmp_path_factory: pytest.TempPathFactory,
    run: dict[str, dict[str, float]],
    qrels: dict[str, dict[str, int]],
    missing: str,
    max_docs: int | None,
) -> None:
    if missing == "skip" and not set(run) & set(qrels):
        return
    path = tmp_path_factory.mktemp("agree") / "run.txt"
    write_run(path, run)
    names = [*NAMES, "gm_map", "mrr@2"]
    from_file = evaluate_run(path, qrels, names, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]
    assert from_file == evaluate_run(run, qrels, names, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]


# --- the same numbers as ef's per-query functions --------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    ranked=st.lists(docs, unique=True, max_size=12),
    judged=st.dictionaries(docs, st.integers(0, 3), min_size=1, max_size=8),
    k=st.integers(1, 14),
)
def test_strictly_decreasing_scores_equal_the_per_query_functions(
    ranked: list[str], judged: dict[str, int], k: int
) -> None:
    run = {"q": {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)}}
    values = evaluate_run(
        run, {"q": judged}, [f"ndcg@{k}", f"recall@{k}", f"precision@{k}", "mrr", f"mrr@{k}", "map", f"map@{k}"]
    ).per_query["q"]
    assert values == pytest.approx(
        {
            f"ndcg@{k}": ndcg_at_k(ranked, judged, k),
            f"recall@{k}": recall_at_k(ranked, judged, k),
            f"precision@{k}": precision_at_k(ranked, judged, k),
            "mrr": reciprocal_rank(ranked, judged),
            f"mrr@{k}": reciprocal_rank(ranked, judged, k),
            "map": average_precision(ranked, judged),
            f"map@{k}": average_precision(ranked, judged, k),
        },
        abs=1e-15,
    )


def test_large_random_run_matches_pytrec_eval_means() -> None:
    rng = np.random.default_rng(7)
    run = {f"q{i}": {f"d{j}": float(np.float32(s)) for j, s in enumerate(rng.random(200))} for i in range(50)}
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 4)) for j in rng.choice(300, 20, replace=False)} for i in range(50)}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recall.100", "recip_rank"}).evaluate(run)
    report = evaluate_run(run, qrels, ["ndcg@10", "map", "recall@100", "mrr"])
    for name, key in [("ndcg@10", "ndcg_cut_10"), ("map", "map"), ("recall@100", "recall_100"), ("mrr", "recip_rank")]:
        assert report.metrics[name] == pytest.approx(np.mean([v[key] for v in expected.values()]), abs=1e-12)


def test_evaluate_retrieval_saves_a_run_that_evaluate_run_scores_the_same(tmp_path: Path) -> None:
    from ef.evaluation import evaluate_retrieval

    qrels = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}}
    rankings = {"alpha": ["d9", "d2", "d1"], "beta": ["d3", "d8"]}

    def retriever(query: str, *, limit: int = 10) -> list[str]:
        return rankings[query][:limit]

    path = tmp_path / "run.txt"
    report = evaluate_retrieval(retriever, qrels, {"q1": "alpha", "q2": "beta"}, k_values=(1, 3), run_path=path)
    assert path.read_text().splitlines()[0] == "q1 Q0 d9 1 3.0 ef"
    bulk = evaluate_run(path, qrels, ["ndcg@3", "recall@1", "mrr@3", "map@3"])
    for name in ["ndcg@3", "recall@1", "mrr@3", "map@3"]:
        assert bulk.metrics[name] == pytest.approx(report.metrics[name], abs=1e-15)


@pytest.mark.parametrize("query", ["q1", "q7"], ids=["judged", "not-judged"])
def test_duplicate_doc_in_a_run_file_is_an_error(tmp_path: Path, query: str) -> None:
    path = tmp_path / "run.txt"
    path.write_text(f"q1 Q0 a 1 2 r\n{query} Q0 b 2 1 r\nq2 Q0 a 1 1 r\n{query} Q0 b 3 0.5 r\n")
    with pytest.raises(ValueError) as info:
        evaluate_run(path, QRELS, ["map"])
    assert str(info.value) == f"{path}:4: doc id 'b' appears twice in query '{query}' (first at line 2)"


# --- regressions -----------------------------------------------------------------------------


def test_a_judged_doc_id_over_256_bytes_does_not_hide_the_others(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 a 1\nq2 0 " + "x" * 300 + " 1\nq2 0 b 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 1 r\nq2 Q0 b 1 1 r\n")
    expected = {"q1": {"map": 1.0, "num_rel_ret": 1}, "q2": {"map": 0.5, "num_rel_ret": 1}}
    assert evaluate_run(run, qrels, ["map", "num_rel_ret"]).per_query == expected
    as_dict = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    assert evaluate_run(as_dict, qrels, ["map", "num_rel_ret"]).per_query == expected


def test_dict_scores_tie_as_doubles() -> None:
    # 10**17 and 10**17 + 1 are the same double: a tie, broken by doc id descending ('b' first).
    run = {"q1": {"a": 10**17, "b": 10**17 + 1}}
    assert evaluate_run(run, {"q1": {"a": 1}}, ["mrr"]).metrics == {"mrr": 0.5}
    assert evaluate_run(run, {"q1": {"b": 1}}, ["mrr"]).metrics == {"mrr": 1.0}


@pytest.mark.parametrize(
    ("grade", "message"),
    [
        (float("inf"), "qrels: a grade of query 'q1' is not finite (got inf)"),
        (float("-inf"), "qrels: a grade of query 'q1' is not finite (got -inf)"),
        (np.float64("inf"), "qrels: a grade of query 'q1' is not finite (got np.float64(inf))"),
        (10**400, f"qrels: a grade of query 'q1' is not finite (got {10**400!r})"),
    ],
)
@pytest.mark.parametrize("as_file", [False, True], ids=["dict-run", "file-run"])
def test_non_finite_grades_are_rejected(tmp_path: Path, grade: float, message: str, as_file: bool) -> None:
    run: object = {"q1": {"a": 1.0}}
    if as_file:
        run = tmp_path / "run.txt"
        run.write_text("q1 Q0 a 1 1 r\n")
    with pytest.raises(ValueError) as info:
        evaluate_run(run, {"q1": {"a": grade}}, ["ndcg"])  # type: ignore[arg-type]
    assert str(info.value) == message


@pytest.mark.parametrize("as_file", [False, True], ids=["dict-run", "file-run"])
def test_many_ties_rank_by_doc_id_descending(tmp_path: Path, as_file: bool) -> None:
    # All 300 docs tie except one; a judged doc's rank is the docs scored above it plus the tied docs
    # with a greater id (byte-wise: "d99" > "d299" > "d100").
    docs = {f"d{i}": 1.0 for i in range(300)}
    docs["top"] = 2.0
    judged = {"d99": 1, "d299": 1, "d100": 1, "d0": 0, "top": 0}
    ids = sorted((d for d in docs if d != "top"), key=str.encode, reverse=True)
    ranks = sorted(1 + ids.index(d) for d in ("d99", "d299", "d100"))
    expected_map = sum((i + 1) / (r + 1) for i, r in enumerate(ranks)) / 3
    run: object = {"q": docs}
    if as_file:
        run = tmp_path / "run.txt"
        write_run(run, {"q": docs})
    report = evaluate_run(run, {"q": judged}, ["map", "mrr"])  # type: ignore[arg-type]
    assert report.metrics == {"map": expected_map, "mrr": 1 / (ranks[0] + 1)}
    assert ranks == [1, 78, 297]  # 0-based


def test_numpy_integers_are_accepted_for_relevance_level_and_max_docs() -> None:
    plain = evaluate_run(RUN, QRELS, ["map", "num_ret"], relevance_level=2, max_docs=2)
    numpy = evaluate_run(RUN, QRELS, ["map", "num_ret"], relevance_level=np.int64(2), max_docs=np.int32(2))
    assert numpy == plain
    assert plain.metrics["num_ret"] == 4  # q1 2, q2 2, q3 not in the run
    with pytest.raises(TypeError, match=r"^'max_docs' must be a positive integer or None \(got np.True_\)$"):
        evaluate_run(RUN, QRELS, ["map"], max_docs=np.True_)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'max_docs' must be a positive integer or None \(got np.float64\(2.0\)\)$"):
        evaluate_run(RUN, QRELS, ["map"], max_docs=np.float64(2))  # type: ignore[arg-type]


@pytest.mark.parametrize("as_file", [False, True], ids=["dict-run", "file-run"])
def test_bool_scores_and_grades_are_refused(tmp_path: Path, as_file: bool) -> None:
    with pytest.raises(ValueError) as info:
        evaluate_run({"q": {"a": 0.5, "b": True}}, {"q": {"a": 1}}, ["map"])
    assert str(info.value) == "run: score of doc 'b' in query 'q' is not a number (got True)"
    run: object = {"q": {"a": 1.0}}
    if as_file:
        run = tmp_path / "run.txt"
        run.write_text("q Q0 a 1 1 r\n")
    with pytest.raises(ValueError) as info:
        evaluate_run(run, {"q": {"a": 1, "b": False}}, ["map"])  # type: ignore[arg-type]
    assert str(info.value) == "qrels: a grade of query 'q' is not a number (got False)"
    # Scores of exactly 0 and 1 (what a bool would give) are fine when they are numbers.
    assert evaluate_run({"q": {"a": 1, "b": 0.0}}, {"q": {"b": 1}}, ["mrr"]).metrics == {"mrr": 0.5}


def test_a_query_judged_by_nothing_is_left_out_as_pytrec_eval_leaves_it_out() -> None:
    # {"q2": {}} (qrels filtered to grade > 0 give it) scored 0 and counted: ndcg@10 0.5, not pytrec_eval's 1.0.
    run = {"q1": {"d1": 1.0, "d9": 0.5}, "q2": {"d2": 1.0}}
    qrels: dict[str, dict[str, int]] = {"q1": {"d1": 1}, "q2": {}}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map"}).evaluate(run)
    for missing in ("zero", "skip"):
        report = evaluate_run(run, qrels, ["ndcg@10", "map", "num_q"], missing=missing)  # type: ignore[arg-type]
        assert (report.metrics, list(report.per_query)) == ({"ndcg@10": 1.0, "map": 1.0, "num_q": 1}, ["q1"])
    assert list(theirs) == ["q1"]
    assert theirs["q1"]["ndcg_cut_10"] == 1.0
    with pytest.raises(ValueError, match=r"^no query to evaluate: 'qrels' holds no judgement \(every query's "
                                         r"mapping is empty\)$"):
        evaluate_run(run, {"q1": {}, "q2": {}}, ["map"])
