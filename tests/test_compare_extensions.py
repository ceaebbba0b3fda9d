"""ef compare's extensions: every trec_eval measure spelling, -l/-M, several baselines, seeds and
folds per system, the systems x measures table, --fail-on (issues 33 and 36 item 7)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from ef.cli import compare as compare_cli
from ef.compare import ComparisonReport, compare
from ef.evaluation import RunEvalReport, evaluate_run

QRELS = {"q1": {"d1": 1, "d2": 2}, "q2": {"d3": 1}, "q3": {"d4": 2, "d5": 1}}
RUN_A = {  # P_5 per query: 2/5, 1/5, 1/5
    "q1": {"d1": 0.9, "d2": 0.8, "x1": 0.7, "x2": 0.6, "x3": 0.5},
    "q2": {"x1": 0.9, "d3": 0.8},
    "q3": {"x1": 0.9, "x2": 0.8, "d4": 0.7},
}
RUN_B = {  # P_5: 1/5, 0, 2/5
    "q1": {"x1": 0.9, "d2": 0.8},
    "q2": {"x1": 0.9},
    "q3": {"d5": 0.9, "d4": 0.8},
}


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    compare_cli.add_parser(parser.add_subparsers(dest="command"))
    return compare_cli.run(parser.parse_args(["compare", *argv]))


def _files(tmp_path: Path) -> tuple[str, str, str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in QRELS.items() for d, g in judged.items()))
    paths = []
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        path = tmp_path / f"{name}.trec"
        path.write_text("".join(f"{q} Q0 {d} 1 {s} {name}\n" for q, r in run.items() for d, s in r.items()))
        paths.append(str(path))
    return str(qrels), paths[0], paths[1]


def _report(values: dict[str, list[float]], queries: list[str] | None = None) -> RunEvalReport:
    n = len(next(iter(values.values())))
    ids = queries or [f"q{i:03d}" for i in range(n)]
    return RunEvalReport(metrics={}, per_query={q: {m: v[i] for m, v in values.items()} for i, q in enumerate(ids)},
                         n_queries=n)


# --- issue 36 item 7: every spelling ef trec-eval reads ------------------------------------------


def test_trec_eval_parameter_forms_are_compared_by_their_canonical_names() -> None:
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["P.5,10"], baseline="a")
    assert report.measures == ("P_5", "P_10")
    c = report.get("b", "P_5")
    assert (c.baseline_mean, c.system_mean) == pytest.approx((4 / 15, 3 / 15))
    assert report.scores["b"]["P_5"] == pytest.approx((0.2, 0.0, 0.4))
    assert compare({"a": RUN_A, "b": RUN_B}, QRELS, ["ndcg_cut.10"]).measures == ("ndcg_cut_10",)
    assert compare({"a": RUN_A, "b": RUN_B}, QRELS, ["P"]).measures == (
        "P_5", "P_10", "P_15", "P_20", "P_30", "P_100", "P_200", "P_500", "P_1000"
    )
    # the same values evaluate_run gives
    expected = evaluate_run(RUN_B, QRELS, ["ndcg_cut_10"]).per_query
    assert compare({"a": RUN_A, "b": RUN_B}, QRELS, ["ndcg_cut.10"]).scores["b"]["ndcg_cut_10"] == tuple(
        expected[q]["ndcg_cut_10"] for q in ("q1", "q2", "q3")
    )


def test_official_compares_its_means_and_names_what_it_leaves_out() -> None:
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["official"])
    assert report.measures[:4] == ("map", "Rprec", "bpref", "recip_rank")
    assert "num_q" not in report.measures
    assert "gm_map" not in report.measures
    assert report.warnings[0] == (
        "not compared, as they are no per-query means: num_q, num_ret, num_rel, num_rel_ret, gm_map"
    )
    with pytest.raises(ValueError, match=r"'measures': 'num_rel' is summarised as a sum, not a mean over queries"):
        compare({"a": RUN_A, "b": RUN_B}, QRELS, ["num_rel"])
    # a family form and a name of one of its measures: compared once
    assert compare({"a": RUN_A, "b": RUN_B}, QRELS, ["P.5,10", "P_5"]).measures == ("P_5", "P_10")


@pytest.mark.parametrize(
    ("flags", "measures"),
    [
        (["-m", "P.5"], ("P_5",)),
        (["-m", "P.5,10"], ("P_5", "P_10")),
        (["-m", "P.5,10,ndcg@10"], ("P_5", "P_10", "ndcg@10")),
        (["-m", "ndcg_cut.10", "-m", "mrr"], ("ndcg_cut_10", "mrr")),
        (["-m", "iprec_at_recall..25,.5"], ("iprec_at_recall_0.25", "iprec_at_recall_0.50")),
        (["--metrics", "ndcg,recall", "-k", "10,5"], ("ndcg@5", "ndcg@10", "recall@5", "recall@10")),
        (["--metrics", "mrr", "--k", "3"], ("mrr@3",)),
    ],
)
def test_cli_reads_measures_as_trec_eval_does(
    tmp_path: Path, flags: list[str], measures: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    qrels, a, b = _files(tmp_path)
    out = tmp_path / "r.json"
    assert _cli([qrels, a, b, *flags, "--format", "json", "-o", str(out)]) == 0
    import json

    assert tuple(m["name"] for m in json.loads(out.read_text())["measures"]) == measures


def test_cli_refuses_a_parameter_with_no_measure() -> None:
    from ef.cli._types import measure_names  # ef compare's -m converter, shared with ef gate

    with pytest.raises(argparse.ArgumentTypeError, match=r"'5' is no measure name \(in '5,P.5'\)"):
        measure_names("5,P.5")


def test_relevance_level_and_max_docs_reach_the_scores(tmp_path: Path) -> None:
    # -l 2: only d2 and d4 are relevant; a's P_5 is 1/5, 0, 1/5; b's 1/5, 0, 1/5
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["P_5"], relevance_level=2)
    assert report.scores["a"]["P_5"] == pytest.approx((0.2, 0.0, 0.2))
    # -M 1: only each top document: a's recip_rank 1, 0, 0; b's 0, 0, 1
    report = compare({"a": RUN_A, "b": RUN_B}, QRELS, ["recip_rank"], max_docs=1)
    assert report.scores["a"]["recip_rank"] == (1.0, 0.0, 0.0)
    assert report.scores["b"]["recip_rank"] == (0.0, 0.0, 1.0)
    report_a = evaluate_run(RUN_A, QRELS, ["P_5"])
    with pytest.raises(ValueError, match=(
        r"'relevance_level' and 'max_docs' score runs; 'a' is a report, already scored \(score it with these "
        r"options, or give its run\)"
    )):
        compare({"a": report_a, "b": RUN_B}, QRELS, ["P_5"], relevance_level=2)
    qrels, a, b = _files(tmp_path)
    out = tmp_path / "r.json"
    assert _cli([qrels, a, b, "-m", "P_5", "-l", "2", "-M", "1", "--format", "json", "-o", str(out)]) == 0
    import json

    # -M 1 and -l 2: a's top documents d1 (grade 1), x1, x1: all 0; b's x1, x1, d5 (grade 1): 0
    assert json.loads(out.read_text())["per_query"]["a"]["P_5"] == [0.0, 0.0, 0.0]


# --- several baselines, seeds and folds ---------------------------------------------------------


def test_several_baselines_compare_every_other_system_with_each() -> None:
    noise = np.random.default_rng(3).random(10)
    values = {name: _report({"m": list(noise * shift)}) for name, shift in
              (("b1", 1.0), ("b2", 1.1), ("x", 1.2), ("y", 1.3))}
    report = compare(values, None, ["m"], baseline=["b1", "b2"])
    assert [(c.system, c.baseline) for c in report.comparisons] == [("x", "b1"), ("y", "b1"), ("x", "b2"),
                                                                    ("y", "b2")]
    assert report.baselines == ("b1", "b2")
    assert report.baseline == "b1"
    assert report.to_dict()["baselines"] == ["b1", "b2"]
    assert report.family == (
        "every (system, measure) comparison: 4 (system, baseline) pairs, baselines 'b1', 'b2' x 1 measure = 4"
    )
    with pytest.raises(ValueError, match=r"'baseline' 'z' is not one of the runs \('b1', 'b2', 'x', 'y'\)"):
        compare(values, None, ["m"], baseline=["b1", "z"])
    with pytest.raises(ValueError, match="'baseline' names every run"):
        compare({"b1": values["b1"], "b2": values["b2"]}, None, ["m"], baseline=["b1", "b2"])


def test_seeds_are_averaged_per_query_and_their_means_kept() -> None:
    base = _report({"m": [0.1, 0.2, 0.3, 0.4]})
    seed1 = _report({"m": [0.2, 0.2, 0.5, 0.5]})
    seed2 = _report({"m": [0.4, 0.2, 0.3, 0.5]})
    report = compare({"base": base, "new": [seed1, seed2]}, None, ["m"], baseline="base")
    assert report.scores["new"]["m"] == pytest.approx((0.3, 0.2, 0.4, 0.5))
    assert report.replicates == {"new": {"m": pytest.approx((0.35, 0.35))}}
    assert report.get("new", "m").diff == pytest.approx(0.35 - 0.25)


def test_seeds_equal_to_the_baseline_are_no_difference() -> None:
    # np.mean of three 0.2s is 0.20000000000000004: the baseline's own run given as three seeds
    # differed by 2.8e-17 on every query, and the t-test called it significant (p 0, W/T/L 30/0/0).
    run = {f"q{i}": {f"d{i}": 1.0, **{f"x{i}_{j}": 0.5 for j in range(4)}} for i in range(30)}
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(30)}
    report = compare({"base": run, "seeds": [run, run, run]}, qrels, ["P_5"], baseline="base")
    found = report.get("seeds", "P_5")
    assert report.scores["seeds"]["P_5"] == (0.2,) * 30
    assert (found.diff, found.p_value, found.significant, found.ties) == (0.0, 1.0, False, 30)


def test_seeds_whose_exact_mean_is_the_baseline_are_no_difference() -> None:
    # np.mean([0.7, 0.8, 0.9]) is 0.7999999999999999: against a baseline of 0.8 every query was lost
    # (diff -1.1e-16, p < 0.0001, verdict 'worse'). The mean is now the double nearest the exact one.
    base = _report({"m": [0.8] * 30})
    seeds = [_report({"m": [v] * 30}) for v in (0.7, 0.8, 0.9)]
    found = compare({"base": base, "new": seeds}, None, ["m"], baseline="base").get("new", "m")
    assert (found.diff, found.p_value, found.significant, found.ties) == (0.0, 1.0, False, 30)


def test_folds_are_joined_and_overlapping_runs_refused() -> None:
    fold1 = _report({"m": [0.5, 0.7]}, ["q1", "q2"])
    fold2 = _report({"m": [0.1]}, ["q3"])
    base = _report({"m": [0.1, 0.2, 0.3]}, ["q1", "q2", "q3"])
    report = compare({"base": base, "cv": [fold1, fold2]}, None, ["m"])
    assert report.queries == ("q1", "q2", "q3")
    assert report.scores["cv"]["m"] == (0.5, 0.7, 0.1)
    assert report.replicates["cv"]["m"] == pytest.approx((0.6, 0.1))
    overlapping = _report({"m": [0.1, 0.2]}, ["q2", "q3"])
    with pytest.raises(ValueError, match=(
        r"run 'cv': its runs 1 and 2 are neither seeds \(the same queries: 2 and 2 judged queries\) "
        r"nor folds \(disjoint: they share 1, e.g. 'q2'\)"
    )):
        compare({"base": base, "cv": [fold1, overlapping]}, None, ["m"])


def test_cli_groups_a_repeated_name_as_seeds(tmp_path: Path) -> None:
    qrels, a, b = _files(tmp_path)
    out = tmp_path / "r.json"
    assert _cli([qrels, f"a={a}", f"s={a}", f"s={b}", "-m", "P_5", "--format", "json", "-o", str(out)]) == 0
    import json

    data = json.loads(out.read_text())
    assert data["per_query"]["s"]["P_5"] == pytest.approx([0.3, 0.1, 0.3])
    assert data["replicates"]["s"]["P_5"] == pytest.approx([4 / 15, 3 / 15])
    with pytest.raises(ValueError, match=r"two runs are named 'a' \(.*a.trec and .*a.trec\)"):
        _cli([qrels, a, a])


# --- the systems x measures table and --fail-on -------------------------------------------------


def _strong() -> ComparisonReport:
    worse = [0.125 * (i % 3) for i in range(30)]  # exact in binary: differences exactly 0.5
    better = [v + 0.5 for v in worse]
    return compare({"old": _report({"m": worse, "r": better}), "new": _report({"m": better, "r": better})},
                   None, ["m", "r"], baseline="old")


def test_systems_table_marks_what_each_system_significantly_beats() -> None:
    report = _strong()
    assert report.get("new", "m").verdict == "better"
    assert report.to_systems_table("markdown").splitlines()[2:6] == [
        "| system | m | r |",
        "|---|---:|---:|",
        "| (a) old | 0.1250 | **0.6250** |",
        "| (b) new | **0.6250**<sup>a</sup> | **0.6250** |",
    ]
    latex = report.to_systems_table("latex").splitlines()
    assert latex[7] == r"(b) new & \textbf{0.6250}$^{a}$ & \textbf{0.6250} \\"
    assert report.to_systems_table("text").splitlines()[4] == "(b) new  0.6250^a*  0.6250*"
    with pytest.raises(ValueError, match="'form' must be 'markdown', 'latex' or 'text' \\(got 'html'\\)"):
        report.to_systems_table("html")


def test_fail_on_worse_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(30)))
    good, bad = tmp_path / "good.trec", tmp_path / "bad.trec"
    good.write_text("".join(f"q{i} Q0 d{i} 1 2 g\nq{i} Q0 x 2 1 g\n" for i in range(30)))
    bad.write_text("".join(f"q{i} Q0 d{i} 1 1 b\nq{i} Q0 x 2 2 b\n" for i in range(30)))
    argv = [str(qrels), str(good), str(bad), "--baseline", "good", "-m", "recip_rank"]
    assert _cli(argv) == 0
    capsys.readouterr()
    assert _cli([*argv, "--fail-on", "worse"]) == 1
    assert capsys.readouterr().err == (
        "ef compare: 1 comparison significantly worse (--fail-on worse); first: bad vs good on recip_rank: "
        "-0.5000, p (holm) 0\n"
    )
    assert _cli([*argv, "--fail-on", "worse", "--layout", "systems", "--format", "markdown"]) == 1
    assert "| (a) good | **1.0000**<sup>b</sup> |" in capsys.readouterr().out
    assert _cli([str(qrels), str(bad), str(good), "--baseline", "bad", "-m", "mrr", "--fail-on", "worse"]) == 0
    assert _cli([str(qrels), str(bad), str(good), "--baseline", "bad", "-m", "mrr", "--fail-on", "different"]) == 1
    with pytest.raises(ValueError, match=r"--layout systems prints a table, markdown or latex \(got --format csv\)"):
        _cli([*argv, "--layout", "systems", "--format", "csv"])
