"""ef.fusion probed as a new user would: weights, qrels, weight_grid and tune's options of the
wrong kind are each an exception naming the argument, found before anything is fused; a trained
method's qrels that judge nothing of the runs no longer fit all-zero tables silently, and a
weight grid too large to hold is refused before it is made."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from ef.fusion import fit, fuse, tune, weight_grid
from ef.fusion.tune import MAX_WEIGHT_VECTORS

QRELS = {f"q{i}": {"d1": 1, "d2": 1} for i in range(6)}
A = {f"q{i}": {"d1": 2.0, "d2": 1.0, "x": 0.5} for i in range(6)}
B = {f"q{i}": {"x": 2.0, "d1": 1.0} for i in range(6)}


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(("weights", "kind"), [(3, "int"), ("12", "str"), (b"12", "bytes"), (None, None)])
def test_weights_that_are_no_sequence_are_named(weights: object, kind: str | None) -> None:
    if kind is None:  # None is "all 1", as documented
        assert fuse([A, B], method="wsum", weights=weights) == fuse([A, B], method="wsum", weights=[1, 1])  # type: ignore[arg-type]
        return
    with pytest.raises(TypeError, match=exactly(f"'weights' must be a sequence of numbers, one per run (got {kind})")):
        fuse([A, B], method="wsum", weights=weights)  # type: ignore[arg-type]


def test_a_weight_beyond_a_float_is_named() -> None:
    with pytest.raises(ValueError, match=exactly(f"'weights[1]' must be a finite number (got {10**400!r:.80})")):
        fuse([A, B], method="wsum", weights=[1, 10**400])


@pytest.mark.parametrize(
    ("qrels", "error", "message"),
    [
        ({"q1": {"d1": float("nan")}}, ValueError, "'qrels'['q1']['d1'] must be a finite number (got nan)"),
        ({"q1": {"d1": "1"}}, TypeError, "'qrels'['q1']['d1'] must be a finite number (got '1')"),
        ({"q1": {"d1": None}}, TypeError, "'qrels'['q1']['d1'] must be a finite number (got None)"),
        ({"q1": {"d1": True}}, TypeError, "'qrels'['q1']['d1'] must be a finite number (got True)"),
        ({"q1": None}, TypeError, "'qrels'['q1'] must be a mapping {doc_id: grade} (got NoneType)"),
        ({"q1": [("d1", 1)]}, TypeError, "'qrels'['q1'] must be a mapping {doc_id: grade} (got list)"),
        ({1: {"d1": 1}}, TypeError, "'qrels' must have str query ids (got 1)"),
        ({"q1": {2: 1}}, TypeError, "'qrels'['q1'] must have str doc ids (got 2)"),
        ({}, ValueError, "'qrels' judge no query: method 'probfuse' has nothing to fit on"),
        ({"other": {"d1": 1}}, ValueError, "'qrels' judge none of the runs' queries (they judge 1, first 'other'): "
                                           "method 'probfuse' has nothing to fit on"),
    ],
)
def test_a_trained_methods_qrels_are_checked(qrels: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        fuse([A, B], method="probfuse", qrels=qrels)
    with pytest.raises(error, match=exactly(message)):
        fit([A, B], qrels, method="probfuse")


def test_good_qrels_still_fit() -> None:
    fused = fuse([A, B], method="posfuse", qrels=QRELS)
    assert fused["q0"] == fit_and_fuse()


def fit_and_fuse() -> dict[str, float]:
    params = fit([A, B], QRELS, method="posfuse")
    assert [t.tolist() for t in params["tables"]] == [[1.0, 1.0, 0.0], [0.0, 1.0]]
    return dict(fuse([A, B], method="posfuse", params=params)["q0"])


@pytest.mark.parametrize(
    ("n_runs", "error", "message"),
    [
        (0, ValueError, "'n_runs' must be a positive integer (got 0)"),
        (-1, ValueError, "'n_runs' must be a positive integer (got -1)"),
        (2.0, TypeError, "'n_runs' must be a positive integer (got 2.0)"),
        ("2", TypeError, "'n_runs' must be a positive integer (got '2')"),
        (True, TypeError, "'n_runs' must be a positive integer (got True)"),
        (None, TypeError, "'n_runs' must be a positive integer (got None)"),
    ],
)
def test_weight_grid_names_a_bad_n_runs(n_runs: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        weight_grid(n_runs, 0.5)  # type: ignore[arg-type]


def test_a_weight_grid_too_large_to_hold_is_refused_before_it_is_made() -> None:
    assert len(weight_grid(4, 0.01)) == 176_851  # C(103, 3): held
    with pytest.raises(ValueError, match=exactly(
        f"'step' 0.01 with 6 runs makes 96,560,646 weight vectors (at most {MAX_WEIGHT_VECTORS:,}): take a larger step"
    )):
        weight_grid(6, 0.01)  # was minutes and gigabytes, then killed for memory
    with pytest.raises(ValueError, match=exactly(
        "'step' 0.01 with 50 runs makes about 6.7e+39 weight vectors (at most 1,000,000): take a larger step"
    )):
        weight_grid(50, 0.01)
    with pytest.raises(ValueError, match=r"^'step' 0\.01 with 6 runs makes 96,560,646 weight vectors"):
        tune([A] * 6, QRELS, folds=2, step=0.01)
    assert weight_grid(1, 0.1) == [(1.0,)]


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"missing": "max"}, ValueError, "'missing' must be one of 'zero', 'min' (got 'max')"),  # was taken silently
        ({"depth": 0}, ValueError, "'depth' must be a positive integer or None (got 0)"),  # numpy's IndexError
        ({"depth": "5"}, ValueError, "'depth' must be a positive integer or None (got '5')"),
        ({"method": None}, TypeError, "'method' must be a method name or a sequence of them (got NoneType)"),
        ({"method": 3}, TypeError, "'method' must be a method name or a sequence of them (got int)"),
        ({"norm": 3}, TypeError, "'norm' must be a norm name, a sequence of them or None (got int)"),
        ({"correction": "sidak"}, ValueError, "'correction' must be one of holm, bh, bonferroni, none (got 'sidak')"),
        ({"measure": "num_ret"}, ValueError, "'measure' must be a per-query score averaged over queries (got "
                                             "'num_ret', summarised as a sum): the tuning maximises a mean and "
                                             "compares mean differences"),  # named 'measures', after every fusion
        ({"measure": "P"}, ValueError, "'measure' must name one measure (got 'P', which is 9: P_5, P_10, P_15 ...)"),
        ({"measure": "bogus"}, ValueError, "measure 'bogus': unknown measure (every spelling: "
                                           "ef.measures.valid_forms(), ef trec-eval --help)"),
    ],
)
def test_tune_checks_every_option_before_fusing(keywords: dict[str, Any], error: type[Exception], message: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("ef.fusion.tune")  # ef.fusion.tune, the attribute, is the function

    def no_fusion(*args: object, **kwargs: object) -> None:
        raise AssertionError("fused before the options were checked")

    monkeypatch.setattr(module, "fuse_stack", no_fusion)
    with pytest.raises(error, match=exactly(message)):
        tune([A, B], QRELS, folds=2, step=0.5, **keywords)


def test_tune_names_qrels_that_judge_none_of_the_runs_queries() -> None:
    # was "'folds' must be an integer from 2 to the 2 judged queries", or ef.compare's error after every fusion
    with pytest.raises(ValueError, match=exactly(
        "'qrels' judge none of the runs' queries (they judge 2, first 'x1'): there is nothing to tune on"
    )):
        tune([A, B], {"x1": {"d1": 1}, "x2": {"d1": 1}}, folds=2)


def test_tune_still_tunes() -> None:
    report = tune({"a": A, "b": B}, QRELS, method=["wsum", "rrf"], folds=2, step=0.5)
    assert report.final.method in ("wsum", "rrf")
    assert sorted(report.inputs) == ["a", "b"]
    assert set(report.held_out) == set(QRELS)


@pytest.mark.parametrize(
    ("runs", "name", "error"), [({1: A, "b": B}, "1", TypeError), ({"": A, "b": B}, "''", ValueError)]
)
def test_tune_names_a_run_name_that_is_no_str_before_fusing(runs: Any, name: str, error: type[Exception],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("ef.fusion.tune")

    def no_fusion(*args: object, **kwargs: object) -> None:
        raise AssertionError("fused before the names were checked")

    monkeypatch.setattr(module, "fuse_stack", no_fusion)
    with pytest.raises(error, match=exactly(f"'runs': every name must be a non-empty str (got {name})")):
        tune(runs, QRELS, folds=2, step=0.5)


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"depth": 0}, "'depth' must be a positive integer or None (got 0)"),
        ({"method": "wsum", "weights": [1]}, "'weights' must hold one weight per run (2) (got 1)"),
        ({"method": "rrf", "params": {"k": -1}}, "'params['k']' must be a finite number >= 0 (got -1)"),
    ],
)
def test_fuse_checks_its_options_before_reading_a_run_file(keywords: dict[str, Any], message: str) -> None:
    # the files do not exist: a FileNotFoundError would say they were read first
    with pytest.raises(ValueError, match=exactly(message)):
        fuse(["/nonexistent/a.trec", "/nonexistent/b.trec"], **keywords)


def test_weights_from_a_generator_are_read_once() -> None:
    generated = (w for w in (1.0, 2.0))
    assert fuse([A, B], method="wsum", weights=generated) == fuse([A, B], method="wsum", weights=[1, 2])  # type: ignore[arg-type]


def test_a_run_file_with_no_ranking_line_is_refused(tmp_path: Path) -> None:
    from ef.trec import write_run

    empty, full = tmp_path / "empty.trec", tmp_path / "full.trec"
    empty.write_text("# nothing\n\n")
    write_run(full, A)
    # as evaluate_run refuses it; fused, it was a run of nothing (or the other run alone, silently)
    with pytest.raises(ValueError, match=exactly(f"{empty}: the run holds no ranking line (runs[1])")):
        fuse([full, empty])
    with pytest.raises(ValueError, match=exactly(f"{empty}: the run holds no ranking line (runs['dense'])")):
        tune({"bm25": full, "dense": empty}, QRELS, folds=2, step=0.5)
    assert fuse([full, {"q0": {"d1": 1.0}}])["q0"] == fuse([A, {"q0": {"d1": 1.0}}])["q0"]
    infinite = tmp_path / "inf.trec"  # a score of inf: the files are parsed one by one, not stacked by the engine
    infinite.write_text("q0 Q0 d1 1 inf r\n")
    with pytest.raises(ValueError, match=exactly(f"{empty}: the run holds no ranking line (runs[1])")):
        fuse([infinite, empty])
