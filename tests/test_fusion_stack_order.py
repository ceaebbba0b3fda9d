"""Fusion's compiled ordering and writing, on the inputs most likely to break them.

trec_order's bucket sort (keys that share all but a few bits, level after level; every sign and
size of score), an ordered stack's list bounds taken from the list sizes, and run_text's float
texts (orjson's digits respelt as repr), each checked against an independent oracle: ``np.lexsort``, the unordered path,
Python's ``repr``.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _kernel, _reference
from ef.evaluation._engine import engine
from ef.fusion._order import trec_order
from ef.fusion._stack import Stack, _build, stack_runs

_INF_KEY = 0x000F_FFFF_FFFF_FFFF  # +inf's key: the least (keys ascend as scores descend)
_NEG_INF_KEY = 0xFFF0_0000_0000_0000  # -inf's key: the greatest


def _scores_of_keys(keys: list[int]) -> npt.NDArray[np.float64]:
    """The scores whose trec_order keys (see descending_key in _columns.c) are `keys`."""
    bits = np.array([~k & 0x7FFF_FFFF_FFFF_FFFF if k < 1 << 63 else k for k in keys], dtype=np.uint64)
    return np.asarray(bits.view(np.float64))


def _staircase(rng: random.Random, bottom: int) -> npt.NDArray[np.float64]:
    """Keys whose bucket sort goes 11 levels deep: one key at the top of each level's first bucket
    keeps that bucket 6 bits narrower than its list, and `bottom` keys 0-15 apart stay together."""
    keys = [_NEG_INF_KEY] + [_INF_KEY + (1 << s) - 1 for s in range(58, 0, -6)]
    keys += [_INF_KEY + rng.randrange(16) for _ in range(bottom)] + [_INF_KEY]
    rng.shuffle(keys)
    return _scores_of_keys(keys)


def _scores(kind: str, n: int, rng: random.Random) -> npt.NDArray[np.float64]:
    pick = np.random.default_rng(rng.randrange(2**32))
    if kind == "staircase":
        return _staircase(rng, n)
    if kind == "signed_zeros_and_subnormals":
        return pick.choice([0.0, -0.0, 5e-324, -5e-324, 1e-310], n)
    if kind == "extremes":
        return pick.choice([np.inf, -np.inf, 1.7976931348623157e308, -1e308, 1e-300, -1e-300, 0.0, 1.0], n)
    if kind == "negative":
        return -pick.random(n) * 10.0 ** pick.integers(-5, 5, n)
    if kind == "all_equal":
        return np.full(n, 0.125)
    if kind == "one_outlier":
        score = np.nextafter(1.0, 2.0) + pick.integers(0, 3, n) * np.spacing(1.0)
        score[pick.integers(0, n)] = -1e300
        return np.asarray(score, dtype=np.float64)
    raise AssertionError(kind)  # pragma: no cover


@pytest.mark.parametrize("kind", ["staircase", "signed_zeros_and_subnormals", "extremes", "negative", "all_equal",
                                  "one_outlier"])
@pytest.mark.parametrize("n", [40, 5000])
@pytest.mark.parametrize("groups", ["one", "in_order_with_gaps", "shuffled"])
def test_trec_order_bucket_sorts_adversarial_keys_as_lexsort_does(kind: str, n: int, groups: str) -> None:
    rng = random.Random(f"{kind}{n}{groups}")
    score = _scores(kind, n, rng)
    n = len(score)
    pick = np.random.default_rng(rng.randrange(2**32))
    group = {"one": np.zeros(n, np.int64), "in_order_with_gaps": np.sort(pick.integers(0, 4, n)) * 3,
             "shuffled": pick.integers(0, 4, n)}[groups].astype(np.int64)
    doc = pick.integers(0, 8, n).astype(np.int64)  # repeated docs: entries equal in all keep their order
    heads = np.arange(8, dtype=np.uint64)
    expected = np.lexsort((-doc, -score, group))  # stable: ties in all three keep their order
    assert trec_order(group, score, doc, heads).tolist() == expected.tolist()


@pytest.mark.parametrize("kind", ["staircase", "signed_zeros_and_subnormals", "extremes"])
def test_trec_order_with_ids_equals_the_reference_engine(kind: str) -> None:
    # Ids sharing their first 8 bytes tie on their heads; their bytes decide, as in the reference.
    rng = random.Random(kind)
    score = _scores(kind, 60, rng)
    ids = ["prefix__" + s for s in ("b", "a", "ab", "", "é", "z9", "z10")] + ["d9", "d10"]
    doc = np.array([rng.randrange(len(ids)) for _ in score], dtype=np.int64)
    group = np.array([rng.randrange(2) for _ in score], dtype=np.int64)
    from ef.fusion._order import heads_of

    heads = heads_of(ids)
    expected = _reference.trec_order(group.tobytes(), score.tobytes(), doc.tobytes(), heads.tobytes(), ids)
    assert trec_order(group, score, doc, heads, ids).tolist() == np.frombuffer(expected, np.int64).tolist()


# --- an ordered stack: list bounds from the list sizes ---------------------------------------------

_QUERY_IDS = ["q1", "q2", "q3", "q4"]
_DOC_IDS = ["d1", "d2", "d3", "d9", "d10", "é", "zz"]


def _lists(stack: Stack) -> dict[tuple[int, int], tuple[list[int], list[float], list[int], list[int], list[int]]]:
    """Each (run, query) list's entries: doc, score, rank, and the run and query of each entry."""
    return {
        (int(r), int(q)): (stack.doc[lo:lo + n].tolist(), stack.score[lo:lo + n].tolist(),
                           stack.rank[lo:lo + n].tolist(), stack.run[lo:lo + n].tolist(),
                           stack.query[lo:lo + n].tolist())
        for r, q, lo, n in zip(stack.list_run, stack.list_query, stack.starts, stack.counts, strict=True)
    }


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n_runs=st.integers(1, 3))
def test_an_ordered_stack_holds_what_the_unordered_path_builds(data: Any, n_runs: int) -> None:
    # Queries in one run only, empty lists, queries first seen in a later run (listed before or
    # after the ones seen already); each list in trec_eval's order, so the stack is `ordered`.
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in data.draw(st.lists(st.sampled_from(_QUERY_IDS), unique=True, max_size=4)):
            docs = data.draw(st.lists(st.sampled_from(_DOC_IDS), unique=True, max_size=5))
            scored = {d: data.draw(st.sampled_from([2.0, 1.0, 0.5, 0.0, -0.0, -1.0])) for d in docs}
            run[q] = dict(sorted(scored.items(), key=lambda item: (item[1], item[0].encode()), reverse=True))
        runs.append(run)
    columns = engine.stack_columns(runs)
    assert columns is not None
    queries, docs, pair_query, pair_head, list_run, list_query, list_size, doc, score, ordered = columns
    assert ordered
    sizes = np.frombuffer(list_size, np.int64)
    unordered = _build(n_runs, queries, docs, np.repeat(np.frombuffer(list_run, np.int64), sizes),
                       np.repeat(np.frombuffer(list_query, np.int64), sizes), np.frombuffer(doc, np.int64),
                       np.frombuffer(score, np.float64), np.frombuffer(pair_query, np.int64),
                       np.frombuffer(pair_head, np.uint64))
    got = stack_runs(runs, [f"run{r}" for r in range(n_runs)])
    assert (got.n_runs, got.queries, got.docs) == (n_runs, unordered.queries, unordered.docs)
    assert got.pair_query.tolist() == unordered.pair_query.tolist()
    assert got.pair_head.tolist() == unordered.pair_head.tolist()
    # The same lists with the same entries; an ordered stack keeps them in the runs' order (a
    # later run may list a new query before an old one), which no consumer depends on.
    assert _lists(got) == _lists(unordered)
    assert got.counts.min(initial=1) > 0
    assert got.starts.tolist() == (np.cumsum(got.counts) - got.counts).tolist()
    assert len(got.doc) == int(got.counts.sum())
    # Where each run lists its queries in first-seen order, the two stacks are the same, field by field.
    listed = np.frombuffer(list_query, np.int64)[sizes > 0]
    by_run = np.frombuffer(list_run, np.int64)[sizes > 0]
    if all(np.all(np.diff(listed[by_run == r]) > 0) for r in range(n_runs)):
        for name in ("run", "query", "doc", "score", "rank", "starts", "counts", "list_run", "list_query"):
            assert getattr(got, name).tolist() == getattr(unordered, name).tolist(), name


