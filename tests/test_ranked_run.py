"""RankedRun: the fused run held as arrays, a read-only run mapping to every reader of runs in ef."""

from __future__ import annotations

import json
import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _kernel, _reference, evaluate_run
from ef.fusion import fuse
from ef.io.ranked import RankedRun
from ef.trec import read_run, write_run

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 1.0}}
B = {"q1": {"d3": 0.9, "d1": 0.5}, "q3": {"d5": 2.0, "d6": 2.0}}


def _run() -> RankedRun:
    ids = ["d1", "d2", "d9", "d9"]
    return RankedRun(("q1", "q2"), np.array([0, 2, 3]), ids, np.array([1, 0, 3]), np.array([0.9, 0.5, 2.0]))


def test_it_is_a_read_only_mapping_of_read_only_mappings() -> None:
    run = _run()
    assert list(run) == ["q1", "q2"]
    assert len(run) == 2
    assert list(run["q1"].items()) == [("d2", 0.9), ("d1", 0.5)]
    assert run["q1"] is run["q1"]  # made once
    assert "q2" in run
    assert "q3" not in run
    assert 3 not in run
    assert run.get("q3") is None
    with pytest.raises(KeyError, match="q3"):
        run["q3"]
    with pytest.raises(TypeError, match="'mappingproxy' object does not support item assignment"):
        run["q1"]["d1"] = 1.0  # type: ignore[index]
    with pytest.raises(TypeError, match="'RankedRun' object does not support item assignment"):
        run["q1"] = {}  # type: ignore[index]
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        run.score[0] = 5.0
    assert run == {"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d9": 2.0}}
    assert {"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d9": 2.0}}.__eq__(run) is NotImplemented  # so run.__eq__ answers
    assert run != {"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d9": 2.5}}
    assert run != {"q1": {"d2": 0.9, "d1": 0.5}}


def test_to_dict_is_a_new_plain_dict_in_trec_order_each_time() -> None:
    run = _run()
    first = run.to_dict()
    assert json.dumps(first) == '{"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d9": 2.0}}'
    first["q1"]["d1"] = 7.0
    assert run.to_dict()["q1"]["d1"] == 0.5
    assert run["q1"]["d1"] == 0.5
    assert repr(run) == "RankedRun({'q1': {'d2': 0.9, 'd1': 0.5}, 'q2': {'d9': 2.0}})"


def test_the_callers_arrays_stay_writable_and_a_pickle_comes_back_equal() -> None:
    score = np.array([0.9, 0.5, 2.0])
    run = RankedRun(("q1", "q2"), np.array([0, 2, 3]), ["a", "b", "c"], np.array([0, 1, 2]), score)
    score[2] = 3.0  # the caller's array is not frozen; the run holds a read-only copy of it
    assert score.flags.writeable
    assert not run.score.flags.writeable
    run["q1"]  # a made mapping (not picklable) is not pickled
    back = pickle.loads(pickle.dumps(run))
    assert type(back) is RankedRun
    assert back.to_dict() == run.to_dict() == {"q1": {"a": 0.9, "b": 0.5}, "q2": {"c": 2.0}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((("q1",), [0, 2], ["a"], [0, 0, 0], [1.0, 2.0]),
         "'doc' and 'score' must have one value per entry (got 3 and 2)"),
        ((("q1",), [0, 1], ["a"], [0, 0], [1.0, 2.0]),
         "'bounds' must rise from 0 to the number of entries (2), one more value than 'queries' (1)"),
        ((("q1", "q2"), [0, 2], ["a"], [0, 0], [1.0, 2.0]),
         "'bounds' must rise from 0 to the number of entries (2), one more value than 'queries' (2)"),
        ((("q1", "q2"), [0, 3, 2], ["a"], [0, 0], [1.0, 2.0]),
         "'bounds' must rise from 0 to the number of entries (2), one more value than 'queries' (2)"),
        ((("q1",), [1, 2], ["a"], [0, 0], [1.0, 2.0]),
         "'bounds' must rise from 0 to the number of entries (2), one more value than 'queries' (1)"),
        ((("q1",), [0, 2], ["a", "b"], [0, 2], [1.0, 2.0]), "'doc' must hold codes into 'ids' (0 to 1)"),
        ((("q1",), [0, 2], ["a", "b"], [-1, 0], [1.0, 2.0]), "'doc' must hold codes into 'ids' (0 to 1)"),
        ((("q1", "q1"), [0, 1, 2], ["a", "b"], [0, 1], [1.0, 2.0]), "'queries' must name each query once"),
        ((("q1",), [[0, 2]], ["a", "b"], [0, 1], [1.0, 2.0]), "'bounds' must be one-dimensional (got shape (1, 2))"),
    ],
)
def test_inconsistent_arrays_are_refused(args: tuple[Any, ...], message: str) -> None:
    queries, bounds, ids, doc, score = args
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        RankedRun(queries, np.array(bounds), ids, np.array(doc), np.array(score))


_OUT_OF_ORDER = ("query 'q' is not in trec_eval's order (score descending, then doc id descending): doc 'b' at "
                 "entry 1 ranks ahead of the one before it")


