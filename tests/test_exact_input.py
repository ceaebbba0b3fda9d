"""Issue 8's reproductions, each an exact test: ordinary files read exactly as trec_eval 10.0 reads them."""

from __future__ import annotations

import gzip
import math
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.cli import main
from ef.evaluation import evaluate_run, read_beir
from ef.io.jsonl import iter_jsonl, read_json
from ef.io.source import read_bytes
from ef.trec import read_qrels, read_run

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec_eval"


def _write(path: Path, data: str | bytes) -> str:
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def _trec_eval(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["trec-eval", *args]) == 0
    return capsys.readouterr().out


def test_ids_of_different_word_widths_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _write(tmp_path / "qrels", "9 0 d 1\n")
    run = _write(tmp_path / "run", "9 Q0 d 1 1 r\n9 Q0 aaaaaaaaa 2 0.5 r\n")
    assert _trec_eval(capsys, "-m", "map", qrels, run) == "map                   \tall\t1.0000\n"
    assert evaluate_run(run, qrels, ["map"]).metrics["map"] == 1.0


def test_results_test_single_spaced_with_a_long_unjudged_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (DATA / "results.test").read_text().splitlines()
    text = "".join(" ".join(line.split()) + "\n" for line in lines) + "unjudged9 Q0 doc 1 1 r\n"
    run = _write(tmp_path / "run", text)
    out = _trec_eval(capsys, "-m", "map", str(DATA / "qrels.test"), run)
    assert out == "map                   \tall\t0.1785\n"


@pytest.mark.parametrize("where", ["run", "qrels"])
def test_a_byte_order_mark_makes_no_phantom_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    bom = b"\xef\xbb\xbf"
    qrels = _write(tmp_path / "qrels", (bom if where == "qrels" else b"") + b"q1 0 d1 1\nq2 0 d2 1\n")
    run = _write(tmp_path / "run", (bom if where == "run" else b"") + b"q1 Q0 d1 1 1 r\nq2 Q0 d2 1 1 r\n")
    assert _trec_eval(capsys, "-m", "map", "-m", "num_q", qrels, run) == (
        "num_q                 \tall\t2\nmap                   \tall\t1.0000\n"
    )


def test_a_pipe_fifo_and_stdin_read_like_a_file(tmp_path: Path) -> None:
    text = b"q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"
    expected = {"q1": {"d1": 2.0, "d2": 1.0}}
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(gzip.compress(text)))
    writer.start()
    assert read_run(fifo) == expected  # gzip through a FIFO: told by its magic bytes
    writer.join()
    code = "import sys; from ef.trec import read_run; print(read_run(sys.argv[1]))"
    for name in ("/dev/stdin", "-"):
        done = subprocess.run([sys.executable, "-c", code, name], input=text, capture_output=True, check=True)
        assert done.stdout.decode() == f"{expected}\n"


