"""ef.compat.ir_measures' read_trec_qrels/read_trec_run read a list or generator of lines, as they did
before 07b79ce moved them onto ef's reader (which then said "'list' object has no attribute 'read'"),
and name anything else that is no file."""

from __future__ import annotations

import pytest

from ef.compat.ir_measures import Qrel, ScoredDoc, read_trec_qrels, read_trec_run


def test_lines_are_read() -> None:
    assert list(read_trec_qrels(["q1 0 d1 2", "q1 0 d2 0\n"])) == [Qrel("q1", "d1", 2, "0"), Qrel("q1", "d2", 0, "0")]
    assert list(read_trec_run(line for line in ["q1 Q0 d1 1 2.5 t\n"])) == [ScoredDoc("q1", "d1", 2.5)]


def test_lines_keep_their_numbers_in_errors() -> None:
    with pytest.raises(ValueError) as info:
        list(read_trec_run(["q1 Q0 d1 1 2.5 t", "q1 Q0 d2 2 nan t"]))
    assert str(info.value) == "run:2: score is NaN"


def test_what_is_no_file_is_named() -> None:
    with pytest.raises(TypeError) as info:
        list(read_trec_qrels(3))
    assert str(info.value) == "'file' must be a path, the qrels text, an open file or its lines (got int)"
    with pytest.raises(TypeError) as info:
        list(read_trec_run([b"q1 Q0 d1 1 2.5 t\n"]))
    assert str(info.value) == "'file' lines must be str (got bytes: b'q1 Q0 d1 1 2.5 t\\n')"
