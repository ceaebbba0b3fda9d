"""The run engine: the compiled kernel equals its plain-Python reference, and both read and rank
as trec_eval 10.0 does (scores as strtod reads them, ties by doc id descending byte-wise).

Hypothesis draws TREC files (ids of mixed widths, NUL-free unicode, ties of every kind, scores
equal as float32 but not as doubles, comments, CRLF, odd separators, bad lines) and dicts; each is
fed to both engines, in windows cut anywhere, grouped and shuffled, and must give the same hits,
the same fault, the same run id.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _hits, _kernel, _reference, evaluate_run
from ef.trec import read_run, write_run

ENGINES = [_kernel, _reference]
MEASURES = ["ndcg@10", "map", "mrr", "P_5", "recall_100", "bpref", "num_ret", "num_rel_ret", "infAP"]

# --- strategies ---------------------------------------------------------------------------------

_ID_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00 \t\n\v\f\r\x1c\x1d\x1e\x1f\x85\xa0")
_IDS = st.one_of(
    st.sampled_from(["d1", "d9", "d10", "d2", "D1", "é", "e", "doc", "docs", "a", "ab", "日本", "\U0001f600"]),
    st.text(_ID_CHARS, min_size=1, max_size=6).filter(lambda s: not s.startswith("#")),
)
_SCORES = st.one_of(
    st.sampled_from(["1", "1.0", "0", "-0", "-0.0", "2", "0.5", ".5", "5.", "1e2", "100", "inf", "-inf", "Infinity"]),
    st.sampled_from(["0.1", "0.10000000149011612", "0.30000001192092896", "0.3"]),  # equal as float32 only
    st.integers(-3, 3).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["9007199254740993", "123456789012345678901234", "0x1p3", "1e-400", "4.9e-324"]),
)
_BAD = st.sampled_from(
    [
        "q 0 d 1 1.5x r",
        "q 0 d 1 nan r",
        "q 0 d 1 1e400 r",
        "q 0 d",
        "q 0 d\x001 1 1 r",
        "q 0 d 1 1\r r",
        "q 0 d\xff 1 1 r",
        "q 0 \xc3\x28 1 1 r",
    ]
)


@st.composite
def _run_files(draw: st.DrawFn) -> tuple[bytes, dict[str, dict[str, int]]]:
    queries = draw(st.lists(_IDS, min_size=1, max_size=5, unique=True))
    lines: list[bytes] = []
    qrels: dict[str, dict[str, int]] = {}
    for q in queries:
        docs = draw(st.lists(_IDS, min_size=1, max_size=12, unique=True))
        for d in docs:
            sep = draw(st.sampled_from([" ", "\t", "  ", " \t\v\f"]))
            end = draw(st.sampled_from(["\n", "\r\n", " \n"]))
            score = draw(_SCORES)
            lines.append(sep.join([q, "Q0", d, "0", score, "run" + q[:2]]).encode() + end.encode())
        if draw(st.booleans()):
            judged = draw(st.lists(st.sampled_from(docs) | _IDS, max_size=5, unique=True))
            qrels[q] = {d: draw(st.integers(-1, 3)) for d in judged}
    if draw(st.booleans()):
        random.Random(draw(st.integers(0, 99))).shuffle(lines)
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from([b"# a comment\n", b"\n", b"  \t\n", b"   # indented\n"])))
    if draw(st.integers(0, 9)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), draw(_BAD).encode("latin-1") + b"\n")
    if draw(st.integers(0, 4)) == 0 and lines:  # a doc twice in a query
        lines.append(lines[draw(st.integers(0, len(lines) - 1))])
    data = b"".join(lines)
    if draw(st.booleans()):
        data = data.rstrip(b"\n")  # no newline at the end
    return data, qrels


def _feed(engine: Any, data: bytes, judged: Any, max_docs: int, cuts: list[int]) -> Any:
    """What the door does, in windows ending at `cuts`: the result or the error message."""
    ranker = engine.Ranker(judged, max_docs)
    pending = b""
    points = [*sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    at = 0
    for point in points:
        pending += data[at:point]
        at = point
        final = point == len(data)
        got = ranker.feed(pending, final, False)
        if isinstance(got, tuple):
            if got[0] != "ungrouped":
                return str(_hits._error("run", pending, got))
            ranker = engine.Ranker(judged, max_docs)
            got = ranker.feed(data, True, True)
            return str(_hits._error("run", data, got)) if isinstance(got, tuple) else _decoded(ranker.result())
        pending = pending[got:]
    return _decoded(ranker.result())


def _decoded(result: tuple[Any, ...]) -> tuple[Any, ...]:
    num_ret, query, rank, judgement, run_id = result
    hits = sorted(zip(*(np.frombuffer(b, dtype=np.int64).tolist() for b in (query, rank, judgement)), strict=True))
    return np.frombuffer(num_ret, dtype=np.int64).tolist(), hits, run_id


# --- the kernel equals the reference -------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(case=_run_files(), cuts=st.lists(st.integers(0, 400), max_size=6), max_docs=st.sampled_from([-1, 1, 3]))
def test_the_kernel_ranks_files_as_the_reference_in_any_windows(
    case: tuple[bytes, dict[str, dict[str, int]]], cuts: list[int], max_docs: int
) -> None:
    data, qrels = case
    query_ids = sorted(qrels)
    doc_ids = [list(qrels[q]) for q in query_ids]
    got = [_feed(e, data, e.Judged(query_ids, doc_ids), max_docs, cuts) for e in ENGINES]
    assert got[0] == got[1]
    whole = [_feed(e, data, e.Judged(query_ids, doc_ids), max_docs, []) for e in ENGINES]
    assert whole[0] == got[0]  # windows change nothing
    read = [e.read_run(data) for e in ENGINES]
    assert [str(_hits._error("run", data, r)) if isinstance(r, tuple) else r for r in read] == [
        str(_hits._error("run", data, r)) if isinstance(r, tuple) else r for r in reversed(read)
    ]


_DICT_SCORES = st.one_of(
    st.floats(allow_nan=False),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0.1, float(np.float32(0.1)), -0.0, 0.0, 1, 1.0, True, float("nan"), None, "1"]),
    st.floats(width=32).map(np.float32),
    st.sampled_from([Decimal("0.1"), Fraction(1, 3), np.int64(7), 10**400]),
)


@settings(max_examples=150, deadline=None)
@given(
    run=st.dictionaries(_IDS, st.dictionaries(_IDS, _DICT_SCORES, max_size=10), max_size=4),
    judged=st.dictionaries(_IDS, st.dictionaries(_IDS, st.integers(-1, 3), max_size=5), max_size=4),
    max_docs=st.sampled_from([-1, 1, 4]),
)
def test_the_kernel_ranks_dicts_as_the_reference(
    run: dict[str, dict[str, Any]], judged: dict[str, dict[str, int]], max_docs: int
) -> None:
    qrels = {q: dict(judged.get(q, {}), **dict.fromkeys(list(docs)[:2], 1)) for q, docs in run.items()} | judged
    query_ids = sorted(qrels)
    got = []
    for engine in ENGINES:
        try:
            got.append(engine.rank_mapping(run, qrels, query_ids, max_docs, _hits._convert, _hits._bad_doc))
        except (ValueError, TypeError) as error:
            got.append(str(error))
    assert got[0] == got[1]


@pytest.mark.parametrize("judged_per_query", [3, 16, 17, 60])
def test_many_judgements_per_query_rank_as_the_reference(judged_per_query: int) -> None:
    # Up to 16 judged docs are counted over all of them; more are searched: both equal the reference.
    rng = random.Random(judged_per_query)
    run, qrels = {}, {}
    for q in range(30):
        docs = [rng.choice(["d", "doc", "doc-", "doc00000"]) + str(rng.randrange(400)) for _ in range(120)]
        run[f"q{q}"] = {d: float(rng.randrange(4)) if q % 2 else rng.random() for d in docs}
        qrels[f"q{q}"] = {d: rng.randint(-1, 2) for d in rng.sample(sorted(run[f"q{q}"]), judged_per_query)}
    query_ids = sorted(qrels)
    dicts = [e.rank_mapping(run, qrels, query_ids, -1, _hits._convert, _hits._bad_doc) for e in ENGINES]
    assert dicts[0] == dicts[1]
    data = "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()).encode()
    files = [_feed(e, data, e.Judged(query_ids, [list(qrels[q]) for q in query_ids]), -1, [999]) for e in ENGINES]
    assert files[0] == files[1]
    assert len(files[0][1]) == 30 * judged_per_query


# --- scores read as strtod reads them ------------------------------------------------------------

_HARD_SCORES = [
    "123456789012345678901234",
    "-12345678901234567890123",
    "18446744073709551621",
    "99999999999999999999.999",
    "0.0000000000000000000001",
    ".00000000000000000000001",
    "999999999999999999",
    "9007199254740993",
    "9007199254740992.0",
    "900719925474099.3",
    "5.",
    ".5",
    "-0",
    "-.0",
    "0",
    "00000000000000000000000.",
    "1e5",
    "+1",
    "0x1p3",
    "-0X1.8P1",
    "inf",
    "-Infinity",
    "1e-400",
    "2.2250738585072011e-308",
]
_NOT_NUMBERS = ["-", ".", "-.", "1..2", "1.2.", "--1", "1-", "1e", "0x", "infinit", "١", "1_0", "0x1p"]


def _scores_read(tokens: list[str]) -> list[float] | str:
    data = "".join(f"q 0 d{i} 0 {t} r\n" for i, t in enumerate(tokens)).encode()
    got = _kernel.read_run(data)
    if isinstance(got, tuple):
        return str(got)
    return list(got["q"].values())


def test_every_strtod_spelling_reads_as_float_does_and_nothing_else_reads() -> None:
    expected = [float.fromhex(t) if "x" in t.lower() else float(t) for t in _HARD_SCORES]
    got = _scores_read(_HARD_SCORES)
    assert [(v, math.copysign(1, v)) for v in got] == [(v, math.copysign(1, v)) for v in expected]  # type: ignore[union-attr]
    for token in _NOT_NUMBERS:
        assert _kernel.read_run(f"q 0 d 0 {token} r\n".encode())[0:3] == ("score", 1, 1), token


_DECIMALS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(10**15, 10**19 - 1).map(str),  # 2**53..2**63: many exact midpoints between doubles
    st.builds(lambda m, k: f"{m // 10**k}.{m % 10**k:0{k}d}", st.integers(10**15, 10**19 - 1), st.integers(1, 19)),
    st.builds(lambda m: f"{m}.5", st.integers(2**53, 2**54)),  # halfway cases with a dot
    st.text("0123456789", min_size=1, max_size=30),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(1, 10**19 - 1), st.integers(-30, 30)),  # in and out of the table
    st.builds(
        lambda m, k, e: f"{m // 10**k}.{m % 10**k:0{k}d}E{e:+d}",
        st.integers(1, 10**19 - 1),
        st.integers(1, 18),
        st.integers(-25, 25),
    ),
    st.builds(
        lambda a, b: f"{a}.{b}", st.text("0123456789", max_size=25), st.text("0123456789", min_size=1, max_size=25)
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_DECIMALS, min_size=1, max_size=30), st.booleans())
def test_decimals_of_any_width_read_exactly(tokens: list[str], negate: bool) -> None:
    tokens = ["-" + t if negate and not t.startswith("-") else t for t in tokens]
    got = _scores_read(tokens)
    assert [(v, math.copysign(1, v)) for v in got] == [(float(t), math.copysign(1, float(t))) for t in tokens]  # type: ignore[union-attr]


def test_many_random_decimals_read_exactly() -> None:
    # 200,000 mantissas of 16-19 digits (past 2^53: the 128-bit path) with exponents in [-22, 22].
    rng = random.Random(11)
    tokens = []
    for _ in range(200_000):
        m, e = rng.randrange(10**15, 10**19), rng.randint(-22, 22)
        tokens.append(rng.choice([f"{m}e{e}", f"0.{m}", f"{m}", f"{str(m)[:3]}.{str(m)[3:]}"]))
    assert _scores_read(tokens) == [float(t) for t in tokens]


def test_decimals_near_a_midpoint_between_doubles_round_once() -> None:
    from decimal import ROUND_CEILING, ROUND_FLOOR

    rng = random.Random(7)
    tokens = []
    for _ in range(4000):
        midpoint = Decimal(1 + rng.getrandbits(52) * 2.0**-52) + Decimal(2) ** -53
        up = ROUND_CEILING if rng.random() < 0.5 else ROUND_FLOOR
        tokens.append(str(midpoint.quantize(Decimal(10) ** -18, up)))
    assert _scores_read(tokens) == [float(t) for t in tokens]


def test_a_locale_with_a_decimal_comma_changes_nothing() -> None:
    script = (
        "import locale\n"
        "for name in ('de_DE.UTF-8', 'fr_FR.UTF-8', 'C.UTF-8'):\n"
        "    try:\n        locale.setlocale(locale.LC_ALL, name); break\n"
        "    except locale.Error: pass\n"
        "from ef.evaluation import _kernel\n"
        "print(_kernel.read_run(b'q 0 d 0 1.5e300 r\\nq 0 e 0 0x1.8p1 r\\n'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out == "{'q': {'d': 1.5e+300, 'e': 3.0}}\n"


# --- ranking as trec_eval and pytrec_eval ---------------------------------------------------------


@pytest.mark.parametrize(
    "scores",
    [
        lambda rng, i: float(rng.randint(0, 10)),  # integer grades
        lambda rng, i: round(rng.random(), 1),  # one decimal
        lambda rng, i: 1.0,  # all tied
        lambda rng, i: rng.random(),  # distinct
    ],
    ids=["integer", "one-decimal", "tied", "distinct"],
)
def test_files_and_dicts_rank_as_pytrec_eval(tmp_path: Path, scores: Any) -> None:
    rng = random.Random(5)
    run = {
        f"q{q}": {f"d{rng.randrange(10 ** rng.randint(1, 5))}x{i % 3}": scores(rng, i) for i in range(200)}
        for q in range(20)
    }
    qrels = {q: {d: rng.randint(0, 3) for d in rng.sample(sorted(docs), 15)} for q, docs in run.items()}
    path = tmp_path / "run.txt"
    write_run(path, run)
    names = {"map": "map", "ndcg@10": "ndcg_cut_10", "P_5": "P_5", "mrr": "recip_rank", "bpref": "bpref"}
    expected = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P.5", "recip_rank", "bpref"}).evaluate(run)
    for source in (run, path):
        report = evaluate_run(source, qrels, list(names))  # type: ignore[arg-type]
        for q in run:
            for ours, theirs in names.items():
                assert report.per_query[q][ours] == pytest.approx(expected[q][theirs], abs=1e-12), (q, ours)


def test_ties_go_to_the_greater_doc_id_byte_wise() -> None:
    # d9 > d10 byte-wise; 'é' (0xc3 0xa9) > 'z'; '\U0001f600' (4 bytes, 0xf0) > 'é'
    run = {"q": {"d10": 1.0, "d9": 1.0, "z": 1.0, "é": 1.0, "\U0001f600": 1.0, "top": 2.0}}
    qrels = {"q": {"d10": 1, "d9": 1, "z": 1, "é": 1, "\U0001f600": 1, "top": 1}}
    table, _, _ = _hits.hit_table(run, qrels, ["q"])
    ranks = dict(zip(table.hit_rank.tolist(), table.hit_grade.tolist(), strict=True))
    assert len(ranks) == 6
    order = [d for _, d in sorted((r, d) for d, r in _ranks(run, qrels).items())]
    assert order == ["top", "\U0001f600", "é", "z", "d9", "d10"]


def _ranks(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, int]:
    """Each judged doc's rank, found one doc at a time (a judgement of its own)."""
    out = {}
    for doc in qrels["q"]:
        table, _, _ = _hits.hit_table(run, {"q": {doc: 1}}, ["q"])
        out[doc] = int(table.hit_rank[0])
    return out