def test_ef_trec_eval_reads_a_process_substitution(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels", "q1 0 d2 1\n")
    run = _write(tmp_path / "run.gz", gzip.compress(b"q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"))
    script = f"{sys.executable} -m ef trec-eval -m map {qrels} <(zcat {run})"
    done = subprocess.run(["bash", "-c", script], capture_output=True, check=True)
    assert done.stdout.decode() == "map                   \tall\t0.5000\n"
    piped = subprocess.run(
        [sys.executable, "-m", "ef", "trec-eval", "-m", "map", qrels, "-"],
        input=gzip.decompress(Path(run).read_bytes()),
        capture_output=True,
        check=True,
    )
    assert piped.stdout == done.stdout


def test_the_run_id_is_the_last_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _write(tmp_path / "qrels", "q1 0 d1 1\n")
    run = _write(tmp_path / "run", "q1 Q0 d1 1 2 first\nq1 Q0 d2 2 1 last\n")
    assert _trec_eval(capsys, "-m", "runid", qrels, run) == "runid                 \tall\tlast\n"


def test_c_with_l_counts_every_positive_grade_in_num_rel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # trec_eval 10.0: with -c the summary num_rel is every grade > 0 of the qrels, whatever -l.
    qrels = _write(tmp_path / "qrels", "q1 0 d1 1\nq1 0 d2 2\nq2 0 d3 1\n")
    run = _write(tmp_path / "run", "q1 Q0 d1 1 2 r\n")
    out = _trec_eval(capsys, "-q", "-c", "-l", "2", "-m", "num_rel", qrels, run)
    assert out == "num_rel               \tq1\t1\nnum_rel               \tq2\t0\nnum_rel               \tall\t3\n"


def test_comments_and_stdin_are_accepted(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels", "# judged by hand\nq1 0 d1 1\n")
    text = b"# produced by bm25\nq1 Q0 d1 1 2 r\n  # an indented comment\n\nq1 Q0 d2 2 1 r\n"
    done = subprocess.run(
        [sys.executable, "-m", "ef", "trec-eval", "-m", "map", qrels, "-"], input=text, capture_output=True, check=True
    )
    assert done.stdout.decode() == "map                   \tall\t1.0000\n"
    assert read_qrels(qrels) == {"q1": {"d1": 1}}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("q1 Q0 d2 2 1e400 r", "score '1e400' is beyond the range of a double"),
        ("q1 Q0 d2 2 -1e401 r", "score '-1e401' is beyond the range of a double"),
        ("q1 Q0 d2 2 nan r", "score is NaN"),
        ("q1 Q0 d2 2 0.5abc r", "score '0.5abc' is not a number"),
        ("q1 Q0 d\x002 2 1 r", "a NUL byte (trec_eval stops reading a file there)"),
    ],
)
def test_scores_that_cannot_rank_are_refused(tmp_path: Path, line: str, problem: str) -> None:
    run = _write(tmp_path / "run", f"q1 Q0 d1 1 1 r\n{line}\n")
    with pytest.raises(ValueError) as info:
        read_run(run)
    assert str(info.value) == f"{run}:2: {problem}"


def test_strtod_spellings_that_rank_are_read(tmp_path: Path) -> None:
    lines = ["q Q0 a 1 inf r", "q Q0 b 2 0x1p3 r", "q Q0 c 3 +5 r", "q Q0 d 4 -Infinity r", "q Q0 e 5 .5 r"]
    run = _write(tmp_path / "run", "\n".join(lines) + "\n")
    assert read_run(run) == {"q": {"a": float("inf"), "b": 8.0, "c": 5.0, "d": float("-inf"), "e": 0.5}}


def test_a_grade_beyond_64_bits_is_refused(tmp_path: Path) -> None:
    qrels = _write(tmp_path / "qrels", "q1 0 d1 99999999999999999999\n")
    with pytest.raises(ValueError) as info:
        read_qrels(qrels)
    assert str(info.value) == (
        f"{qrels}:1: grade '99999999999999999999' does not fit a 64-bit integer, as trec_eval reads it"
    )


def test_control_bytes_other_than_whitespace_belong_to_the_id(tmp_path: Path) -> None:
    # C's isspace() splits on space, \t, \n, \v, \f, \r only: \x01 is part of the doc id, as in trec_eval.
    run = _write(tmp_path / "run", "q1 Q0 a\x01b 1 1 r\nq1\tQ0\x0bc\x0c2 0.5 r\n")
    assert read_run(run) == {"q1": {"a\x01b": 1.0, "c": 0.5}}


def test_beir_ids_are_split_on_tabs_and_surrounding_whitespace_is_refused(tmp_path: Path) -> None:
    assert read_qrels(_write(tmp_path / "a.tsv", "query-id\tcorpus-id\tscore\nq 1\td1\t1\n")) == {"q 1": {"d1": 1}}
    # Without a header the same bytes also read as TREC qrels 'q1 0<TAB>d1<TAB>1': refused, not guessed.
    for text in ("q 1\td1\t1\n", "q1 0\td1\t1\nq1 0\td2\t0\n"):
        ambiguous = _write(tmp_path / "c.tsv", text)
        with pytest.raises(ValueError) as info:
            read_qrels(ambiguous)
        assert str(info.value).startswith(f"{ambiguous}:1: reads both as TREC qrels (4 whitespace-separated columns)")
    bad = _write(tmp_path / "b.tsv", "q1\td1 \t1\n")
    with pytest.raises(ValueError) as info:
        read_qrels(bad)
    assert str(info.value) == (
        f"{bad}:1: corpus-id 'd1 ' is empty or has surrounding whitespace, so it could never match an id"
    )


