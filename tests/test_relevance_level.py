"""-l, the relevance level, one flag across the commands: the same rule and message in ef eval,
trec-eval, compare, gate and fuse; and fusion honours it where it reads grades (a trained method's
fit, tune's measure and comparison), refusing it where it would be ignored."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from tests._cli import run, write_files

from ef.evaluation import evaluate_retrieval, evaluate_run
from ef.fusion import fit, fuse, tune
from ef.trec import read_run

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 2.0, "d5": 1.0}}
B = {"q1": {"d3": 0.9, "d1": 0.5}, "q2": {"d5": 0.7, "d4": 0.1}}
QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d5": 2, "d4": 1}}
LEVEL_0 = "expected an integer grade >= 1, such as 1 or 2 (got '0')"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {
        "qrels": "q1 0 d1 1\nq1 0 d3 2\nq2 0 d5 2\nq2 0 d4 1\n",
        "a": "q1 0 d1 1 3 a\nq1 0 d2 2 2 a\nq1 0 d3 3 1 a\nq2 0 d4 1 2 a\nq2 0 d5 2 1 a\n",
        "b": "q1 0 d3 1 0.9 b\nq1 0 d1 2 0.5 b\nq2 0 d5 1 0.7 b\nq2 0 d4 2 0.1 b\n",
    })


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["eval", "-l", "0"], "-l/--level"),
        (["trec-eval", "-l", "0", "Q", "A"], "-l/--level_for_rel"),
        (["compare", "-l", "0", "Q", "A", "B"], "-l/--level"),
        (["gate", "-l", "0", "--qrels", "Q", "A", "B"], "-l/--level"),
        (["fuse", "-l", "0", "--tune", "Q", "A", "B"], "-l/--level"),
    ],
)
def test_every_command_refuses_level_0_in_the_same_words(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    # trec_eval takes -l 0, but there its Rndcg can print -nan (and below 0 unjudged docs count as relevant).
    with pytest.raises(SystemExit) as exit_:
        run(capsys, *argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ef {argv[0]}: error: argument {flag}: {LEVEL_0}"


def test_fit_counts_grades_at_the_level_as_relevant() -> None:
    # PosFuse, run A: rank 1 holds d1 (grade 1) and d4 (1); rank 2 d2 (unjudged) and d5 (2); rank 3 d3 (2).
    assert fit([A, B], QRELS, method="posfuse")["tables"][0].tolist() == [1.0, 0.5, 1.0]
    assert fit([A, B], QRELS, method="posfuse", relevance_level=2)["tables"][0].tolist() == [0.0, 0.5, 1.0]
    assert fuse([A, B], method="posfuse", qrels=QRELS, relevance_level=2) == fuse(
        [A, B], method="posfuse", params=fit([A, B], QRELS, method="posfuse", relevance_level=2)
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"method": "rrf", "relevance_level": 2}, "method 'rrf' fits nothing"),
        ({"method": "posfuse", "params": {"tables": [[0.5], [0.5]]}, "relevance_level": 2},
         "method 'posfuse' has its tables (params['tables'])"),
        ({"method": "posfuse", "relevance_level": 2}, "method 'posfuse' is given no qrels"),
    ],
)
def test_fuse_refuses_a_level_it_would_ignore(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as info:
        fuse([A, B], **options)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"'relevance_level' is what a trained method fitted on qrels= counts as relevant; {message}: leave it out"
    )
    with pytest.raises(ValueError, match=r"^'relevance_level' must be a finite number > 0 \(got 0\)$"):
        fuse([A, B], method="posfuse", qrels=QRELS, relevance_level=0)


def test_fit_refuses_a_level_above_every_grade() -> None:
    # At relevance_level 3 no document of QRELS is relevant: posfuse fitted all-zero tables and every
    # fused score was 0, without a word (the case 'qrels judge none of the runs' queries' refuses).
    message = ("'qrels' grade no document of the runs' queries relevant at relevance_level 3 (their highest "
               "grade is 2): method 'posfuse' has nothing to fit on")
    with pytest.raises(ValueError) as info:
        fuse([A, B], method="posfuse", qrels=QRELS, relevance_level=3)
    assert str(info.value) == message
    with pytest.raises(ValueError) as info:
        fit([A, B], QRELS, method="posfuse", relevance_level=3)
    assert str(info.value) == message


def test_tune_scores_and_compares_at_the_level() -> None:
    runs = {"a": A, "b": B}
    report = tune(runs, QRELS, method="rrf", measure="map", folds=2, relevance_level=2)
    for name, scores in runs.items():
        expected = evaluate_run(scores, QRELS, ["map"], relevance_level=2).per_query
        assert report.inputs[name] == {q: values["map"] for q, values in expected.items()}
    assert report.inputs["a"] == {"q1": 1 / 3, "q2": 0.5}  # d3 at rank 3, d5 at rank 2: the only grade-2 docs
    level_1 = tune(runs, QRELS, method="rrf", measure="map", folds=2)
    assert level_1.inputs["a"] == {"q1": (1 + 2 / 3) / 2, "q2": 1.0}
    assert report.comparison.queries == ("q1", "q2")
    assert report.comparison.scores["a"]["map"] == (1 / 3, 0.5)


def test_fuse_cli_level(capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path) -> None:
    out = str(tmp_path / "fused.trec")
    status, _, err = run(capsys, "fuse", "--method", "posfuse", "--qrels", files["qrels"], "-l", "2",
                         files["a"], files["b"], "-o", out)
    assert (status, err) == (0, "")
    assert read_run(out) == fuse([A, B], method="posfuse", qrels=QRELS, relevance_level=2).to_dict()
    status, _, err = run(capsys, "fuse", "-l", "2", files["a"], files["b"], "-o", out)
    assert status == 2
    assert err == ("ef fuse: error: -l sets the grades --tune's measure and a trained method's --qrels count as "
                   "relevant; --method rrf without --qrels reads no grade: leave -l out\n")
    status, out_text, _ = run(capsys, "fuse", "--tune", files["qrels"], "-m", "map", "-l", "2", "--folds", "2",
                              files["a"], files["b"])
    assert status == 0
    assert "held-out map rrf norm=none: " in out_text
    status, _, err = run(capsys, "fuse", "--tune", files["qrels"], "-m", "P.5,10", files["a"], files["b"])
    assert (status, err) == (2, "ef fuse: error: -m must name one measure (got 'P.5,10', which is 2: P_5, P_10)\n")


UNREACHED = (
    "relevance_level=3: no judgement reaches it (the highest grade is 2), so no document counts as relevant: P, "
    "recall, map, recip_rank and every other measure that counts relevant documents is 0 on every query"
)


def test_a_level_no_grade_reaches_is_warned_and_scored_as_trec_eval_scores_it() -> None:
    with pytest.warns(UserWarning, match=r"^relevance_level=3: no judgement") as caught:
        report = evaluate_run(A, QRELS, ["map", "ndcg", "P.1"], relevance_level=3)
    assert [str(w.message) for w in caught] == [UNREACHED]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert report.metrics["map"] == report.metrics["P_1"] == 0  # trec_eval's zeros, not a refusal
    assert report.metrics["ndcg"] > 0  # the gain is the grade, whatever -l says
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a level some grade reaches: no warning
        assert evaluate_run(A, QRELS, ["map"], relevance_level=2).metrics["map"] == (1 / 3 + 1 / 2) / 2


def test_evaluate_retrieval_warns_of_a_level_no_grade_reaches() -> None:
    rankings = {"q1": ["d1"], "q2": ["d5"]}
    with pytest.warns(UserWarning, match=r"^relevance_level=3: no judgement") as caught:
        report = evaluate_retrieval(lambda text: rankings[text], QRELS, {"q1": "q1", "q2": "q2"},
                                    k_values=[1], metrics=["recall"], relevance_level=3)
    assert [str(w.message) for w in caught] == [UNREACHED]
    assert caught[0].filename == __file__
    assert report.metrics["recall@1"] == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["trec-eval", "-l", "3", "-m", "map", "Q", "A"],
        ["compare", "-l", "3", "-m", "map", "Q", "A", "B"],
        ["gate", "-l", "3", "-m", "map", "--qrels", "Q", "A", "B"],
        ["fuse", "--tune", "Q", "--folds", "2", "-l", "3", "-m", "map", "A", "B"],  # warned at two lines: printed twice
    ],
)
def test_every_command_warns_of_a_level_no_grade_reaches_once(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], argv: list[str]
) -> None:
    paths = {"Q": files["qrels"], "A": files["a"], "B": files["b"]}
    _, out, err = run(capsys, *[paths.get(word, word) for word in argv])
    warning = f"ef {argv[0]}: warning: -l 3{UNREACHED[len('relevance_level=3'):]}\n"
    assert err.count(warning) == 1, err
    if argv[0] == "trec-eval":
        assert out == "map                   \tall\t0.0000\n"  # trec_eval's own output, unchanged


def test_a_warning_made_an_error_ends_the_command_as_its_errors_do(
    capsys: pytest.CaptureFixture[str], files: dict[str, str]
) -> None:
    # PYTHONWARNINGS=error (or -W error), as a CI job may set: ef's warning was raised through the CLI as a
    # traceback, exit 1.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, out, err = run(capsys, "trec-eval", "-l", "3", "-m", "map", files["qrels"], files["a"])
    assert (status, out, err) == (2, "", f"ef trec-eval: error: -l 3{UNREACHED[len('relevance_level=3'):]}\n")


def test_queries_a_run_lacks_judged_0_only_are_not_warned_of() -> None:
    # compare scores the judged queries a run lacks with an empty run of them: when those are judged 0 only,
    # that inner evaluation warned 'relevance_level=1: no judgement reaches it (the highest grade is 0)'
    # (ef compare printed it) of qrels whose other queries reach it.
    from ef.compare import compare

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 0}, "q3": {"d3": 1}}
    runs = {"a": {"q1": {"d1": 0.9}, "q3": {"d3": 0.9}}, "b": {"q1": {"d1": 0.9}, "q2": {"d2": 0.9}, "q3": {"d9": 1}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = compare(runs, qrels, ["map"])
    c = report.comparisons[0]
    assert (c.system, c.system_mean, c.baseline, c.baseline_mean, c.n_queries) == ("b", 1 / 3, "a", 2 / 3, 3)
