"""Ids a TREC file can hold: every id the readers return can be written back; errors name query and doc.

``ef.io.ids`` holds the rules and ``write_run`` (``ef.io.trec``) calls them: the round-trip tests go
through it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import evaluate_run
from ef.io.ids import check_query_id, check_ranking, check_trec_id
from ef.trec import read_run, write_run

ODD = ["\xa0", "\x1c", "\u2028", "\x85", "\x1f", "\u3000"]  # str.isspace() is True for each; bytes.split() keeps them
ASCII_WS = " \t\n\r\x0b\x0c"


@pytest.mark.parametrize("char", ODD)
def test_an_id_read_back_with_a_unicode_space_is_accepted(tmp_path: Path, char: str) -> None:
    path = tmp_path / "r.run"
    path.write_bytes(f"q{char}1 Q0 d{char}1 1 1.0 r\n".encode())
    (query_id,) = read_run(path)
    (doc_id,) = read_run(path)[query_id]
    assert (check_query_id(query_id), check_trec_id(doc_id, "a doc id")) == (f"q{char}1", f"d{char}1")


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_characters=ASCII_WS + "\x00#", blacklist_categories=("Cs",)), min_size=1))
def test_every_id_the_reader_returns_is_writable(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("ids") / "r.run"
    path.write_bytes(f"{text} Q0 {text} 1 1.0 r\n".encode())
    (query_id,) = read_run(path)
    assert check_query_id(query_id) == check_trec_id(query_id, "a doc id") == text


@pytest.mark.parametrize(("value", "message"), [
    ("a b", "a doc id must not hold a space, which separates TREC columns (got 'a b')"),
    ("a\tb", "a doc id must not hold a tab, which separates TREC columns (got 'a\\tb')"),
    ("a\x0cb", "a doc id must not hold a form feed, which separates TREC columns (got 'a\\x0cb')"),
    ("a\x00b", "a doc id must not hold a NUL, which ends a TREC file for trec_eval (got 'a\\x00b')"),
    ("a\ud800", "a doc id holds a lone surrogate '\\ud800' at position 1, which UTF-8 cannot write (got 'a\\ud800')"),
    ("", "a doc id must be a non-empty str (got '')"),
    (7, "a doc id must be a non-empty str (got 7)"),
])
def test_what_a_trec_line_cannot_hold_is_named(value: object, message: str) -> None:
    with pytest.raises(ValueError) as error:
        check_trec_id(value, "a doc id")
    assert str(error.value) == message


@pytest.mark.parametrize(("docs", "message"), [
    ({"d1": 10**400}, "score of doc 'd1' in query 'q1' is too large for a float (got an integer beyond 1.8e308)"),
    ({"d\ud800": 1.0}, "a doc id of query 'q1' holds a lone surrogate '\\ud800' at position 1, which UTF-8 cannot "
                       "write (got 'd\\ud800')"),
    (["d1", "d2"], "the ranking of query 'q1' must be a mapping {doc_id: score} (got list)"),
    ({"d1": float("nan")}, "score of doc 'd1' in query 'q1' is NaN"),
    ({"d1": True}, "score of doc 'd1' in query 'q1' must be a number (got True)"),
    ({}, "query 'q1' has no documents: a TREC run file cannot hold an empty ranking (leave the query out)"),
])
def test_ranking_errors_name_the_query_and_the_doc(docs: object, message: str) -> None:
    with pytest.raises(ValueError) as error:
        check_ranking("q1", docs)
    assert str(error.value) == message


@pytest.mark.parametrize("char", ODD)
def test_write_run_writes_back_what_read_run_returns(tmp_path: Path, char: str) -> None:
    run = {f"q{char}1": {f"d{char}1": 1.5}}
    write_run(tmp_path / "r.run", run)
    assert read_run(tmp_path / "r.run") == run


@pytest.mark.parametrize(("run", "message"), [
    ({"q1": {"d1": 10**400}}, "score of doc 'd1' in query 'q1' is too large for a float"),
    ({"q1": ["d1"]}, "the ranking of query 'q1' must be a mapping"),
])
def test_write_run_errors_name_the_query_and_the_doc(tmp_path: Path, run: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        write_run(tmp_path / "r.run", run)  # type: ignore[arg-type]


@pytest.mark.parametrize(("run", "qrels", "message"), [
    ({"": {"d1": 1.0}, "q2": {"d1": 1.0}}, {"q2": {"d1": 1}}, "'run' has an empty query id ('')"),
    ({"q2": {"d1": 1.0}}, {"": {"d1": 1}, "q2": {"d1": 1}}, "'qrels' has an empty query id ('')"),
    ({"q2": {"": 1.0}}, {"q2": {"d1": 1}}, "'run' has an empty doc id ('') in query 'q2'"),
])
def test_an_empty_id_in_a_dict_is_refused(run: object, qrels: object, message: str) -> None:
    with pytest.raises(ValueError) as error:
        evaluate_run(run, qrels, ["P_1"])
    assert str(error.value) == message


def test_an_empty_id_in_a_frame_is_refused() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q2", ""], "doc_id": ["d1", "d1"], "score": [1.0, 1.0]})
    with pytest.raises(ValueError) as error:
        evaluate_run(frame, {"q2": {"d1": 1}}, ["P_1"])
    assert str(error.value) == "'run' column 'query_id' holds an empty id ('') in row 1"
