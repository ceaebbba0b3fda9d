"""The migration shims keep their peer's conventions and give the peer's numbers (issue 34)."""

from __future__ import annotations

import random
import re

import pytest

from ef.compat import ir_measures as ef_irm
from ef.compat import pytrec_eval as ef_pytrec


def _data(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(10):
        qrels[f"q{q}"] = {f"d{i}": rng.choice([0, 1, 2]) for i in rng.sample(range(25), rng.randint(1, 10))}
        if q % 4 != 3:  # q3, q7: judged, not run
            docs = rng.sample(range(30), rng.randint(1, 20))
            run[f"q{q}"] = {f"d{i}": s / 11 for i, s in zip(docs, rng.sample(range(1000), len(docs)), strict=True)}
    run["unjudged"] = {"d1": 1.0}  # run, not judged: ignored by every peer
    return qrels, run


PYTREC_MEASURES = {"map", "P.5,10", "ndcg_cut.10", "recip_rank", "num_ret", "num_rel_ret", "bpref", "Rprec",
                   "recall.10", "ndcg", "set_F", "success.1"}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_pytrec_eval_shim_gives_pytrec_evals_dicts(seed: int, judged_only: bool) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = _data(seed)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, judged_docs_only_flag=judged_only).evaluate(run)
    ours = ef_pytrec.RelevanceEvaluator(qrels, PYTREC_MEASURES, judged_docs_only_flag=judged_only).evaluate(run)
    assert sorted(ours) == sorted(theirs)  # the judged queries in the run, as pytrec_eval
    for query, values in theirs.items():
        assert sorted(ours[query]) == sorted(values), query
        for name, value in values.items():
            assert ours[query][name] == pytest.approx(value, abs=1e-12), (query, name)
            assert type(ours[query][name]) is float


def test_pytrec_eval_shim_level_and_empty_run() -> None:
    qrels = {"q1": {"d1": 1, "d2": 2}}
    run = {"q1": {"d1": 0.9, "d2": 0.8}}
    assert ef_pytrec.RelevanceEvaluator(qrels, {"P.1"}, relevance_level=2).evaluate(run) == {"q1": {"P_1": 0.0}}
    assert ef_pytrec.RelevanceEvaluator(qrels, {"P.1"}).evaluate({"other": {"d1": 1.0}}) == {}
    assert "ndcg_cut" in ef_pytrec.supported_measures
    with pytest.raises(TypeError, match=r"^'measures' must be a set of measure names, not a str \(got 'map'\)$"):
        ef_pytrec.RelevanceEvaluator(qrels, "map")


