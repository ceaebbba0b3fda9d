"""Every peer's measure names read into ef's one registry (issue 34): BEIR/MTEB, ranx and ir_measures
spellings, each checked against the peer's own numbers; did-you-mean for a typo; a user's measure."""

from __future__ import annotations

import random

import numpy as np
import pytest

from ef.evaluation import evaluate_run
from ef.measures import MEASURES, Measure, parse_measure, register_measure, unregister_measure


@pytest.mark.parametrize(
    ("name", "measure"),
    [
        # BEIR's EvaluateRetrieval and MTEB's result keys
        ("NDCG@10", Measure("ndcg_cut", 10)),
        ("MAP@100", Measure("map_cut", 100)),
        ("MAP", Measure("map")),
        ("MRR@10", Measure("recip_rank", 10)),
        ("MRR", Measure("recip_rank")),
        ("Recall@10", Measure("recall", 10)),
        ("P@10", Measure("P", 10)),
        ("ndcg_at_10", Measure("ndcg_cut", 10)),
        ("map_at_100", Measure("map_cut", 100)),
        ("recall_at_1000", Measure("recall", 1000)),
        ("precision_at_5", Measure("P", 5)),
        ("mrr_at_10", Measure("recip_rank", 10)),
        # ranx
        ("hits@5", Measure("hits", 5)),
        ("hits", Measure("hits")),
        ("f1@5", Measure("f1_cut", 5)),
        ("f1", Measure("set_F")),
        ("r-precision", Measure("Rprec")),
        ("dcg@5", Measure("dcg_cut", 5)),
        ("dcg_burges@5", Measure("dcg_exp", 5)),
        ("ndcg_burges@5", Measure("ndcg_exp", 5)),
        ("ndcg_burges", Measure("ndcg_exp")),
        ("map@100-l2", Measure("map_cut", 100, rel=2)),
        ("precision@5-l2", Measure("P", 5, rel=2)),
        ("mrr-l3", Measure("recip_rank", rel=3)),
        # ir_measures
        ("SetF", Measure("set_F")),
        ("NumRelRet", Measure("num_rel_ret")),
        ("SetAP", Measure("set_map")),
        ("nDCG(judged_only=True)@10", Measure("ndcg_judged", 10)),
        ("nDCG(judged_only=True)", Measure("ndcg_judged")),
        ("nDCG(judged_only=False)@10", Measure("ndcg_cut", 10)),
    ],
)
def test_peer_spellings_read_as_their_definitions(name: str, measure: Measure) -> None:
    assert parse_measure(name) == measure
    assert parse_measure(str(measure)) == measure  # the canonical name reads back


def _random_data(seed: int, *, unjudged: bool = False) -> tuple[dict, dict]:
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(rng.randint(3, 15))]
        scores = rng.sample(range(1000), len(docs))  # distinct: the peers break ties their own ways
        run[f"q{q}"] = {d: s / 7.0 for d, s in zip(docs, scores, strict=True)}
        pool = [f"d{i}" for i in range(20)]
        judged = rng.sample(pool, rng.randint(1, 12)) if unjudged else pool
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2, 3]) for d in judged}
        if not any(qrels[f"q{q}"].values()):
            qrels[f"q{q}"][judged[0]] = 1
    return run, qrels


RANX_NAMES = [
    "hits@5", "hits", "f1@5", "r-precision", "dcg@5", "dcg_burges@5", "ndcg_burges@5", "ndcg@5", "map@5",
    "map@5-l2", "mrr@5", "precision@5-l2", "recall@5", "hit_rate@5", "ndcg_burges", "dcg", "f1",
]


@pytest.mark.slow  # ranx compiles each metric with numba first (~40 s)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranx_names_give_ranx_numbers(seed: int) -> None:
    ranx = pytest.importorskip("ranx")
    run, qrels = _random_data(seed)
    ours = evaluate_run(run, qrels, RANX_NAMES)
    ranx_qrels = ranx.Qrels({q: {d: g for d, g in docs.items() if g > 0} for q, docs in qrels.items()})
    theirs = ranx.evaluate(ranx_qrels, ranx.Run(run), RANX_NAMES, return_mean=False)
    for name in RANX_NAMES:
        mine = [ours.per_query[q][name] for q in sorted(run)]
        assert mine == pytest.approx(list(theirs[name]), abs=1e-12), name


