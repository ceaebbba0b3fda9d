"""The one registry (ef.measures): values built checked, names read one way everywhere, kernels agree."""

from __future__ import annotations

import asyncio
import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.cli import main
from ef.evaluation import evaluate_run
from ef.measures import (
    MEASURES,
    RAG_MEASURES,
    HitTable,
    Measure,
    parse_measure,
    resolve,
    score_ranking,
    valid_forms,
)
from ef.measures.parse import _AT_ALIASES, _IRM, _PLAIN_ALIASES, NICKNAMES
from ef.measures.registry import _REL_NAMES

ROOT = Path(__file__).resolve().parents[1]


def test_the_public_surface() -> None:
    import ef.measures

    assert sorted(ef.measures.__all__) == [
        "Aggregate", "HitTable", "Kind", "MEASURES", "Measure", "MeasureFamily", "NICKNAMES", "NICKNAMES_WITH_RUNID",
        "Origin", "ParamKind", "RAG_MEASURES", "RETRIEVAL_METRICS", "cutoff_metric", "expand_measure_spec",
        "expand_measure_specs",
        "parse_measure", "register_measure", "resolve", "score_ranking", "unregister_measure", "valid_forms",
    ]
    for name in ef.measures.__all__:
        assert getattr(ef.measures, name) is not None


def test_the_docs_example_runs() -> None:
    import doctest
    import re

    text = (ROOT / "docs" / "trec-eval.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```pycon\n(.*?)```", text, flags=re.S) if "ef.measures" in b]
    runner = doctest.DocTestRunner()
    runner.run(doctest.DocTestParser().get_doctest(block, {}, "trec-eval.md", "docs/trec-eval.md", 0))
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=7)


def test_importing_ef_measures_loads_no_numpy() -> None:
    code = (
        "import sys, ef.measures; from ef.measures import resolve, parse_measure; "
        "m = parse_measure('ndcg@10'); m.score(['d1'], {'d1': 1}); resolve(['official']); "
        "print(sorted(k for k in sys.modules if k == 'numpy' or k.startswith(('ef.evaluation', 'ef.trec'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


# --- Measure: checked when built, canonical, sortable ----------------------------------------------

_PAIRS_TEXT = st.lists(
    st.tuples(st.integers(0, 9), st.integers(-50, 50).map(lambda x: x / 4)), min_size=1, max_size=3
).map(lambda items: ",".join(f"{level}={gain:g}" for level, gain in items))


@st.composite
def measures(draw: st.DrawFn) -> Measure:
    family = draw(st.sampled_from(list(MEASURES.values())))
    name, kind = family.name, family.param
    if kind == "cutoff":
        rel = draw(st.none() | st.integers(1, 4)) if name in _REL_NAMES else None
        return Measure(name, draw(st.integers(1, 10_000)), rel=rel)
    if kind == "optional_cutoff":
        return Measure(name, draw(st.none() | st.integers(1, 1000)))
    if kind == "recall":
        return Measure(name, draw(st.integers(0, 100)) / 100)
    if kind == "multiple":
        return Measure(name, draw(st.integers(-500, 500)) / 100)
    if kind == "doubles":
        if name == "utility":
            numbers = draw(st.lists(st.integers(-9, 9), min_size=4, max_size=4))
        elif name == "relstring":
            numbers = [draw(st.integers(0, 100))]
        else:
            numbers = draw(st.lists(st.integers(0, 10).map(lambda x: x / 10), min_size=1, max_size=3))
        return Measure(name, text=draw(st.none() | st.just(",".join(f"{n:g}" for n in numbers))))
    if kind == "pairs":
        if name == "rbp" and draw(st.booleans()):
            p = draw(st.integers(1, 99)) / 100
            return Measure(name, text=f"p={p:g}", rel=draw(st.integers(1, 3)))
        text = draw(st.none() | _PAIRS_TEXT)
        if name in ("rbp", "rbp_resid") and text is not None and draw(st.booleans()):
            text += f",p={draw(st.integers(1, 99)) / 100:g}"
        return Measure(name, text=text)
    rel = draw(st.none() | st.integers(1, 4)) if name in _REL_NAMES else None
    return Measure(name, rel=rel)


@settings(max_examples=400, deadline=None)
@given(measures())
def test_every_measure_parses_back_from_its_name(measure: Measure) -> None:
    assert parse_measure(str(measure)) == measure
    assert resolve([str(measure)], rankings=False) == [(str(measure), measure)]


@settings(max_examples=50, deadline=None)
@given(st.lists(measures(), max_size=8))
def test_measures_sort_in_trec_eval_order(items: list[Measure]) -> None:
    order = list(MEASURES)
    ranked = sorted(items)
    assert [order.index(m.family) for m in ranked] == sorted(order.index(m.family) for m in items)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("nope",), ValueError, "Measure('nope'): 'family' must be a measure family of ef.measures.MEASURES "
                                "(got 'nope')"),
        (("P", 5.0), TypeError, "Measure('P'): 'param' must be a positive integer (a cutoff) (got 5.0)"),
        (("P", True), TypeError, "Measure('P'): 'param' must be a positive integer (a cutoff) (got True)"),
        (("P", 0), ValueError, "Measure('P'): 'param' must be a positive integer (a cutoff) (got 0)"),
        (("P",), ValueError, "Measure('P'): 'param' must be given: P takes a cutoff (got None)"),
        (("map", 5), ValueError, "Measure('map'): 'param' must be None: map takes no cutoff (got 5)"),
        (("iprec_at_recall", 0.125), ValueError,
         "Measure('iprec_at_recall'): 'param' must be a recall level in [0, 1] with at most 2 decimals (got 0.125)"),
        (("Rprec_mult", 0.125), ValueError,
         "Measure('Rprec_mult'): 'param' must be a finite multiple with at most 2 decimals (got 0.125)"),
        (("Rprec_mult", "1"), TypeError, "Measure('Rprec_mult'): 'param' must be a real number (got '1')"),
        (("P", 5, "5"), ValueError, "Measure('P'): 'text' must be None: P takes no parameter text (got '5')"),
        (("ndcg", None, "1=2 "), ValueError,
         "Measure('ndcg'): 'text' must be numbers, letters and . , = + - only (got '1=2 ')"),
        (("judged", 10, None, 2), ValueError, "Measure('judged'): 'rel' must be None: a relevance level is taken"),
        (("P", 5, None, 0), ValueError, "Measure('P'): 'rel' must be a positive integer (got 0)"),
        (("P", 5, None, 2.0), TypeError, "Measure('P'): 'rel' must be a positive integer (got 2.0)"),
        (("rbp", None, "1=2", 1), ValueError, "Measure('rbp'): 'text' must be one p=X with rel= (got '1=2')"),
    ],
)
def test_a_bad_measure_cannot_be_built(args: tuple[object, ...], error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        Measure(*args)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)


