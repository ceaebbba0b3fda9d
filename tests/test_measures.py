"""The measure registry: both spellings, canonical names, trec_eval's -m syntax, clear errors."""

from __future__ import annotations

import pytest

from ef.evaluation import RETRIEVAL_METRICS
from ef.measures import (
    MEASURES,
    Measure,
    expand_measure_spec,
    expand_measure_specs,
    parse_measure,
    valid_forms,
)


@pytest.mark.parametrize(
    ("ef_name", "trec_name"),
    [
        ("ndcg@10", "ndcg_cut_10"),
        ("recall@100", "recall_100"),
        ("precision@5", "P_5"),
        ("mrr", "recip_rank"),
        ("mrr@10", "recip_rank_10"),
        ("map", "map"),
        ("map@100", "map_cut_100"),
        ("hit_rate@10", "success_10"),
        ("ndcg", "ndcg"),
        ("P@5", "P_5"),
    ],
)
def test_ef_and_trec_spellings_are_the_same_measure(ef_name: str, trec_name: str) -> None:
    assert parse_measure(ef_name) == parse_measure(trec_name)
    assert str(parse_measure(ef_name)) == trec_name


@pytest.mark.parametrize(
    "name",
    [
        "Rprec",
        "bpref",
        "gm_map",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "recip_rank",
        "iprec_at_recall_0.50",
        "iprec_at_recall_1.00",
        "success_1",
        "map_cut_5",
        "ndcg_cut_1000",
    ],
)
def test_trec_names_round_trip(name: str) -> None:
    measure = parse_measure(name)
    assert str(measure) == name
    assert parse_measure(str(measure)) == measure


def test_every_default_parameter_round_trips() -> None:
    for family in MEASURES:
        for measure in expand_measure_spec(family):
            assert parse_measure(str(measure)) == measure


def test_recall_levels_print_with_two_decimals() -> None:
    assert str(parse_measure("iprec_at_recall_0.5")) == "iprec_at_recall_0.50"
    assert parse_measure("iprec_at_recall@0.25") == Measure("iprec_at_recall", 0.25)


def test_every_entry_describes_itself() -> None:
    for name, family in MEASURES.items():
        assert family.name == name
        # The RAG descriptions are ef rag's help lines (docs/rag-and-beir.md pins them): no period.
        assert family.description.endswith(".") == (family.origin != "rag")
        assert family.kind in ("score", "loss", "count", "text")
        assert (family.bulk is None) == (family.origin == "rag")
        if family.bulk is not None:
            assert callable(family.kernel)
    kinds = {name: family.kind for name, family in MEASURES.items() if family.kind != "score"}
    assert kinds == {
        "num_q": "count",
        "num_ret": "count",
        "num_rel": "count",
        "num_rel_ret": "count",
        "relstring": "text",
        "num_nonrel_judged_ret": "count",
        "rbp_resid": "loss",
        "unj": "loss",
        # ef's RAG claim diagnostics where fewer is better (issue 35)
        "noise_sensitivity_in_relevant": "loss",
        "noise_sensitivity_in_irrelevant": "loss",
        "hallucination": "loss",
    }
    assert MEASURES["num_ret"].integer
    assert not MEASURES["ndcg_cut"].integer
    assert MEASURES["unj"].higher_is_better is False
    assert MEASURES["ndcg_cut"].higher_is_better is True


def test_evaluate_retrieval_metric_names_all_resolve_in_the_registry() -> None:
    # The per-query functions of RETRIEVAL_METRICS and the registry name the same measures.
    families = {name: parse_measure(f"{name}@10").family for name in RETRIEVAL_METRICS}
    assert families == {
        "map": "map_cut",
        "mrr": "recip_rank",
        "ndcg": "ndcg_cut",
        "precision": "P",
        "recall": "recall",
    }


