"""read_beir: corpus and query ids are refused with surrounding whitespace, as qrels ids are, and
a lone surrogate in a text is named with its file, line and record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ef.evaluation import read_beir


def _dataset(tmp_path: Path, corpus: list[str], queries: list[str]) -> Path:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text("".join(line + "\n" for line in corpus))
    (tmp_path / "queries.jsonl").write_text("".join(line + "\n" for line in queries))
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return tmp_path


GOOD_DOC = json.dumps({"_id": "d1", "title": "", "text": "a text"})
GOOD_QUERY = json.dumps({"_id": "q1", "text": "a query"})


@pytest.mark.parametrize("bad_id", [" d1", "d1 ", "d1\t", "\nd1"])
def test_a_corpus_id_with_surrounding_whitespace_is_refused(tmp_path: Path, bad_id: str) -> None:
    folder = _dataset(tmp_path, [GOOD_DOC, json.dumps({"_id": bad_id, "text": "t"})], [GOOD_QUERY])
    with pytest.raises(ValueError) as error:
        read_beir(folder)
    assert str(error.value) == (
        f"{folder / 'corpus.jsonl'}:2: '_id' {bad_id!r} has surrounding whitespace, so it could never match a "
        "qrels id"
    )


def test_a_query_id_with_surrounding_whitespace_is_refused(tmp_path: Path) -> None:
    folder = _dataset(tmp_path, [GOOD_DOC], [json.dumps({"_id": "q1 ", "text": "t"})])
    with pytest.raises(ValueError) as error:
        read_beir(folder)
    assert str(error.value) == (
        f"{folder / 'queries.jsonl'}:1: '_id' 'q1 ' has surrounding whitespace, so it could never match a qrels id"
    )


@pytest.mark.parametrize(("line", "message"), [
    ('{"_id": "d2", "title": "", "text": "half \\ud800 pair"}',
     "'text' of doc 'd2' holds a lone surrogate '\\ud800' at position 5 (half of a UTF-16 pair, written as a \\u "
     "escape), which UTF-8 text cannot hold"),
    ('{"_id": "d2", "title": "t\\udfff", "text": "x"}',
     "'title' of doc 'd2' holds a lone surrogate '\\udfff' at position 1 (half of a UTF-16 pair, written as a \\u "
     "escape), which UTF-8 text cannot hold"),
    ('{"_id": "d\\ud800", "text": "x"}',
     "'_id' 'd\\ud800' holds a lone surrogate '\\ud800' at position 1 (half of a UTF-16 pair, written as a \\u "
     "escape), which UTF-8 text cannot hold"),
])
def test_a_lone_surrogate_in_the_corpus_is_named(tmp_path: Path, line: str, message: str) -> None:
    folder = _dataset(tmp_path, [GOOD_DOC, line], [GOOD_QUERY])
    with pytest.raises(ValueError) as error:
        read_beir(folder)
    assert str(error.value) == f"{folder / 'corpus.jsonl'}:2: {message}"


def test_a_surrogate_pair_is_one_character_and_fine(tmp_path: Path) -> None:
    folder = _dataset(tmp_path, [json.dumps({"_id": "d1", "text": "emoji \U0001f600"}, ensure_ascii=True)],
                      [GOOD_QUERY])
    corpus, _, _ = read_beir(folder)
    assert corpus == {"d1": "emoji \U0001f600"}