def test_bad_parameter_text_is_a_parse_style_error() -> None:
    why = r"parameters must be name=value pairs \(got 'x'\)"
    with pytest.raises(ValueError, match=rf"^measure 'ndcg_x': {why} \(every spelling"):
        Measure("ndcg", text="x")


def test_numpy_integers_and_int_levels_normalise() -> None:
    assert Measure("P", np.int64(5)) == Measure("P", 5)
    assert type(Measure("P", np.int32(5)).param) is int
    assert Measure("iprec_at_recall", 1) == Measure("iprec_at_recall", 1.0)
    assert str(Measure("iprec_at_recall", 1)) == "iprec_at_recall_1.00"
    assert Measure("P", 5, rel=np.int64(2)).rel == 2
    assert Measure("rbp", rel=1) == parse_measure("RBP(p=0.9,rel=1)")  # trec_eval's p, written out


def test_sorting_mixed_measures_never_raises() -> None:
    mixed = [Measure("P", 10), Measure("recip_rank", 10), Measure("P", 5, rel=2), Measure("recip_rank"),
             Measure("P", 5), Measure("utility", text="2,-1,0,0"), Measure("utility")]
    assert [str(m) for m in sorted(mixed)] == [
        "recip_rank", "recip_rank_10", "P_5", "P(rel=2)@5", "P_10", "utility", "utility_2,-1,0,0",
    ]
    with pytest.raises(TypeError):
        _ = Measure("P", 5) < "P_5"  # type: ignore[operator]


# --- resolve: the one reader of names ----------------------------------------------------------------


def test_resolve_keys_by_the_name_given_and_expands_the_m_forms() -> None:
    pairs = resolve(["nDCG@10", "ndcg_cut_10", "P.5,10", "hit_rate@10", "R@100", "AP", "RR@10", "P(rel=2)@5"])
    assert [(name, str(m)) for name, m in pairs] == [
        ("nDCG@10", "ndcg_cut_10"),
        ("ndcg_cut_10", "ndcg_cut_10"),
        ("P_5", "P_5"),
        ("P_10", "P_10"),
        ("hit_rate@10", "success_10"),
        ("R@100", "recall_100"),
        ("AP", "map"),
        ("RR@10", "recip_rank_10"),
        ("P(rel=2)@5", "P(rel=2)@5"),
    ]
    # In Python a nickname gives its numbers: relstring, a string per query, is ef trec-eval -q's (issue 34).
    assert [name for name, _ in resolve(["all_trec"])] == [
        str(m) for _, m in resolve(["all_trec"], trec_eval=True) if str(m) != "relstring"
    ]
    assert [str(m) for _, m in resolve(["ndcg_cut.10", "P.1e1", "recip_rank.10"])] == ["ndcg_cut_10", "P_1",
                                                                                        "recip_rank"]
    assert len(resolve(["P"])) == 9  # a family alone: trec_eval's default cutoffs


