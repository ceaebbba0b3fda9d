"""The in-memory evaluator's fast paths prove their own preconditions exactly: scores read through
marshal only when every value is a float (or every one a 32-bit int), and tied ids compared as
words only when all have one byte width. Anything else takes the general path, with the same
numbers."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _run, evaluate_run
from ef.evaluation._run import _ahead_in_spans, _fixed_width_words, _member_and_judged_words, _plain_numbers
from ef.io.trec import _hash_fields, _word_view, hash_ids, shared_prefix, write_run

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


_HUGE = 10**400  # an int beyond a double's range


def _read(values: list[object], typed: bool) -> tuple[list[float], list[float]] | str:
    """`_scores` of `values` (doc ids "d0", "d1" ...) as lists, or its error message."""
    try:
        raw, ordered, order, _ = _run._scores("q", {f"d{i}": v for i, v in enumerate(values)}, typed, typed)  # type: ignore[misc]
        if typed:  # asked for the order too: it sorts the scores, as np.sort does
            assert ordered.tolist() == np.sort(raw).tolist()
            assert raw[order].tolist() == ordered.tolist()
        else:
            assert order is None
    except ValueError as error:
        return str(error)
    return raw.tolist(), ordered.tolist()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        _VALUES
        | st.decimals(allow_nan=False, allow_infinity=True)
        | st.fractions()
        | st.sampled_from([_HUGE, -_HUGE, np.True_, Decimal("1e400"), np.longdouble("1e400"), np.float32("inf")]),
        max_size=12,
    )
)
def test_scores_read_by_struct_or_by_marshal_agree_value_for_value_and_error_for_error(values: list[object]) -> None:
    by_struct, by_marshal = _read(values, typed=False), _read(values, typed=True)
    assert by_struct == by_marshal
    problems = [_problem(v) for v in values]
    first = next((i for i, p in enumerate(problems) if p), None)
    if first is None:  # every value is a number: each one's nearest double, sorted
        doubles = [float(v) for v in values]  # type: ignore[arg-type]
        assert by_struct == (doubles, sorted(doubles))
    else:  # the first refused value in dict order is named, with why
        assert by_struct == f"run: score of doc 'd{first}' in query 'q' {problems[first]}"


def _problem(value: object) -> str:
    """Why a score is refused, found the slow way ("" when it is not)."""
    if isinstance(value, bool | np.bool_ | str | type(None)):
        return f"is not a number (got {value!r})"
    if isinstance(value, int | Fraction):
        try:
            float(value)
        except OverflowError:
            return "is beyond the range of a double"
    finite = isinstance(value, Decimal | np.longdouble) and value == value and abs(value) != math.inf
    if finite and math.isinf(float(value)):  # type: ignore[arg-type]  # finite, but not as a double
        return "is beyond the range of a double"
    return "is NaN" if value != value else ""


def test_a_query_showing_0_or_1_turns_later_queries_to_marshal_and_a_bool_is_still_refused() -> None:
    assert _run._scores("q", {"a": 0.5, "b": 0.25}, False)[3] is False
    assert _run._scores("q", {"a": 1.0, "b": 0.25}, False)[3] is True
    assert _run._scores("q", {"a": 0.5}, True)[3] is True  # once shown, kept for the run
    run = {"q1": {"a": 1.0, "b": 0.0}, "q2": {"a": 0.5, "b": True}}
    with pytest.raises(ValueError) as raised:
        evaluate_run(run, {"q1": {"a": 1}, "q2": {"a": 1}}, ["map"])
    assert str(raised.value) == "run: score of doc 'b' in query 'q2' is not a number (got True)"


def test_decimal_and_fraction_scores_rank_as_their_nearest_doubles() -> None:
    qrels = {"q1": {"a": 1, "c": 1}, "q2": {"b": 1}}
    exact: dict[str, dict[str, Any]] = {
        "q1": {"a": Decimal("0.3"), "b": Fraction(1, 2), "c": 0.1},
        "q2": {"a": 1.0, "b": Decimal("0.7")},
    }
    doubles = {q: {d: float(s) for d, s in docs.items()} for q, docs in exact.items()}
    got = evaluate_run(exact, qrels, ["map", "mrr"])
    assert got.per_query == evaluate_run(doubles, qrels, ["map", "mrr"]).per_query
    assert got.per_query["q1"] == {"map": (1 / 2 + 2 / 3) / 2, "mrr": 0.5}


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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=20).filter(lambda b: 0 not in b), min_size=1, max_size=12))
def test_shared_prefix_is_the_common_leading_bytes(fields: list[bytes]) -> None:
    data = bytearray(b" ".join(fields) + bytes(16))
    starts = np.cumsum([0] + [len(f) + 1 for f in fields[:-1]])
    stops = starts + [len(f) for f in fields]
    common = next((i for i in range(min(map(len, fields))) if len({f[i] for f in fields}) > 1), min(map(len, fields)))
    assert shared_prefix(data, starts, stops) == common


_IDS_OF_ANY_WIDTH = st.one_of(
    st.binary(min_size=1, max_size=40), st.sampled_from([b"a" * 8, b"a" * 9, b"a" * 16, b"a" * 17])
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_IDS_OF_ANY_WIDTH, min_size=1, max_size=30))
def test_a_field_hashes_by_its_bytes_alone_whatever_its_neighbours(fields: list[bytes]) -> None:
    # Fields of 8-16 bytes hash by their first and last words, others word by word: a batch of
    # one width and a batch of mixed widths must still give each field one hash.
    data = bytearray(b" ".join(fields) + bytes(16))
    starts = np.cumsum([0] + [len(f) + 1 for f in fields[:-1]])
    lengths = np.array([len(f) for f in fields])
    together = _hash_fields(_word_view(data), starts, lengths).tolist()
    assert together == [int(hash_ids([f])[0]) for f in fields] == hash_ids(fields).tolist()
    assert len(set(together)) == len(set(fields))  # equal bytes, equal hashes; no collision here


@pytest.mark.parametrize("broadcast_from", [1, 4, 10**9])  # every span broadcast, those of 4 pairs or more, none
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_ahead_in_spans_counts_the_greater_ids_of_each_span(broadcast_from: int, data: st.DataObject) -> None:
    ids = data.draw(
        st.lists(st.binary(min_size=1, max_size=19).filter(lambda b: 0 not in b), min_size=1, max_size=40, unique=True)
    )
    if data.draw(st.booleans()):  # spans of any sizes
        cuts = sorted(set(data.draw(st.lists(st.integers(0, len(ids)), max_size=5))) | {0, len(ids)})
    else:  # spans of one size, one after another (a file's all-tied queries): stacked in blocks
        cuts = sorted({*range(0, len(ids), data.draw(st.integers(1, 8))), len(ids)})
    spans = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    # Each judged doc is a member of its span, maybe several judged docs per span.
    judged = data.draw(
        st.lists(st.sampled_from([(a, b, i) for a, b in spans for i in range(a, b)]), min_size=1, max_size=20)
    )
    buffer = bytearray(b" ".join(ids) + bytes(16))
    starts = np.cumsum([0] + [len(i) + 1 for i in ids[:-1]]).astype(np.int64)
    stops = starts + np.array([len(i) for i in ids], dtype=np.int64)
    run = SimpleNamespace(data=buffer, doc_start=starts, doc_stop=stops)
    rows = np.array([i for _, _, i in judged], dtype=np.int64)
    words = _member_and_judged_words(run, np.arange(len(ids)), rows)  # type: ignore[arg-type]
    lo = np.array([a for a, _, _ in judged], dtype=np.int64)
    hi = np.array([b for _, b, _ in judged], dtype=np.int64)
    expected = [sum(1 for m in ids[a:b] if m > ids[i]) for a, b, i in judged]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run, "_BROADCAST_PAIRS", broadcast_from)
        patch.setattr(_run, "_BLOCK_PAIRS", data.draw(st.sampled_from([1, 24, 1 << 17])))
        assert _ahead_in_spans(*words, lo, hi).tolist() == expected


@pytest.mark.parametrize("block_pairs", [1, 1 << 17])  # each span alone, or those of one size stacked
def test_spans_of_one_size_stack_only_where_they_follow_one_another(block_pairs: int) -> None:
    # Ids a c | b d | f e, spans of 2. Judged: a and e (the middle span has none, so the two are
    # not neighbours in the members: stacked, e would be counted against b d), then c, b and d.
    ids = [b"a", b"c", b"b", b"d", b"f", b"e"]
    starts = np.array([0, 2, 4, 6, 8, 10], dtype=np.int64)
    run = SimpleNamespace(data=bytearray(b" ".join(ids) + bytes(16)), doc_start=starts, doc_stop=starts + 1)
    rows = np.array([0, 5, 1, 2, 3], dtype=np.int64)
    lo, hi = np.array([0, 4, 0, 2, 2], dtype=np.int64), np.array([2, 6, 2, 4, 4], dtype=np.int64)
    words = _member_and_judged_words(run, np.arange(6), rows)  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run, "_BROADCAST_PAIRS", 1)
        patch.setattr(_run, "_BLOCK_PAIRS", block_pairs)
        assert _ahead_in_spans(*words, lo, hi).tolist() == [1, 1, 0, 1, 0]
        assert _ahead_in_spans(*words, lo[:2], hi[:2]).tolist() == [1, 1]  # a and e alone


def test_an_all_tied_run_file_ranks_as_pytrec_eval(tmp_path: Path) -> None:
    # 5 judged docs x 1,500 tied docs a query: broadcast in one step (over _BROADCAST_PAIRS).
    rng = np.random.default_rng(7)
    run = {f"q{q}": {f"d{int(d)}": 2.0 for d in rng.choice(10**6, size=1500, replace=False)} for q in range(3)}
    qrels = {
        q: {d: int(g) for d, g in zip(list(docs)[::300], rng.integers(0, 3, 5), strict=True)} for q, docs in run.items()
    }
    path = tmp_path / "run.txt"
    write_run(path, run)
    assert _run._BROADCAST_PAIRS <= 5 * 1500
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank"}).evaluate(run)
    report = evaluate_run(str(path), qrels, ["map", "ndcg@10", "mrr"])
    for q in run:
        got = report.per_query[q]
        assert (got["map"], got["ndcg@10"], got["mrr"]) == pytest.approx(
            (expected[q]["map"], expected[q]["ndcg_cut_10"], expected[q]["recip_rank"]), abs=1e-15
        )


def test_ties_in_small_groups_stay_in_python_and_big_shared_ones_batch() -> None:
    # Review finding: 700 judged docs of 1,000, scores to 2 decimals (groups of ~5, one per judged
    # doc) were sent to the batch, whose broadcast is 700 x 1,000 pairs against ~3,500 in Python.
    assert not _run._batch_is_cheaper(pairs=3500, k=700, n_members=3500, n=1000)
    assert _run._batch_is_cheaper(pairs=6000, k=6, n_members=1000, n=1000)  # every doc tied
    assert _run._batch_is_cheaper(pairs=546, k=6, n_members=430, n=1000)  # integer grades 0-10
    assert not _run._batch_is_cheaper(pairs=18, k=6, n_members=18, n=1000)  # one decimal


@pytest.mark.parametrize(("n", "k", "group"), [(100_000, 10_000, 2), (20_000, 4_000, 20_000)])
def test_tie_ranking_memory_does_not_grow_with_judged_times_docs(n: int, k: int, group: int) -> None:
    # Pairs of equal scores, or every doc tied with 24-letter ids (three words): k x n pairs are
    # 1e9 and 8e7, which unblocked masks would hold as that many bytes (and more) at once.
    import random
    import string
    import tracemalloc

    rng = random.Random(1)
    ids = sorted({"".join(rng.choice(string.ascii_letters) for _ in range(24)) for _ in range(n)})
    run = {"q": {d: float(i // group) for i, d in enumerate(ids)}}
    qrels = {"q": dict.fromkeys(rng.sample(ids, k), 1)}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)["q"]["map"]
    tracemalloc.start()
    try:
        got = evaluate_run(run, qrels, ["map"]).metrics["map"]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == pytest.approx(expected, abs=1e-12)
    assert peak < 64 * 2**20, peak


@pytest.mark.parametrize(
    ("ranking", "message"),
    [
        ({"a": 1.0, 0: 1.0, 1: 1.0}, "'run['q']' has a doc id that is not a str: 0 (int)"),  # compared in Python
        ({**{f"d{i}": 1.0 for i in range(100)}, 7: 1.0}, "'run['q']' has a doc id that is not a str: 7 (int)"),  # batch
    ],
)
def test_a_doc_id_that_is_not_a_str_among_ties_is_named(ranking: dict[object, float], message: str) -> None:
    with pytest.raises(TypeError) as raised:
        evaluate_run({"q": ranking}, {"q": {"a": 1, "d1": 1}}, ["map"])  # type: ignore[dict-item]
    assert str(raised.value) == message


def _draw_ids(data: st.DataObject, alphabet: str, widths: tuple[int, ...], n: int) -> list[str]:
    """`n` distinct ids of `alphabet`'s characters, each of one of `widths` characters."""
    of_width = st.sampled_from(widths).flatmap(lambda w: st.text(alphabet, min_size=w, max_size=w))
    return data.draw(st.lists(of_width, min_size=n, max_size=n, unique=True))


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_the_tie_batch_ranks_in_trec_eval_order_in_any_blocks_and_chunks(data: st.DataObject) -> None:
    # Queries of equal sizes are stacked into blocks and cut into words chunk by chunk; here the
    # blocks and chunks are drawn tiny, so every split is met, and the measures must equal those
    # of the run rescored without ties in trec_eval's order (ids of one or several widths, with
    # NUL, all tied or not).
    alphabet = data.draw(st.sampled_from(["ab", "ab\x00", "aé\U0001f600"]))
    widths = data.draw(st.sampled_from([(3,), (1, 2, 3)]))
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(data.draw(st.integers(1, 10))):
        n = data.draw(st.sampled_from([3, 5]))
        ids = _draw_ids(data, alphabet, widths, n)
        one = data.draw(st.booleans())
        run[f"q{q}"] = {d: 1.0 if one else float(data.draw(st.integers(0, 1))) for d in ids}
        judged = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=n, unique=True))
        qrels[f"q{q}"] = {d: data.draw(st.integers(0, 2)) for d in judged}
    measures = ["map", "ndcg@10", "mrr", "P_1", "P_3"]
    expected = evaluate_run(_untied(run), qrels, measures).per_query
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run, "_batch_is_cheaper", lambda *_: True)
        patch.setattr(_run, "_BLOCK_PAIRS", data.draw(st.integers(1, 40)))
        patch.setattr(_run, "_CHUNK_IDS", data.draw(st.integers(1, 12)))
        assert evaluate_run(run, qrels, measures).per_query == expected


