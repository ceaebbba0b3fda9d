"""ef.gate.gate's arguments of the wrong type: each is an exception naming the argument (and the
side, for a value inside an in-memory result), never a message from inside naming none of them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ef.gate import Margin, dataset_checksum, gate, load_result, parse_margin, qrels_hash, save_result

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


# --- save_result, qrels_hash, margins, overflow ------------------------------------------------


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"missing": "bogus"}, ValueError, "'missing' must be 'zero', 'skip' or None (got 'bogus')"),
        ({"relevance_level": "2"}, TypeError, "'relevance_level' must be a finite number or None (got '2')"),
        ({"ignore_identical_ids": "yes"}, TypeError, "'ignore_identical_ids' must be a bool or None (got 'yes')"),
        ({"max_docs": 0}, ValueError, "'max_docs' must be a positive integer or None (got 0)"),
        ({"pipeline_id": 3}, TypeError, "'pipeline_id' must be a non-empty str or None (got 3)"),
        ({"dataset_name": ""}, ValueError, "'dataset_name' must be a non-empty str or None (got '')"),
        ({"dataset": 3}, TypeError, "'dataset' must be a path (str or os.PathLike) or None (got int)"),
    ],
)
def test_save_result_refuses_metadata_of_the_wrong_kind(
    tmp_path: Path, keywords: dict[str, Any], error: type[Exception], message: str
) -> None:
    path = tmp_path / "base.json"
    with pytest.raises(error, match=exactly(message)):
        save_result(BASE, path, **keywords)  # was written as given, and compared on by a gate
    assert not path.exists()


@pytest.mark.parametrize("path", [None, 3])
def test_save_result_names_a_path_of_the_wrong_type(path: object) -> None:
    message = f"'path' must be a str or os.PathLike path (got {type(path).__name__})"
    with pytest.raises(TypeError, match=exactly(message)):
        save_result(BASE, path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=exactly(message)):
        dataset_checksum(path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("qrels", "error", "message"),
    [
        (None, TypeError, "'qrels' must be a mapping query -> {doc: grade} or a qrels path (got NoneType)"),
        ({"q": {"d": float("nan")}}, ValueError, "'qrels'['q']['d'] must be a finite number (got nan)"),
        ({"q": {"d": "1"}}, ValueError, "'qrels'['q']['d'] must be a finite number (got '1')"),  # hashed as 1
        ({"q": None}, TypeError, "'qrels' must map str query ids to {doc: grade} mappings (got 'q': NoneType)"),
    ],
)
def test_qrels_hash_refuses_what_is_no_judgement(qrels: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        qrels_hash(qrels)


def test_qrels_hash_still_ignores_spelling() -> None:
    assert qrels_hash({"q1": {"d1": 1, "d2": 0}}) == qrels_hash({"q1": {"d2": 0.0, "d1": 1.0}})


def test_margins_of_the_wrong_type_are_named() -> None:
    message = "'text' must be a margin as a str, such as '0.01' or '2%' (got NoneType)"
    with pytest.raises(TypeError, match=exactly(message)):
        parse_margin(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=exactly("'relative' must be a bool (got 'yes')")):
        Margin(0.1, relative="yes")  # type: ignore[arg-type]


def test_values_whose_differences_overflow_are_refused() -> None:
    big = {"per_query": {f"q{i}": {"m": 1e308} for i in range(5)}}
    small = {"per_query": {f"q{i}": {"m": -1e308} for i in range(5)}}
    with pytest.raises(ValueError, match=exactly(  # was 'inconclusive', every bound NaN
        "'m': the values are too large to compare (their differences or sums overflow a float, about 1.8e308): "
        "scale them down"
    )):
        gate(big, small, higher_is_better={"m": True})


def test_to_html_names_a_path_of_the_wrong_type() -> None:
    report = gate(BASE, BASE, margin=0.01)
    with pytest.raises(TypeError, match=exactly("'path' must be a str or os.PathLike path, or None (got int)")):
        report.to_html(3)  # type: ignore[arg-type]


def test_a_query_id_that_is_not_a_str_is_refused() -> None:
    # str(1) == "1": {1: ..., "1": ...} merged into one query, and an int id paired with a str one
    merged = {"per_query": {1: {"m": 0.5}, "1": {"m": 0.7}, "q2": {"m": 0.5}}}
    with pytest.raises(ValueError, match=exactly("the baseline: result: 'per_query' must have str query ids (got 1)")):
        gate(merged, BASE, higher_is_better={"m": True})