@pytest.mark.parametrize(
    ("names", "error", "message"),
    [
        ("ndcg@10", TypeError, "'measures' must be a sequence of measure names, not a single str"),
        ([10], TypeError, "'measures' must hold measure names as str (got 10)"),
        (["P.5", "P_5"], ValueError, "'measures' lists 'P_5' twice"),
        (["official", "map"], ValueError, "'measures' lists 'map' twice"),
        (["exact_match"], ValueError, "measure 'exact_match': a RAG measure scores samples"),
        (["ndgc@10"], ValueError, "measure 'ndgc@10': unknown measure; did you mean 'ndcg@10' or 'dcg@10'?"),
    ],
)
def test_resolve_refuses_with_a_named_error(names: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        resolve(names)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)


def test_valid_forms_lists_every_spelling_the_parser_takes() -> None:
    forms = valid_forms()
    for alias, family in _AT_ALIASES.items():
        level = MEASURES[family].param == "recall"
        assert f" {alias}@{'X' if level else 'K'}" in forms
        assert parse_measure(f"{alias}@{'0.5' if level else '10'}").family == family
    for alias in _PLAIN_ALIASES:
        assert f" {alias}," in forms or f" {alias};" in forms
    for irm, (plain, cut) in _IRM.items():
        if plain is not None:
            assert f" {irm}," in forms or f" {irm};" in forms
            assert parse_measure(irm).family == plain
        if cut is not None:
            assert f" {irm}@K" in forms or f" {irm}@X" in forms
    for nickname in NICKNAMES:
        assert nickname in forms
    for name in MEASURES:
        assert name in forms
    assert "P(rel=N)@K" in forms
    assert "RBP(p=X,rel=N)" in forms
    assert "nDCG(dcg='exp-log2')@K" in forms


_DOUBLES = {"utility": "1,-1,0,0", "relstring": "20", "11pt_avg": ".25,.5", "set_F": "0.5"}


def _example(family: str, form: str) -> str:
    """`form` with its placeholders filled in."""
    x = "1.5" if MEASURES[family].param == "multiple" else "0.5"
    filled = ((".K,K,...", ".5,10"), (".X,X,...", f".{x},0.25"), ("_X,...", f"_{_DOUBLES.get(family)}"),
              ("L=G,...", "1=3,2=9"), ("p=X", "p=0.5"), ("rel=N", "rel=2"))
    for placeholder, value in filled:
        form = form.replace(placeholder, value)
    return re.sub(r"(?<=[_@])X$", x, re.sub(r"(?<=[_@])K$", "10", form))


def test_every_family_lists_its_spellings_and_each_reads_as_it() -> None:
    for name, family in MEASURES.items():
        assert family.spellings[0] in (name, f"{name}_K", f"{name}_X"), name
        for form in family.spellings:
            measures = {m.family for _, m in resolve([_example(name, form)], rankings=False)}
            assert measures == {name}, form
    assert MEASURES["ndcg_cut"].spellings == (
        "ndcg_cut_K", "ndcg_cut.K,K,...", "ndcg@K", "ndcg_cut@K", "NDCG@K", "ndcg_at_K", "nDCG@K"
    )


# --- evaluate_run and ef trec-eval read names through resolve -----------------------------------------

RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d4": 0.5, "d5": 0.4}}
QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d5": 1}}


def test_evaluate_run_takes_every_spelling_and_keys_by_it() -> None:
    names = ["nDCG@10", "ndcg_cut.10", "ndcg@10", "P.2", "AP", "official"]
    with pytest.raises(ValueError, match="'measures' lists 'P_2' twice"):
        evaluate_run(RUN, QRELS, [*names, "P_2"])
    report = evaluate_run(RUN, QRELS, names)
    assert report.metrics["nDCG@10"] == report.metrics["ndcg@10"] == report.metrics["ndcg_cut_10"]
    assert report.metrics["AP"] == report.metrics["map"]
    assert report.metrics["P_2"] == 0.5
    assert report.metrics["num_q"] == 2
    assert list(report.per_query["q1"])[:4] == ["nDCG@10", "ndcg_cut_10", "ndcg@10", "P_2"]