def test_unknown_name_lists_the_valid_forms() -> None:
    # Issue 34: the near names and where the forms are listed, not all 1,600 characters of them.
    with pytest.raises(ValueError) as info:
        parse_measure("ndgc@10")
    assert str(info.value) == ("measure 'ndgc@10': unknown measure; did you mean 'ndcg@10' or 'dcg@10'? "
                               "(every spelling: ef.measures.valid_forms(), ef trec-eval --help)")
    assert "trec_eval names num_q, num_ret" in valid_forms()


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("P", "needs a parameter, e.g. 'P_10'"),
        ("iprec_at_recall", "needs a parameter, e.g. 'iprec_at_recall_0.50'"),
        ("ndcg@0", "cutoff must be a positive integer (got '0')"),
        ("ndcg@ten", "cutoff must be a positive integer (got 'ten')"),
        ("P_2.5", "cutoff must be a positive integer (got '2.5')"),
        ("iprec_at_recall_1.5", "recall level must be in [0, 1] (got 1.5)"),
        ("iprec_at_recall_0.501", "recall level must have at most 2 decimals (got 0.501)"),
        ("iprec_at_recall@0.125", "recall level must have at most 2 decimals (got 0.125)"),
        ("prefs_simp", "trec_eval measure 'prefs_simp' is not computed by ef (it needs preference or jg qrels)"),
        ("Rprec_mult", "needs a parameter, e.g. 'Rprec_mult_1.00'"),
        ("ndcg_10", "parameters must be name=value pairs (got '10')"),
        ("ndcg_x=1", "ndcg takes level=gain pairs (got 'x=1')"),
        ("ndcg_-1=2", "a gain level must be >= 0 (got -1)"),
        ("rbp_p=1.5", "RBP's persistence p must be in (0, 1) (got 1.5)"),
        ("utility_1,2", "utility takes 4 numbers a,b,c,d (got 2)"),
        ("utility_1,x,0,0", "parameter 'x' is not a number"),
        ("11pt_avg_0x1", "parameter '0x1' is not a number"),
        ("R", "R needs a cutoff, e.g. 'R@10'"),
        ("P(rel=0)@5", "rel must be an integer >= 1 (got '0')"),
        ("Judged(rel=2)@10", "Judged does not take rel="),
        ("nDCG(dcg='exp')@10", "dcg='exp': only nDCG takes dcg, 'log2' or 'exp-log2'"),
        ("nDCG(gains={1: 2})@10", "nDCG does not take gains"),
        ("AP(judged_only=True)", "AP does not take judged_only"),
    ],
)
def test_bad_names_say_what_is_wrong(name: str, why: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_measure(name)
    where = "(every spelling: ef.measures.valid_forms(), ef trec-eval --help)"
    assert str(info.value) == f"measure {name!r}: {why} {where}"


def test_non_str_name_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="a measure name must be a str \\(got int\\)"):
        parse_measure(10)  # type: ignore[arg-type]


def test_trec_parameter_syntax() -> None:
    assert [str(m) for m in expand_measure_spec("P.5,7,3")] == ["P_3", "P_5", "P_7"]
    assert [str(m) for m in expand_measure_spec("ndcg_cut.10,20,23.4")] == ["ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23"]
    assert [str(m) for m in expand_measure_spec("iprec_at_recall..10,.5")] == [
        "iprec_at_recall_0.10",
        "iprec_at_recall_0.50",
    ]
    assert [str(m) for m in expand_measure_spec("recall")] == [
        "recall_5",
        "recall_10",
        "recall_15",
        "recall_20",
        "recall_30",
        "recall_100",
        "recall_200",
        "recall_500",
        "recall_1000",
    ]
    assert [str(m) for m in expand_measure_spec("map")] == ["map"]
    assert [str(m) for m in expand_measure_spec("ndcg@10")] == ["ndcg_cut_10"]


