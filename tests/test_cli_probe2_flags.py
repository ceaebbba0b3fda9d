"""Flags as a new user types them (found by probing the CLI on SciFact): a value that starts with
'-' and a digit reaches its flag's check (``--margin -5%``), ``ef eval -m`` as ``ef compare -m``,
``ef fuse --missing-doc`` (``--missing`` elsewhere is a judged query a run lacks), and ``ef fuse``
given one run says so; ef fuse's errors name the flag typed (``--norm``, ``--weights``, ``--method``,
``--step``) where ef.fusion's messages say its keyword."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run, write_files
from ef.cli import main
from ef.fusion import METHODS, NORMS

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
A = "".join(f"q{i} Q0 d{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\n" for i in range(6))
B = "".join(f"q{i} Q0 x{i} 1 3.5 b\nq{i} Q0 d{i} 2 0.5 b\nq{i} Q0 y{i} 3 0.25 b\n" for i in range(6))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B})


def usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as caught:
        main(list(argv))
    assert caught.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


# --- a value that starts with '-' and a digit ---------------------------------------------------------------


@pytest.mark.parametrize("form", [["--margin", "-5%"], ["--margin=-5%"], ["--margin", "-0.01"]])
def test_a_negative_margin_reaches_the_margin_check(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], form: list[str]
) -> None:
    # argparse read '-5%' as an unknown flag: "argument --margin: expected one argument".
    value = form[-1].removeprefix("--margin=")
    assert usage_error(capsys, "gate", "--qrels", files["qrels"], files["a"], files["b"], *form) == (
        f"ef gate: error: argument --margin: a margin is a number >= 0, or a percentage such as 2% (got '{value}')"
    )


def test_a_negative_cutoff_list_reaches_the_k_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "eval", "--k", "-5,10") == (
        "ef eval: error: argument --k: expected comma-separated positive integers such as 1,10,100 (got '-5,10')"
    )


def test_an_unknown_short_flag_is_still_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error(capsys, "eval", "-z") == "ef eval: error: unrecognized arguments: -z"


# --- ef eval -m, as ef compare / gate / sweep / fuse -m ---------------------------------------------------------


def _eval_metrics(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, float]:
    status, out, _ = run(capsys, "eval", "-q", "--json", "-", *argv)
    assert status == 0
    return dict(json.loads(out)["metrics"])


def test_eval_measure_names_metric_and_cutoff(capsys: pytest.CaptureFixture[str]) -> None:
    grid = _eval_metrics(capsys, "--metrics", "ndcg,recall", "--k", "10,100")
    assert sorted(grid) == ["ndcg@10", "ndcg@100", "recall@10", "recall@100"]
    assert _eval_metrics(capsys, "-m", "ndcg@10,recall@100") == grid
    assert _eval_metrics(capsys, "-m", "ndcg@10", "--measure", "recall@100") == grid
    assert round(grid["ndcg@10"], 4) == 0.8078  # the demo dataset's BM25 NDCG@10 (README)


def test_eval_measure_without_cutoff_takes_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert sorted(_eval_metrics(capsys, "-m", "mrr", "-k", "1,5")) == ["mrr@1", "mrr@5"]
    assert sorted(_eval_metrics(capsys, "-m", "hit_rate@3", "--metrics", "ndcg")) == ["hit_rate@3", "ndcg@3"]
    default_k = ["map@1", "map@10", "map@100", "map@3", "map@5"]
    assert sorted(_eval_metrics(capsys, "-m", "map")) == default_k


@pytest.mark.parametrize("value", ["P_5", "ndcg@0", "ndcg@x", "bleu"])
def test_eval_measure_refuses_a_name_it_cannot_grid(capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert usage_error(capsys, "eval", "-m", value) == (
        f"ef eval: error: argument -m/--measure: expected NAME or NAME@K such as ndcg@10,recall@100 (got "
        f"{value!r} in {value!r}); NAME is one of map,mrr,ndcg,precision,recall or a ranking measure of "
        "ef.measures with a cutoff (hit_rate, err, judged ...)"
    )


# --- ef fuse --missing-doc ----------------------------------------------------------------------------------


def test_fuse_missing_doc_is_fusions_missing(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    from ef.fusion import fuse
    from ef.io.trec import run_lines

    argv = ["fuse", files["a"], files["b"], "--method", "combsum", "--norm", "none", "-o", "-"]
    status, out, _ = run(capsys, *argv, "--missing-doc", "min")
    fused = fuse([files["a"], files["b"]], method="combsum", norm="none", missing="min")
    assert (status, out) == (0, "".join(run_lines(fused, run_id="fused")))
    assert out.splitlines()[:3] == ["q0 Q0 x0 1 5.5 fused", "q0 Q0 d0 2 3.5 fused", "q0 Q0 y0 3 2.25 fused"]
    # zero, the default: y0 gets nothing from run a, which does not list it
    assert run(capsys, *argv)[1].splitlines()[:3] == [
        "q0 Q0 x0 1 5.5 fused", "q0 Q0 d0 2 3.5 fused", "q0 Q0 y0 3 0.25 fused"
    ]


def test_fuse_missing_is_not_its_flag(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    # --missing is a judged query a run lacks in ef compare, gate and trec-eval: fuse's is another thing.
    assert usage_error(capsys, "fuse", files["a"], files["b"], "--missing", "min", "-o", "-") == (
        "ef fuse: error: unrecognized arguments: --missing min; did you mean '--missing-doc'?"
    )


# --- ef fuse with one run -----------------------------------------------------------------------------------


def test_fuse_one_run_warns(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    status, out, err = run(capsys, "fuse", files["a"], "-o", "-")
    assert status == 0
    assert out.splitlines()[0] == "q0 Q0 d0 1 0.01639344262295082 fused"  # 1 / (60 + 1)
    assert err == (
        f"ef fuse: warning: one RUN ({files['a']}): the output is that run re-scored by rrf, not a fusion "
        "(-q: no warning)\n"
    )
    status, _, err = run(capsys, "fuse", files["b"], "--method", "combsum", "--norm", "min-max", "-o", "-")
    assert err == (
        f"ef fuse: warning: one RUN ({files['b']}): the output is that run re-scored by combsum after min-max, "
        "not a fusion (-q: no warning)\n"
    )
    assert run(capsys, "fuse", files["a"], "-o", "-", "-q")[2] == ""


def test_fuse_tune_refuses_one_run(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    assert run(capsys, "fuse", files["a"], "--tune", files["qrels"]) == (
        2, "", f"ef fuse: error: RUN: --tune needs at least 2 runs to fuse (got 1: {files['a']})\n"
    )


@pytest.mark.parametrize(("argv", "said"), [
    (["--depth", "0"], "argument --depth: expected an integer >= 1 (got '0')"),
    (["--tune", "Q", "--folds", "x"], "argument --folds: expected an integer >= 2 (got 'x')"),
    (["--tune", "Q", "--folds", "1"], "argument --folds: expected an integer >= 2 (got '1')"),
    (["--tune", "Q", "--seed", "-1"], "argument --seed: expected an integer >= 0 (got '-1')"),
])
def test_fuse_counts_are_worded_as_every_command_words_them(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    # --depth and --folds said "expected a positive integer", ef compare's -M and --resamples "an integer >= 1";
    # --folds 1 passed argparse and failed in tune with another rule ("an integer from 2 to the N judged queries").
    assert usage_error(capsys, "fuse", "A", "B", "-o", "-", *argv) == f"ef fuse: error: {said}"
    assert usage_error(capsys, "compare", "Q", "A", "B", "--resamples", "0").endswith(
        "argument --resamples: expected an integer >= 1 (got '0')"
    )


# --- ef compare --json FILE, as ef eval, gate and sweep --json ------------------------------------------------


def test_compare_json_file_beside_the_table(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    argv = ["compare", files["qrels"], files["a"], files["b"], "-m", "mrr", "--resamples", "100"]
    table = run(capsys, *argv)
    as_json = run(capsys, *argv, "--format", "json")[1]
    saved = tmp_path / "c.json"
    assert run(capsys, *argv, "--json", str(saved)) == table
    assert saved.read_text() == as_json
    assert json.loads(as_json)["systems"] == ["a", "b"]


def test_compare_json_dash_sends_the_table_to_stderr(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    argv = ["compare", files["qrels"], files["a"], files["b"], "-m", "mrr", "--resamples", "100"]
    _, table, _ = run(capsys, *argv)
    _, as_json, _ = run(capsys, *argv, "--format", "json")
    assert run(capsys, *argv, "--json", "-") == (0, as_json, table)
    assert run(capsys, *argv, "--json", "-", "-o", "-") == (
        2, "", "ef compare: error: --output and --json cannot both write to standard output ('-')\n"
    )


# --- one vocabulary: -m on every command that takes measures ------------------------------------------------


def test_every_command_that_takes_measures_takes_m() -> None:
    from ef.cli import _parser

    commands = _parser().commands
    takes = {name for name, parser in commands.items() if "-m" in parser._option_string_actions}
    assert takes == {"eval", "trec-eval", "rag", "compare", "gate", "fuse", "sweep"}
    assert {name for name, parser in commands.items() if "--measure" in parser._option_string_actions} == takes


def test_rag_m_is_metrics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    samples = tmp_path / "s.jsonl"
    samples.write_text(json.dumps({"user_input": "q", "response": "a b c", "reference": "a b d"}) + "\n")
    by_metrics = run(capsys, "rag", str(samples), "--metrics", "token_f1,rouge_l", "--json", "-")
    # SQuAD's normalisation drops the article 'a' before token F1: 'b c' against 'b d'
    assert json.loads(by_metrics[1])["metrics"] == {"token_f1": 0.5, "rouge_l": 2 / 3}
    assert run(capsys, "rag", str(samples), "-m", "token_f1", "--measure", "rouge_l", "--json", "-") == by_metrics


# --- ef fuse: --tune's options without --tune -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "shown"),
    [(["--folds", "3"], "--folds"), (["--seed", "0"], "--seed"), (["--step", "0.5"], "--step"),
     (["--correction", "bh"], "--correction"), (["-m", "map"], "-m/--measure")],
)
def test_fuse_refuses_a_tune_option_without_tune(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], flag: list[str], shown: str
) -> None:
    # They were ignored: the run was fused with none of them.
    assert run(capsys, "fuse", files["a"], files["b"], *flag, "-o", "-") == (
        2, "", f"ef fuse: error: {shown} is an option of --tune (cross-validated tuning): give --tune QRELS, "
               "or leave it out\n"
    )


def test_fuse_refuses_qrels_nothing_reads(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    # An untrained method ignored --qrels, and so did --tune (it fits on the --tune qrels' folds).
    assert run(capsys, "fuse", files["a"], files["b"], "--qrels", files["qrels"], "-o", "-") == (
        2, "", "ef fuse: error: --qrels trains a trained method (bayesfuse, posfuse, probfuse, segfuse, slidefuse, "
               "mapfuse); --method rrf has nothing to train: leave --qrels out\n"
    )
    assert run(capsys, "fuse", files["a"], files["b"], "--qrels", files["qrels"], "--tune", files["qrels"]) == (
        2, "", "ef fuse: error: --qrels is not read with --tune (a trained method is fitted on the --tune qrels of "
               "each fold): leave it out\n"
    )


# --- -q: "no progress bars and no notes on standard error" ------------------------------------------------------


def test_compare_quiet_silences_the_dataset_level_note(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, files: dict[str, str]
) -> None:
    from types import SimpleNamespace

    import ef.datasets
    from ef.trec import read_qrels

    def load(name: str, *, split: str | None, corpus: bool) -> SimpleNamespace:  # a dataset judged at grade >= 2
        graded = {query: dict.fromkeys(docs, 2) for query, docs in read_qrels(files["qrels"]).items()}
        return SimpleNamespace(name=name, split=split or "test", qrels=graded, facts=SimpleNamespace(relevance_level=2))

    monkeypatch.setattr(ef.datasets, "load", load)
    argv = ["compare", "--dataset", "beir/x", files["a"], files["b"], "-m", "mrr", "--resamples", "100"]
    status, out, err = run(capsys, *argv)
    assert (status, err) == (0, (
        "ef compare: note: beir/x's official binary measures count grade >= 2 as relevant, so they do here "
        "(-l 2, the dataset's default; -l 1 counts every positive grade)\n"
    ))
    assert run(capsys, *argv, "-q") == (0, out, "")


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_max_docs_is_the_long_form_of_short_m(capsys: pytest.CaptureFixture[str], files: dict[str, str],
                                              command: str) -> None:
    if command == "compare":
        argv = ["compare", files["qrels"], files["a"], files["b"], "-m", "P_2", "--resamples", "100",
                "--format", "json"]
    else:
        argv = ["gate", "--qrels", files["qrels"], files["a"], files["b"], "-m", "P_2", "--resamples", "100",
                "--json", "-", "-q"]
    short, long_form, whole = run(capsys, *argv, "-M", "1"), run(capsys, *argv, "--max-docs", "1"), run(capsys, *argv)
    assert short == long_form
    assert short != whole  # the cut changes P@2: one document of two is looked at


def test_fuse_errors_name_the_flags(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    runs = [files["a"], files["b"]]
    methods = ", ".join(map(repr, METHODS))
    assert run(capsys, "fuse", *runs, "--norm", "nope", "-o", "-") == (
        2, "", f"ef fuse: error: --norm must be one of {', '.join(map(repr, NORMS))} (got 'nope')\n"
    )
    assert run(capsys, "fuse", *runs, "--weights", "1,2,3", "-o", "-") == (
        2, "", "ef fuse: error: --weights must hold one weight per run (2) (got 3)\n"
    )
    assert run(capsys, "fuse", *runs, "--tune", files["qrels"], "--method", "nope", "--folds", "2") == (
        2, "", f"ef fuse: error: --method must be one of {methods} (got 'nope')\n"
    )


def test_tune_errors_name_the_step_flag(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    assert run(capsys, "fuse", files["a"], files["b"], "--tune", files["qrels"], "--folds", "2", "--step", "0.3") == (
        2, "", "ef fuse: error: --step must be 1 / n for a whole n >= 1, such as 0.1 or 0.05 (got 0.3)\n"
    )