def test_trec_eval_json_keys_by_the_name_given(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run, qrels = tmp_path / "run", tmp_path / "qrels"
    run.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in RUN.items() for d, s in docs.items()))
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    assert main(["trec-eval", "-m", "ndcg@10", "-m", "P.2", "-m", "nDCG@10", "--json", str(qrels), str(run)]) == 0
    document = json.loads(capsys.readouterr().out)
    expected = evaluate_run(RUN, QRELS, ["ndcg@10", "P_2"], missing="skip").metrics
    assert document["measures"] == {"P_2": expected["P_2"], "ndcg@10": expected["ndcg@10"]}
    assert main(["trec-eval", "-m", "ndcg@10", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out.startswith("ndcg_cut_10           \tall\t")


def test_trec_eval_help_reads_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["trec-eval", "--help"])
    out = capsys.readouterr().out
    for name, family in MEASURES.items():
        assert (f"  {name:<16} {family.description}" in out) == family.scores_rankings
    assert valid_forms().splitlines()[0] in out


# --- the kernels agree: per query, bulk, and fastrag's classes ---------------------------------------


def _random_case(rng: random.Random) -> tuple[list[list[str]], list[dict[str, float]]]:
    rankings, qrels = [], []
    for _ in range(30):
        docs = [f"d{i}" for i in range(rng.randint(0, 12))]
        rng.shuffle(docs)
        rankings.append(docs[: rng.randint(0, len(docs))])
        qrels.append({d: rng.choice([0, 1, 1, 2, 3, 0.5, -1]) for d in docs if rng.random() < 0.5})
    return rankings, qrels


@pytest.mark.parametrize("seed", range(5))
def test_every_per_query_kernel_equals_its_bulk_kernel(seed: int) -> None:
    rankings, qrels = _random_case(random.Random(seed))
    # ef.evaluation's rule, a grade > 0 is relevant, as a relevance level: the least positive double.
    table = HitTable.from_rankings(rankings, qrels, relevance_level=math.ulp(0.0))
    families = [f for f in MEASURES.values() if f.per_query is not None and f.scores_rankings]
    assert {f.name for f in families} == {"P", "recall", "ndcg_cut", "recip_rank", "map", "map_cut", "success",
                                          "precision_window", "ndcg_binary"}
    for family in families:
        for measure in ([Measure(family.name)] if family.param == "none" else
                        [Measure(family.name, k) for k in (1, 3, 10)]):
            bulk = measure.evaluate(table).tolist()
            single = [measure.score(r, q) for r, q in zip(rankings, qrels, strict=True)]
            assert single == bulk, str(measure)  # the same sums in the same order: equal to the last bit


def test_fastrag_definitions_differ_from_efs_where_the_spec_says() -> None:
    ranked, graded = ["d1", "x"], {"d1": 1.0, "d2": 3.0}
    assert score_ranking("precision_window@5", ranked, graded) == 0.5
    assert score_ranking("precision@5", ranked, graded) == 0.2
    assert score_ranking("ndcg_binary@2", ranked, graded) == pytest.approx(1 / (1 + 1 / np.log2(3)))
    assert score_ranking("ndcg@2", ranked, graded) == pytest.approx(1 / (3 + 1 / np.log2(3)))
    binary = {"d1": 1.0, "d2": 1.0}
    assert score_ranking("ndcg_binary@2", ranked, binary) == score_ranking("ndcg@2", ranked, binary)


def test_from_rankings_checks_its_input() -> None:
    with pytest.raises(ValueError, match=r"^'rankings' and 'qrels' must be as long \(got 1 and 0\)$"):
        HitTable.from_rankings([["d1"]], [])
    with pytest.raises(ValueError, match="'ranked' lists doc id 'd1' more than once"):
        HitTable.from_rankings([["d1", "d1"]], [{}])


def test_fastrag_classes_read_the_registry_and_take_issue_11s_measures() -> None:
    from fastrag.benchmark import EvalSample, QueryOutcome
    from fastrag.benchmark.metrics import NDCG, HitRate, Precision, RankingMeasure, parse_metric
    from fastrag.documents import Chunk

    assert (Precision.family, NDCG.family, HitRate.family) == ("precision_window", "ndcg_binary", "success")
    assert Precision(k=3).description == MEASURES["precision_window"].description
    outcome = QueryOutcome("q", "?", [Chunk("x", 0, ""), Chunk("a", 0, ""), Chunk("a", 1, "")])
    sample = EvalSample("q", "?", ["a"])
    for name in ("ERR@10", "RBP(p=0.5)", "ndcg_exp@3", "AP", "R@2", "Rprec", "recip_rank"):
        metric = parse_metric(f"{name}[source_uri]")
        assert metric == RankingMeasure(name, key="source_uri")
        assert parse_metric(metric.name) == metric
        value = asyncio.run(metric.score(sample, outcome))
        assert value == score_ranking(name, ["x", "a"], {"a": 1.0})
    assert RankingMeasure("ERR@10").higher_is_better is True
    for needs_judgements in ("Judged@10", "unj_5", "bpref", "infAP", "rbp_resid", "P(rel=2)@5"):
        with pytest.raises(ValueError, match=r"^'measure' must not need grades or judged non-relevant documents"):
            RankingMeasure(needs_judgements)
    assert asyncio.run(RankingMeasure("RBP(p=0.5)", key="source_uri").score(sample, outcome)) == 0.25
    with pytest.raises(ValueError, match=r"^'measure' must be a ranking measure averaged over queries \(got 'num_ret'"):
        RankingMeasure("num_ret")
    with pytest.raises(ValueError, match="as an ef measure: measure 'ERR@0': cutoff must be a positive integer"):
        parse_metric("ERR@0")


def test_nothing_private_crosses_into_fastrag_or_the_rag_cli() -> None:
    for path in [*(ROOT / "src" / "fastrag").rglob("*.py"), ROOT / "src" / "ef" / "cli" / "trec_eval.py"]:
        text = path.read_text(encoding="utf-8")
        for private in ("ef.evaluation._measures", "ef.evaluation._ranking", "ef.evaluation._bulk", "_RAG_METRICS"):
            assert private not in text, path
    assert list(RAG_MEASURES) == [
        "exact_match", "token_f1", "answer_contains", "rouge_l", "chrf", "claim_recall", "claim_precision", "claim_f1",
        "faithfulness", "context_utilization", "noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant",
        "hallucination", "context_recall", "context_precision", "non_empty_rate",
    ]


def test_evaluate_retrieval_takes_every_ranking_measure_with_a_cutoff() -> None:
    """Issues 10 and 11: hit_rate, ERR, Judged, nDCG exp and graded cutoffs in evaluate_retrieval,
    equal to evaluate_run on the same rankings (scores strictly decreasing: no tie to break)."""
    from ef.evaluation import evaluate_retrieval, evaluate_run

    ranked = {"q1": ["d3", "d1", "d9", "d2"], "q2": ["d5", "d4"], "q3": ["d7"]}

    class Retriever:
        def search(self, query: str, limit: int = 10) -> list[str]:
            return ranked[query][:limit]

    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1}, "q3": {"d7": 3, "d8": 1}}
    names = ["hit_rate", "err", "judged", "ndcg_exp", "P(rel=2)", "nDCG"]
    report = evaluate_retrieval(Retriever(), qrels, {q: q for q in ranked}, metrics=names, k_values=(1, 3))
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    expected = evaluate_run(run, qrels, [f"{n}@{k}" for n in names for k in (1, 3)])
    assert report.metrics == pytest.approx(expected.metrics, abs=0, rel=0)
    assert report.metrics["hit_rate@1"] == 1 / 3  # only q3's first doc is relevant
    assert report.metrics["judged@1"] == 2 / 3  # q2's first doc, d5, is not judged
    with pytest.raises(ValueError, match=r"unknown metric name\(s\) \['num_ret'\]"):
        evaluate_retrieval(Retriever(), qrels, {q: q for q in ranked}, metrics=["num_ret"])


def test_retrieval_metrics_is_a_read_only_view() -> None:
    """Issue 10: the spec's RETRIEVAL_METRICS stays a dict, read-only; a copy is a plain dict."""
    import copy

    from ef.evaluation import RETRIEVAL_METRICS, ndcg_at_k

    assert isinstance(RETRIEVAL_METRICS, dict)
    assert sorted(RETRIEVAL_METRICS) == ["map", "mrr", "ndcg", "precision", "recall"]
    assert RETRIEVAL_METRICS["ndcg"] is ndcg_at_k
    message = r"^RETRIEVAL_METRICS is a read-only view of ef.measures.MEASURES$"
    with pytest.raises(TypeError, match=message):
        RETRIEVAL_METRICS["dcg"] = ndcg_at_k
    with pytest.raises(TypeError, match=message):
        RETRIEVAL_METRICS.pop("ndcg")
    mine = copy.copy(RETRIEVAL_METRICS)
    mine["dcg"] = ndcg_at_k
    assert type(mine) is dict
    assert "dcg" not in RETRIEVAL_METRICS
