"""TREC run and qrels files: round trips, both reader paths, and file:line errors."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.io.trec import format_run
from ef.trec import read_qrels, read_run, write_qrels, write_run

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact" / "qrels" / "test.tsv"


def _write(path: Path, text: str) -> str:
    path.write_bytes(text.encode())
    return str(path)


# --- round trips -----------------------------------------------------------------------------


def test_write_run_orders_like_trec_eval_and_reads_back(tmp_path: Path) -> None:
    run = {"q2": {"d1": 0.5, "d10": 0.5, "d9": 0.5, "d3": 2.0}, "q1": {"x": -1.25}}
    path = tmp_path / "run.txt"
    write_run(path, run, run_id="mine")
    assert path.read_text() == (
        "q2 Q0 d3 1 2.0 mine\nq2 Q0 d9 2 0.5 mine\nq2 Q0 d10 3 0.5 mine\nq2 Q0 d1 4 0.5 mine\nq1 Q0 x 1 -1.25 mine\n"
    )
    assert read_run(path) == run


def test_gzip_round_trip_and_no_temporary_left(tmp_path: Path) -> None:
    run = {"q1": {"d1": 0.1 + 0.2, "d2": 1e-300}}
    path = tmp_path / "run.txt.gz"
    write_run(path, run)
    assert gzip.decompress(path.read_bytes()).decode() == "q1 Q0 d1 1 0.30000000000000004 ef\nq1 Q0 d2 2 1e-300 ef\n"
    assert read_run(path) == run
    qrels = {"q1": {"d1": 2, "d2": 0, "d3": -1}}
    write_qrels(tmp_path / "qrels.gz", qrels)
    assert read_qrels(tmp_path / "qrels.gz") == qrels
    assert sorted(os.listdir(tmp_path)) == ["qrels.gz", "run.txt.gz"]


def test_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_run(path, {"q1": {"d1": 1.0}})
    with pytest.raises(ValueError, match=r"^score of doc 'd2' in query 'q1' is NaN$"):
        write_run(path, {"q1": {"d1": 1.0, "d2": float("nan")}})
    assert path.read_text() == "q1 Q0 d1 1 1.0 ef\n"
    assert os.listdir(tmp_path) == ["run.txt"]


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ({"q 1": {"d": 1.0}}, "a query id must not hold a space, which separates TREC columns (got 'q 1')"),
        ({"q": {"": 1.0}}, "a doc id of query 'q' must be a non-empty str (got '')"),
        ({"q": {"d": "1"}}, "score of doc 'd' in query 'q' must be a number (got '1')"),
    ],
)
def test_write_run_rejects_bad_input(tmp_path: Path, run: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError) as info:
        write_run(tmp_path / "r", run)
    assert str(info.value) == message


ids = st.text(alphabet="abcXYZ019-_.é", min_size=1, max_size=6)
runs = st.dictionaries(ids, st.dictionaries(ids, st.floats(allow_nan=False), min_size=1, max_size=8),
                     min_size=1, max_size=5)  # an empty run is refused (test_api_probe2_empty_writes)


@settings(max_examples=60, deadline=None)
@given(run=runs)
def test_any_run_round_trips_exactly(
    tmp_path_factory: pytest.TempPathFactory, run: dict[str, dict[str, float]]
) -> None:
    path = tmp_path_factory.mktemp("rt") / "run.txt"
    write_run(path, run)
    assert read_run(path) == run


@settings(max_examples=40, deadline=None)
@given(run=runs, tabs=st.booleans())
def test_fast_and_line_by_line_paths_agree(
    tmp_path_factory: pytest.TempPathFactory, run: dict[str, dict[str, float]], tabs: bool
) -> None:
    folder = tmp_path_factory.mktemp("paths")
    write_run(folder / "run.txt", run)
    text = (folder / "run.txt").read_text()
    regular = folder / "regular.txt"  # numpy path: single separators
    regular.write_text(text.replace(" ", "\t") if tabs else text)
    irregular = folder / "irregular.txt"  # line path: padded columns, CRLF
    irregular.write_text(text.replace(" ", "  ").replace("\n", "\r\n"))
    assert read_run(regular) == read_run(irregular) == run


_WRITTEN = st.one_of(st.text(alphabet="ab9é \t#\x00", min_size=0, max_size=4), st.sampled_from(["d1", "d10", "d9"]))


@settings(max_examples=150, deadline=None)
@given(run=st.dictionaries(_WRITTEN, st.dictionaries(
    _WRITTEN, st.one_of(st.sampled_from([0.5, -0.0, 0.0, 1.0, 1e16, 5e-324]), st.floats(allow_nan=False)),
    max_size=40), min_size=1, max_size=5))  # an empty run: test_api_probe2_empty_writes
def test_write_run_in_the_engine_writes_what_format_run_does(
    tmp_path_factory: pytest.TempPathFactory, run: dict[str, dict[str, float]]
) -> None:
    # write_run takes a plain dict through the compiled engine, format_run checks line by line:
    # the same text, or the same error (ids with spaces, '#', NUL or nothing; inf; ties; -0.0).
    path = tmp_path_factory.mktemp("engine") / "run.txt"
    expected: str | Exception
    try:
        expected = "".join(format_run(run, run_id="r"))
    except ValueError as error:
        expected = error
    if isinstance(expected, str):
        write_run(path, run, run_id="r")
        assert path.read_text() == expected
    else:
        with pytest.raises(ValueError) as info:
            write_run(path, run, run_id="r")
        assert str(info.value) == str(expected)
        assert not path.exists()


def test_a_plain_run_is_written_by_the_engine_and_anything_else_by_the_checks() -> None:
    from ef.io.trec import _plain_text

    run = {"q2": {"d1": 0.5, "d10": 0.5, "d9": 0.5, "d3": 2.0, "é": -0.0}, "q1": {"x": -1.25}}
    text = _plain_text(run, "r")
    assert text is not None
    assert "".join(text) == "".join(format_run(run, run_id="r")) == (
        "q2 Q0 d3 1 2.0 r\nq2 Q0 d9 2 0.5 r\nq2 Q0 d10 3 0.5 r\nq2 Q0 d1 4 0.5 r\nq2 Q0 é 5 -0.0 r\n"
        "q1 Q0 x 1 -1.25 r\n"
    )
    for other in ({"q": {"d": 1}}, {"q": {}}, {"#q": {"d": 1.0}}, {"q": {"d d": 1.0}}, {"q": {"d": float("inf")}}):
        assert _plain_text(other, "r") is None, other


# --- run errors: both paths report file:line -------------------------------------------------


@pytest.mark.parametrize("separator", [" ", "  "], ids=["fast-path", "line-path"])
@pytest.mark.parametrize(
    ("bad_line", "problem"),
    [
        ("q1 Q0 d3 3 abc ef", "score 'abc' is not a number"),
        ("q1 Q0 d3 3 nan ef", "score is NaN"),
        ("q1 Q0 d1 3 0.5 ef", "doc id 'd1' appears twice in query 'q1' (first at line 1)"),
        ("q1 Q0 d3 3 0.5", "expected 6 columns 'query_id iter doc_id rank score run_id', got 5"),
    ],
)
def test_run_errors_name_file_and_line(tmp_path: Path, separator: str, bad_line: str, problem: str) -> None:
    text = "q1 Q0 d1 1 2.5 ef\nq1 Q0 d2 2 1.5 ef\n" + bad_line + "\nq2 Q0 d1 1 1 ef\n"
    path = _write(tmp_path / "run.txt", text.replace(" ", separator))
    with pytest.raises(ValueError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:3: {problem}"


def test_duplicate_far_apart_in_an_interleaved_file(tmp_path: Path) -> None:
    text = "q1 Q0 d1 1 2 ef\nq2 Q0 d1 1 2 ef\nq1 Q0 d2 2 1 ef\nq1 Q0 d1 3 0 ef\n"
    path = _write(tmp_path / "run.txt", text)
    with pytest.raises(ValueError, match=r":4: doc id 'd1' appears twice in query 'q1' \(first at line 1\)$"):
        read_run(path)


def test_run_reader_keeps_file_order_and_ignores_extra_columns(tmp_path: Path) -> None:
    text = "q2 Q0 b 1 1e-3 r extra junk\n\nq1 Q0 a 1 -inf r\nq2 Q0 c 2 +7 r\n"
    assert read_run(_write(tmp_path / "run.txt", text)) == {"q2": {"b": 0.001, "c": 7.0}, "q1": {"a": float("-inf")}}


def test_missing_final_newline_and_scores_beyond_the_exact_fast_path(tmp_path: Path) -> None:
    text = "q1 Q0 a 1 0.1234567890123456789 r\nq1 Q0 b 2 -.5 r\nq1 Q0 c 3 5. r\nq1 Q0 d 4 12345678901234567 r"
    assert read_run(_write(tmp_path / "run.txt", text)) == {
        "q1": {"a": 0.1234567890123456789, "b": -0.5, "c": 5.0, "d": 12345678901234567.0}
    }


# --- qrels -----------------------------------------------------------------------------------


def test_trec_qrels(tmp_path: Path) -> None:
    path = _write(tmp_path / "qrels", "301 0 d1 1\n301 0 d2 0\n\n302 0 d1 -1\n302 0 d9 2.0\n")
    assert read_qrels(path) == {"301": {"d1": 1, "d2": 0}, "302": {"d1": -1, "d9": 2}}
    assert isinstance(read_qrels(path)["301"]["d1"], int)


def test_beir_qrels_with_and_without_header(tmp_path: Path) -> None:
    with_header = _write(tmp_path / "a.tsv", "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq1\td2\t0\r\n")
    without = _write(tmp_path / "b.tsv", "q1\td1\t1\nq1\td2\t0\n")
    assert read_qrels(with_header) == read_qrels(without) == {"q1": {"d1": 1, "d2": 0}}


@pytest.mark.skipif(not SCIFACT.is_file(), reason="needs ../shared/data/beir")
def test_scifact_test_qrels() -> None:
    qrels = read_qrels(SCIFACT)
    assert (len(qrels), sum(map(len, qrels.values()))) == (300, 339)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("q1 0 d1 1\nq1 0 d1 0\n", "2: doc id 'd1' is judged twice in query 'q1' (first at line 1)"),
        ("q1 0 d1 1\nq1 0 d2 high\n", "2: grade 'high' is not a number"),
        ("q1 0 d1 1\nq1 0 d2 nan\n", "2: grade is NaN"),
        ("q1 0 d1 1\nq1 0 d2\n", "2: expected TREC qrels 'query_id iter doc_id grade' (4 columns) or BEIR "
            "'query-id<TAB>corpus-id<TAB>score', got 3 columns"),
        (
            "q1 d1\n",
            "1: expected TREC qrels 'query_id iter doc_id grade' (4 columns) or BEIR "
            "'query-id<TAB>corpus-id<TAB>score', got 2 columns",
        ),
    ],
)
def test_qrels_errors_name_file_and_line(tmp_path: Path, text: str, problem: str) -> None:
    path = _write(tmp_path / "qrels", text)
    with pytest.raises(ValueError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:{problem}"


def test_write_qrels_rejects_infinite_grade(tmp_path: Path) -> None:
    expected = r"^grade of doc 'd' in query 'q' must be a finite integer: TREC qrels hold integer grades \(got inf\)$"
    with pytest.raises(ValueError, match=expected):
        write_qrels(tmp_path / "q", {"q": {"d": float("inf")}})


@pytest.mark.parametrize("separator", [" ", "  "], ids=["fast-path", "line-path"])
def test_the_earliest_duplicate_is_reported(tmp_path: Path, separator: str) -> None:
    lines = ["q1 Q0 zz 1 5 r", "q1 Q0 a 2 4 r", "q1 Q0 a 3 3 r", "q1 Q0 zz 4 2 r", "q1 Q0 a 5 1 r"]
    path = _write(tmp_path / "run.txt", "".join(line.replace(" ", separator) + "\n" for line in lines))
    with pytest.raises(ValueError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:3: doc id 'a' appears twice in query 'q1' (first at line 2)"


def test_written_files_get_the_usual_permissions(tmp_path: Path) -> None:
    import stat

    old = os.umask(0o022)
    try:
        write_run(tmp_path / "run.txt", {"q1": {"d1": 1.0}})
        write_qrels(tmp_path / "qrels.txt", {"q1": {"d1": 1}})
    finally:
        os.umask(old)
    for name in ("run.txt", "qrels.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644  # not mkstemp's 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt", "run.txt"]


# --- regressions -----------------------------------------------------------------------------


_COMPRESSED = gzip.compress(bytes(range(256)) * 50 + b"x" * 1000, mtime=0)
_CORRUPT = _COMPRESSED[:20] + b"\xff" * 40 + _COMPRESSED[60:]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (_COMPRESSED[:-12], "truncated gzip stream"),
        (_CORRUPT, "corrupt gzip stream (Error -3 while decompressing data: invalid code -- missing end-of-block)"),
        (b"plain text", "named '.gz' but not gzip-compressed"),
    ],
    ids=["truncated", "corrupt", "not-gzip"],
)
def test_a_broken_gzip_file_is_a_value_error_naming_it(tmp_path: Path, data: bytes, why: str) -> None:
    path = tmp_path / "run.txt.gz"
    path.write_bytes(data)
    for reader in (read_run, read_qrels):
        with pytest.raises(ValueError) as info:
            reader(path)
        assert str(info.value) == f"{path}: {why}"


def test_cli_reports_a_truncated_gzip_run_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.cli import main

    qrels = _write(tmp_path / "qrels", "q1 0 d1 1\n")
    run = tmp_path / "run.gz"
    run.write_bytes(gzip.compress(b"q1 Q0 d1 1 1 r\n" * 100)[:-12])
    assert main(["trec-eval", qrels, str(run)]) == 2
    assert capsys.readouterr().err == (
        f"ef trec-eval: error: {run}: truncated gzip stream\n"
    )


def test_an_overflowing_grade_names_file_and_line(tmp_path: Path) -> None:
    big = "1" + "0" * 400
    path = _write(tmp_path / "qrels", f"q1 0 d1 1\nq1 0 d2 {big}\n")
    with pytest.raises(ValueError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:2: grade '{big}' does not fit a 64-bit integer, as trec_eval reads it"


@pytest.mark.parametrize("header", ["score", "Relevance", "rel", "grade", "label"])
def test_beir_header_is_skipped_only_when_its_score_column_is_a_header_name(tmp_path: Path, header: str) -> None:
    path = _write(tmp_path / "a.tsv", f"query-id\tcorpus-id\t{header}\nq1\td1\t1\n")
    assert read_qrels(path) == {"q1": {"d1": 1}}


def test_a_malformed_first_beir_row_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.tsv", "q1\td1\tabc\nq1\td2\t1\n")
    with pytest.raises(ValueError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:1: grade 'abc' is not a number"


@pytest.mark.parametrize("separator", [b" ", b"  "], ids=["fast-path", "line-path"])
def test_non_utf8_ids_name_file_and_line_on_both_paths(tmp_path: Path, separator: bytes) -> None:
    from ef.evaluation import evaluate_run

    path = tmp_path / "run.txt"
    path.write_bytes(b"q1 Q0 a 1 1 r\nq1 Q0 \xff 2 0.5 r\n".replace(b" ", separator))
    for call in (lambda: read_run(path), lambda: evaluate_run(path, {"q1": {"a": 1}}, ["map"])):
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == f"{path}:2: b'\\xff' is not valid UTF-8"


@pytest.mark.parametrize("separator", [" ", "  "], ids=["fast-path", "line-path"])
def test_underscores_in_numbers_are_errors(tmp_path: Path, separator: str) -> None:
    run = _write(tmp_path / "run.txt", "q1 Q0 a 1 1 r\nq1 Q0 b 2 1_0 r\n".replace(" ", separator))
    with pytest.raises(ValueError) as info:
        read_run(run)
    assert str(info.value) == f"{run}:2: score '1_0' is not a number"
    qrels = _write(tmp_path / "qrels", "q1 0 a 1\nq1 0 b 1_0\n".replace(" ", separator))
    with pytest.raises(ValueError) as info:
        read_qrels(qrels)
    assert str(info.value) == f"{qrels}:2: grade '1_0' is not a number"


def test_a_bare_carriage_return_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "run.txt", "q1 Q0 a 1 1 r\nq1 Q0 b 2 0.5 r\rq1 Q0 c 3 0.25 r\n")
    with pytest.raises(ValueError) as info:
        read_run(path)
    assert str(info.value) == f"{path}:2: a carriage return ('\\r') inside a line; line ends must be '\\n' or '\\r\\n'"
    crlf = _write(tmp_path / "crlf.txt", "q1 Q0 a 1 1 r\r\nq1 Q0 b 2 0.5 r\r\n")
    assert read_run(crlf) == {"q1": {"a": 1.0, "b": 0.5}}


def test_write_run_refuses_an_empty_ranking(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        write_run(tmp_path / "run.txt", {"q1": {"d1": 1.0}, "q2": {}})
    assert str(info.value) == (
        "query 'q2' has no documents: a TREC run file cannot hold an empty ranking (leave the query out)"
    )
    assert not (tmp_path / "run.txt").exists()


@pytest.mark.parametrize("grade", ["2.5", "1e1", "0.0001"])
def test_trec_qrels_grades_must_be_integers(tmp_path: Path, grade: str) -> None:
    path = _write(tmp_path / "qrels", f"q1 0 d1 1\nq1 0 d2 {grade}\n")
    with pytest.raises(ValueError) as info:
        read_qrels(path)
    assert str(info.value) == (
        f"{path}:2: grade '{grade}' is not an integer "
        "(trec_eval reads TREC qrels grades as integers and would truncate it)"
    )


def test_beir_qrels_keep_fractional_grades(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t0.5\nq1\td2\t2\n")
    assert read_qrels(path) == {"q1": {"d1": 0.5, "d2": 2}}


def test_write_qrels_refuses_fractional_grades(tmp_path: Path) -> None:
    with pytest.raises(ValueError) as info:
        write_qrels(tmp_path / "q", {"q": {"d": 0.5}})
    assert (
        str(info.value)
        == "grade of doc 'd' in query 'q' must be a finite integer: TREC qrels hold integer grades (got 0.5)"
    )


@pytest.mark.parametrize(("grade", "expected"), [(".0", 0), ("-.00", 0), ("+.0", 0), ("3.000", 3)])
def test_a_zero_fraction_grade_reads_as_trec_eval_reads_it(tmp_path: Path, grade: str, expected: int) -> None:
    # Issue 36: '.0' was refused as "not an integer"; trec_eval's atol reads it as 0.
    path = tmp_path / "qrels"
    path.write_text(f"q1 0 d1 {grade}\n")
    got = read_qrels(path)
    assert got == {"q1": {"d1": expected}}
    assert type(got["q1"]["d1"]) is int
