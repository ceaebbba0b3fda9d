"""The migration shims keep their peer's conventions and give the peer's numbers (issue 34)."""

from __future__ import annotations

import random

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