IRM_NAMES = ["nDCG@10", "P@5", "AP", "RR", "R@10", "NumRet", "Judged@10", "P(rel=2)@5", "SetF", "Rprec", "NumRel"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ir_measures_shim_gives_ir_measures_numbers(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _data(seed)
    theirs_measures = [ir_measures.parse_measure(name) for name in IRM_NAMES]
    ours_measures = [ef_irm.parse_measure(name) for name in IRM_NAMES]
    assert [str(m) for m in ours_measures] == [str(m) for m in theirs_measures]
    theirs = ir_measures.calc_aggregate(theirs_measures, qrels, run)
    ours = ef_irm.calc_aggregate(ours_measures, qrels, run)
    assert list(ours) == ours_measures
    for mine, their in zip(ours_measures, theirs_measures, strict=True):
        assert ours[mine] == pytest.approx(theirs[their], abs=1e-12), mine
    theirs_rows = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(theirs_measures, qrels, run)}
    ours_rows = {(m.query_id, str(m.measure)): m.value for m in ef_irm.iter_calc(ours_measures, qrels, run)}
    assert sorted(ours_rows) == sorted(theirs_rows)  # q3 and q7, judged and not run, are there: scored 0
    for key, value in theirs_rows.items():
        assert ours_rows[key] == pytest.approx(value, abs=1e-12), key


def test_ir_measures_shim_scores_an_empty_run_zero_as_ir_measures_does() -> None:
    # evaluate_run refuses a run of no query (63d781e); ir_measures scores it 0 on every judged query.
    import pandas as pd  # type: ignore[import-untyped]

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    frame = pd.DataFrame({"query_id": pd.Series([], dtype=str), "doc_id": pd.Series([], dtype=str),
                          "score": pd.Series([], dtype=float)})
    run: object
    for run in ({}, frame, [], ()):  # [] and (): no ScoredDoc (was "'run' must be a mapping or a path")
        assert ef_irm.calc_aggregate([ef_irm.nDCG @ 10, ef_irm.P @ 1], qrels, run) == {
            ef_irm.nDCG @ 10: 0.0, ef_irm.P @ 1: 0.0}
        assert sorted(ef_irm.iter_calc([ef_irm.P @ 1], qrels, run)) == [
            ef_irm.Metric("q1", ef_irm.P @ 1, 0.0), ef_irm.Metric("q2", ef_irm.P @ 1, 0.0)]


def test_ir_measures_shim_takes_its_inputs_and_objects() -> None:
    from ef.compat.ir_measures import AP, P, Qrel, ScoredDoc, calc_aggregate, nDCG

    qrels = [Qrel("q1", "d1", 1), Qrel("q1", "d2", 2)]
    run = iter([ScoredDoc("q1", "d2", 0.9), ScoredDoc("q1", "x", 0.5), ScoredDoc("q1", "d1", 0.1)])
    result = calc_aggregate([P @ 2, AP, nDCG(dcg="exp-log2") @ 3, "RR"], qrels, run)
    assert {str(m): v for m, v in result.items()} == pytest.approx(
        {"P@2": 0.5, "AP": (1 + 2 / 3) / 2, "nDCG(dcg='exp-log2')@3": (3 + 1 / 2) / (3 + 1 / 1.584962500721156),
         "RR": 1.0},
        abs=1e-12,
    )
    assert P(rel=2) @ 5 == "P(rel=2)@5"
    assert hash(P(rel=2) @ 5) == hash("P(rel=2)@5")
    with pytest.raises(ValueError, match=r"^measure 'alpha_nDCG@10': ir_measures' alpha_nDCG needs diversity qrels"):
        ef_irm.parse_measure("alpha_nDCG@10")
    with pytest.raises(TypeError, match=r"^'measures' must be a list of measures, not one measure \(got P@5\)$"):
        calc_aggregate(P @ 5, qrels, {"q1": {"d1": 1.0}})


def test_pytrec_eval_shim_gives_gm_measures_per_query_as_logarithms() -> None:
    # pytrec_eval's per-query gm_map/gm_bpref is log(max(v, 1e-5)), which its compute_aggregated_measure
    # exponentiates; the shim gave the plain average precision (1.0 where pytrec_eval gives 0.0).
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}, "q3": {"d9": 1.0}}
    ours = ef_pytrec.RelevanceEvaluator(qrels, {"gm_map", "gm_bpref", "map"}).evaluate(run)
    assert ours == {"q1": {"map": 1.0, "gm_map": 0.0, "gm_bpref": 0.0},
                    "q2": {"map": 0.5, "gm_map": -0.6931471805599453, "gm_bpref": 0.0},
                    "q3": {"map": 0.0, "gm_map": -11.512925464970229, "gm_bpref": -11.512925464970229}}
    gm_map = ef_pytrec.compute_aggregated_measure("gm_map", [v["gm_map"] for v in ours.values()])
    assert gm_map == 0.017099759466766968  # exp(mean(log(1), log(0.5), log(1e-5))), trec_eval's gm_map
    assert ef_pytrec.compute_aggregated_measure("num_ret", [2.0, 3.0]) == 5.0
    assert ef_pytrec.compute_aggregated_measure("map", [0.5, 1.0]) == 0.75
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert pytrec_eval.RelevanceEvaluator(qrels, {"gm_map", "gm_bpref", "map"}).evaluate(run) == ours
    assert pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in ours.values()]) == gm_map


def test_pytrec_eval_shim_parses_trec_files_as_pytrec_eval() -> None:
    assert ef_pytrec.parse_qrel(["q1 0 d1 1\n", "q1 0 d2 0\n", "q2 0 d1 2\n"]) == {
        "q1": {"d1": 1, "d2": 0}, "q2": {"d1": 2}}
    assert ef_pytrec.parse_run(["q1 Q0 d1 1 2.5 bm25\n", "q1 Q0 d2 2 1.5 bm25\n"]) == {"q1": {"d1": 2.5, "d2": 1.5}}
    # read by ef's one reader, checked as a file is (pytrec_eval's parse_run takes a 'nan' score, and stops at
    # a doc given twice with a bare AssertionError)
    with pytest.raises(ValueError, match=r"^qrels:2: doc id 'd1' is judged twice in query 'q1' \(first at line 1\)$"):
        ef_pytrec.parse_qrel(["q1 0 d1 1", "q1 0 d1 0"])
    expected = r"^run:1: expected 6 columns 'query_id iter doc_id rank score run_id', got 3$"
    with pytest.raises(ValueError, match=expected):
        ef_pytrec.parse_run(["q1 d1 2.5\n"])
    with pytest.raises(ValueError, match=r"^run:2: score is NaN$"):
        ef_pytrec.parse_run(["q1 Q0 d1 1 2.5 a\n", "q1 Q0 d2 2 nan a\n"])