@pytest.mark.parametrize("seed", [0, 1])
def test_ir_measures_names_give_ir_measures_numbers(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    run, qrels = _random_data(seed, unjudged=True)
    names = ["SetF", "NumRelRet", "SetAP", "nDCG(judged_only=True)@5", "nDCG(judged_only=True)", "SetF(beta=2.0)"]
    ours = evaluate_run(run, qrels, names)
    irm_qrels = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    irm_run = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    measures = [ir_measures.parse_measure(name) for name in names]
    theirs = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, irm_qrels, irm_run)}
    for name, measure in zip(names, measures, strict=True):
        for q in run:
            assert ours.per_query[q][name] == pytest.approx(theirs[(q, str(measure))], abs=1e-12), (name, q)


def test_a_typo_suggests_the_near_names_not_every_form() -> None:
    with pytest.raises(ValueError) as info:
        parse_measure("ndgc@10")
    message = str(info.value)
    assert message == (
        "measure 'ndgc@10': unknown measure; did you mean 'ndcg@10' or 'dcg@10'? "
        "(every spelling: ef.measures.valid_forms(), ef trec-eval --help)"
    )
    near = r"did you mean 'recall_100' or 'recall@100'\?"
    with pytest.raises(ValueError, match=rf"^measure 'recal_100': unknown measure; {near}"):
        parse_measure("recal_100")
    with pytest.raises(ValueError) as info:
        parse_measure("zzzzzz")
    assert str(info.value) == (
        "measure 'zzzzzz': unknown measure (every spelling: ef.measures.valid_forms(), ef trec-eval --help)"
    )


def test_a_set_measure_with_a_cutoff_says_it_takes_none() -> None:
    with pytest.raises(ValueError) as info:
        parse_measure("SetP@10")
    assert str(info.value) == (
        "measure 'SetP@10': SetP takes no cutoff (a set measure scores everything retrieved; max_docs, "
        "trec_eval's -M, cuts the ranking): write 'SetP' (every spelling: ef.measures.valid_forms(), "
        "ef trec-eval --help)"
    )


def test_measures_that_need_other_qrels_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^measure 'alpha_nDCG@10': ir_measures' alpha_nDCG needs "):
        parse_measure("alpha_nDCG@10")
    with pytest.raises(ValueError, match=r"^measure 'SDCG\(max_rel=3\)@10': ir_measures' SDCG "):
        parse_measure("SDCG(max_rel=3)@10")


def test_all_trec_works_in_python() -> None:
    run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.5}}
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d4": 1}}
    report = evaluate_run(run, qrels, ["all_trec"])
    assert "relstring" not in report.metrics  # a string per query: ef trec-eval -q prints it
    assert report.metrics["P_5"] == pytest.approx((1 / 5 + 0) / 2)
    assert report.metrics["num_rel_ret"] == 1
    with pytest.raises(ValueError, match=r"^'measures': 'relstring' is a string per query"):
        evaluate_run(run, qrels, ["relstring"])


def test_a_user_measure_registers_and_evaluates() -> None:
    def top_grade(table, measure):  # type: ignore[no-untyped-def]
        k = measure.param or 10**9
        out = np.zeros(table.n)
        keep = table.hit_rank < k
        np.maximum.at(out, table.hit_query[keep], table.hit_grade[keep])
        return out

    family = register_measure(
        "top_grade", top_grade, description="The best grade in the top k.", param="optional_cutoff"
    )
    try:
        assert MEASURES["top_grade"] is family
        run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.5, "d4": 0.4}}
        qrels = {"q1": {"d1": 1, "d2": 3}, "q2": {"d4": 2}}
        report = evaluate_run(run, qrels, ["top_grade", "top_grade@1", "top_grade_1"])
        assert report.per_query == {
            "q1": {"top_grade": 3.0, "top_grade@1": 1.0, "top_grade_1": 1.0},
            "q2": {"top_grade": 2.0, "top_grade@1": 0.0, "top_grade_1": 0.0},
        }
        with pytest.raises(ValueError, match=r"^measure 'top_grade' is already registered"):
            register_measure("top_grade", top_grade, description="again")
        with pytest.raises(ValueError, match=r"^measure 'ndcg' is already registered"):
            register_measure("ndcg", top_grade, description="again")
    finally:
        unregister_measure("top_grade")
    assert "top_grade" not in MEASURES
    with pytest.raises(ValueError, match=r"^only a measure added by register_measure can be removed \(got 'ndcg'\)"):
        unregister_measure("ndcg")