def test_an_ordered_stack_keeps_a_new_query_listed_before_an_old_one_where_the_run_put_it() -> None:
    runs = [{"qA": {"a": 2.0, "b": 1.0}}, {"qB": {"c": 3.0}, "qE": {}, "qA": {"b": 5.0, "a": 4.0}}]
    stack = stack_runs(runs, ["r0", "r1"])
    assert stack.queries == ["qA", "qB", "qE"]
    assert stack.list_run.tolist() == [0, 1, 1]
    assert stack.list_query.tolist() == [0, 1, 0]  # qE's list is empty: none
    assert stack.starts.tolist() == [0, 2, 3]
    assert stack.counts.tolist() == [2, 1, 2]
    assert stack.rank.tolist() == [1, 2, 1, 1, 2]
    assert [stack.docs[d] for d in stack.doc.tolist()] == ["a", "b", "c", "b", "a"]


# --- run_text: Python's repr, from orjson's digits --------------------------------------------


def _texts(score: np.ndarray) -> bytes:
    return orjson.dumps(score, option=orjson.OPT_SERIALIZE_NUMPY)


def _lines(names: list[str], bounds: np.ndarray, ids: list[str], doc: np.ndarray, score: np.ndarray) -> list[str]:
    return [
        "".join(f"{names[k]} Q0 {ids[d]} {rank} {s!r} r-1\n"
                for rank, (d, s) in enumerate(zip(doc[lo:hi].tolist(), score[lo:hi].tolist(), strict=True), 1))
        for k, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    ]


