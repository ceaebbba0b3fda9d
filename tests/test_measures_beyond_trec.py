"""ef's measures beyond trec_eval, each checked against ir_measures (or pytrec_eval) on random runs.

Judged@k against ir_measures' judged provider, ERR@k and nDCG with exponential gain against its
gdeval provider (gdeval.pl, needs perl), P(rel=N)@k against its pytrec_eval provider, R(rel=N)@k
against pytrec_eval at that relevance level (ir_measures has no rel= for R), RBP(p,rel) against
its cwl_eval provider; rbp_resid and ERR also against their formulas written out here.
"""

from __future__ import annotations

import math
import random
import shutil
from collections.abc import Mapping

import pytest

from ef.cli import main
from ef.evaluation import evaluate_run

ir_measures = pytest.importorskip("ir_measures")

Run = dict[str, dict[str, float]]
Qrels = dict[str, dict[str, int]]


def _random(seed: int, *, negative: bool = False) -> tuple[Run, Qrels]:
    """30 queries: 60 candidate docs, 25 judged 0-4 (some -1 if ``negative``), 3 relevant never
    retrieved, runs of 1-60 docs with distinct scores; every tenth query has no relevant doc."""
    rng = random.Random(seed)
    run: Run = {}
    qrels: Qrels = {}
    for q in range(30):
        query_id = str(100 + q)  # gdeval reads numeric topics only
        docs = [f"d{i}" for i in rng.sample(range(500), 60)]
        grades = [0] if q % 10 == 0 else [-1, 0, 0, 1, 2, 3, 4] if negative else [0, 0, 1, 2, 3, 4]
        judged = {d: rng.choice(grades) for d in rng.sample(docs, 25)}
        if q % 10:
            judged.update({f"x{q}-{i}": rng.randint(1, 4) for i in range(3)})
        qrels[query_id] = judged
        n = rng.randint(1, 60)
        scores = rng.sample(range(1, 10**6), n)
        run[query_id] = {d: s / 1000 for d, s in zip(docs[:n], scores, strict=True)}
    return run, qrels


def _theirs(provider: str, measures: list[object], qrels: Qrels, run: Run) -> dict[tuple[str, str], float]:
    calc = getattr(ir_measures, provider)
    return {(m.query_id, str(m.measure)): float(m.value) for m in calc.iter_calc(measures, qrels, run)}


def _compare(
    ours: Mapping[str, Mapping[str, float]], theirs: dict[tuple[str, str], float], names: dict[str, str], tol: float
) -> int:
    """Assert every value the peer gave matches ours; return how many were compared."""
    compared = 0
    for (query_id, their_name), value in theirs.items():
        mine = ours[query_id][names[their_name]]
        assert mine == pytest.approx(value, abs=tol), (query_id, their_name, mine, value)
        compared += 1
    return compared


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_judged_at_k_matches_ir_measures(seed: int) -> None:
    from ir_measures import Judged

    run, qrels = _random(seed)
    cutoffs = [1, 5, 10, 20, 100]
    ours = evaluate_run(run, qrels, [f"Judged@{k}" for k in cutoffs], missing="skip").per_query
    theirs = _theirs("judged", [Judged @ k for k in cutoffs], qrels, run)
    assert _compare(ours, theirs, {f"Judged@{k}": f"Judged@{k}" for k in cutoffs}, 1e-12) == 30 * len(cutoffs)


def test_judged_counts_a_negative_grade_as_unjudged() -> None:
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "d": 0.5}}
    qrels = {"q": {"a": 1, "b": -1, "c": 0}}
    report = evaluate_run(run, qrels, ["Judged@2", "Judged@10", "unj_10"])
    # a is judged, b is listed with a negative grade (unjudged), c judged, d not listed.
    assert report.metrics == {"Judged@2": 0.5, "Judged@10": 0.5, "unj_10": 0.2}


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures' gdeval provider runs gdeval.pl with perl")
@pytest.mark.parametrize("seed", [4, 5])
def test_err_and_exponential_ndcg_match_gdeval(seed: int) -> None:
    from ir_measures import ERR, nDCG

    run, qrels = _random(seed)
    cutoffs = [1, 5, 20, 1000]
    names = {}
    measures: list[object] = []
    for k in cutoffs:
        measures += [ERR @ k, nDCG(dcg="exp-log2") @ k]
        names[str(ERR @ k)] = f"ERR@{k}"
        names[str(nDCG(dcg="exp-log2") @ k)] = f"nDCG(dcg='exp-log2')@{k}"
    ours = evaluate_run(run, qrels, list(names.values()), missing="skip").per_query
    theirs = _theirs("gdeval", measures, qrels, run)
    # gdeval prints 5 decimals.
    assert _compare(ours, theirs, names, 5.01e-6) == 30 * 2 * len(cutoffs)


def test_err_matches_its_formula() -> None:
    run, qrels = _random(6)
    ours = evaluate_run(run, qrels, ["ERR@10", "ERR@1000"], missing="skip").per_query
    for query_id, ranking in run.items():
        ranked = sorted(ranking, key=lambda d: -ranking[d])
        for k in (10, 1000):
            expected, survive = 0.0, 1.0
            for i, doc in enumerate(ranked[:k]):
                grade = max(qrels[query_id].get(doc, 0), 0)
                stop = (2**grade - 1) / 16
                expected += survive * stop / (i + 1)
                survive *= 1 - stop
            assert ours[query_id][f"ERR@{k}"] == pytest.approx(expected, abs=1e-12)


def test_err_refuses_a_grade_above_four() -> None:
    with pytest.raises(ValueError, match=r"^measure 'ERR_10': a grade of 5 is above 4, the largest ERR's"):
        evaluate_run({"q": {"a": 1.0}}, {"q": {"a": 5}}, ["ERR@10"])