def test_negative_zero_ties_with_zero_and_float32_equals_are_distinct_doubles() -> None:
    run = {"q": {"a": -0.0, "b": 0.0, "c": 0.1, "d": float(np.float32(0.1))}}
    assert _ranks(run, {"q": dict.fromkeys(run["q"], 1)}) == {"d": 0, "c": 1, "b": 2, "a": 3}


# --- errors by name ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ([1.0, True], "run: score of doc 'b' in query 'q' is not a number (got True)"),
        ([np.float32(2.0), "1.5"], "run: score of doc 'b' in query 'q' is not a number (got '1.5')"),
        ([0.5, float("nan")], "run: score of doc 'b' in query 'q' is NaN"),
        ([3, None], "run: score of doc 'b' in query 'q' is not a number (got None)"),
        ([3, 10**400], "run: score of doc 'b' in query 'q' is beyond the range of a double"),
        ([3, Decimal("1e400")], "run: score of doc 'b' in query 'q' is beyond the range of a double"),
        ([3, np.bool_(True)], f"run: score of doc 'b' in query 'q' is not a number (got {np.bool_(True)!r})"),
    ],
)
def test_a_bad_score_is_refused_by_name(values: list[object], error: str) -> None:
    run = {"q": dict(zip(["a", "b"], values, strict=True))}
    with pytest.raises(ValueError) as raised:
        evaluate_run(run, {"q": {"a": 1}}, ["map"])  # type: ignore[arg-type]
    assert str(raised.value) == error


