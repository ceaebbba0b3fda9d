"""read_beir / write_beir: BEIR SciFact, the file format's variants, every error, the exact round trip."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ef.evaluation._beir as beir
from ef.evaluation import read_beir, write_beir

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"

HEADER = "query-id\tcorpus-id\tscore\n"


def _raises(error: type[Exception], message: str) -> Any:
    """pytest.raises for exactly this message."""
    return pytest.raises(error, match="^" + re.escape(message) + "$")


def _dataset(
    root: Path,
    corpus: str = '{"_id": "d1", "title": "", "text": "doc one"}\n',
    queries: str = '{"_id": "q1", "text": "query one"}\n',
    qrels: str | None = HEADER + "q1\td1\t1\n",
    qrels_name: str = "qrels.tsv",
) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text(corpus, encoding="utf-8", newline="")
    (root / "queries.jsonl").write_text(queries, encoding="utf-8", newline="")
    if qrels is not None:
        (root / qrels_name).parent.mkdir(parents=True, exist_ok=True)
        (root / qrels_name).write_text(qrels, encoding="utf-8", newline="")
    return root


# --- SciFact --------------------------------------------------------------------------------------


def test_reads_scifact() -> None:
    corpus, queries, qrels = read_beir(str(SCIFACT))
    assert len(corpus) == 5183
    assert len(queries) == 1109
    assert len(qrels) == 300
    assert sum(len(judged) for judged in qrels.values()) == 339
    assert qrels["1"] == {"31715818": 1.0}
    assert list(qrels)[:2] == ["1", "3"]  # file order
    # BEIR's text: the title, a space, the abstract; compared with the raw record.
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as stream:
        first = json.loads(stream.readline())
    assert first["_id"] == "4983"
    assert corpus["4983"] == first["title"] + " " + first["text"]
    assert corpus["4983"].startswith("Microstructural development of human newborn cerebral white matter")
    assert all(isinstance(text, str) and text for text in corpus.values())
    assert set(qrels) <= set(queries)


def test_scifact_train_qrels_by_name() -> None:
    _, _, qrels = read_beir(SCIFACT, qrels="qrels/train.tsv")
    assert "1" not in qrels
    assert all(grade == 1.0 for judged in qrels.values() for grade in judged.values())


# --- the format's variants ------------------------------------------------------------------------


def test_title_joining(tmp_path: Path) -> None:
    corpus = (
        '{"_id": "titled", "title": "Title", "text": "body"}\n'
        '{"_id": "untitled", "title": "", "text": "body"}\n'
        '{"_id": "no-title", "text": "body"}\n'
        '{"_id": "null-title", "title": null, "text": "body"}\n'
        '{"_id": "empty-text", "title": "Title", "text": ""}\n'
        '{"_id": 42, "title": "", "text": "int id", "metadata": {"year": 2020}}\n'
    )
    got, _, _ = read_beir(_dataset(tmp_path, corpus=corpus))
    assert got == {
        "titled": "Title body",
        "untitled": "body",
        "no-title": "body",
        "null-title": "body",
        "empty-text": "Title ",
        "42": "int id",
    }


@pytest.mark.parametrize(
    "qrels",
    [
        HEADER + "q1\td1\t1\nq1\td2\t0\nq2\td1\t2\n",  # BEIR: header, LF
        "query-id\tcorpus-id\tscore\r\nq1\td1\t1\r\nq1\td2\t0\r\nq2\td1\t2\r\n",  # CRLF, like SciFact
        "q1\td1\t1\nq1\td2\t0\nq2\td1\t2",  # no header, no final line end
        "qid\tdocid\trel\n\nq1\td1\t1\n\nq1\td2\t0\r\nq2\td1\t2\n\n",  # another header, blank lines, mixed
        "\ufeff" + HEADER + "q1\td1\t1\nq1\td2\t0\nq2\td1\t2.0\n",  # byte-order mark
    ],
)
def test_qrels_variants(tmp_path: Path, qrels: str) -> None:
    _, _, got = read_beir(_dataset(tmp_path, qrels=qrels))
    assert got == {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
    # One rule for every reader of the file: integral grades are ints, as ef.trec.read_qrels gives.
    assert all(type(grade) is int for judged in got.values() for grade in judged.values())


def test_grades_are_parsed_exactly(tmp_path: Path) -> None:
    qrels = "q\ta\t-1\nq\tb\t0.1\nq\tc\t+3\nq\td\t1e-3\nq\te\t.5\nq\tf\t7.\nq\tg\t-0.0\n"
    _, _, got = read_beir(_dataset(tmp_path, qrels=qrels))
    assert got == {"q": {"a": -1, "b": 0.1, "c": 3, "d": 0.001, "e": 0.5, "f": 7, "g": -0.0}}
    assert [type(got["q"][d]) for d in "abcdefg"] == [int, float, int, float, float, int, float]
    assert math.copysign(1.0, got["q"]["g"]) == -1.0


def test_gzip_files_are_read_transparently(tmp_path: Path) -> None:
    root = _dataset(tmp_path, qrels=None)
    for name in ("corpus.jsonl", "queries.jsonl"):
        path = root / name
        (root / (name + ".gz")).write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv.gz").write_bytes(gzip.compress((HEADER + "q1\td1\t3\r\n").encode()))
    assert read_beir(root) == ({"d1": "doc one"}, {"q1": "query one"}, {"q1": {"d1": 3.0}})
    # A named qrels file falls back to .gz as well, and a .gz name is read directly.
    assert read_beir(root, qrels="qrels/test.tsv")[2] == {"q1": {"d1": 3.0}}
    assert read_beir(root, qrels="qrels/test.tsv.gz")[2] == {"q1": {"d1": 3.0}}


def test_default_qrels_paths_are_tried_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert beir._DEFAULT_QRELS_PATHS == ("qrels/test.tsv", "qrels.tsv")
    root = _dataset(tmp_path, qrels="q1\td1\t1\n", qrels_name="qrels.tsv")
    assert read_beir(root)[2] == {"q1": {"d1": 1.0}}  # only the second exists
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("q1\td1\t2\n", encoding="utf-8")
    assert read_beir(root)[2] == {"q1": {"d1": 2.0}}  # the first wins
    monkeypatch.setattr(beir, "_DEFAULT_QRELS_PATHS", ("qrels.tsv", "qrels/test.tsv"))
    assert read_beir(root)[2] == {"q1": {"d1": 1.0}}  # the order is the module's tuple


def test_an_explicit_qrels_path_is_relative_to_the_directory(tmp_path: Path) -> None:
    root = _dataset(tmp_path, qrels="q1\td1\t5\n", qrels_name="judgements/dev.tsv")
    assert read_beir(root, qrels="judgements/dev.tsv")[2] == {"q1": {"d1": 5.0}}
    assert read_beir(root, qrels=str(root / "judgements" / "dev.tsv"))[2] == {"q1": {"d1": 5.0}}


def test_empty_files_give_empty_dicts(tmp_path: Path) -> None:
    assert read_beir(_dataset(tmp_path, corpus="", queries="\n", qrels=HEADER)) == ({}, {}, {})


# --- missing files --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_missing_jsonl_file(tmp_path: Path, name: str) -> None:
    root = _dataset(tmp_path)
    (root / name).unlink()
    path = os.path.join(root, name)
    with pytest.raises(FileNotFoundError) as info:
        read_beir(root)
    assert str(info.value) == f"[Errno 2] BEIR file not found (nor its .gz): '{path}'"
    assert info.value.filename == path


def test_missing_qrels_file(tmp_path: Path) -> None:
    root = _dataset(tmp_path, qrels=None)
    with pytest.raises(FileNotFoundError) as info:
        read_beir(root)
    assert str(info.value) == (
        f"[Errno 2] no BEIR qrels file (qrels/test.tsv, qrels.tsv or their .gz) in directory: '{root}'"
    )
    with pytest.raises(FileNotFoundError) as info:
        read_beir(root, qrels="qrels/dev.tsv")
    assert str(info.value) == f"[Errno 2] BEIR file not found (nor its .gz): '{root}/qrels/dev.tsv'"


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"^\[Errno 2\] no BEIR qrels file "):
        read_beir(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match=r"^\[Errno 2\] BEIR file not found \(nor its .gz\): .*corpus.jsonl'$"):
        read_beir(tmp_path / "nowhere", qrels="qrels.tsv")


# --- malformed files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("corpus", "message"),
    [
        (
            '{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": "b"\n',
            "corpus.jsonl:2: malformed JSON: Expecting ',' delimiter (column 26)",
        ),
        ('{"_id": "d1", "text": "a"}\n\n[1, 2]\n', "corpus.jsonl:3: expected a JSON object, got array"),
        ('"text"\n', "corpus.jsonl:1: expected a JSON object, got string"),
        ('{"id": "d1", "text": "a"}\n', "corpus.jsonl:1: record has no '_id'"),
        ('{"_id": null, "text": "a"}\n', "corpus.jsonl:1: '_id' must be a string (got null)"),
        ('{"_id": true, "text": "a"}\n', "corpus.jsonl:1: '_id' must be a string (got boolean)"),
        ('{"_id": 1.5, "text": "a"}\n', "corpus.jsonl:1: '_id' must be a string (got number)"),
        ('{"_id": "", "text": "a"}\n', "corpus.jsonl:1: '_id' is empty"),
        ('{"_id": "d1"}\n', "corpus.jsonl:1: record has no 'text'"),
        ('{"_id": "d1", "text": ["a"]}\n', "corpus.jsonl:1: 'text' must be a string (got array)"),
        ('{"_id": "d1", "title": 3, "text": "a"}\n', "corpus.jsonl:1: 'title' must be a string (got number)"),
        (
            '{"_id": "d1", "text": "a"}\r\n{"_id": "d2", "text": "b"}\r\n{"_id": "d1", "text": "c"}\r\n',
            "corpus.jsonl:3: duplicate _id 'd1' (first on line 1)",
        ),
        ('{"_id": 7, "text": "a"}\n{"_id": "7", "text": "b"}\n', "corpus.jsonl:2: duplicate _id '7' (first on line 1)"),
    ],
)
def test_malformed_corpus(tmp_path: Path, corpus: str, message: str) -> None:
    root = _dataset(tmp_path, corpus=corpus)
    with _raises(ValueError, f"{root}/{message}"):
        read_beir(root)


def test_malformed_queries(tmp_path: Path) -> None:
    root = _dataset(tmp_path, queries='{"_id": "q1", "text": "a"}\n{"_id": "q1", "text": "b"}\n')
    with _raises(ValueError, f"{root}/queries.jsonl:2: duplicate _id 'q1' (first on line 1)"):
        read_beir(root)


def test_invalid_utf8(tmp_path: Path) -> None:
    root = _dataset(tmp_path)
    (root / "queries.jsonl").write_bytes(b'{"_id": "q1", "text": "a"}\n{"_id": "q2", "text": "caf\xe9"}\n')
    with _raises(ValueError, f"{root}/queries.jsonl:2: not valid UTF-8 (invalid continuation byte)"):
        read_beir(root)


_NEVER_MATCHES = "is empty or has surrounding whitespace, so it could never match an id"


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        (HEADER + "q1\td1\n", "qrels.tsv:2: expected 3 tab-separated columns (query-id, corpus-id, score)"),
        (
            "q1 d1 1\n",
            "qrels.tsv:1: expected TREC qrels 'query_id iter doc_id grade' (4 columns) or BEIR "
            "'query-id<TAB>corpus-id<TAB>score', got 3 columns",
        ),
        (HEADER + "q1\td1\t1\r\nq1\td2\trelevant\r\n", "qrels.tsv:3: grade 'relevant' is not a number"),
        (HEADER + "q1\td1\t\n", "qrels.tsv:2: grade '' is not a number"),
        (HEADER + "q1\td1\tnan\n", "qrels.tsv:2: grade is NaN"),
        (HEADER + "q1\td1\tinf\n", "qrels.tsv:2: grade 'inf' is not finite"),
        (HEADER + "q1\td1\t1_000\n", "qrels.tsv:2: grade '1_000' is not a number"),
        (HEADER + "q1\td1\t1e999\n", "qrels.tsv:2: grade '1e999' is beyond the range of a double"),
        (HEADER + "\td1\t1\n", "qrels.tsv:2: query-id '' " + _NEVER_MATCHES),
        (HEADER + "q1\t\t1\n", "qrels.tsv:2: corpus-id '' " + _NEVER_MATCHES),
        (HEADER + "q1\t d1\t1\n", "qrels.tsv:2: corpus-id ' d1' " + _NEVER_MATCHES),
        (
            "q1\td1\t1\nq2\td1\t1\n\nq1\td1\t0\n",
            "qrels.tsv:4: doc id 'd1' is judged twice in query 'q1' (first at line 1)",
        ),
        (HEADER + HEADER, "qrels.tsv:2: grade 'score' is not a number"),  # a header only on line 1
        ("q1\td1\t1x\nq1\td2\t1\n", "qrels.tsv:1: grade '1x' is not a number"),  # not mistaken for a header
        ("q1\td1\tyes\nq1\td2\t1\n", "qrels.tsv:1: grade 'yes' is not a number"),  # a word grade is no header
        ("q1\td1\tNaN\n", "qrels.tsv:1: grade is NaN"),
    ],
)
def test_malformed_qrels(tmp_path: Path, qrels: str, message: str) -> None:
    root = _dataset(tmp_path, qrels=qrels)
    with _raises(ValueError, f"{root}/{message}"):
        read_beir(root)


# --- write_beir -----------------------------------------------------------------------------------


def test_write_beir_exact_files(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"  # parents are created
    write_beir(
        str(root),
        {"d1": "Über uns — 東京", "d2": 'quote " and \\ and\nnewline'},
        {"q1": "what?"},
        {"q1": {"d1": 2, "d2": 0.5, "d3": -1.0, "d4": 0.0, "d5": 1e20, "d6": -0.0, "d7": 0.1}},
    )
    assert sorted(os.listdir(root)) == ["corpus.jsonl", "qrels.tsv", "queries.jsonl"]
    assert (root / "corpus.jsonl").read_bytes().decode("utf-8") == (
        '{"_id": "d1", "title": "", "text": "Über uns — 東京"}\n'
        '{"_id": "d2", "title": "", "text": "quote \\" and \\\\ and\\nnewline"}\n'
    )
    assert (root / "queries.jsonl").read_bytes() == b'{"_id": "q1", "text": "what?"}\n'
    assert (root / "qrels.tsv").read_bytes() == (
        b"query-id\tcorpus-id\tscore\n"
        b"q1\td1\t2\nq1\td2\t0.5\nq1\td3\t-1\nq1\td4\t0\nq1\td5\t1e+20\nq1\td6\t-0.0\nq1\td7\t0.1\n"
    )


def test_write_beir_overwrites_and_respects_the_umask(tmp_path: Path) -> None:
    write_beir(tmp_path, {"d1": "old"}, {"q1": "old"}, {"q1": {"d1": 1}})
    write_beir(tmp_path, {"d2": "new"}, {"q2": "new"}, {"q2": {"d2": 1}})
    assert read_beir(tmp_path) == ({"d2": "new"}, {"q2": "new"}, {"q2": {"d2": 1.0}})
    umask = os.umask(0)
    os.umask(umask)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.tsv"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o666 & ~umask


@pytest.mark.parametrize(
    ("corpus", "queries", "qrels", "error", "message"),
    [
        ({"d\t1": "x"}, {}, {}, ValueError, r"'corpus' id 'd\t1' contains '\t', which a BEIR qrels TSV cannot hold"),
        ({}, {"q\n1": "x"}, {}, ValueError, r"'queries' id 'q\n1' contains '\n', which a BEIR qrels TSV cannot hold"),
        ({}, {}, {"q\r": {"d": 1}}, ValueError, r"'qrels' id 'q\r' contains '\r', which a BEIR qrels TSV cannot hold"),
        ({}, {}, {"q": {"d\t": 1}}, ValueError,
         r"'qrels['q']' id 'd\t' contains '\t', which a BEIR qrels TSV cannot hold"),
        ({}, {}, {"q": {'"d"': 1}}, ValueError,
         "'qrels['q']' id '\"d\"' starts with '\"', which BEIR's qrels reader takes as quoting"),
        ({"": "x"}, {}, {}, ValueError, "'corpus' has an empty id"),
        ({1: "x"}, {}, {}, TypeError, "'corpus' has an id that is not a str: 1 (int)"),
        ({"d": None}, {}, {}, TypeError, "'corpus['d']' must be a str (got NoneType)"),
        ({}, {"q": b"x"}, {}, TypeError, "'queries['q']' must be a str (got bytes)"),
        ([("d", "x")], {}, {}, TypeError, "'corpus' must be a mapping of id -> text (got list)"),
        ({}, {}, {"q": {}}, ValueError, "'qrels['q']' is empty; a qrels TSV cannot hold a query without judgements"),
        ({}, {}, {"q": ["d"]}, TypeError, "'qrels['q']' must be a mapping of doc id -> grade (got list)"),
        ({}, {}, {"q": {"d": "1"}}, TypeError, "'qrels['q']['d']' must be a number (got str)"),
        ({}, {}, {"q": {"d": True}}, TypeError, "'qrels['q']['d']' must be a number (got bool)"),
        ({}, {}, {"q": {"d": math.nan}}, ValueError, "'qrels['q']['d']' must be a finite number (got nan)"),
        ({}, {}, {"q": {"d": -math.inf}}, ValueError, "'qrels['q']['d']' must be a finite number (got -inf)"),
        ({}, {}, {"q": {"d": 10**400}}, ValueError, f"'qrels['q']['d']' must be a finite number (got {10**400})"),
        ({}, {"q": "ok", "r": "lone \ud800"}, {}, ValueError,
         "'queries['r']' is not encodable as UTF-8 (surrogates not allowed)"),
    ],
)
def test_write_beir_rejects_bad_input_and_leaves_the_directory_alone(
    tmp_path: Path, corpus: Any, queries: Any, qrels: Any, error: type[Exception], message: str
) -> None:
    write_beir(tmp_path, {"old": "corpus"}, {"old": "query"}, {"old": {"old": 1}})
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    with _raises(error, message):
        write_beir(tmp_path, corpus, queries, qrels)
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before


def test_write_beir_cleans_up_when_a_move_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(src: str, dst: str) -> None:
        raise PermissionError(f"cannot replace {dst}")

    monkeypatch.setattr(beir.os, "replace", refuse)
    with pytest.raises(PermissionError, match=r"^cannot replace .*corpus\.jsonl$"):
        write_beir(tmp_path, {"d": "x"}, {"q": "y"}, {"q": {"d": 1}})
    assert os.listdir(tmp_path) == []


# --- the round trip -------------------------------------------------------------------------------

_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r\x00"), min_size=1, max_size=12
).filter(lambda s: not s.startswith('"') and s == s.strip(" \x0b\x0c"))  # ids write_beir accepts
_text = st.text(max_size=40)
_grades = st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
_triples = st.tuples(
    st.dictionaries(_ids, _text, max_size=5),
    st.dictionaries(_ids, _text, max_size=5),
    st.dictionaries(_ids, st.dictionaries(_ids, _grades, min_size=1, max_size=4), max_size=4),
)


def _grades_of(qrels: Mapping[str, Mapping[str, float]]) -> list[float]:
    return [grade for judged in qrels.values() for grade in judged.values()]


def _exact(qrels: Mapping[str, Mapping[str, float]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The qrels with every grade as its float repr: -0.0 and 0.0 differ here, and order counts."""
    return [(q, [(d, repr(float(g))) for d, g in judged.items()]) for q, judged in qrels.items()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_triples)
def test_round_trip_is_exact(tmp_path: Path, triple: tuple[Any, Any, Any]) -> None:
    corpus, queries, qrels = triple
    write_beir(tmp_path, corpus, queries, qrels)
    got_corpus, got_queries, got_qrels = read_beir(tmp_path)
    assert list(got_corpus.items()) == list(corpus.items())
    assert list(got_queries.items()) == list(queries.items())
    assert _exact(got_qrels) == _exact(qrels)
    # Integral grades read back as ints (as every ef reader gives them), others as floats.
    wanted = [float if not float(g).is_integer() or repr(float(g)) == "-0.0" else int for g in _grades_of(qrels)]
    assert [type(g) for g in _grades_of(got_qrels)] == wanted


@pytest.mark.parametrize(
    "text",
    ["", " leading and trailing ", "line\u2028separator", "nul\x00byte", "\ufeffbom", "emoji 🎉", "cr\r\nlf"],
)
def test_round_trip_edge_texts(tmp_path: Path, text: str) -> None:
    write_beir(tmp_path, {"d": text}, {"\u2028 q": text}, {"\u2028 q": {"d": 1}})
    assert read_beir(tmp_path) == ({"d": text}, {"\u2028 q": text}, {"\u2028 q": {"d": 1.0}})
