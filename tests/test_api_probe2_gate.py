"""ef.gate.gate's arguments of the wrong type: each is an exception naming the argument (and the
side, for a value inside an in-memory result), never a message from inside naming none of them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ef.gate import gate, load_result

KINDS = (
    "a path (str or os.PathLike) of a saved result or a TREC run, a mapping, a report with per_query, "
    "a fastrag BenchmarkResult or an ef.gate.Result"
)
BASE = {"per_query": {f"q{i}": {"ndcg@10": 0.5 + 0.01 * (i % 7)} for i in range(40)}}


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(
    ("baseline", "candidate", "message"),
    [
        (None, BASE, f"'baseline' must be a result ({KINDS}), or a list of them (got None)"),
        (BASE, None, f"'candidate' must be a result ({KINDS}), or a list of them (got None)"),
        (3, BASE, f"'baseline' must be a result ({KINDS}), or a list of them (got int)"),
        (b"base.json", BASE, f"'baseline' must be a result ({KINDS}), or a list of them (got bytes)"),
        ([BASE, None], BASE, f"'baseline'[1] must be a result ({KINDS}), or a list of them (got None)"),
        (BASE, (None,), f"'candidate'[0] must be a result ({KINDS}), or a list of them (got None)"),
    ],
)
def test_a_side_of_the_wrong_type_is_named(baseline: Any, candidate: Any, message: str) -> None:
    with pytest.raises(TypeError, match=exactly(message)):
        gate(baseline, candidate)


def test_an_empty_list_of_seeds_is_named() -> None:
    message = "'candidate' must be a result or a non-empty list of results (got [])"
    with pytest.raises(ValueError, match=exactly(message)):
        gate(BASE, [])


def test_load_result_names_its_argument() -> None:
    with pytest.raises(TypeError, match=exactly(f"'source' must be a result: {KINDS} (got None)")):
        load_result(None)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"measures": 3}, "'measures' must be a sequence of measure names (got 3)"),
        ({"measures": "ndcg@10"}, "'measures' must be a sequence of measure names (got 'ndcg@10')"),
        ({"qrels": 3}, "'qrels' must be a mapping query -> {doc: relevance}, a path (str or os.PathLike) or None "
                       "(got int)"),
        ({"higher_is_better": ["ndcg@10"]},
         "'higher_is_better' must be a mapping measure -> bool, or None (got ['ndcg@10'])"),
        ({"higher_is_better": "ndcg@10"},
         "'higher_is_better' must be a mapping measure -> bool, or None (got 'ndcg@10')"),
        ({"higher_is_better": {"ndcg@10": "no"}}, "'higher_is_better'['ndcg@10'] must be True or False (got 'no')"),
        ({"higher_is_better": {"ndcg@10": 1}}, "'higher_is_better'['ndcg@10'] must be True or False (got 1)"),
    ],
)
def test_a_keyword_of_the_wrong_type_is_named(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=exactly(message)):
        gate(BASE, BASE, **keywords)


def test_a_bad_value_inside_an_in_memory_result_names_the_side() -> None:
    bad = {"per_query": {**BASE["per_query"], "q3": {"ndcg@10": float("nan")}}}
    with pytest.raises(ValueError, match=exactly("the candidate: result: 'ndcg@10' of query 'q3' is not a finite "
                                                 "number (got nan)")):
        gate(BASE, bad)
    with pytest.raises(ValueError, match=exactly("the baseline's seed 2: result: 'ndcg@10' of query 'q3' is not a "
                                                 "finite number (got nan)")):
        gate([BASE, bad], BASE)
    with pytest.raises(ValueError, match=exactly("the baseline: result: 'per_query' must be a non-empty object of "
                                                 "query id -> values")):
        gate({"per_query": []}, BASE)


def test_the_same_results_still_pass() -> None:
    report = gate(BASE, [BASE, BASE], margin=0.01, higher_is_better={"ndcg@10": True})
    assert (report.outcome, report.exit_code) == ("pass", 0)