def test_a_doc_id_that_is_not_a_str_is_named_wherever_it_is() -> None:
    with pytest.raises(TypeError) as raised:
        evaluate_run({"q": {"a": 1.0, "b": 1.0, 7: 1.0}}, {"q": {"a": 1}}, ["map"])  # type: ignore[dict-item]
    assert str(raised.value) == "'run['q']' has a doc id that is not a str: 7 (int)"


def test_decimal_fraction_numpy_and_int_scores_rank_as_their_nearest_doubles() -> None:
    qrels = {"q1": {"a": 1, "c": 1}, "q2": {"b": 1}}
    exact: dict[str, dict[str, Any]] = {
        "q1": {"a": Decimal("0.3"), "b": Fraction(1, 2), "c": np.float32(0.1)},
        "q2": {"a": np.int64(1), "b": Decimal("0.7")},
    }
    doubles = {q: {d: float(s) for d, s in docs.items()} for q, docs in exact.items()}
    got = evaluate_run(exact, qrels, ["map", "mrr"])
    assert got.per_query == evaluate_run(doubles, qrels, ["map", "mrr"]).per_query
    assert got.per_query["q1"] == {"map": (1 / 2 + 2 / 3) / 2, "mrr": 0.5}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"q 0 d 1 1.5x r\n", "run.txt:1: score '1.5x' is not a number"),
        (b"q 0 a 1 1 r\nq 0 d 1 NaN r\n", "run.txt:2: score is NaN"),
        (b"q 0 d 1 -1e400 r\n", "run.txt:1: score '-1e400' is beyond the range of a double"),
        (b"# c\nq 0 d 1\n", "run.txt:2: expected 6 columns 'query_id iter doc_id rank score run_id', got 4"),
        (b"q 0 d\x00 1 1 r\n", "run.txt:1: a NUL byte (trec_eval stops reading a file there)"),
        (
            b"q 0 d 1 1\rr r\n",
            "run.txt:1: a carriage return ('\\r') inside a line; line ends must be '\\n' or '\\r\\n'",
        ),
        (b"q 0 d\xff 1 1 r\n", "run.txt:1: b'\\xff' is not valid UTF-8"),
        (
            b"q 0 a 1 1 r\nq 0 b 1 1 r\nq 0 a 1 1 r\n",
            "run.txt:3: doc id 'a' appears twice in query 'q' (first at line 1)",
        ),
    ],
)
def test_a_bad_file_is_refused_with_its_line(tmp_path: Path, text: bytes, message: str) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    for read in (lambda: read_run(path), lambda: evaluate_run(path, {"q": {"a": 1}}, ["map"])):
        with pytest.raises(ValueError) as raised:
            read()
        assert str(raised.value) == f"{tmp_path}/{message}"