def test_pytrec_eval_shim_iprec_is_trec_eval_10s_a_documented_deviation() -> None:
    # trec_eval 10.0 rounds level * num_rel to the nearest integer (0.6 * 2 -> 1 relevant document),
    # pytrec_eval's trec_eval 9 rounds it up (-> 2); docs/coming-from.md says so.
    qrels = {"q1": {"d1": 1, "d2": 1}}
    run = {"q1": {"d1": 9.0, "n2": 8.0, "n3": 7.0, "n4": 6.0, "n5": 5.0, "n6": 4.0, "d2": 3.0}}
    ours = ef_pytrec.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["q1"]
    assert ours["iprec_at_recall_0.60"] == 1.0  # the trec_eval 10.0 binary's 1.0000
    assert "`iprec_at_recall` and `11pt_avg` are trec_eval 10.0's" in _coming_from()
    pytrec_eval = pytest.importorskip("pytrec_eval")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall"}).evaluate(run)["q1"]
    assert theirs["iprec_at_recall_0.60"] == 2 / 7


def _coming_from() -> str:
    from pathlib import Path

    return (Path(__file__).resolve().parents[1] / "docs" / "coming-from.md").read_text(encoding="utf-8")


def test_ir_measures_shim_reads_iprec_at_a_recall_level() -> None:
    # "IPrec@0.5" (the doc's own example) was int('0.5'): "invalid literal for int() with base 10".
    qrels = {"q1": {"d1": 1, "d2": 1}}
    run = {"q1": {"d1": 1.0, "x": 0.5, "d2": 0.2}}
    assert ef_irm.parse_measure("IPrec@0.5") == ef_irm.IPrec @ 0.5
    assert ef_irm.calc_aggregate(["IPrec@0.5", "P@2"], qrels, run) == {ef_irm.IPrec @ 0.5: 1.0, ef_irm.P @ 2: 0.5}
    with pytest.raises(ValueError, match=r"^measure 'IPrec\(recall=0.5\)': IPrec needs a cutoff, e.g. 'IPrec@0.5' "):
        ef_irm.parse_measure("IPrec(recall=0.5)")
    ir_measures = pytest.importorskip("ir_measures")
    assert ir_measures.calc_aggregate([ir_measures.parse_measure("IPrec@0.5")], qrels, run) == {
        ir_measures.IPrec @ 0.5: 1.0}


def test_coming_from_states_the_ir_measures_deviations() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    # Tied scores: ir_measures' msmarco provider (its RR@k) keeps its own order, ef trec_eval's.
    qrels, run = {"q1": {"a": 1}}, {"q1": {"b": 1.0, "a": 1.0}}
    assert ef_irm.calc_aggregate([ef_irm.RR @ 10], qrels, run) == {ef_irm.RR @ 10: 0.5}
    assert ir_measures.calc_aggregate([ir_measures.RR @ 10], qrels, run) == {ir_measures.RR @ 10: 1.0}
    assert "ir_measures' providers break ties each their own way" in _coming_from()


def test_coming_from_states_that_evaluate_runs_counts_are_trec_eval_c_s() -> None:
    # missing="zero" is trec_eval -c and ir_measures for every score, but the counts NumQ and NumRel
    # of a judged query the run lacks are -c's (counted) and ir_measures' 0: the page says which.
    from ef.evaluation import evaluate_run

    qrels, run = {"q1": {"d1": 1}, "q2": {"d2": 1, "d3": 1}}, {"q1": {"d1": 1.0}}
    assert evaluate_run(run=run, qrels=qrels, measures=["NumQ", "NumRel"]).metrics == {"NumQ": 2, "NumRel": 3}
    assert ef_irm.calc_aggregate([ef_irm.NumQ, ef_irm.NumRel], qrels, run) == {ef_irm.NumQ: 1.0, ef_irm.NumRel: 1.0}
    assert "the counts `NumQ` and `NumRel` still count\n  it and its relevant documents" in _coming_from()
    ir_measures = pytest.importorskip("ir_measures")
    assert ir_measures.calc_aggregate([ir_measures.NumQ, ir_measures.NumRel], qrels, run) == {
        ir_measures.NumQ: 1.0, ir_measures.NumRel: 1.0}