def test_a_json_object_with_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "r.jsonl", '{"_id": "a", "text": "x"}\n{"_id": "b", "text": "x", "text": "y"}\n')
    with pytest.raises(ValueError) as info:
        list(iter_jsonl(path))
    assert str(info.value) == f"{path}:2: key 'text' appears twice in one object"
    manifest = _write(tmp_path / "m.json", '{"a": NaN}')
    with pytest.raises(ValueError) as info:
        read_json(manifest)
    assert str(info.value) == f"{manifest}: NaN is not valid JSON (JSON has no NaN or infinity)"


def _beir(folder: Path, corpus: bytes) -> None:
    folder.mkdir()
    (folder / "corpus.jsonl.gz").write_bytes(corpus)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (folder / "qrels.tsv").write_text("q1\td1\t1\n")


def test_a_truncated_or_fake_gz_names_the_file(tmp_path: Path) -> None:
    whole = gzip.compress(b'{"_id": "d1", "text": "x"}\n' * 200)
    _beir(tmp_path / "truncated", whole[:-20])
    with pytest.raises(ValueError) as info:
        read_beir(tmp_path / "truncated")
    assert str(info.value) == f"{tmp_path / 'truncated' / 'corpus.jsonl.gz'}: truncated gzip stream"
    _beir(tmp_path / "fake", b'{"_id": "d1", "text": "x"}\n')
    with pytest.raises(ValueError) as info:
        read_beir(tmp_path / "fake")
    assert str(info.value) == f"{tmp_path / 'fake' / 'corpus.jsonl.gz'}: named '.gz' but not gzip-compressed"


def test_an_upper_case_gz_suffix_and_gzip_without_suffix_are_read(tmp_path: Path) -> None:
    text = b"q1 Q0 d1 1 1 r\n"
    assert read_run(_write(tmp_path / "RUN.GZ", gzip.compress(text))) == {"q1": {"d1": 1.0}}
    assert read_run(_write(tmp_path / "run.txt", gzip.compress(text))) == {"q1": {"d1": 1.0}}
    assert read_bytes(_write(tmp_path / "plain", text)) == text


def test_a_missing_judged_query_is_counted_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = _write(tmp_path / "qrels", "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\n")
    run = _write(tmp_path / "run", "q1 Q0 d1 1 1 r\n")
    assert main(["trec-eval", "-m", "num_q", qrels, run]) == 0
    captured = capsys.readouterr()
    assert captured.out == "num_q                 \tall\t1\n"
    assert captured.err == (
        "ef trec-eval: 2 judged queries are not in the run and left out (-c counts them with zeros)\n"
    )


@pytest.mark.parametrize(
    ("run", "qrels", "error", "message"),
    [
        ({"q1": None}, {"q1": {"d1": 1}}, TypeError, "'run['q1']' must be a mapping of doc id -> score (got NoneType)"),
        ({1: {"d1": 1.0}}, {"q1": {"d1": 1}}, TypeError, "'run' has a query id that is not a str: 1 (int)"),
        ({"q1": {7: 1.0}}, {"q1": {"7": 1}}, TypeError, "'run['q1']' has a doc id that is not a str: 7 (int)"),
        ({"q1": {"d1": 1.0}}, {"q1": {1: 1}}, TypeError, "'qrels['q1']' has a doc id that is not a str: 1 (int)"),
        ({"q": {"d": 1.0}}, {2: {"d": 1}}, TypeError, "'qrels' has a query id that is not a str: 2 (int)"),
        ({"q1": [0.5]}, {"q1": {"d1": 1}}, TypeError, "'run['q1']' must be a mapping of doc id -> score (got list)"),
    ],
)
def test_evaluate_run_refuses_what_would_silently_match_nothing(
    run: dict, qrels: dict, error: type[Exception], message: str  # type: ignore[type-arg]
) -> None:
    with pytest.raises(error) as info:
        evaluate_run(run, qrels, ["map"])
    assert str(info.value) == message