def _untied(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """`run` rescored with distinct scores in trec_eval's order (score, then id bytes, descending)."""
    out = {}
    for query_id, docs in run.items():
        order = sorted(docs, key=lambda d: (docs[d], d.encode("utf-8", "surrogatepass")), reverse=True)
        out[query_id] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


def test_the_tie_batch_ranks_each_full_chunk_at_once_and_lets_its_ids_go(monkeypatch: pytest.MonkeyPatch) -> None:
    # The batch once kept every tied query's ids and scores to the end (~20 KB a query of 1,000
    # docs): memory grew with the run. Now at most a chunk of member ids waits.
    rng = np.random.default_rng(5)
    run = {f"q{q:03d}": {f"d{d:04d}": float(rng.integers(0, 3)) for d in rng.permutation(40)} for q in range(60)}
    qrels = {q: {d: int(rng.integers(0, 3)) for d in list(docs)[:4]} for q, docs in run.items()}
    waiting, settled = [], []
    add, settle = _run._TieBatch.add, _run._TieBatch._settle

    def spy_add(self: Any, *args: Any) -> None:
        add(self, *args)
        waiting.append(self.n_ids)

    def spy_settle(self: Any) -> None:
        settle(self)
        settled.append(len(self.settled))

    monkeypatch.setattr(_run, "_CHUNK_IDS", 100)
    monkeypatch.setattr(_run._TieBatch, "add", spy_add)
    monkeypatch.setattr(_run._TieBatch, "_settle", spy_settle)
    measures = ["map", "ndcg@10", "mrr", "P_1", "P_3"]
    got = evaluate_run(run, qrels, measures).per_query
    assert len(waiting) == 60  # every query tied, all in the batch
    assert max(waiting) == 80  # two queries of 40 members a chunk
    assert settled == list(range(1, 31))  # 29 full chunks as they fill, the last at the end
    monkeypatch.undo()
    assert got == evaluate_run(_untied(run), qrels, measures).per_query


def test_judged_grades_are_a_writeable_copy_even_for_one_judgement() -> None:
    # Review finding: np.ascontiguousarray keeps a 1-element view as it is (read-only, unaligned,
    # over the marshal dump), and it would reach HitTable.judged_grade.
    builder = _run._Builder({"q": {"a": 1.0}})
    builder.add("q", 1)
    _, grades = builder.judged_grades()
    assert (grades.tolist(), grades.flags.writeable, grades.flags.aligned, grades.flags.owndata) == (
        [1.0],
        True,
        True,
        True,
    )


def test_qrels_ids_with_a_lone_surrogate_match_nothing_in_a_run_file(tmp_path: Path) -> None:
    # Review finding: encoding such an id for the file's matcher raised a bare UnicodeEncodeError.
    path = tmp_path / "run.txt"
    write_run(path, {"q": {"a": 2.0, "b": 1.0}})
    qrels = {"q": {"\udc80": 1, "b": 1}, "\udc81": {"a": 1}}
    report = evaluate_run(str(path), qrels, ["num_rel_ret", "num_q"])
    assert (report.metrics, report.per_query["q"]) == ({"num_rel_ret": 1, "num_q": 2}, {"num_rel_ret": 1, "num_q": 1})


def _dense_queries(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The queries `_from_mapping` ranks densely from now on (their scores read unsorted)."""
    seen: list[str] = []
    proven = _run._proven_scores

    def spy(query_id: str, ranking: Any) -> Any:
        raw = proven(query_id, ranking)
        if raw is not None:
            seen.append(query_id)
        return raw

    monkeypatch.setattr(_run, "_proven_scores", spy)
    return seen


def _graded_run(seed: int, n_queries: int, n_docs: int, grades: list[float]) -> tuple[dict[str, Any], dict[str, Any]]:
    rng = np.random.default_rng(seed)
    run = {
        f"q{q:02d}": {f"d{int(d)}": grades[int(rng.integers(len(grades)))] for d in rng.permutation(n_docs)}
        for q in range(n_queries)
    }
    picked = {q: rng.choice(list(docs), 4, replace=False) for q, docs in run.items()}
    qrels = {q: {d: int(rng.integers(0, 3)) for d in docs} for q, docs in picked.items()}
    return run, qrels


@pytest.mark.parametrize(
    "grades",
    [
        [0.0, 1.0, 2.0, 3.0],  # floats: read by marshal as doubles
        [0, 1, 2, 3],  # ints: read by marshal as 32-bit ints
        [-math.inf, -2.5, -0.0, 0.0, 7.0, math.inf],  # -0.0 ties with 0.0, as in trec_eval
        [5, 6, 7],  # no 0 or 1: struct reads the usual way's queries
    ],
)
@pytest.mark.parametrize("max_docs", [None, 7])
def test_integer_grades_rank_densely_in_trec_eval_order(
    grades: list[float], max_docs: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ids of 1 or 2 digits: words of several widths. With _DENSE_RUN = 3, one query in 4 is
    # ranked the usual way, the others densely; all must rank as the untied run does.
    run, qrels = _graded_run(3, 40, 30, grades)
    measures = ["map", "ndcg@10", "mrr", "P_5", "num_rel_ret", "recall@20"]
    expected = evaluate_run(_untied(run), qrels, measures, max_docs=max_docs).per_query
    monkeypatch.setattr(_run, "_DENSE_RUN", 3)
    dense = _dense_queries(monkeypatch)
    assert evaluate_run(run, qrels, measures, max_docs=max_docs).per_query == expected
    assert dense == [q for i, q in enumerate(sorted(run)) if i % 4]  # q00, q04 ... the usual way


def test_a_dense_query_and_a_usual_one_of_one_size_are_not_stacked_in_one_block() -> None:
    # Review finding: q0's judged d29 is untied, so q0 keeps its 30 scores in the batch but only
    # counts equals; q1, every judged doc tied, is dense and counts the docs ahead by score too.
    # One broadcast for both would count one of them the other's way.
    base = {f"d{i:02d}": float(i % 3) for i in range(30)}
    run = {"q0": {**base, "d29": 5.0}, "q1": base}
    qrels = {"q0": {"d00": 1, "d29": 1}, "q1": {"d00": 1, "d01": 1}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run, "_batch_is_cheaper", lambda *_: True)
        table = _run._from_mapping(run, qrels, ["q0", "q1"], "skip", None).table(1.0)
    # q0: d29 first (5.0); d00 (0.0) after the 20 docs of 1.0, 2.0 or 5.0 and the 9 other 0.0s
    # (d03 ... d27, greater ids): rank 29. q1: d01 (1.0) after the 10 docs of 2.0 and the 9 of
    # 1.0 with greater ids (d04 ... d28): rank 19; d00 after 20 + 9: rank 29.
    assert (table.hit_query.tolist(), table.hit_rank.tolist()) == ([0, 0, 1, 1], [0, 29, 19, 29])


def test_dense_ranking_matches_pytrec_eval_on_integer_grades() -> None:
    run, qrels = _graded_run(11, 60, 200, [float(g) for g in range(11)])
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "recip_rank"}).evaluate(run)
    got = evaluate_run(run, qrels, ["map", "ndcg@10", "mrr"]).per_query
    for q, values in got.items():
        assert (values["map"], values["ndcg@10"], values["mrr"]) == pytest.approx(
            (trec[q]["map"], trec[q]["ndcg_cut_10"], trec[q]["recip_rank"]), abs=1e-15
        )


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_dense_ranking_orders_as_trec_eval_in_any_chunks_and_runs(data: st.DataObject) -> None:
    # Scores from a few values (floats, ints or a mix, which marshal does not prove), ids of one
    # or several widths, with NUL or not; dense runs, blocks and chunks drawn tiny.
    alphabet = data.draw(st.sampled_from(["ab", "ab\x00", "aé\U0001f600"]))
    widths = data.draw(st.sampled_from([(3,), (1, 2, 3)]))
    pool = data.draw(
        st.sampled_from([[0.0, 1.0], [0, 1, 2], [-0.0, 0.0, 2.5], [1.0, 2, -math.inf], [math.inf, 0.5, 0.5]])
    )
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(data.draw(st.integers(1, 12))):
        n = data.draw(st.integers(1, 8))
        ids = _draw_ids(data, alphabet, widths, n)
        run[f"q{q:02d}"] = {d: data.draw(st.sampled_from(pool)) for d in ids}
        judged = data.draw(st.lists(st.sampled_from([*ids, "unranked"]), min_size=1, max_size=n + 1, unique=True))
        qrels[f"q{q:02d}"] = {d: data.draw(st.integers(0, 2)) for d in judged}
    measures = ["map", "ndcg@10", "mrr", "P_1", "P_3", "num_rel_ret"]
    max_docs = data.draw(st.sampled_from([None, 2]))
    expected = evaluate_run(_untied(run), qrels, measures, max_docs=max_docs).per_query
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run, "_batch_is_cheaper", lambda *_: True)
        patch.setattr(_run, "_DENSE_RUN", data.draw(st.integers(1, 4)))
        patch.setattr(_run, "_BLOCK_PAIRS", data.draw(st.integers(1, 40)))
        patch.setattr(_run, "_CHUNK_IDS", data.draw(st.integers(1, 12)))
        assert evaluate_run(run, qrels, measures, max_docs=max_docs).per_query == expected


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (math.nan, ValueError, "run: score of doc 'd7' in query 'q02' is NaN"),
        (True, ValueError, "run: score of doc 'd7' in query 'q02' is not a number (got True)"),
        ("0.5", ValueError, "run: score of doc 'd7' in query 'q02' is not a number (got '0.5')"),
        (np.float32(2.0), None, None),  # not proven by marshal: read the usual way, and scored
    ],
)
def test_a_bad_score_in_a_query_meant_for_dense_ranking_is_named(
    bad: object, error: type[Exception] | None, message: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = _graded_run(5, 3, 30, [0.0, 1.0, 2.0])
    run["q02"]["d7"] = bad  # type: ignore[assignment]
    dense = _dense_queries(monkeypatch)
    if error is None:
        expected = evaluate_run(_untied({**run, "q02": {**run["q02"], "d7": 2.0}}), qrels, ["map"]).per_query
        assert evaluate_run(run, qrels, ["map"]).per_query == expected
        assert dense == ["q01"]  # q02 left dense ranking for the usual way
        return
    with pytest.raises(error) as raised:
        evaluate_run(run, qrels, ["map"])
    assert str(raised.value) == message
    assert dense == ["q01"]


def test_a_doc_id_that_is_not_a_str_in_a_dense_query_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    run, qrels = _graded_run(5, 3, 30, [0.0, 1.0, 2.0])
    run["q02"][7] = 1.0  # type: ignore[index]
    dense = _dense_queries(monkeypatch)
    with pytest.raises(TypeError) as raised:
        evaluate_run(run, qrels, ["map"])
    assert str(raised.value) == "'run['q02']' has a doc id that is not a str: 7 (int)"
    assert dense == ["q01", "q02"]


def test_a_query_of_distinct_scores_after_integer_grades_is_ranked_the_usual_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Review finding: a wrong guess (distinct scores ranked densely) costs ~28 us of 1,000 docs;
    # a query whose first 32 scores take more than 16 values leaves dense ranking at once.
    run, qrels = _graded_run(5, 4, 40, [0.0, 1.0, 2.0])
    run["q02"] = {d: 0.5 + i / 64 for i, d in enumerate(run["q02"])}  # 40 distinct scores
    dense = _dense_queries(monkeypatch)
    expected = evaluate_run(_untied(run), qrels, ["map", "ndcg@10"]).per_query
    assert evaluate_run(run, qrels, ["map", "ndcg@10"]).per_query == expected
    assert dense == ["q01"]  # q02 the usual way; q03 too, the next query that decides
    assert _run._few_values({f"d{i}": float(i % 16) for i in range(40)})
    assert not _run._few_values({f"d{i}": float(i % 17) for i in range(40)})
    assert not _run._few_values({"a": [1.0], "b": 2.0})  # unhashable: left to the usual checks