def test_pytrec_eval_shim_leaves_out_a_query_judged_by_no_document() -> None:
    # {"q1": {}} (qrels filtered to grade > 0, say) is no judgement: pytrec_eval leaves q1 out; the
    # shim scored it 0 on every measure, lowering the mean over the queries it returned.
    qrels = {"q1": {}, "q2": {"a": 1}}
    run = {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    expected = {"q2": {"P_1": 1.0, "num_rel": 1.0}}
    assert ef_pytrec.RelevanceEvaluator(qrels, {"P.1", "num_rel"}).evaluate(run) == expected
    assert ef_pytrec.RelevanceEvaluator({"q1": {}}, {"P.1"}).evaluate(run) == {}
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "num_rel"}).evaluate(run) == expected


def test_pytrec_eval_shim_joins_a_familys_parameters_as_pytrec_eval() -> None:
    # pytrec_eval joins the parameters given to a family anywhere in the set; the shim read the set as
    # trec_eval's -m list, where only the first -m with parameters counts: {"P.5", "P.10"} gave P_10 alone.
    qrels = {"q1": {"a": 1, "b": 1}}
    run = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}}
    cases = {
        frozenset({"P.5", "P.10"}): {"P_5": 0.4, "P_10": 0.2},
        frozenset({"P.1", "P.2,3", "P"}): {"P_1": 1.0, "P_2": 0.5, "P_3": 2 / 3},
        frozenset({"recall.5", "recall_10", "map"}): {"recall_5": 1.0, "recall_10": 1.0, "map": (1 + 2 / 3) / 2},
        frozenset({"set_F.0.5", "11pt_avg.0.25,0.5"}): {"set_F": 0.75, "11pt_avg": 1.0},  # trec_eval: 0.7500
    }
    pytrec_eval = pytest.importorskip("pytrec_eval")
    for measures, expected in cases.items():
        ours = ef_pytrec.RelevanceEvaluator(qrels, set(measures)).evaluate(run)["q1"]
        assert ours == pytest.approx(expected, abs=1e-15), sorted(measures)
        assert sorted(ours) == sorted(expected)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)["q1"]
        assert theirs == pytest.approx(ours, abs=1e-15)