def test_non_utf8_bytes_in_the_ignored_columns_are_read_as_trec_eval_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"q \xff d 1 1.5 r\xfe\n")
    assert read_run(path) == {"q": {"d": 1.5}}


# --- streaming ---------------------------------------------------------------------------------------


def _case(seed: int, n_queries: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        docs = [f"d{rng.randrange(10 ** rng.randint(1, 6))}" for _ in range(rng.randint(1, 40))]
        scores = rng.choice([lambda: float(rng.randint(0, 3)), lambda: round(rng.random(), 1), rng.random])
        run[f"q{q}"] = {d: scores() for d in docs}
        qrels[f"q{q}"] = {d: rng.randint(-1, 2) for d in rng.sample(docs, min(len(docs), 4))}
    qrels["unrun"] = {"dx": 1}
    return run, qrels


@pytest.fixture
def tiny_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_hits, "_WINDOW", 256)


@pytest.mark.usefixtures("tiny_window")
@given(seed=st.integers(0, 10**6), missing=st.sampled_from(["zero", "skip"]), max_docs=st.sampled_from([None, 5]))
@settings(max_examples=40, deadline=None)
def test_a_file_streamed_in_windows_equals_the_dict(
    tmp_path_factory: pytest.TempPathFactory, seed: int, missing: str, max_docs: int | None
) -> None:
    run, qrels = _case(seed, 30)
    path = tmp_path_factory.mktemp("s") / "run.txt"
    write_run(path, run)
    assert path.stat().st_size > 4 * 256  # many windows
    from_file = evaluate_run(path, qrels, MEASURES, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]
    from_dict = evaluate_run(run, qrels, MEASURES, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]
    assert from_file == from_dict


def _ranked_file(path: Path, qrels: dict[str, dict[str, int]], max_docs: int) -> Any:
    query_ids = sorted(qrels)
    judged = _kernel.Judged(query_ids, [list(qrels[q]) for q in query_ids])
    try:
        return _decoded(_hits._rank_file(str(path), judged, max_docs))
    except ValueError as error:
        return str(error)


@settings(max_examples=60, deadline=None)
@given(case=_run_files(), copies=st.integers(1, 40), bom=st.booleans(), max_docs=st.sampled_from([-1, 2]))
def test_a_file_cut_in_two_for_two_threads_ranks_as_one_pass(
    tmp_path_factory: pytest.TempPathFactory,
    case: tuple[bytes, dict[str, dict[str, int]]],
    copies: int,
    bom: bool,
    max_docs: int,
) -> None:
    # Copies with their query ids prefixed make a file of many windows; hypothesis' faults,
    # shuffles, comments and duplicates land in either half or across the cut. One thread is the oracle.
    data, qrels = case
    data = data if data.endswith(b"\n") else data + b"\n"
    text = b"".join(re.sub(rb"(?m)^([ \t\v\f]*)([^\s#])", rb"\1c%d_\2" % i, data) for i in range(copies))
    all_qrels = {f"c{i}_{q}": judged for i in range(copies) for q, judged in qrels.items()}
    path = tmp_path_factory.mktemp("cut") / "run.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_hits, "_WINDOW", 256)
        patch.setattr(_hits, "_CORES", 2)
        two = _ranked_file(path, all_qrels, max_docs)
        patch.setattr(_hits, "_CORES", 1)
        assert two == _ranked_file(path, all_qrels, max_docs)


def test_the_cut_falls_on_a_new_query_and_faults_past_it_keep_the_files_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_hits, "_WINDOW", 256)
    monkeypatch.setattr(_hits, "_CORES", 2)
    lines = [f"q{q} Q0 d{i} {i} {i % 3} r\n" for q in range(40) for i in range(5)]  # 3,150 bytes
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with path.open("rb") as stream:
        cut = _hits._cut(stream.fileno(), path.stat().st_size)
    # The middle (byte 1,575) is inside q20's lines: the cut is where q21 starts.
    assert cut == len("".join(lines[: lines.index("q21 Q0 d0 0 0 r\n")]))
    qrels = {f"q{q}": {"d1": 1, "d4": 2} for q in range(40)}
    assert evaluate_run(path, qrels, MEASURES) == evaluate_run(read_run(path), qrels, MEASURES)
    lines[181] = "q36 Q0 d0 1 0 r\n"  # line 182: d0 again in q36, past the cut
    path.write_text("".join(lines))
    twice = rf"^{path}:182: doc id 'd0' appears twice in query 'q36' \(first at line 181\)$"
    with pytest.raises(ValueError, match=twice):
        evaluate_run(path, qrels)
    lines[181] = "q36 Q0 d5 0 x r\n"
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match=rf"^{path}:182: score 'x' is not a number$"):
        evaluate_run(path, qrels)
    lines[181] = "q3 Q0 d5 0 1 r\n"  # q3 again, past the cut: not grouped, read whole
    path.write_text("".join(lines))
    per_query = evaluate_run(path, qrels, ["num_ret"]).per_query
    assert (per_query["q3"]["num_ret"], per_query["q36"]["num_ret"]) == (6, 4)


def test_a_bad_line_at_the_cut_comes_before_a_doc_twice_just_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One pass ranks the first half's last query only once it reads the cut's line: that line's
    # fault is the first, and two threads report it too (the review's case).
    monkeypatch.setattr(_hits, "_WINDOW", 256)
    lines = [f"q{q:02d} Q0 d{i} {i} {i % 3} r\n" for q in range(40) for i in range(5)]
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with path.open("rb") as stream:
        cut = _hits._cut(stream.fileno(), path.stat().st_size)
    n = "".join(lines).encode()[:cut].count(b"\n")  # the second half starts on line n + 1
    lines[n - 1] = lines[n - 2]  # a doc twice in the last query before the cut
    lines[n] = lines[n].replace(" r\n", "\n")  # 5 columns on the cut's line
    path.write_text("".join(lines))
    expected = rf"^{path}:{n + 1}: expected 6 columns 'query_id iter doc_id rank score run_id', got 5$"
    for cores in (1, 2):
        monkeypatch.setattr(_hits, "_CORES", cores)
        with pytest.raises(ValueError, match=expected):
            evaluate_run(path, {f"q{q:02d}": {"d1": 1} for q in range(40)})