def test_a_numpy_bool_grade_is_refused_like_a_bool() -> None:
    import numpy as np

    for grade in (True, np.bool_(True)):
        with pytest.raises(ValueError) as info:
            evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": grade}}, ["map"])
        assert str(info.value) == f"qrels: a grade of query 'q1' is not a number (got {grade!r})"


def test_long_decimal_scores_read_exactly(tmp_path: Path) -> None:
    values = [0.1 + 2**-60, 12.345678901234567, -0.0, 123456789012345678.0, 1e-300]
    run = _write(tmp_path / "run", "".join(f"q Q0 d{i} 1 {v!r} r\n" for i, v in enumerate(values)))
    assert list(read_run(run)["q"].values()) == values


_HARD_SCORES = [
    "123456789012345678901234",  # 24 digits: more than a uint64 holds, read by numpy's strtod
    "-12345678901234567890123",
    "18446744073709551621",  # 2**64 + 5: its words wrap to 5, which must not pass for the value
    "99999999999999999999.999",
    "0.0000000000000000000001",  # 22 decimals: still 10**22, an exact double
    ".00000000000000000000001",  # 23 decimals
    "999999999999999999",  # 18 digits in 24 columns: the most the words read exactly
    "9007199254740993",  # 2**53 + 1: the first mantissa past the exact doubles
    "9007199254740992.0",
    "900719925474099.3",  # the dot read as a 0 makes this mantissa 10 times longer: no overflow
    "5.",
    ".5",
    "-0",
    "-.0",
    "0",
    "00000000000000000000000.",
]
_NOT_PLAIN = ["", "-", ".", "-.", "1..2", "1.2.", "--1", "+1", "1-", "1e5", "0x1p3", "inf", "1 2", "١"]


def test_scores_of_every_width_read_exactly_across_blocks() -> None:
    # 20,000 fields (three blocks of rows, each of another width), the hard cases placed at the
    # data's start, at block edges and at the end: each plain one is float()'s value, sign of zero
    # included, each other one left to parse_score.
    import random

    import numpy as np

    from ef.io import trec

    rng = random.Random(7)
    tokens = [repr(rng.random() * 10 ** rng.randint(-3, 6)) for _ in range(20_000)]
    tokens[8192:16384] = [str(rng.randint(0, 10)) for _ in range(8192)]  # a block of 8-byte rows
    special = _HARD_SCORES + _NOT_PLAIN
    for where in (0, 8191, 8192, 16383, 16384, 20_000 - len(special)):
        tokens[where : where + len(special)] = special
    data = " ".join(tokens).encode()
    buf = np.frombuffer(data + bytes(16), dtype=np.uint8)
    length = np.array([len(t.encode()) for t in tokens], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(length + 1)[:-1]]).astype(np.int64)
    value, ok = trec._parse_scores(buf, start, length)
    plain = [_PLAIN.fullmatch(t) is not None and t.isascii() for t in tokens]
    assert ok.tolist() == plain
    got = [(v, math.copysign(1, v)) for v, p in zip(value.tolist(), plain, strict=True) if p]
    assert got == [(float(t), math.copysign(1, float(t))) for t, p in zip(tokens, plain, strict=True) if p]
    assert ok[: len(special)].tolist() == [True] * len(_HARD_SCORES) + [False] * len(_NOT_PLAIN)
    # Fields of at most 8 bytes alone take the column-by-column path: the same answers.
    short = [t for t in special if len(t.encode()) <= 8] + ["3.0", "10.0", "0.25", "-12.3456"]
    length = np.array([len(t.encode()) for t in short], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(length + 1)[:-1]]).astype(np.int64)
    buf = np.frombuffer(" ".join(short).encode() + bytes(16), dtype=np.uint8)
    value, ok = trec._parse_scores(buf, start, length)
    plain = [_PLAIN.fullmatch(t) is not None and t.isascii() for t in short]
    assert ok.tolist() == plain
    assert [(v, math.copysign(1, v)) for v, p in zip(value.tolist(), plain, strict=True) if p] == [
        (float(t), math.copysign(1, float(t))) for t, p in zip(short, plain, strict=True) if p
    ]


