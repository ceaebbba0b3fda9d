"""ef.io probed: DataFrame readers handed on NaN and str scores (and took a dict for a frame,
failing on .columns), MTEB's writer wrote split=3 as a key "3", a languages str as its
characters and dropped a metric named hf_subset, its reader took NaN and a subset listed twice,
and write_qrels failed with a bare UnicodeEncodeError on an id write_run names. Each is now an
exception naming the argument (or file and entry)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ef.io.frames import qrels_from_frame, run_from_frame
from ef.io.mteb import mteb_result, read_mteb, write_mteb
from ef.trec import read_qrels, write_qrels

pd = pytest.importorskip("pandas")


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(
    ("score", "error", "message"),
    [
        (float("nan"), ValueError, "'run' column 'score' holds NaN (a missing value?) in row 1"),
        ("1.0", TypeError, "'run' column 'score' must hold numbers (got '1.0' of type str in row 1)"),
        (True, TypeError, "'run' column 'score' must hold numbers (got True of type bool in row 1)"),
        (None, TypeError, "'run' column 'score' must hold numbers (got None of type NoneType in row 1)"),
    ],
)
def test_run_from_frame_checks_scores(score: object, error: type[Exception], message: str) -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, score]}, dtype=object)
    with pytest.raises(error, match=exactly(message)):
        run_from_frame(frame)


def test_a_nan_in_a_float_column_is_refused_too() -> None:
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [1.0, float("nan")]})
    assert str(frame["score"].dtype) == "float64"
    with pytest.raises(ValueError, match=exactly("'run' column 'score' holds NaN (a missing value?) in row 1")):
        run_from_frame(frame)
    inf = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [float("inf")]})
    assert run_from_frame(inf) == {"q1": {"d1": float("inf")}}  # a TREC run may rank at infinity


def test_a_decimal_score_reads_as_evaluate_run_takes_it_and_a_decimal_grade_does_not() -> None:
    from decimal import Decimal

    from ef.evaluation import evaluate_run

    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [Decimal("1.5"), Decimal(2)]})
    run = run_from_frame(frame)  # pd.read_sql gives a NUMERIC column as Decimals
    assert run == {"q1": {"d1": Decimal("1.5"), "d2": Decimal(2)}}
    assert evaluate_run(run, {"q1": {"d1": 1}}, ["mrr"]).metrics == {"mrr": 0.5}
    for nan in (Decimal("NaN"), Decimal("sNaN")):
        frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [nan]})
        with pytest.raises(ValueError, match=exactly("'run' column 'score' holds NaN (a missing value?) in row 0")):
            run_from_frame(frame)
    grades = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [Decimal(1)]})
    with pytest.raises(TypeError, match=exactly(
        "'qrels' column 'relevance' must hold numbers (got Decimal('1') of type Decimal in row 0)"
    )):
        qrels_from_frame(grades)


@pytest.mark.parametrize(
    ("grade", "error", "message"),
    [
        (float("nan"), ValueError, "'qrels' column 'relevance' holds NaN (a missing value?) in row 0"),
        (float("inf"), ValueError, "'qrels' column 'relevance' must hold finite grades (got inf in row 0)"),
        (True, TypeError, "'qrels' column 'relevance' must hold numbers (got True of type bool in row 0)"),
        ("1", TypeError, "'qrels' column 'relevance' must hold numbers (got '1' of type str in row 0)"),
    ],
)
def test_qrels_from_frame_checks_grades(grade: object, error: type[Exception], message: str) -> None:
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [grade]}, dtype=object)
    with pytest.raises(error, match=exactly(message)):
        qrels_from_frame(frame)


@pytest.mark.parametrize(("frame", "kind"), [(None, "NoneType"), ({"query_id": ["q"]}, "dict")])
def test_a_frame_that_is_no_frame_is_named(frame: object, kind: str) -> None:
    with pytest.raises(TypeError, match=exactly(f"'frame' must be a pandas or polars DataFrame (got {kind})")):
        run_from_frame(frame)


def test_good_frames_still_read() -> None:
    run = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "score": [2, 1.5]})
    assert run_from_frame(run) == {"q1": {"d1": 2, "d2": 1.5}}
    assert qrels_from_frame(pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "label": [2]})) == {"q": {"d": 2}}


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"metrics": None}, TypeError, "'metrics' must be a mapping {metric: value} (got NoneType)"),
        ({"metrics": [("ndcg_at_10", 1.0)]}, TypeError, "'metrics' must be a mapping {metric: value} (got list)"),
        ({"split": 3}, TypeError, "'split' must be a non-empty str (got 3)"),
        ({"split": ""}, ValueError, "'split' must be a non-empty str (got '')"),
        ({"hf_subset": None}, TypeError, "'hf_subset' must be a non-empty str (got None)"),
        ({"languages": "eng-Latn"}, TypeError, "'languages' must be a sequence of language codes as str "
                                               "(got 'eng-Latn')"),
        ({"dataset_revision": 3}, TypeError, "'dataset_revision' must be a str or None (got 3)"),
        ({"evaluation_time": float("nan")}, ValueError, "'evaluation_time' must be a finite number of seconds >= 0, "
                                                        "or None (got nan)"),
        ({"evaluation_time": "1"}, ValueError, "'evaluation_time' must be a finite number of seconds >= 0, or None "
                                               "(got '1')"),
        ({"metrics": {"ndcg_at_10": 1.0, 1: 0.5}}, TypeError, "'metrics' must have str metric names (got 1)"),
        ({"metrics": {"ndcg_at_10": 1.0, "hf_subset": 0.5}}, ValueError,
         "'metrics' must not hold 'hf_subset': MTEB's result keeps that key for itself"),
        ({"metrics": {"ndcg_at_10": 10**400}}, ValueError, f"'metrics'['ndcg_at_10'] must be a finite number "
                                                            f"(got {10**400!r:.80})"),
    ],
)
def test_mteb_result_names_a_bad_option(options: dict[str, Any], error: type[Exception], message: str) -> None:
    given = {"metrics": {"ndcg_at_10": 1.0}, "task_name": "T", **options}
    with pytest.raises(error, match=exactly(message)):
        mteb_result(**given)


def test_write_mteb_keeps_the_old_file_on_a_bad_call(tmp_path: Path) -> None:
    path = tmp_path / "T.json"
    write_mteb(path, {"ndcg_at_10": 0.5}, task_name="T")
    before = path.read_bytes()
    with pytest.raises(TypeError, match=exactly("'languages' must be a sequence of language codes as str (got 'en')")):
        write_mteb(path, {"ndcg_at_10": 0.7}, task_name="T", languages="en")
    assert path.read_bytes() == before
    with pytest.raises(TypeError, match=exactly("'path' must be a str or os.PathLike path (got NoneType)")):
        write_mteb(None, {"ndcg_at_10": 0.7}, task_name="T")  # type: ignore[arg-type]
    assert read_mteb(path) == {"test": {"default": {"ndcg_at_10": 0.5, "main_score": 0.5}}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"scores": {"test": [{"hf_subset": "default", "ndcg_at_10": NaN}]}}',
         "{path}: NaN is not valid JSON (JSON has no NaN or infinity)"),
        ('{"scores": {"test": [{"hf_subset": "default", "ndcg_at_10": 0.5}, '
         '{"hf_subset": "default", "ndcg_at_10": 0.7}]}}',
         "{path}: scores['test'] lists subset 'default' twice (entry 1)"),
        ('{"scores": {"test": [{"hf_subset": "default", "ndcg_at_10": 0.5, "ndcg_at_10": 0.7}]}}',
         "{path}: key 'ndcg_at_10' appears twice in one object"),
    ],
)
def test_read_mteb_refuses_what_it_took_silently(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "T.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=exactly(message.format(path=path))):
        read_mteb(path)
    json.loads(text)  # each is what Python's json module reads without a word


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ({"q\ud800": {"d": 1}}, "a query id holds a lone surrogate '\\ud800' at position 1, which UTF-8 cannot write "
                                "(got 'q\\ud800')"),
        ({"q": {"d\x00": 1}}, "a doc id of query 'q' must not hold a NUL, which ends a TREC file for trec_eval "
                              "(got 'd\\x00')"),
        ({"q": {"d e": 1}}, "a doc id of query 'q' must not hold a space, which separates TREC columns (got 'd e')"),
    ],
)
def test_write_qrels_names_an_id_it_cannot_write(tmp_path: Path, qrels: Any, message: str) -> None:
    with pytest.raises(ValueError, match=exactly(message)):
        write_qrels(tmp_path / "qrels.txt", qrels)
    assert list(tmp_path.iterdir()) == []


def test_write_qrels_writes_every_id_read_qrels_returns(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q\u00a01 0 d\u2028x 1\n", encoding="utf-8")  # a no-break space and U+2028: part of the ids
    qrels = read_qrels(path)
    assert qrels == {"q\u00a01": {"d\u2028x": 1}}
    write_qrels(tmp_path / "again.txt", qrels)  # was refused: "must be a non-empty str without whitespace"
    assert read_qrels(tmp_path / "again.txt") == qrels


def test_a_json_number_beyond_a_double_is_refused(tmp_path: Path) -> None:
    from ef.io.jsonl import iter_jsonl, loads

    assert json.loads('{"a": 1e400}') == {"a": float("inf")}  # Python's json: infinity by the back door
    with pytest.raises(ValueError, match=exactly(
        "w: the number 1e400 is beyond the range of a double (it would read as infinity)"
    )):
        loads('{"a": 1e400}', "w")
    path = tmp_path / "r.jsonl"
    path.write_text('{"a": 1}\n{"a": -1e999}\n')
    with pytest.raises(ValueError, match=exactly(
        f"{path}:2: the number -1e999 is beyond the range of a double (it would read as infinity)"
    )):
        list(iter_jsonl(path))
    assert loads('{"a": 1.7976931348623157e308, "b": 10000000000000000000000}', "w") == {
        "a": 1.7976931348623157e308, "b": 10**22
    }
    with pytest.raises(TypeError, match=exactly("'text' must be a str (got NoneType)")):
        loads(None, "w")  # type: ignore[arg-type]


def test_long_frame_names_its_arguments() -> None:
    from ef.io.frames import long_frame

    with pytest.raises(TypeError, match=exactly("'per_query' must be a mapping {query_id: {measure: value}} "
                                                "(got NoneType)")):
        long_frame(None, "pandas")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=exactly("'library' must be 'pandas' or 'polars' (got 'bogus')")):
        long_frame({"q": {"m": 1.0}}, "bogus")
    assert long_frame({"q": {"m": 1.0}}, "pandas").to_dict("records") == [{"query_id": "q", "measure": "m",
                                                                          "value": 1.0}]
