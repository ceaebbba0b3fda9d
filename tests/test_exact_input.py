"""Issue 8's reproductions, each an exact test: ordinary files read exactly as trec_eval 10.0 reads them."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ef.cli import main
from ef.evaluation import evaluate_run, read_beir
from ef.io._source import read_bytes
from ef.io.jsonl import iter_jsonl, read_json
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

@pytest.mark.parametrize(
    "data",
    [b"", b"\xef\xbb", b"\xef\xbb\xbf", b"\xef\xbb\xbfq1 0 d1 1\n", b"q1 0 d1 1", bytes(range(256)) * 20_000],
    ids=["empty", "half a BOM", "a BOM alone", "BOM and a line", "no newline", "5 MB of every byte"],
)
def test_read_bytes_gives_every_byte_of_a_file_a_fifo_and_gzip_less_the_bom(tmp_path: Path, data: bytes) -> None:
    # A plain regular file is read at once (past the opener's peek), the others chunk by chunk.
    bom = b"\xef\xbb\xbf"
    expected = data[3:] if data.startswith(bom) else data
    assert read_bytes(_write(tmp_path / "plain", data)) == expected
    assert read_bytes(_write(tmp_path / "zipped", gzip.compress(data))) == expected
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    assert read_bytes(fifo) == expected
    writer.join()



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
        "ef trec-eval: 2 of 3 judged queries are not in the run: left out, the summary is over 1 (trec_eval 10.0 "
        "stops here; -c, like evaluate_run's default missing='zero', counts them as 0 over 3)\n"
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