_LONG = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(10**15, 10**19 - 1).map(str),  # 2**53..2**63: many exact midpoints between doubles
    st.builds(lambda m, k: f"{m // 10**k}.{m % 10**k:0{k}d}", st.integers(10**15, 10**19 - 1), st.integers(1, 19)),
    st.builds(lambda m: f"{m}.5", st.integers(2**53, 2**54)),  # halfway cases with a dot
)


def _parse(tokens: list[str]) -> tuple[list[float], list[bool]]:
    import numpy as np

    from ef.io import trec

    data = " ".join(tokens).encode()
    buf = np.frombuffer(data + bytes(16), dtype=np.uint8)
    length = np.array([len(t) for t in tokens])
    start = np.concatenate([[0], np.cumsum(length + 1)[:-1]])
    value, ok = trec._parse_scores(buf, start, length)
    return value.tolist(), ok.tolist()


@settings(max_examples=60, deadline=None)
@given(st.lists(_LONG, min_size=1, max_size=40), st.booleans(), st.booleans())
def test_long_decimals_convert_as_strtod_does(tokens: list[str], extended: bool, negate: bool) -> None:
    # 16-19 digit decimals take the extended-precision path (or numpy's string conversion where
    # x87 extended precision is missing): both must give Python's float(), i.e. strtod's value.
    from ef.io import trec

    tokens = [("-" + t if negate and not t.startswith("-") else t) for t in tokens if len(t) <= 24]
    if not tokens:
        return
    saved = trec._EXTENDED
    trec._EXTENDED = extended and saved
    try:
        value, ok = _parse(tokens)
    finally:
        trec._EXTENDED = saved
    plain = [("e" not in t and "inf" not in t and "nan" not in t) for t in tokens]
    assert ok == plain
    expected = [float(t) for t in tokens]
    got = [(v, math.copysign(1, v)) for v, p in zip(value, plain, strict=True) if p]
    assert got == [(e, math.copysign(1, e)) for e, p in zip(expected, plain, strict=True) if p]


_PLAIN = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text("0123456789.-e", max_size=30) | st.floats(allow_nan=False, allow_infinity=False).map(repr),
        min_size=1,
        max_size=30,
    ),
    st.integers(0, 30),
)
def test_plain_decimals_of_any_width_and_place_convert_and_nothing_else_does(tokens: list[str], lead: int) -> None:
    # Fields of every width (1-3 words), ending anywhere, the first ones near the data's start
    # (`lead` bytes in): each plain decimal is float()'s value, sign of zero included; any other
    # spelling is left to parse_score.
    import numpy as np

    from ef.io import trec

    data = (" " * lead + " ".join(tokens)).encode()
    buf = np.frombuffer(data + bytes(16), dtype=np.uint8)
    length = np.array([len(t) for t in tokens], dtype=np.int64)
    start = lead + np.concatenate([[0], np.cumsum(length + 1)[:-1]]).astype(np.int64)
    value, ok = trec._parse_scores(buf, start, length)
    plain = [_PLAIN.fullmatch(t) is not None and len(t) <= 24 for t in tokens]  # longer: parse_score's
    assert ok.tolist() == plain
    for v, t, p in zip(value.tolist(), tokens, plain, strict=True):
        if p:
            assert (v, math.copysign(1, v)) == (float(t), math.copysign(1, float(t))), t