@pytest.mark.parametrize(
    ("doc", "score", "message"),
    [
        ([0, 1, 2], [0.1, 0.9, 0.5], _OUT_OF_ORDER),
        ([0, 1, 2], [1.0, 1.0, 0.5], _OUT_OF_ORDER),  # a tie: 'b' ranks ahead of 'a'
        ([0, 3, 2], [0.9, 0.5, 0.1], "query 'q' lists doc 'a' twice"),  # two codes of one id
        ([1, 1, 0], [0.9, 0.5, 0.1], "query 'q' lists doc 'b' twice"),
        ([1, 0, 2], [0.9, float("nan"), 0.1],
         "'score' must hold finite numbers (a TREC run file ranks no NaN or infinity)"),
    ],
)
def test_a_run_made_by_hand_must_be_in_trec_order_with_each_doc_once(doc: list[int], score: list[float],
                                                                      message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        RankedRun(("q",), np.array([0, 3]), ["a", "b", "c", "a"], np.array(doc), np.array(score))
    # In order (ties by doc id descending, byte-wise: "d9" before "d10"), it is taken.
    ordered = RankedRun(("q",), np.array([0, 3]), ["d10", "d9", "x"], np.array([2, 1, 0]), np.array([2.0, 1.0, 1.0]))
    assert list(ordered["q"]) == ["x", "d9", "d10"]


def test_an_empty_run() -> None:
    run = fuse([{"q1": {}}])
    assert run == {}
    assert run.to_dict() == {}
    assert list(run) == []


def test_a_fused_run_scores_as_its_dicts_and_is_refused_as_qrels() -> None:
    fused = fuse([A, B], method="combsum", norm="min-max")
    assert isinstance(fused, RankedRun)
    qrels = {"q1": {"d3": 1, "d2": 0}, "q3": {"d6": 2}}
    assert evaluate_run(fused, qrels, ["ndcg", "P_1"]) == evaluate_run(fused.to_dict(), qrels, ["ndcg", "P_1"])
    with pytest.raises(ValueError, match=r"the arguments look swapped.*\(the 'qrels' is a run that ef.fusion.fuse "
                                         r"returned\)$"):
        evaluate_run(qrels, fused, ["ndcg"])


_IDS = st.sampled_from(["d1", "d2", "d10", "é", "\U0001f600", "a b", "z" * 20])
_DOCS = st.dictionaries(_IDS, st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]), max_size=6)


@settings(max_examples=300, deadline=None)
@given(  # runs of at least one query (an empty one is refused by fuse, as by evaluate_run)
    st.dictionaries(st.sampled_from(["q1", "q2", "q10", "é"]), _DOCS, min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(["q1", "q2", "q10", "é"]), _DOCS, min_size=1, max_size=4),
    st.dictionaries(st.sampled_from(["q1", "q2", "q3", "é"]), st.dictionaries(_IDS, st.integers(-1, 3), max_size=5),
                    min_size=1, max_size=4),
    st.sampled_from([None, 1, 2, 5]),
    st.sampled_from(["zero", "skip"]),
    st.sampled_from(["rrf", "combsum", "combmnz"]),
)
def test_a_fused_run_is_scored_from_its_arrays_as_from_its_dicts(
    a: dict[str, dict[str, float]], b: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]],
    depth: int | None, missing: str, method: str,
) -> None:
    # evaluate_run reads a RankedRun's arrays (rank_ranked: an entry's rank is its place), never its dicts.
    fused = fuse([a, b], method=method)
    measures = ["map", "ndcg", "P_1", "recip_rank", "num_ret", "num_rel_ret", "bpref", "Rprec"]
    try:
        expected: Any = evaluate_run(fused.to_dict(), qrels, measures, missing=missing, max_docs=depth)
    except ValueError as error:
        expected = str(error)
    try:
        got: Any = evaluate_run(fused, qrels, measures, missing=missing, max_docs=depth)
    except ValueError as error:
        got = str(error)
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_IDS, unique=True, max_size=6), max_size=4),
    st.lists(st.dictionaries(_IDS, st.floats(-2, 3, allow_nan=False), max_size=5), max_size=5),
    st.lists(st.integers(-1, 4), max_size=5),
    st.integers(-1, 7),
)
def test_the_kernel_ranks_a_ranked_run_as_the_reference(
    queries: list[list[str]], judged: list[dict[str, float]], ks: list[int], max_docs: int
) -> None:
    ids = sorted({d for docs in queries for d in docs})
    doc = np.array([ids.index(d) for docs in queries for d in docs], dtype=np.int64)
    bounds = np.cumsum([0] + [len(docs) for docs in queries]).astype(np.int64)
    n = min(len(ks), len(judged))
    picks = np.array([k if k < len(queries) else -1 for k in ks[:n]], dtype=np.int64)
    args = (picks, bounds, ids, doc, judged[:n], max_docs)
    assert _kernel.rank_ranked(*args) == _reference.rank_ranked(*args)