def test_nicknames_expand_in_trec_order() -> None:
    official = [str(m) for m in expand_measure_spec("official")]
    assert official[:10] == [
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall_0.00",
    ]
    assert official[-1] == "P_1000"
    assert len(official) == 9 + 11 + 9
    # trec_eval's 99 measures: official's 29, 9 each of recall, ndcg_cut, map_cut and relative_P,
    # 10 Rprec_mult, 3 unj, 3 success and 22 without parameters (relstring among them).
    assert len(expand_measure_spec("all_trec")) == 29 + 9 * 4 + 10 + 3 + 3 + 18
    assert [str(m) for m in expand_measure_spec("set")] == [
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
    ]


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("P.5,5", "a parameter is given twice"),
        ("P.0", "cutoff must be a positive integer (got '0')"),
        ("P.-3", "cutoff must be a positive integer (got '-3')"),
        ("P.x", "cutoff 'x' is not a number"),
        ("P.", "no parameters after the '.'"),
        ("Rprec_mult.0.5,.5", "a parameter is given twice"),
        ("Rprec_mult.nan", "parameter 'nan' is not a number"),
        ("rbp.p", "parameters must be name=value pairs (got 'p')"),
    ],
)
def test_bad_parameter_lists(spec: str, why: str) -> None:
    with pytest.raises(ValueError) as info:
        expand_measure_spec(spec)
    assert str(info.value).startswith(f"measure {spec!r}: {why} (every spelling:")


def measure_table() -> str:
    """docs/trec-eval.md's table of every ranking measure, generated from the registry."""
    lines = ["| measure | what it is | kind | summary | spellings |", "|---|---|---|---|---|"]
    lines += [
        f"| `{f.name}` | {f.description} | {f.kind} | {f.aggregate} | {', '.join(f'`{s}`' for s in f.spellings)} |"
        for f in MEASURES.values()
        if f.scores_rankings
    ]
    return "\n".join(lines) + "\n"


def test_the_docs_table_is_the_registry() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "trec-eval.md").read_text(encoding="utf-8")
    assert measure_table() in doc  # print(measure_table()) gives the table to paste after a registry change


@pytest.mark.parametrize(
    "name", ["iprec_at_recall_0.5", "iprec_at_recall_0.05", "iprec_at_recall_1", "iprec_at_recall_.25"]
)
def test_accepted_recall_levels_round_trip_through_their_canonical_name(name: str) -> None:
    measure = parse_measure(name)
    assert parse_measure(str(measure)) == measure


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        # trec_eval reads cutoffs with atol (the leading integer) ...
        (["P.1e1"], ["P_1"]),
        (["ndcg_cut.23.4,5x"], ["ndcg_cut_5", "ndcg_cut_23"]),
        # ... ignores the parameters of a measure that takes none ...
        (["recip_rank.10"], ["recip_rank"]),
        (["map.5", "bpref.x"], ["map", "bpref"]),
        # ... and takes a family's parameters from its first -m with parameters.
        (["P.5", "P.10"], ["P_5"]),
        (["P", "P.3"], ["P_3"]),
        (["official", "P.7"], ["num_q"]),
        # Parameters kept in the name, as trec_eval prints them.
        (["utility.2,-1,0,0", "11pt_avg..25,.5", "set_F.0.5"], ["utility_2,-1,0,0", "11pt_avg_.25,.5", "set_F_0.5"]),
        (["ndcg.1=3,2=9", "rbp.p=0.8", "rbp_resid"], ["ndcg_1=3,2=9", "rbp_p=0.8", "rbp_resid"]),
        (["Rprec_mult.5.0,0.2,0.35"], ["Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]),
        (["relstring.20", "unj"], ["relstring_20", "unj_5", "unj_10", "unj_20"]),
        # ef's and ir_measures' names after trec_eval's order.
        (["Judged@10", "P(rel=2)@5", "P.5"], ["P_5", "P(rel=2)@5", "judged_10"]),
    ],
)
def test_trec_eval_m_semantics(specs: list[str], expected: list[str]) -> None:
    measures = [str(m) for m in expand_measure_specs(specs)]
    if specs[0] == "official":
        assert measures[0] == "num_q"
        assert "P_7" in measures
        assert "P_5" not in measures
    else:
        assert measures == expected