def _cut_file(path: Path, lines: list[str], bom: bytes = b"") -> int:
    """`lines` written to `path` (after `bom`); the line the second half of its cut starts on."""
    path.write_bytes(bom + "".join(lines).encode())
    with path.open("rb") as stream:
        cut = _hits._cut(stream.fileno(), path.stat().st_size)
    assert cut is not None  # ranked as two halves (at least 4 windows)
    assert path.stat().st_size >= 4 * _hits._WINDOW
    return path.read_bytes()[:cut].count(b"\n") + 1


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("half", ["first", "second", "both"])
@pytest.mark.parametrize("fault", ["score", "columns", "twice"])
def test_a_fault_in_either_half_of_a_cut_file_is_worded_as_one_pass_words_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bom: bytes, half: str, fault: str
) -> None:
    # A half's fault sends the file through one pass from its first byte (BOM dropped): the
    # file's own line numbers, whichever half the fault is in; with two, the first.
    monkeypatch.setattr(_hits, "_WINDOW", 256)
    lines = [f"q{q:02d} Q0 d{i} {i} {i % 3} r\n" for q in range(40) for i in range(5)]
    path = tmp_path / "run.txt"
    second = _cut_file(path, lines, bom)
    at = {"first": [12], "second": [second + 22], "both": [12, second + 22]}[half]  # never a query's first line
    for line in at:
        fields = lines[line - 1].split()
        if fault == "score":
            fields[4] = "x"
        elif fault == "columns":
            del fields[5]
        else:
            fields = lines[line - 2].split()  # the line before's doc, in the same query
        lines[line - 1] = " ".join(fields) + "\n"
    assert _cut_file(path, lines, bom) == second
    line = at[0]
    expected = {
        "score": f"{path}:{line}: score 'x' is not a number",
        "columns": f"{path}:{line}: expected 6 columns 'query_id iter doc_id rank score run_id', got 5",
        "twice": f"{path}:{line}: doc id {lines[line - 1].split()[2]!r} appears twice in query "
        f"{lines[line - 1].split()[0]!r} (first at line {line - 1})",
    }[fault]
    for cores in (2, 1):  # two halves, then one pass
        monkeypatch.setattr(_hits, "_CORES", cores)
        with pytest.raises(ValueError) as caught:
            evaluate_run(path, {f"q{q:02d}": {"d1": 1} for q in range(40)})
        assert str(caught.value) == expected


@pytest.mark.parametrize("bad_score", [None, "2.5x"])
def test_a_query_in_both_halves_of_a_cut_file_is_scored_as_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad_score: str | None
) -> None:
    monkeypatch.setattr(_hits, "_WINDOW", 256)
    monkeypatch.setattr(_hits, "_CORES", 2)
    lines = [f"q{q:02d} Q0 d{i} {i} {i % 3} r\n" for q in range(40) for i in range(5)]
    lines += ["q03 Q0 d7 0 2.5 r\n", "q03 Q0 d8 0 0.5 r\n"]  # q03, in the first half, again at the end
    path = tmp_path / "run.txt"
    assert _cut_file(path, lines) > 20  # q03's first lines are in the first half
    qrels = {f"q{q:02d}": {"d1": 1, "d7": 2, "d8": 1} for q in range(40)}
    if bad_score is None:
        scattered = []
        real = _hits._rank_scattered
        monkeypatch.setattr(_hits, "_rank_scattered", lambda *args: scattered.append(1) or real(*args))
        got = evaluate_run(path, qrels, MEASURES)
        assert scattered == [1]
        assert got == evaluate_run(read_run(path), qrels, MEASURES)
        assert (got.per_query["q03"]["num_ret"], got.per_query["q03"]["num_rel_ret"]) == (7, 3)
        return
    lines[-1] = lines[-1].replace("0.5", bad_score)  # a fault past the second q03: its line is named
    _cut_file(path, lines)
    for cores in (2, 1):  # two halves, then one pass
        monkeypatch.setattr(_hits, "_CORES", cores)
        with pytest.raises(ValueError) as caught:
            evaluate_run(path, qrels)
        assert str(caught.value) == f"{path}:{len(lines)}: score '{bad_score}' is not a number"


def test_two_threads_read_a_growing_file_to_its_end_as_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer finishes its last line after the file is opened: the second half reads to the end,
    # not to the size seen at the open.
    monkeypatch.setattr(_hits, "_WINDOW", 256)
    monkeypatch.setattr(_hits, "_CORES", 2)
    path = tmp_path / "run.txt"
    lines = [f"q{q:02d} Q0 d{i} {i} {i % 3} r\n" for q in range(40) for i in range(5)]
    path.write_text("".join(lines) + "q40 Q0 d1 0 0.")  # the writer is mid-line
    real_cut = _hits._cut

    def appending(fd: int, size: int) -> Any:
        with path.open("a") as out:
            out.write("9 r\n")
        return real_cut(fd, size)

    monkeypatch.setattr(_hits, "_cut", appending)
    per_query = evaluate_run(path, {f"q{q:02d}": {"d1": 1} for q in range(41)}, ["num_ret", "P_1"]).per_query
    assert per_query["q40"] == {"num_ret": 1, "P_1": 1.0}


@pytest.mark.usefixtures("tiny_window")
def test_a_file_not_grouped_by_query_is_scored_the_same_from_one_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, qrels = _case(7, 30)
    lines = [f"{q} Q0 {d} 1 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()]
    random.Random(3).shuffle(lines)
    path = tmp_path / "shuffled.txt"
    path.write_text("".join(lines))
    opened = []
    real_open = _hits.open_binary

    def counting(source: Any) -> Any:
        opened.append(source)
        return real_open(source)

    monkeypatch.setattr(_hits, "open_binary", counting)
    assert evaluate_run(path, qrels, MEASURES) == evaluate_run(run, qrels, MEASURES)
    assert opened == [str(path)]  # opened once: a file replaced meanwhile cannot mix versions


def test_a_file_replaced_while_it_is_read_is_scored_from_one_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 36: the old file (ungrouped, so it is read twice) is swapped for an empty one between reads.
    monkeypatch.setattr(_hits, "_WINDOW", 64)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{i % 3} Q0 d{i} 1 {i} r\n" for i in range(30)))
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(i, 30, 3)} for i in range(3)}
    expected = evaluate_run(path, qrels, ["num_rel_ret"]).metrics
    real_rank_bytes = _hits._rank_bytes

    def swapped(*args: Any, **kwargs: Any) -> Any:
        os.replace(tmp_path / "empty", path)  # atomically, as a job rewriting the run would
        return real_rank_bytes(*args, **kwargs)

    (tmp_path / "empty").write_text("")
    monkeypatch.setattr(_hits, "_rank_bytes", swapped)
    assert evaluate_run(path, qrels, ["num_rel_ret"]).metrics == expected == {"num_rel_ret": 30}