def test_rank_ranked_refuses_what_it_cannot_read() -> None:
    bounds, doc = np.array([0, 2]), np.array([0, 1])
    one = np.array([0])
    for engine in (_kernel, _reference):
        for depth in (-1, 1):  # every id is checked, past max_docs too, as the dicts' path checks every doc
            with pytest.raises(TypeError, match=r"^a RankedRun's doc ids must be str \(got 5\)$"):
                engine.rank_ranked(one, bounds, ["a", 5], doc, [{"a": 1}], depth)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"^rank_ranked takes query numbers in range and a dict per query$"):
        _kernel.rank_ranked(np.array([1]), bounds, ["a", "b"], doc, [{"a": 1}], -1)
    with pytest.raises(ValueError, match=r"^rank_ranked takes query numbers in range and a dict per query$"):
        _kernel.rank_ranked(one, bounds, ["a", "b"], doc, [[("a", 1)]], -1)  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"^bounds must hold at least one number$"):
        _kernel.rank_ranked(one, np.array([], dtype=np.int64), ["a", "b"], doc, [{"a": 1}], -1)
    with pytest.raises(ValueError, match=r"^ks must hold 1 aligned 8-byte numbers \(got 16 bytes\)$"):
        _kernel.rank_ranked(np.array([0, 0]), bounds, ["a", "b"], doc, [{"a": 1}], -1)
    with pytest.raises(ValueError, match=r"^doc code 2 is out of range$"):
        _kernel.rank_ranked(one, bounds, ["a", "b"], np.array([0, 2]), [{"a": 1}], -1)
    ids: list[str] = []

    class Emptying(str):  # a str whose == empties the caller's list while the kernel reads it
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            ids.clear()
            return str.__eq__(self, other)

    ids += [Emptying("a"), "b"]
    with pytest.raises(IndexError, match=r"^list index out of range$"):
        _kernel.rank_ranked(one, bounds, ids, doc, [{"a": 1}], -1)


def test_a_run_made_by_hand_keeps_copies_and_the_kernel_survives_python_code_run_mid_call(tmp_path: Path) -> None:
    bounds, doc, score, ids = np.array([0, 2]), np.array([0, 1]), np.array([2.0, 1.0]), ["a", "b"]
    run = RankedRun(("q",), bounds, ids, doc, score)
    bounds[1], doc[0], ids[0] = 99, 5, "x"  # the caller's own arrays and list, changed after the checks
    assert run.to_dict() == {"q": {"a": 2.0, "b": 1.0}}
    assert evaluate_run(run, {"q": {"b": 1}}, ["P_2", "recip_rank"]).metrics == {"P_2": 0.5, "recip_rank": 0.5}

    class Emptying(str):  # a doc id whose == with the qrels' "a" (in the kernel's lookup) empties the run's list
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            if isinstance(other, str) and str.__eq__(other, "a"):
                hostile.ids.clear()
            return str.__eq__(self, other)

    hostile = RankedRun(("q",), np.array([0, 2]), [Emptying("a"), "b"], np.array([0, 1]), np.array([2.0, 1.0]))
    with pytest.raises(IndexError, match=r"^list index out of range$"):  # an error, not a freed id read
        evaluate_run(hostile, {"q": {"a": 1, "b": 1}}, ["P_2"])
    # Given with a qrels file, a RankedRun is checked for swapped arguments as a ranx Run is.
    swapped = RankedRun(("q",), np.array([0, 1]), ["a"], np.array([0]), np.array([1.0]))
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq\ta\t0.81\nq\tb\t0.52\n")
    with pytest.raises(ValueError, match=r"^the arguments look swapped"):
        evaluate_run(swapped, str(qrels), ["P_1"])


def test_a_ranked_run_with_a_non_str_or_empty_doc_id_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^'ids' must hold str doc ids \(got 7, int\)$"):
        RankedRun(("q",), np.array([0, 1]), ["a", 7], np.array([1]), np.array([1.0]))  # type: ignore[list-item]
    empty = RankedRun(("q",), np.array([0, 2]), ["a", ""], np.array([0, 1]), np.array([2.0, 1.0]))
    with pytest.raises(ValueError, match=r"^'run' has an empty doc id \(''\) in query 'q'$"):
        evaluate_run(empty, {"q": {"a": 1}}, ["P_1"])
    unused = RankedRun(("q",), np.array([0, 1]), ["a", ""], np.array([0]), np.array([2.0]))  # "" named by no entry
    assert evaluate_run(unused, {"q": {"a": 1}}, ["P_1"]).metrics == {"P_1": 1.0}


def test_write_run_of_a_ranked_run_reads_back_and_names_an_empty_query(tmp_path: Path) -> None:
    fused = fuse([A, B], method="rrf")
    write_run(tmp_path / "fused.trec", fused, run_id="x")
    assert read_run(tmp_path / "fused.trec") == fused
    # A hand-made run with a query of no entries: the writer's own check names it, nothing written.
    empty = RankedRun(("q1", "q2"), np.array([0, 1, 1]), ["a"], np.array([0]), np.array([1.0]))
    with pytest.raises(ValueError, match="query 'q2' has no documents"):
        write_run(tmp_path / "empty.trec", empty)
    assert not (tmp_path / "empty.trec").exists()