@pytest.mark.parametrize(
    ("name", "measure", "canonical"),
    [
        ("nDCG@10", Measure("ndcg_cut", 10), "ndcg_cut_10"),
        ("nDCG", Measure("ndcg"), "ndcg"),
        ("AP", Measure("map"), "map"),
        ("AP@100", Measure("map_cut", 100), "map_cut_100"),
        ("RR", Measure("recip_rank"), "recip_rank"),
        ("R@100", Measure("recall", 100), "recall_100"),
        ("Success@10", Measure("success", 10), "success_10"),
        ("Judged@10", Measure("judged", 10), "judged_10"),
        ("judged@10", Measure("judged", 10), "judged_10"),
        ("ERR@20", Measure("ERR", 20), "ERR_20"),
        ("err@20", Measure("ERR", 20), "ERR_20"),
        ("nDCG(dcg='exp-log2')@10", Measure("ndcg_exp", 10), "ndcg_exp_10"),
        ("ndcg_exp", Measure("ndcg_exp"), "ndcg_exp"),
        ("P(rel=2)@5", Measure("P", 5, rel=2), "P(rel=2)@5"),
        ("R(rel=2)@5", Measure("recall", 5, rel=2), "R(rel=2)@5"),
        ("AP(rel=2)", Measure("map", rel=2), "AP(rel=2)"),
        ("RBP(p=0.5)", Measure("rbp", text="p=0.5"), "rbp_p=0.5"),
        ("RBP", Measure("rbp", text="p=0.8"), "rbp_p=0.8"),
        ("RBP(p=0.5,rel=2)", Measure("rbp", text="p=0.5", rel=2), "RBP(p=0.5,rel=2)"),
        ("rbp_resid", Measure("rbp_resid"), "rbp_resid"),
        ("utility_2,-1,0,0", Measure("utility", text="2,-1,0,0"), "utility_2,-1,0,0"),
        ("ndcg_1=3,2=9", Measure("ndcg", text="1=3,2=9"), "ndcg_1=3,2=9"),
        ("Rprec_mult_0.20", Measure("Rprec_mult", 0.2), "Rprec_mult_0.20"),
        ("relative_P_5", Measure("relative_P", 5), "relative_P_5"),
        ("unj_5", Measure("unj", 5), "unj_5"),
        ("set_F_0.5", Measure("set_F", text="0.5"), "set_F_0.5"),
    ],
)
def test_every_spelling_parses_and_round_trips(name: str, measure: Measure, canonical: str) -> None:
    assert parse_measure(name) == measure
    assert str(measure) == canonical
    assert parse_measure(canonical) == measure


def test_long_multiples_are_cut_like_trec_eval_names() -> None:
    # trec_eval writes "%s_%3.2f" into a buffer of len(name) + 10 bytes.
    assert str(parse_measure("Rprec_mult_12345.5")) == "Rprec_mult_12345.50"
    assert str(parse_measure("Rprec_mult_123456.5")) == "Rprec_mult_123456.5"


def test_gain_and_persistence_parameters() -> None:
    measure = parse_measure("rbp_p=0.5,2=7,1=0,2=9,p=0.25")
    assert measure.persistence == 0.25  # the last p wins, as in trec_eval's loop
    assert measure.gain_pairs == ((1, 0.0), (2, 7.0))  # the first gain of a level wins
    assert parse_measure("rbp").persistence == 0.9
    assert parse_measure("utility").doubles == (1.0, -1.0, 0.0, 0.0)
    assert parse_measure("utility_2,-1e0,.5,0").doubles == (2.0, -1.0, 0.5, 0.0)