@pytest.mark.parametrize("seed", [7, 8])
def test_graded_precision_matches_ir_measures_pytrec_eval(seed: int) -> None:
    from ir_measures import P

    run, qrels = _random(seed)
    cases = [(rel, k) for rel in (1, 2, 3) for k in (1, 5, 10, 100)]
    names = {str(P(rel=rel) @ k): f"P(rel={rel})@{k}" for rel, k in cases}
    ours = evaluate_run(run, qrels, list(names.values()), missing="skip").per_query
    theirs = _theirs("pytrec_eval", [P(rel=rel) @ k for rel, k in cases], qrels, run)
    assert _compare(ours, theirs, names, 1e-12) == 30 * len(cases)


@pytest.mark.parametrize("seed", [9, 10])
def test_graded_recall_matches_pytrec_eval_at_that_level(seed: int) -> None:
    import pytrec_eval

    run, qrels = _random(seed)
    for rel in (2, 3):
        cutoffs = (5, 20, 100)
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}" for k in cutoffs}, relevance_level=rel).evaluate(
            run
        )
        ours = evaluate_run(run, qrels, [f"R(rel={rel})@{k}" for k in cutoffs], missing="skip").per_query
        for query_id, values in theirs.items():
            for k in cutoffs:
                assert ours[query_id][f"R(rel={rel})@{k}"] == pytest.approx(values[f"recall_{k}"], abs=1e-12)


@pytest.mark.parametrize("seed", [11, 12])
def test_binary_rbp_matches_ir_measures_cwl_eval(seed: int) -> None:
    pytest.importorskip("cwl")
    from ir_measures import RBP

    run, qrels = _random(seed)
    cases = [(0.8, 1), (0.5, 2), (0.95, 1)]
    names = {str(RBP(p=p, rel=rel)): f"RBP(p={p},rel={rel})" for p, rel in cases}
    ours = evaluate_run(run, qrels, list(names.values()), missing="skip").per_query
    theirs = _theirs("cwl_eval", [RBP(p=p, rel=rel) for p, rel in cases], qrels, run)
    assert _compare(ours, theirs, names, 1e-9) == 30 * len(cases)


@pytest.mark.parametrize("p", [0.9, 0.5])
def test_rbp_residual_matches_its_formula(p: float) -> None:
    run, qrels = _random(13, negative=True)
    name = "rbp_resid" if p == 0.9 else f"rbp_resid_p={p}"
    ours = evaluate_run(run, qrels, [name], missing="skip").per_query
    checked_positive = 0
    for query_id, ranking in run.items():
        ranked = sorted(ranking, key=lambda d: -ranking[d])
        unjudged = [i for i, d in enumerate(ranked) if qrels[query_id].get(d, -1) < 0]
        expected = p ** len(ranked) + (1 - p) * sum(p**i for i in unjudged) if unjudged else 0.0
        assert ours[query_id][name] == pytest.approx(expected, abs=1e-12)
        checked_positive += expected > 0
    assert checked_positive > 20


def test_the_new_measures_are_usable_by_name_from_evaluate_run() -> None:
    run, qrels = _random(14)
    names = [
        "Judged@10",
        "ERR@20",
        "P(rel=2)@5",
        "nDCG@10",
        "R(rel=2)@5",
        "nDCG(dcg='exp-log2')@10",
        "RBP(p=0.8,rel=1)",
        "rbp_resid",
        "AP(rel=2)",
    ]
    report = evaluate_run(run, qrels, names)
    assert list(report.metrics) == names
    for name in names:
        column = [values[name] for values in report.per_query.values()]
        assert report.metrics[name] == pytest.approx(math.fsum(column) / len(column), abs=1e-12)
    assert report.metrics["nDCG@10"] == evaluate_run(run, qrels, ["ndcg_cut_10"]).metrics["ndcg_cut_10"]
    assert report.metrics["AP(rel=2)"] == evaluate_run(run, qrels, ["map"], relevance_level=2).metrics["map"]


def test_relstring_is_refused_by_evaluate_run() -> None:
    with pytest.raises(
        ValueError, match=r"^'measures': 'relstring' is a string per query, printed by `ef trec-eval -q`"
    ):
        evaluate_run({"q": {"a": 1.0}}, {"q": {"a": 1}}, ["relstring"])


def test_the_new_measures_print_from_ef_trec_eval(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "qrels").write_text("q1 0 a 2\nq1 0 b 0\nq1 0 c 1\nq1 0 z 3\n")
    (folder / "run").write_text("q1 Q0 a 1 0.9 r\nq1 Q0 x 2 0.8 r\nq1 Q0 b 3 0.7 r\nq1 Q0 c 4 0.6 r\n")
    specs = ["-m", "Judged@2", "-m", "judged@10", "-m", "ERR@10", "-m", "P(rel=2)@2", "-m", "ndcg_exp@2"]
    assert main(["trec-eval", *specs, str(folder / "qrels"), str(folder / "run")]) == 0
    # ERR@10: a (grade 2) stops with 3/16 at rank 1; c (grade 1) with 1/16 at rank 4, after 13/16 survive.
    err = 3 / 16 + (13 / 16) * (1 / 16) / 4
    # nDCG@2 with gain 2^g - 1: a at rank 1 (3), x unjudged; ideal z (7), a (3).
    ndcg_exp = 3 / (7 + 3 / math.log2(3))
    assert capsys.readouterr().out == (
        "P(rel=2)@2            \tall\t0.5000\n"
        "judged_2              \tall\t0.5000\n"
        "judged_10             \tall\t0.7500\n"
        f"ERR_10                \tall\t{err:6.4f}\n"
        f"ndcg_exp_2            \tall\t{ndcg_exp:6.4f}\n"
    )