def test_run_text_writes_each_score_as_repr() -> None:
    # Random bit patterns (every exponent, subnormals), every power of two and the double below
    # it (where a double's lower gap halves), powers of ten, repr's notation switches (1e-05 /
    # 0.0001, 1e+16 / 9999999999999998.0) and both zeros.
    pick = np.random.default_rng(5)
    score = np.concatenate([
        pick.integers(0, 2**64, 200_000, dtype=np.uint64).view(np.float64),
        np.ldexp(1.0, np.arange(-1074, 1024)), np.nextafter(np.ldexp(1.0, np.arange(-1073, 1024)), 0),
        np.array([10.0**k for k in range(-323, 309)]),
        np.array([0.0, -0.0, 1e-5, 1e-4, 1e16, 9999999999999998.0, 0.1 + 0.2, 123.0, 5e-324]),
    ])
    score = np.ascontiguousarray(np.concatenate([score, -score])[np.isfinite(np.concatenate([score, -score]))])
    ids = [f"d{i}é" if i % 3 else f"d{i}" for i in range(500)]
    doc = pick.integers(0, len(ids), len(score)).astype(np.int64)
    names, bounds = ["q1", "ü", "q3"], np.array([0, 7, 7 + 12_000, len(score)], dtype=np.int64)
    expected = _lines(names, bounds, ids, doc, score)
    assert _kernel.run_text(names, bounds, ids, doc, score, "r-1", _texts(score)) == expected
    written = {line.split(" ")[4] for line in "".join(expected).splitlines()}
    assert {"1e-05", "0.0001", "9999999999999998.0", "1e+16", "-0.0", "5e-324", "-1e-323"} <= written


def test_run_text_asks_repr_where_a_text_does_not_read_back() -> None:
    # A text is taken only if it reads back as its score's bits: wrong digits, a lost minus sign,
    # a text that is not a number, missing texts or none at all give repr's own.
    score = np.array([0.25, -0.0, 1e-07, 3.0, 2.5, 0.1])
    ids, doc, names, bounds = ["a"], np.zeros(6, np.int64), ["q"], np.array([0, 6], np.int64)
    expected = _lines(names, bounds, ids, doc, score)
    assert expected[0].split("\n")[:3] == ["q Q0 a 1 0.25 r-1", "q Q0 a 2 -0.0 r-1", "q Q0 a 3 1e-07 r-1"]
    for texts in (b"[0.5,0.0,1e-7,3,2.5x,0.1]", b"[0.25,-0.0]", b"", b"[,,,,,,]", b"[1,2,3,4,5,6,7,8,9]"):
        assert _kernel.run_text(names, bounds, ids, doc, score, "r-1", texts) == expected, texts
    # Texts that read back as the score but lie beyond any double's decimal exponent (underflows to zero).
    for value, texts in ((0.0, b"[1e-325]"), (-0.0, b"[-0." + b"0" * 500 + b"1]")):
        one = np.array([value])
        got = _kernel.run_text(["q"], np.array([0, 1]), ["d"], np.zeros(1, np.int64), one, "r", texts)
        assert got == [f"q Q0 d 1 {value!r} r\n"], texts