def test_ir_measures_shim_has_its_readers_and_aliases(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # ir_measures' README reads files with read_trec_qrels/read_trec_run and names MRR@10: after the
    # one changed import both were AttributeError / ImportError.
    from ef.compat.ir_measures import MAP, MRR, NDCG, calc_aggregate, read_trec_qrels, read_trec_run

    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n\nq2 0 d3 2\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("q1 Q0 d2 1 2.0 bm25\nq1 Q0 d1 2 1.0 bm25\n", encoding="utf-8")
    qrels = list(read_trec_qrels(str(tmp_path / "qrels.txt")))
    assert qrels == [ef_irm.Qrel("q1", "d1", 1, "0"), ef_irm.Qrel("q1", "d2", 0, "0"), ef_irm.Qrel("q2", "d3", 2, "0")]
    run = read_trec_run(str(tmp_path / "run.txt"))
    result = calc_aggregate([MRR @ 10, MAP, NDCG @ 10], qrels, run)
    assert {str(m): v for m, v in result.items()} == {"RR@10": 0.25, "AP": 0.25, "nDCG@10": 0.31546487678572877}
    assert str(MRR @ 10) == "RR@10"
    wrong = r"qrels.txt:1: expected 6 columns 'query_id iter doc_id rank score run_id', got 4$"
    with pytest.raises(ValueError, match=wrong):
        list(read_trec_run(str(tmp_path / "qrels.txt")))
    with pytest.raises(ValueError, match=r"^qrels:1: grade 'x' is not a number$"):
        list(read_trec_qrels("q1 0 d1 x\n"))
    with (tmp_path / "run.txt").open() as opened:  # an open file, named by its path
        assert next(read_trec_run(opened)) == ef_irm.ScoredDoc("q1", "d2", 2.0)
    ir_measures = pytest.importorskip("ir_measures")
    theirs = ir_measures.calc_aggregate([ir_measures.MRR @ 10, ir_measures.MAP, ir_measures.NDCG @ 10],
                                        ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")),
                                        ir_measures.read_trec_run(str(tmp_path / "run.txt")))
    assert {str(m): v for m, v in theirs.items()} == pytest.approx({str(m): v for m, v in result.items()}, abs=1e-15)


def test_coming_from_names_the_ranx_levels_ef_refuses() -> None:
    # The ranx table said only the gain-based measures refuse -lN; hits@k-lN and f1@k-lN are refused too.
    from ef.evaluation import evaluate_run

    run, qrels = {"q1": {"a": 1.0}}, {"q1": {"a": 2}}
    assert evaluate_run(run=run, qrels=qrels, measures=["hit_rate@3-l2", "mrr-l2"]).metrics == {
        "hit_rate@3-l2": 1.0, "mrr-l2": 1.0}
    for name, family in (("hits@5-l2", "hits_5"), ("f1@5-l2", "f1_cut_5"), ("ndcg@5-l2", "ndcg_cut_5")):
        with pytest.raises(ValueError, match=rf"^measure '{name}': ranx's -l2 is a relevance level, which '{family}' "):
            evaluate_run(run=run, qrels=qrels, measures=[name])
    assert "the gain-based ones (`ndcg`, `dcg`) and for `hits` and `f1`" in _coming_from()


def test_ir_measures_shim_takes_a_measure_given_twice_once() -> None:
    # ir_measures gives one value for [P@5, P@5] or [RR, MRR]; the shim refused: "'measures' lists 'P@5' twice".
    qrels, run = {"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 0.5}}
    assert ef_irm.calc_aggregate([ef_irm.P @ 5, "P@5", ef_irm.RR, ef_irm.MRR], qrels, run) == {
        ef_irm.P @ 5: 0.2, ef_irm.RR: 1.0}
    assert list(ef_irm.iter_calc([ef_irm.RR, ef_irm.MRR], qrels, run)) == [ef_irm.Metric("q1", ef_irm.RR, 1.0)]
    ir_measures = pytest.importorskip("ir_measures")
    assert ir_measures.calc_aggregate([ir_measures.P @ 5, ir_measures.P @ 5, ir_measures.RR, ir_measures.MRR],
                                      qrels, run) == {ir_measures.P @ 5: 0.2, ir_measures.RR: 1.0}


def test_ir_measures_shim_has_its_evaluator() -> None:
    # ir_measures.evaluator(measures, qrels) scores several runs against one qrels; it was an AttributeError.
    qrels = ef_irm.read_trec_qrels("q1 0 a 1\nq2 0 b 1\n")  # an iterator: read once, used for each run
    scorer = ef_irm.evaluator([ef_irm.P @ 1, ef_irm.NumQ], qrels)
    assert scorer.calc_aggregate({"q1": {"a": 1.0}}) == {ef_irm.P @ 1: 0.5, ef_irm.NumQ: 1.0}
    assert scorer.calc_aggregate({"q1": {"a": 1.0}, "q2": {"b": 1.0}}) == {ef_irm.P @ 1: 1.0, ef_irm.NumQ: 2.0}
    assert sorted(scorer.iter_calc({"q2": {"b": 1.0}})) == [
        ef_irm.Metric("q1", ef_irm.NumQ, 0.0), ef_irm.Metric("q1", ef_irm.P @ 1, 0.0),
        ef_irm.Metric("q2", ef_irm.NumQ, 1.0), ef_irm.Metric("q2", ef_irm.P @ 1, 1.0)]
    ir_measures = pytest.importorskip("ir_measures")
    theirs = ir_measures.evaluator([ir_measures.P @ 1, ir_measures.NumQ],
                                   ir_measures.read_trec_qrels("q1 0 a 1\nq2 0 b 1\n"))
    assert theirs.calc_aggregate({"q1": {"a": 1.0}}) == {ir_measures.P @ 1: 0.5, ir_measures.NumQ: 1.0}


def test_ir_measures_gains_are_refused_by_name() -> None:
    # nDCG(gains={0:0,1:5})@10 is ir_measures' own syntax; the message was "ir_measures arguments must be
    # name=value (got '1:5}')", as if it were mistyped.
    with pytest.raises(ValueError, match=r"^measure 'nDCG\(gains=\{0:0,1:5\}\)@10': nDCG does not take gains "):
        ef_irm.parse_measure("nDCG(gains={0:0,1:5})@10")


def test_coming_from_says_which_ir_measures_strings_are_refused() -> None:
    from ef.evaluation import evaluate_run

    for name in ("BPref", "RPrec", "Precision@5", "NumRet(rel=1)", "P(judged_only=True)@10"):
        with pytest.raises(ValueError, match=rf"^measure '{re.escape(name)}': "):
            evaluate_run(run={"q1": {"a": 1.0}}, qrels={"q1": {"a": 1}}, measures=[name])
    assert ef_irm.calc_aggregate([ef_irm.BPref, ef_irm.Precision @ 5], {"q1": {"a": 1}}, {"q1": {"a": 1.0}}) == {
        ef_irm.Bpref: 1.0, ef_irm.P @ 5: 0.2}
    assert "`NumRet(rel=N)`, `P(judged_only=True)@k` are refused, naming the measure" in _coming_from()
