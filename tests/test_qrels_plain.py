"""Plain TREC qrels are read in one pass over a str; every other file line by line: same qrels."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.io.trec import _plain_qrels, read_qrels

ids = st.text(alphabet="abcXYZ019-_.:", min_size=1, max_size=6)
grades = st.integers(min_value=0, max_value=10**18 - 1)
qrels_strategy = st.dictionaries(ids, st.dictionaries(ids, grades, min_size=1, max_size=6), max_size=6)


def _text(qrels: dict[str, dict[str, int]], separator: str) -> str:
    lines = (separator.join((q, "0", d, str(g))) for q, docs in qrels.items() for d, g in docs.items())
    return "".join(line + "\n" for line in lines)


@settings(max_examples=80, deadline=None)
@given(qrels=qrels_strategy, separator=st.sampled_from([" ", "\t", "  "]), final_newline=st.booleans())
def test_plain_and_line_by_line_readers_agree(
    tmp_path_factory: pytest.TempPathFactory, qrels: dict[str, dict[str, int]], separator: str, final_newline: bool
) -> None:
    text = _text(qrels, separator)
    text = text if final_newline else text.removesuffix("\n")
    folder = tmp_path_factory.mktemp("qrels")
    plain, commented = folder / "plain.txt", folder / "commented.txt"
    plain.write_text(text)
    commented.write_text("# a comment: read line by line\n" + text)
    assert _plain_qrels(text.encode()) == qrels  # the plain reader took it
    assert read_qrels(plain) == read_qrels(commented) == qrels
    assert list(read_qrels(plain)) == list(qrels)  # queries in first-appearance order


@pytest.mark.parametrize(
    "text",
    [
        "q1 0 d1 1\r\n",  # CR
        "q1 0 d1 1\n\nq1 0 d2 0\n",  # a blank line
        "q1 0 d1 1\nq1 0 d1 0\n",  # a doc judged twice
        "q1 0 d1 1\nq1 0 d2\n",  # 3 columns
        "q1 0 d1 1 x\n",  # 5 columns
        "q1 0 d1 -1\n",  # a sign
        "q1 0 d1 1.0\n",  # a fraction
        "q1 0 d1 1234567890123456789\n",  # 19 digits
        "q1\td1\t1\n",  # BEIR
        "q1 0 d\u00e91 1\n",  # not ASCII
        "q1 0 d1 1 # x\n",  # '#'
        "q1 0 d\x1c1 1\n",  # a separator to str.split, not to trec_eval
    ],
)
def test_anything_not_plain_is_read_line_by_line(text: str) -> None:
    assert _plain_qrels(text.encode()) is None


def test_a_doc_judged_twice_still_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d1 0\n")
    with pytest.raises(ValueError) as info:
        read_qrels(path)
    assert str(info.value) == f"{path}:3: doc id 'd1' is judged twice in query 'q1' (first at line 1)"