@pytest.mark.usefixtures("tiny_window")
def test_a_query_longer_than_many_windows_and_errors_keep_the_whole_files_line(tmp_path: Path) -> None:
    run = {"q1": {f"doc{i}": float(i % 7) for i in range(500)}, "q2": {"a": 1.0}}
    path = tmp_path / "run.txt"
    write_run(path, run)
    qrels = {"q1": {"doc3": 1, "doc10": 2, "doc499": 1}, "q2": {"a": 1}}
    assert evaluate_run(path, qrels, MEASURES) == evaluate_run(run, qrels, MEASURES)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(450, "q1 Q0 dz 1 1.5x r\n")
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match=rf"^{path}:451: score '1.5x' is not a number$"):
        evaluate_run(path, qrels)


@pytest.mark.usefixtures("tiny_window")
def test_the_run_id_is_the_last_lines_and_a_duplicate_in_a_later_window_is_found(tmp_path: Path) -> None:
    from ef.evaluation.scoring import load_run_and_qrels, score_run

    path = tmp_path / "run.txt"
    path.write_text(
        "".join(f"q{q} Q0 d{i} {i} {1 / (i + 1)} first\n" for q in range(20) for i in range(5))
        + "q99 Q0 d1 1 1.0 last\n# a comment\n"
    )
    run, qrels = load_run_and_qrels(path, {"q1": {"d1": 1}})
    assert score_run(run, qrels, ["map"]).run_id == "last"
    with path.open("a") as handle:
        handle.write("zz Q0 d1 1 0.5 r\nzz Q0 d1 2 0.4 r\n")
    with pytest.raises(
        ValueError, match=rf"^{path}:104: doc id 'd1' appears twice in query 'zz' \(first at line 103\)$"
    ):
        evaluate_run(path, {"zz": {"d1": 1}})