def test_a_user_measure_cannot_take_a_spelling_ef_already_reads() -> None:
    # register_measure("mrr", ...) used to succeed while "mrr" still read as recip_rank (the new measure
    # unreachable), and register_measure("nDCG", ...) took ir_measures' nDCG from every reader.
    def fives(table, measure):  # type: ignore[no-untyped-def]
        return np.full(table.n, 5.0)

    taken = r"^measure 'mrr' is already a spelling of ef's 'recip_rank': choose another name$"
    with pytest.raises(ValueError, match=taken):
        register_measure("mrr", fives, description="mine")
    with pytest.raises(ValueError, match=r"^measure 'nDCG' is already a spelling of ef's 'ndcg': choose another name$"):
        register_measure("nDCG", fives, description="mine")
    with pytest.raises(ValueError, match=r"^measure 'map_at': the parser would read 'map_at_10' as 'map_cut', not this "
                                         r"measure: choose another name$"):
        register_measure("map_at", fives, description="mine", param="optional_cutoff")
    assert [name for name in ("mrr", "nDCG", "map_at") if name in MEASURES] == []  # nothing left behind
    run, qrels = {"q1": {"d1": 0.9, "d2": 0.8}}, {"q1": {"d2": 1}}
    assert evaluate_run(run, qrels, ["mrr", "nDCG"]).metrics == {"mrr": 0.5, "nDCG": 0.6309297535714575}


def test_a_user_kernel_that_returns_the_wrong_shape_is_named() -> None:
    # It was numpy's "zip() argument 2 is longer than argument 1" (one value too many) and
    # "'list' object has no attribute 'tolist'" (a list, which is now read as the numbers it holds).
    def one_too_many(table, measure):  # type: ignore[no-untyped-def]
        return np.zeros(table.n + 1)

    def as_list(table, measure):  # type: ignore[no-untyped-def]
        return [2.0] * table.n

    run, qrels = {"q1": {"d1": 1.0}}, {"q1": {"d1": 1}, "q2": {"d2": 1}}
    register_measure("one_too_many", one_too_many, description="wrong")
    register_measure("as_list", as_list, description="a list")
    try:
        with pytest.raises(ValueError, match=r"^measure 'one_too_many': its kernel must return one value per query, "
                                             r"shape \(2,\) \(got shape \(3,\)\)$"):
            evaluate_run(run, qrels, ["one_too_many"])
        assert evaluate_run(run, qrels, ["as_list"]).per_query == {"q1": {"as_list": 2.0}, "q2": {"as_list": 2.0}}
    finally:
        unregister_measure("one_too_many")
        unregister_measure("as_list")


def test_a_user_measure_reaches_ef_trec_eval_through_ef_cli_main(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # docs/coming-from.md said every reader takes a registered measure, "ef trec-eval -m" among them; the
    # ef command is a new process that never sees it, ef.cli.main in the registering process does.
    from pathlib import Path

    from ef.cli import main

    def relevant_in_top(table, measure):  # type: ignore[no-untyped-def]
        keep = (table.hit_rank < (measure.param or 10**9)) & (table.hit_grade >= 1)
        return np.bincount(table.hit_query[keep], minlength=table.n).astype(float)

    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 1\n", encoding="utf-8")
    (tmp_path / "run").write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 x 2 1.5 t\nq1 Q0 d2 3 1.0 t\n", encoding="utf-8")
    register_measure("rel_in_top", relevant_in_top, description="Relevant documents in the top k.",
                     param="optional_cutoff")
    try:
        assert main(["trec-eval", "-m", "rel_in_top@2", str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
    finally:
        unregister_measure("rel_in_top")
    assert capsys.readouterr().out == "rel_in_top_2          \tall\t1.0000\n"
    doc = (Path(__file__).resolve().parents[1] / "docs" / "coming-from.md").read_text(encoding="utf-8")
    assert "the `ef` command is a new process,\nwhich knows only ef's measures" in doc
