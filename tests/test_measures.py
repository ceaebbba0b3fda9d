"""The measure registry: both spellings, canonical names, trec_eval's -m syntax, clear errors."""

from __future__ import annotations

import pytest

from ef.evaluation import RETRIEVAL_METRICS
from ef.evaluation._measures import MEASURES, Measure, expand_measure_spec, parse_measure, valid_forms


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
        assert family.description.endswith(".")
        assert isinstance(family.higher_is_better, bool)
        assert callable(family.kernel)
    assert MEASURES["num_ret"].higher_is_better is False
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
    with pytest.raises(
        ValueError, match=r"^measure 'ndgc@10': unknown measure; valid measures: ef names ndcg@K"
    ) as info:
        parse_measure("ndgc@10")
    assert "trec_eval names num_q, num_ret" in str(info.value)
    assert str(info.value).endswith(valid_forms())


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
        ("utility", "trec_eval measure 'utility' is not computed by ef"),
        ("Rprec_mult_0.20", "trec_eval measure 'Rprec_mult_0' is not computed by ef"),
        ("ndcg_10", "unknown measure"),
    ],
)
def test_bad_names_say_what_is_wrong(name: str, why: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_measure(name)
    assert str(info.value).startswith(f"measure {name!r}: {why}; valid measures:")


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
    assert len(expand_measure_spec("all_trec")) == 9 + 11 + 9 * 4 + 1 + 3  # P, recall, ndcg_cut, map_cut


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("P.5,5", "a parameter is given twice"),
        ("map.5", "'map' takes no parameters"),
        ("P.0", "cutoff must be a positive integer (got '0')"),
        ("P.x", "cutoff 'x' is not a number"),
    ],
)
def test_bad_parameter_lists(spec: str, why: str) -> None:
    with pytest.raises(ValueError) as info:
        expand_measure_spec(spec)
    assert str(info.value).startswith(f"measure {spec!r}: {why};")


def test_the_docs_table_is_the_registry() -> None:
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "trec-eval.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (.+) \| (\w+) \|$", doc, flags=re.M)
    assert rows == [(f.name, f.description, f.aggregate) for f in MEASURES.values()]


@pytest.mark.parametrize(
    "name", ["iprec_at_recall_0.5", "iprec_at_recall_0.05", "iprec_at_recall_1", "iprec_at_recall_.25"]
)
def test_accepted_recall_levels_round_trip_through_their_canonical_name(name: str) -> None:
    measure = parse_measure(name)
    assert parse_measure(str(measure)) == measure