def test_streaming_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """Peak resident memory of a process scoring a grouped file hardly grows when the file is four
    times as long (the window and one query are held, not the file)."""
    peaks = []
    for n in (50_000, 400_000):
        path = tmp_path / f"run{n}.txt"
        with path.open("w") as out:
            for q in range(n // 100):
                out.writelines(f"q{q} Q0 doc{i} {i} {1 / (i + 1)!r} r\n" for i in range(100))
        script = (
            "import resource, sys\nfrom ef.evaluation import evaluate_run\n"
            "evaluate_run(sys.argv[1], {'q1': {'doc1': 1}}, ['map'])\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
        peaks.append(int(out.stdout))
    sizes = [(tmp_path / f"run{n}.txt").stat().st_size for n in (50_000, 400_000)]
    assert sizes[1] - sizes[0] > 12 * 2**20
    assert peaks[1] - peaks[0] < 2 * 2**10  # KiB: under 2 MiB more for 12+ MiB more file


# --- the extension's objects, misused -------------------------------------------------------------


def test_a_score_whose_float_changes_the_run_is_read_safely() -> None:
    # The kernel keeps what the caller's dicts lend it while Python code (a __float__) runs.
    run: dict[str, Any] = {"q": {"d1": None, "d2": 1.0, "d3": 0.5, **{f"x{i}": 0.1 for i in range(50)}}}

    class Replacing:
        def __float__(self) -> float:
            run["q"] = {}  # drops the run's reference to the ranking being read
            return 2.0

    run["q"]["d1"] = Replacing()
    plain = {"q": {**run["q"], "d1": 2.0}}
    qrels = {"q": {"d1": 1.0, "d3": 1.0}}
    got = _kernel.rank_mapping(run, qrels, ["q"], -1, _hits._convert, _hits._bad_doc)
    assert got == _kernel.rank_mapping(plain, qrels, ["q"], -1, _hits._convert, _hits._bad_doc)


def test_judged_and_ranker_are_initialised_once_and_checked() -> None:
    judged = _kernel.Judged(["q1"], [["d1"]])
    with pytest.raises(TypeError, match=r"^a Judged is initialised once$"):
        judged.__init__(["q2"], [["d2"]])  # type: ignore[misc]
    ranker = _kernel.Ranker(judged, -1)
    with pytest.raises(TypeError, match=r"^a Ranker is initialised once$"):
        ranker.__init__(judged, -1)  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"^the Ranker is not initialised$"):
        _kernel.Ranker.__new__(_kernel.Ranker).result()
    with pytest.raises(TypeError, match="takes an initialised Judged"):
        _kernel.Ranker(_kernel.Judged.__new__(_kernel.Judged), -1)
    with pytest.raises(ValueError, match=r"^a query id is given twice$"):
        _kernel.Judged(["q1", "q1"], [["d1"], ["d2"]])
    with pytest.raises(ValueError, match=r"^a query id is given twice$"):
        _reference.Judged(["q1", "q1"], [["d1"], ["d2"]])


def test_the_extension_imported_again_checks_against_its_own_types() -> None:
    script = (
        "import sys\nimport ef.evaluation._kernel as first\n"
        "del sys.modules['ef.evaluation._kernel']\nimport ef.evaluation._kernel as second\n"
        "ranker = second.Ranker(second.Judged(['q'], [['d']]), -1)\n"
        "print(ranker.feed(b'q 0 d 1 1 r\\n', True, False), first is not second)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout == "12 True\n"


# --- the fallback --------------------------------------------------------------------------------


def test_without_the_extension_the_reference_scores_and_says_so_once(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.5 r\n")
    script = (
        "import sys\nsys.modules['ef.evaluation._kernel'] = None\n"
        "from ef.evaluation import evaluate_run\n"
        "print(evaluate_run(sys.argv[1], {'q1': {'d2': 1}}, ['mrr']).metrics)\n"
        "print(evaluate_run({'q1': {'d1': 0.5, 'd2': 0.5}}, {'q1': {'d1': 1}}, ['mrr']).metrics)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    assert done.stdout == "{'mrr': 1.0}\n{'mrr': 0.5}\n"
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("ef: the compiled run engine is not available (")


# --- fusion's columns: stack_columns, trec_order, build_run ------------------------------------

_FUSION_IDS = st.one_of(
    st.sampled_from(["d1", "d10", "d9", "doc-0001", "doc-00010", "doc-0001\x7f", "é", "\udc80", "a" * 9, "a" * 8]),
    st.text(max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(["q1", "q2", "q10", "é"]),
                        st.dictionaries(_FUSION_IDS, st.sampled_from([0.5, -0.0, 0.0, 1.0, 1e300, -2.5]), max_size=8),
                        max_size=4),
        max_size=3,
    )
)
def test_fusion_columns_equal_the_reference(runs: list[dict[str, dict[str, float]]]) -> None:
    got = _kernel.stack_columns(runs)
    assert got == _reference.stack_columns(runs)
    assert got is not None
    queries, ids, pair_query, pair_head, *_ = got
    # Every order of the entries, by query, then score, then id: the kernel's is the reference's.
    groups = np.frombuffer(pair_query, dtype=np.int64)
    scores = np.array([next(s for r in runs for q, d in r.items() if q == queries[g] for i, s in d.items()
                            if i == ids[p]) for p, g in enumerate(groups.tolist())], dtype=np.float64)
    pairs = np.arange(len(ids), dtype=np.int64)
    for names in (ids, None):
        assert _kernel.trec_order(groups, scores, pairs, pair_head, names) == _reference.trec_order(
            groups.tobytes(), scores.tobytes(), pairs.tobytes(), pair_head, names
        )
    bounds = np.searchsorted(groups, np.arange(len(queries) + 1)).astype(np.int64)
    built = _kernel.build_run(queries, bounds, ids, pairs, scores)
    assert built == _reference.build_run(queries, bounds.tobytes(), ids, pairs.tobytes(), scores.tobytes())
    ranked = [[ids[p] for p in pairs[lo:hi]] for lo, hi in itertools.pairwise(bounds)]
    assert [list(d) for d in built.values()] == ranked


@pytest.mark.parametrize("engine", ENGINES)
def test_stack_columns_takes_only_exact_types(engine: Any) -> None:
    class Text(str):
        pass

    assert engine.stack_columns([{"q": {"d": 1}}]) is None  # an int score: the caller checks and converts
    assert engine.stack_columns([{"q": {Text("d"): 1.0}}]) is None
    assert engine.stack_columns([{"q": [("d", 1.0)]}]) is None
    queries, ids, pair_query, *_ = engine.stack_columns([{"q": {"a": 1.0, "b": 2.0}}, {"q": {"b": 0.5}, "p": {}}])
    assert (queries, ids, list(np.frombuffer(pair_query, dtype=np.int64))) == (["q", "p"], ["a", "b"], [0, 0])


@settings(max_examples=200, deadline=None)
@given(files=st.lists(_run_files(), max_size=3), bytearrays=st.booleans())
def test_stack_text_is_stack_columns_of_read_run_or_none(files: list[tuple[bytes, Any]], bytearrays: bool) -> None:
    texts = [bytearray(data) if bytearrays else data for data, _ in files]
    got = _kernel.stack_text(texts)
    assert got == _reference.stack_text(texts)
    runs = [_kernel.read_run(text) for text in texts]
    if got is not None:
        assert got == _kernel.stack_columns(runs)
    elif not any(isinstance(run, tuple) for run in runs):  # no fault: a query's lines were scattered
        fields = [[line.split() for line in bytes(text).splitlines()] for text in texts]
        lists = [[f[0] for f in lines if f and f[0][:1] != b"#"] for lines in fields]
        assert any(len({q for q, _ in itertools.groupby(queries)}) < len(list(itertools.groupby(queries)))
                   for queries in lists)


def test_stack_text_leaves_to_read_run_a_fault_a_doc_twice_and_scattered_lines() -> None:
    grouped = b"q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n# note\n\nq2 Q0 d1 1 5 r\n"
    assert _kernel.stack_text([grouped]) == _kernel.stack_columns([_kernel.read_run(grouped)])
    for text in (grouped + b"q1 Q0 d3 1 1 r\n", grouped + b"q2 Q0 d1 2 0 r\n", grouped + b"q3 Q0 d 1 x r\n",
                 b"q1 Q0 d1 1 1\n"):
        assert _kernel.stack_text([grouped, text]) is None
        assert _reference.stack_text([grouped, text]) is None
    assert _kernel.stack_text([]) == _kernel.stack_columns([])


def test_a_long_tie_on_equal_heads_ranks_by_bytes_as_the_reference() -> None:
    # 300 tied docs whose ids share their first 8 bytes ("clueweb0..."): the merge sort of long ties.
    rng = random.Random(3)
    ids = [f"clueweb09-{rng.randrange(10**6):06d}-{i}" for i in range(300)]
    heads = np.array([int.from_bytes(i.encode()[:8], "big") for i in ids], dtype=np.uint64)
    group, score, doc = np.zeros(300, np.int64), np.ones(300), np.array(rng.sample(range(300), 300), np.int64)
    got = _kernel.trec_order(group, score, doc, heads, ids)
    assert got == _reference.trec_order(group.tobytes(), score.tobytes(), doc.tobytes(), heads.tobytes(), ids)
    order = np.frombuffer(got, dtype=np.int64)
    assert [ids[d] for d in doc[order]] == sorted(ids, reverse=True)


def test_fusion_columns_refuse_misaligned_or_short_buffers() -> None:
    raw = memoryview(bytes(17))[1:]  # 16 bytes, not 8-byte aligned
    with pytest.raises(ValueError, match=r"^group must hold 2 aligned 8-byte numbers \(got 16 bytes\)$"):
        _kernel.trec_order(raw, raw, raw, np.zeros(1, np.uint64), None)
    with pytest.raises(ValueError, match=r"^bounds must hold 2 aligned 8-byte numbers \(got 8 bytes\)$"):
        _kernel.build_run(["q"], np.zeros(1, np.int64), [], np.zeros(0, np.int64), np.zeros(0))


# --- run_text and writable: the fused run's TREC lines --------------------------------------------

_WRITTEN_IDS = st.one_of(
    st.sampled_from(["d1", "q 1", "d\t", "#q", "", "a\x00b", "\udc80", "é", "d\x0b", "x#"]), st.text(max_size=6)
)
_WRITTEN_SCORES = st.one_of(
    st.sampled_from([0.5, -0.0, 1e-05, 1e16, 1e300, -2.5, 0.1 + 0.2, math.inf, math.nan, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=400, deadline=None)
@given(
    names=st.lists(_WRITTEN_IDS, min_size=1, max_size=4),
    ids=st.lists(_WRITTEN_IDS, min_size=1, max_size=6),
    data=st.data(),
)
def test_run_text_and_writable_equal_the_reference(names: list[str], ids: list[str], data: Any) -> None:
    sizes = data.draw(st.lists(st.integers(0, 14), min_size=len(names), max_size=len(names)))
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    doc = np.array(data.draw(st.lists(st.integers(0, len(ids) - 1), min_size=int(bounds[-1]),
                                      max_size=int(bounds[-1]))), dtype=np.int64)
    score = np.array(data.draw(st.lists(_WRITTEN_SCORES, min_size=len(doc), max_size=len(doc))), dtype=np.float64)
    json = orjson.dumps(score, option=orjson.OPT_SERIALIZE_NUMPY)
    got = _kernel.run_text(names, bounds, ids, doc, score, "run-1", json)
    assert got == _reference.run_text(names, bounds.tobytes(), ids, doc.tobytes(), score.tobytes(), "run-1", json)
    for query in (True, False):
        assert _kernel.writable(ids, query) == _reference.writable(ids, query)
    if got is not None:  # what format_run writes for the same entries (ranked by their order here)
        lines = [f"{names[k]} Q0 {ids[d]} {r} {s!r} run-1\n" for k, (lo, hi) in enumerate(itertools.pairwise(bounds))
                 for r, (d, s) in enumerate(zip(doc[lo:hi].tolist(), score[lo:hi].tolist(), strict=True), 1)]
        assert "".join(got) == "".join(lines)


@pytest.mark.parametrize("engine", ENGINES)
def test_run_text_refuses_what_write_run_refuses(engine: Any) -> None:
    def text(names: list[Any], ids: list[Any], score: float = 1.0) -> Any:
        json = orjson.dumps(np.array([score]), option=orjson.OPT_SERIALIZE_NUMPY)
        return engine.run_text(names, np.array([0, 1]), ids, np.zeros(1, np.int64), np.array([score]), "r", json)

    class Text(str):
        pass

    assert text(["q"], ["d"]) == ["q Q0 d 1 1.0 r\n"]
    for names, ids, score in ((["#q"], ["d"], 1.0), (["q"], ["d x"], 1.0), (["q"], [""], 1.0),
                              (["q"], ["\udc80"], 1.0), (["q"], [Text("d")], 1.0), (["q"], [1], 1.0),
                              (["q"], ["d\x00"], 1.0), (["q"], ["d"], math.inf), (["q"], ["d"], math.nan)):
        assert text(names, ids, score) is None, (names, ids, score)
    assert engine.writable(["x#", "é"], True) is True
    assert engine.writable(["#x"], True) is False
    assert engine.writable(["#x"], False) is True
    with pytest.raises(ValueError, match=r"^doc code 3 is out of range$"):
        engine.run_text(["q"], np.array([0, 1]), ["d"], np.array([3]), np.ones(1), "r", b"[1.0]")
    # Only the entries of the queries given are read: ranked_text passes 64 queries at a time with
    # the whole run's arrays (checking every entry on every call made writing quadratic).
    assert engine.run_text(["q"], np.array([1, 2]), ["d"], np.array([99, 0]), np.ones(2), "r", b"[1.0]") == [
        "q Q0 d 1 1.0 r\n"
    ]


def test_a_score_whose_float_replaces_a_grade_reads_the_grade_it_replaced() -> None:
    # The kernel held the grade borrowed from the qrels while a score's __float__ ran: replaced
    # there, it was freed, and the kernel read whatever took its memory (7.0 below, nDCG 2.33).
    class Grade(float):
        pass

    qrels: dict[str, dict[str, Any]] = {"q": {"d": Grade(3.0)}}
    taken: list[Grade] = []

    class Replacing:
        def __float__(self) -> float:
            qrels["q"]["d"] = 1.0  # frees Grade(3.0), the qrels' only reference to it
            taken.extend(Grade(7.0) for _ in range(10))  # objects of its size, in its memory
            return 0.5

    got = _kernel.rank_mapping({"q": {"d": Replacing()}}, qrels, ["q"], -1, _hits._convert, _hits._bad_doc)
    assert np.frombuffer(got[3], dtype=np.float64).tolist() == [3.0]


def test_a_str_subclass_score_is_refused_after_a_real_type_it_could_replace_is_gone() -> None:
    # The kernel cached the last numbers.Real type of a score by its address alone: once that
    # type was freed, a new type at its address (here a str subclass) was taken for a Real and
    # its score parsed by float() ('9' read as 9.0) instead of refused.
    import gc
    import numbers

    def a_real() -> type:
        class Real:
            def __float__(self) -> float:
                return 0.5

        numbers.Real.register(Real)
        return Real

    cls = a_real()
    qrels = {"q": {"d": 1}}
    _kernel.rank_mapping({"q": {"d": cls()}}, qrels, ["q"], -1, _hits._convert, _hits._bad_doc)
    del cls
    gc.collect()
    for i in range(200):
        text = type(f"Text{i}", (str,), {})
        with pytest.raises(ValueError, match=r"^run: score of doc 'd' in query 'q' is not a number \(got '9'\)$"):
            _kernel.rank_mapping({"q": {"d": text("9")}}, qrels, ["q"], -1, _hits._convert, _hits._bad_doc)


@contextlib.contextmanager
def _repeated(head: bytes, body: bytes, tail: bytes, copies: int) -> Iterator[memoryview]:
    """A read-only buffer of head + body * copies + tail (each a whole number of pages) in a few
    pages of memory: each part one memfd, mapped again and again into one reserved range."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = len(head) + len(body) * copies + len(tail)
    base = libc.mmap(None, size, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)  # reserved (PROT_NONE)
    assert base not in (None, ctypes.c_void_p(-1).value)
    try:
        at = base
        for part, times in ((head, 1), (body, copies), (tail, 1)):
            fd = os.memfd_create("part")
            try:
                os.write(fd, part)
                for _ in range(times):
                    fixed = mmap.MAP_SHARED | 0x10  # MAP_FIXED: into the reserved range
                    assert libc.mmap(at, len(part), mmap.PROT_READ, fixed, fd, 0) == at
                    at += len(part)
            finally:
                os.close(fd)
        with memoryview((ctypes.c_char * size).from_address(base)).cast("B") as view:
            yield view
    finally:
        libc.munmap(base, size)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux" or sys.maxsize < 2**40, reason="memfd and a 64-bit address space")
def test_a_line_of_more_than_2_31_columns_is_read_without_overflow() -> None:
    # The tokeniser counted a line's columns in an int: past 2^31 it went negative, and the
    # column's offsets were written below the stack array that holds six (a crash). 4 GiB of
    # address space here, a few pages of memory.
    page = 1 << 20
    head = b"q 0 d 1 1.5 r".ljust(page, b" ")
    copies = 2**32 // page + 1  # > 2^31 columns "a" of 2 bytes each
    with _repeated(head, b" a" * (page // 2), b" a".ljust(page - 1, b" ") + b"\n", copies) as data:
        assert _kernel.read_run(data) == {"q": {"d": 1.5}}
