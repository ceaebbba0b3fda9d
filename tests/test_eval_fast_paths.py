"""evaluate_run's fast paths equal the slow ones: the input checks done in C passes, the hit table
that skips its sort when the hits come in order, the per-query dicts built by zip."""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import pytest

from ef.evaluation import evaluate_run
from ef.measures import parse_measure
from ef.measures.bulk import HitTable, _in_order

MEASURES = ["map", "ndcg@10", "P_5", "mrr", "num_ret", "num_rel_ret", "bpref", "infAP"]


class _Str(str):
    """A str subclass: not the exact type the C passes look for, still a str id."""


def _run_and_qrels(n_queries: int = 30) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(7)
    run = {f"q{q}": {f"d{d}": float(rng.randint(0, 5)) for d in range(40)} for q in range(n_queries)}
    qrels = {f"q{q}": {f"d{d}": rng.randint(-1, 2) for d in rng.sample(range(60), 8)} for q in range(n_queries)}
    return run, qrels


def test_plain_dicts_and_other_mappings_of_the_same_data_give_the_same_report() -> None:
    run, qrels = _run_and_qrels()
    plain = evaluate_run(run, qrels, MEASURES)
    # Mapping proxies and str subclasses miss the C passes: the query-by-query loop accepts them.
    other_run: dict[str, Mapping[str, float]] = {
        _Str(q): MappingProxyType({_Str(d): s for d, s in docs.items()}) for q, docs in run.items()
    }
    other_qrels: Mapping[str, Mapping[str, int]] = MappingProxyType(
        {q: MappingProxyType({_Str(d): g for d, g in j.items()}) for q, j in qrels.items()}
    )
    other = evaluate_run(other_run, other_qrels, MEASURES)
    assert repr(other.metrics) == repr(plain.metrics)
    assert repr(other.per_query) == repr(plain.per_query)


@pytest.mark.parametrize(
    ("where", "bad", "message"),
    [
        # Not the first doc id of its query: the engine meets it, and names it the same way.
        ("run", lambda v: {**v, "q9": {**v["q9"], 5: 1.0}}, "'run['q9']' has a doc id that is not a str: 5 (int)"),
        ("run", lambda v: {**v, "q9": {7: 1.0, **v["q9"]}}, "'run['q9']' has a doc id that is not a str: 7 (int)"),
        # A query the qrels do not judge: only the check sees it.
        ("run", lambda v: {**v, "zz": {7: 1.0, "d1": 1.0}}, "'run['zz']' has a doc id that is not a str: 7 (int)"),
        ("run", lambda v: {**v, "q9": [1.0]}, "'run['q9']' must be a mapping of doc id -> score (got list)"),
        ("run", lambda v: {**v, 3: {"d1": 1.0}}, "'run' has a query id that is not a str: 3 (int)"),
        ("qrels", lambda v: {**v, "q9": {**v["q9"], 5: 1}}, "'qrels['q9']' has a doc id that is not a str: 5 (int)"),
        ("qrels", lambda v: {**v, "q9": None}, "'qrels['q9']' must be a mapping of doc id -> grade (got NoneType)"),
        ("qrels", lambda v: {**v, b"q": {"d1": 1}}, "'qrels' has a query id that is not a str: b'q' (bytes)"),
    ],
)
def test_a_fault_deep_in_a_dict_of_dicts_is_named_as_the_loop_names_it(where: str, bad: object, message: str) -> None:
    run, qrels = _run_and_qrels()
    # A fault in one query after 29 good ones, and after an empty ranking the C pass reads past.
    run["q3"] = {}
    if where == "run":
        run = bad(run)  # type: ignore[operator]
    else:
        qrels = bad(qrels)  # type: ignore[operator]
    with pytest.raises(TypeError) as info:
        evaluate_run(run, qrels, ["map"])
    assert str(info.value) == message


def _hits(n_queries: int = 50) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(3)
    query = np.repeat(np.arange(n_queries, dtype=np.int64), 6)
    rank = np.concatenate([np.sort(rng.choice(30, 6, replace=False)) for _ in range(n_queries)]).astype(np.int64)
    grade = rng.integers(-1, 3, len(query)).astype(np.float64)
    return query, rank, grade


def _table(query: np.ndarray, rank: np.ndarray, grade: np.ndarray) -> HitTable:
    n = int(query.max()) + 1
    judged_query = np.repeat(np.arange(n, dtype=np.int64), 8)
    judged_grade = np.tile(np.array([2.0, 1.0, 1.0, 0.0, -1.0, 2.0, 0.0, 1.0]), n)
    return HitTable(np.full(n, 30, dtype=np.int64), query, rank, grade, judged_query, judged_grade, 1.0)


def test_a_table_of_hits_in_order_equals_the_table_of_the_same_hits_shuffled() -> None:
    query, rank, grade = _hits()
    shuffle = np.random.default_rng(5).permutation(len(query))
    assert _in_order(query, rank, grade)
    assert not _in_order(query[shuffle], rank[shuffle], grade[shuffle])
    ordered = _table(query, rank, grade)  # in (query, rank) order: no sort
    shuffled = _table(query[shuffle], rank[shuffle], grade[shuffle])  # sorted by lexsort
    for name in ("hit_query", "hit_rank", "hit_grade", "unjudged_query", "unjudged_rank", "num_rel", "num_nonrel"):
        assert getattr(ordered, name).tolist() == getattr(shuffled, name).tolist(), name
        assert getattr(ordered, name).dtype == getattr(shuffled, name).dtype, name
    for name in MEASURES:
        measure = parse_measure(name)
        assert measure.evaluate(ordered).tolist() == measure.evaluate(shuffled).tolist(), name


def test_a_table_in_order_holds_copies_of_its_arrays() -> None:
    query, rank, grade = _hits()
    grade = np.abs(grade)  # nothing unjudged: no array is filtered (and so copied) on that account
    assert _in_order(query, rank, grade)
    table = _table(query, rank, grade)
    kept = grade >= 0
    expected = query[kept].tolist(), rank[kept].tolist(), grade[kept].tolist()
    query[:], rank[:], grade[:] = 0, 0, 5.0
    assert (table.hit_query.tolist(), table.hit_rank.tolist(), table.hit_grade.tolist()) == expected


def test_per_query_is_a_dict_of_dicts_in_query_order_with_counts_as_ints() -> None:
    run, qrels = _run_and_qrels(5)
    report = evaluate_run(run, qrels, ["num_ret", "map", "AP"], missing="zero")
    assert type(report.per_query) is dict
    assert list(report.per_query) == sorted(qrels)
    for query_id, values in report.per_query.items():
        assert type(values) is dict
        assert list(values) == ["num_ret", "map", "AP"]
        assert type(values["num_ret"]) is int
        assert values["num_ret"] == len(run[query_id])
        assert values["map"] == values["AP"]
        assert type(values["map"]) is float
        single = evaluate_run({query_id: run[query_id]}, {query_id: qrels[query_id]}, ["map"])
        assert values["map"] == single.metrics["map"]
    assert isinstance(report.per_query, Mapping)