def _near_midpoint(double: float, up: bool) -> str:
    """The 19-digit decimal just above or below the midpoint after `double`: where rounding twice
    (to 64 bits, then to 53) can go wrong."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    midpoint = Decimal(double) + Decimal(2) ** -53
    return str(midpoint.quantize(Decimal(10) ** -18, ROUND_CEILING if up else ROUND_FLOOR))


def test_decimals_near_a_midpoint_between_doubles_round_once() -> None:
    import random

    import numpy as np

    rng = random.Random(7)
    tokens = [_near_midpoint(1 + rng.getrandbits(52) * 2.0**-52, rng.random() < 0.5) for _ in range(4000)]
    expected = [float(t) for t in tokens]
    if np.finfo(np.longdouble).nmant == 63:  # rounded twice, a few in a hundred come out one ulp off
        mantissa = np.array([int(t.replace(".", "")) for t in tokens], dtype=np.uint64)
        twice = (mantissa.astype(np.longdouble) / np.longdouble(10) ** 18).astype(np.float64).tolist()
        assert sum(a != b for a, b in zip(twice, expected, strict=True)) > 40
    assert _parse(tokens) == (expected, [True] * len(tokens))


def test_fastrag_samples_with_bad_utf8_name_file_and_line(tmp_path: Path) -> None:
    from fastrag.benchmark import load_samples

    path = _write(tmp_path / "samples.jsonl", b'{"id": "a", "query": "x"}\n{"id": "b", "query": "caf\xe9"}\n')
    with pytest.raises(ValueError) as info:
        load_samples(path)
    assert str(info.value) == f"{path}:2: not valid UTF-8 (invalid continuation byte)"


@pytest.mark.parametrize("text", ["\n", "   \n", "# c\n"])
def test_a_run_of_no_document_lines_reads_as_empty(tmp_path: Path, text: str) -> None:
    assert read_run(_write(tmp_path / "run", text)) == {}


def test_a_chunk_of_only_comments_does_not_stall_the_reader(tmp_path: Path) -> None:
    # Over 8 MB: the chunk after the first cut holds comments only.
    docs = "".join(f"q1 Q0 d{i:07d} 1 0.5 r\n" for i in range(300_000))
    run = _write(tmp_path / "run", docs + "# c\n" * 600_000)
    assert len(read_run(run)["q1"]) == 300_000


def test_scores_beyond_a_double_are_refused_whatever_the_spelling(tmp_path: Path) -> None:
    run = _write(tmp_path / "run", "q1 Q0 d1 1 0x1p99999 r\nq1 Q0 d2 1 0.25 r\n")
    with pytest.raises(ValueError) as info:
        read_run(run)
    assert str(info.value) == f"{run}:1: score '0x1p99999' is beyond the range of a double"
    qrels = _write(tmp_path / "qrels", "q1 0 d1 0x1p9999\n")
    with pytest.raises(ValueError) as info:
        read_qrels(qrels)
    assert str(info.value) == f"{qrels}:1: grade '0x1p9999' is beyond the range of a double"
    with pytest.raises(ValueError) as info:
        evaluate_run({"q": {"d": 10**400, "e": 1.0}}, {"q": {"d": 1}}, ["map"])
    assert str(info.value) == "run: score of doc 'd' in query 'q' is beyond the range of a double"


def _many_scores(n: int, seed: int) -> tuple[object, object, object]:
    import numpy as np

    rng = np.random.default_rng(seed)
    pool = [repr(float(x)) for x in rng.random(n)] + ["1e-05", "-0.0", "7", "x1", "inf", "12345678901234567890.5"]
    tokens = [pool[i] for i in rng.integers(0, len(pool), n)]
    data = " ".join(tokens).encode()
    length = np.array([len(t) for t in tokens], dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(length + 1)[:-1]]).astype(np.int64)
    return np.frombuffer(data + bytes(16), dtype=np.uint8), start, length


@pytest.mark.parametrize("n", [100, (1 << 14) + 1, 50_001])
def test_scores_parsed_on_two_threads_are_the_ones_parsed_on_one(n: int) -> None:
    # Above _SHARED_ROWS long scores are split between this thread and a helper: every value (its
    # bits, so the sign of zero too) and every refusal lands on its own row, in row order.
    import numpy as np

    from ef.io import trec

    buf, start, length = _many_scores(n, n)
    value, ok = trec._parse_scores_shared(buf, start, length)
    alone, alone_ok = trec._parse_scores(buf, start, length)
    assert np.array_equal(ok, alone_ok)
    assert 0 < int(ok.sum()) < n
    assert np.array_equal(value[ok].view(np.uint64), alone[alone_ok].view(np.uint64))


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: no helper thread is started")
def test_a_forked_child_parses_on_a_helper_of_its_own() -> None:
    # The parent's helper thread does not exist in a fork: a child that used the parent's
    # executor would wait forever for it.
    import multiprocessing

    import numpy as np

    from ef.io import trec

    buf, start, length = _many_scores(40_000, 3)
    expected, ok = trec._parse_scores_shared(buf, start, length)
    assert trec._helper is not None
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        got, pid = pool.apply_async(_parse_in_child, (bytes(buf), start, length)).get(timeout=30)
    assert pid != os.getpid()
    assert np.array_equal(got[ok].view(np.uint64), expected[ok].view(np.uint64))


def _parse_in_child(data: bytes, start: object, length: object) -> tuple[object, int]:
    import numpy as np

    from ef.io import trec

    assert trec._helper is None  # the parent's is forgotten
    value, _ok = trec._parse_scores_shared(np.frombuffer(data, dtype=np.uint8), start, length)  # type: ignore[arg-type]
    assert trec._helper is not None
    return value, os.getpid()


@pytest.mark.parametrize(
    ("bad_line", "text", "message"),
    [
        (9_000, "0.5.5", "score '0.5.5' is not a number"),
        (39_000, "x", "score 'x' is not a number"),
        (39_999, "nan", "score is NaN"),
    ],
)
def test_a_bad_score_in_either_half_of_a_long_file_is_named_by_its_line(
    tmp_path: Path, bad_line: int, text: str, message: str
) -> None:
    # 40,000 17-digit scores: parsed half on each thread; the error still names its own line.
    scores = [repr(0.1 + i * 1e-9) for i in range(40_000)]
    scores[bad_line - 1] = text
    run = _write(tmp_path / "run", "".join(f"q Q0 d{i} 1 {s} r\n" for i, s in enumerate(scores)))
    with pytest.raises(ValueError, match=rf"^{re.escape(run)}:{bad_line}: {re.escape(message)}"):
        read_run(run)
    scores[bad_line - 1] = "0.25"
    _write(tmp_path / "run", "".join(f"q Q0 d{i} 1 {s} r\n" for i, s in enumerate(scores)))
    assert list(read_run(run)["q"].values()) == [float(s) for s in scores]


def test_a_thread_still_reading_at_interpreter_exit_parses_without_a_helper(tmp_path: Path) -> None:
    # Once the main thread has returned, no new thread may start ("can't register atexit after
    # shutdown"): a non-daemon thread that reads a long file then parses every score itself.
    run = _write(tmp_path / "run", "".join(f"q Q0 d{i} 1 {0.1 + i * 1e-9!r} r\n" for i in range(40_000)))
    script = (
        "import threading, time\n"
        "from ef.trec import read_run\n"
        "def late():\n"
        "    while threading.main_thread().is_alive():\n"
        "        time.sleep(0.01)\n"
        f"    print(len(read_run({run!r})['q']))\n"
        "threading.Thread(target=late).start()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "40000\n", "")


_LINES = st.sampled_from(
    [
        "q1 Q0 d1 1 0.5 r\n",
        "q1 Q0 doc-0002 2 0.25 r\n",
        "q2 Q0 d1 1 3 r\r\n",
        "q2\tQ0\td3  1 0.30000001192092896 run-b\n",
        "q3 Q0 d9 1 -0 r\n",
        "# a comment\n",
        "\n",
        "q3 Q0 d9 2 1 r\n",  # d9 again when drawn twice in a row: an error
        "q4 Q0 d4 1 x r\n",  # a bad score
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=40), st.integers(1, 80))
def test_a_file_read_in_small_chunks_reads_as_one_chunk(
    tmp_path_factory: pytest.TempPathFactory, lines: list[str], chunk: int
) -> None:
    # Over 8 MB a file is tokenised in chunks, two at a time: rows, queries, lines, run id and
    # errors must not depend on where the chunks are cut.
    from ef.io import trec

    path = str(tmp_path_factory.mktemp("chunks") / "run")
    Path(path).write_text("".join(lines))

    def read() -> object:
        try:
            columns = trec.read_run_columns(path)
            columns.find_duplicate()
        except ValueError as error:
            return str(error)
        segments = {k: [(p.start, p.stop) for p in v] for k, v in columns.segments.items()}
        return columns.to_dict(), segments, columns.run_id, columns.lines

    whole = read()
    saved = trec._CHUNK
    trec._CHUNK = chunk
    try:
        assert read() == whole
    finally:
        trec._CHUNK = saved
