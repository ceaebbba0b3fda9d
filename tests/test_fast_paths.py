"""The in-memory evaluator's fast paths prove their own preconditions exactly: scores read through
marshal only when every value is a float (or every one a 32-bit int), and tied ids compared as
words only when all have one byte width. Anything else takes the general path, with the same
numbers."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import evaluate_run
from ef.evaluation._run import _fixed_width_words, _plain_numbers

_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**40), 2**40),
    st.booleans(),
    st.floats(width=32).map(np.float32),
    st.floats().map(np.float64),
    st.integers(-(2**31), 2**31 - 1).map(np.int64),
    st.none(),
    st.text(max_size=9),
)


def _expected(values: list[object]) -> np.ndarray | None:
    """What the fast path must give: the doubles when all are exactly float, or all exactly int
    of 32 bits; otherwise nothing (the caller's checks then name what is wrong)."""
    if all(type(v) is float for v in values):
        return np.array(values, dtype=np.float64)
    if all(type(v) is int and -(2**31) <= v < 2**31 for v in values):
        return np.array(values, dtype=np.float64)
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(_VALUES, max_size=12) | st.lists(st.floats(), max_size=12) | st.lists(st.integers(-(2**33), 2**33)))
def test_plain_numbers_takes_exactly_the_lists_of_floats_or_small_ints(values: list[object]) -> None:
    got, expected = _plain_numbers(values), _expected(values)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        np.testing.assert_array_equal(got, expected)  # NaN where NaN, bit for bit otherwise


def test_a_bool_or_a_numpy_float32_among_floats_leaves_the_fast_path() -> None:
    # np.float32 marshals as 9 bytes, as a float does: the type byte, not the length, tells.
    assert _plain_numbers([0.5, np.float32(1.0)]) is None
    assert _plain_numbers([0.5, True]) is None
    assert _plain_numbers([1, 2**31]) is None  # marshalled as a long: not a 32-bit int
    np.testing.assert_array_equal(_plain_numbers([1, -(2**31)]), [1.0, -(2.0**31)])


def _joined(ids: list[str]) -> bytes:
    """The ids as the tie batch lays them out: NUL after each, then 8 zero bytes."""
    return "\x00".join(ids).encode("utf-8") + bytes(9)


_ALPHABETS = ["01", "0a9zZ~", "éü\U0001f600"[:2], "\x01\x7f"]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_fixed_width_words_order_ids_as_their_utf8_bytes(data: st.DataObject) -> None:
    prefix = data.draw(st.sampled_from(["", "doc00", "é", "urn:uuid:0000"]))
    width = data.draw(st.integers(1, 20))
    alphabet = data.draw(st.sampled_from(_ALPHABETS))
    tails = data.draw(st.lists(st.text(alphabet, min_size=width, max_size=width), min_size=2, max_size=30, unique=True))
    ids = [prefix + tail for tail in tails]
    found = _fixed_width_words(_joined(ids), len(ids))
    assert found is not None
    words, skip, id_width = found
    assert id_width == len(ids[0].encode())
    assert skip >= len(prefix.encode())
    keys = list(zip(*(w.tolist() for w in words), strict=True))
    for (i, a), (j, b) in itertools.combinations(enumerate(ids), 2):
        byte_order = (a.encode() > b.encode()) - (a.encode() < b.encode())
        assert (keys[i] > keys[j]) - (keys[i] < keys[j]) == byte_order, (a, b)
    # The judged docs' words, cut at the members' offset, compare with the members' words.
    judged = ids[::2]
    again = _fixed_width_words(_joined(judged), len(judged), skip)
    assert again is not None
    assert list(zip(*(w.tolist() for w in again[0]), strict=True)) == keys[::2]


@pytest.mark.parametrize(
    "ids",
    [["d1", "d22"], ["d12", "d3", "d45"], ["ab", "a\x00"], ["é1", "e1"], ["a\x00b", "abc"]],
)
def test_fixed_width_words_refuse_ids_of_several_widths_or_holding_nul(ids: list[str]) -> None:
    assert _fixed_width_words(_joined(ids), len(ids)) is None


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ([1.0, True], "run: score of doc 'b' in query 'q' is not a number (got True)"),
        ([np.float32(2.0), "1.5"], "run: score of doc 'b' in query 'q' is not a number (got '1.5')"),
        ([0.5, float("nan")], "run: score of doc 'b' in query 'q' is NaN"),
        ([3, None], "run: score of doc 'b' in query 'q' is not a number (got None)"),
    ],
)
def test_what_leaves_the_fast_path_is_still_refused_by_name(values: list[object], error: str) -> None:
    run = {"q": dict(zip(["a", "b"], values, strict=True))}
    with pytest.raises(ValueError) as raised:
        evaluate_run(run, {"q": {"a": 1}}, ["map"])  # type: ignore[arg-type]
    assert str(raised.value) == error


def test_floats_ints_numpy_scalars_and_a_mix_score_alike() -> None:
    ids = [f"doc{i:04d}" for i in range(40)]
    grades = [3, 1, 0, 2, 7, 5, 1, 3, 3, 0]
    qrels = {"q": {ids[i]: 1 for i in range(0, 40, 3)}}
    spellings: dict[str, list[Any]] = {
        "float": [float(g) for g in grades * 4],
        "int": grades * 4,
        "np.float32": [np.float32(g) for g in grades * 4],
        "mix": [g if i % 2 else float(g) for i, g in enumerate(grades * 4)],
    }
    reports = {
        k: evaluate_run({"q": dict(zip(ids, v, strict=True))}, qrels, ["map", "ndcg@10", "mrr"])
        for k, v in spellings.items()
    }
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank"}).evaluate(
        {"q": dict(zip(ids, spellings["float"], strict=True))}
    )["q"]
    assert reports["float"].metrics == pytest.approx(
        {"map": expected["map"], "ndcg@10": expected["ndcg_cut_10"], "mrr": expected["recip_rank"]}, abs=1e-15
    )
    for name in ("int", "np.float32", "mix"):
        assert reports[name].metrics == reports["float"].metrics
