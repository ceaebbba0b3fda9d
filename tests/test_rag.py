"""Lexical RAG metrics, evaluate_rag, RagEvalReport and `ef rag`: hand-computed values and properties."""

from __future__ import annotations

import collections
import dataclasses
import gzip
import inspect
import json
import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ef.cli import main
from ef.evaluation import (
    RagEvalReport,
    context_precision,
    context_recall,
    evaluate_rag,
    exact_match,
    token_f1,
)
from ef.measures import RAG_MEASURES as _RAG_METRICS
from ef.measures.answers import normalize as _normalize

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rag_samples.jsonl"
_DEFAULT = ("exact_match", "token_f1", "context_recall", "context_precision", "non_empty_rate")


# --- the official SQuAD v2.0 script, verbatim but for names: the oracle -------------------------


def _squad_normalize_answer(s: str) -> str:
    def remove_articles(text: str) -> str:
        regex = re.compile(r"\b(a|an|the)\b", re.UNICODE)
        return re.sub(regex, " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _squad_get_tokens(s: str) -> list[str]:
    if not s:
        return []
    return _squad_normalize_answer(s).split()


def _squad_compute_exact(a_gold: str, a_pred: str) -> int:
    return int(_squad_normalize_answer(a_gold) == _squad_normalize_answer(a_pred))


def _squad_compute_f1(a_gold: str, a_pred: str) -> float:
    gold_toks = _squad_get_tokens(a_gold)
    pred_toks = _squad_get_tokens(a_pred)
    common = collections.Counter(gold_toks) & collections.Counter(pred_toks)
    num_same = sum(common.values())
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return int(gold_toks == pred_toks)
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(pred_toks)
    recall = 1.0 * num_same / len(gold_toks)
    return (2 * precision * recall) / (precision + recall)


# Text that exercises the normalization: articles, ASCII and non-ASCII punctuation, odd spaces.
_words = st.sampled_from(
    ["the", "The", "a", "An", "an", "fox", "Fox", "brown", "theory", "a-b", "x.y", "«x»", "100", "°C",
     "Ünïcode", "don't", "", " ", "\t", "\u00a0", "\u3000", ",", "!", "the.", "ANA"]
)
_texts = st.lists(_words, max_size=8).map(" ".join) | st.text(max_size=20)
_contexts = st.lists(_texts, max_size=4)


# --- normalization --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  a  b\tc\n", "b c"),  # 'a' is an article
        ("the-end", "theend"),  # punctuation goes first, so 'the' is no longer a word
        ("theory anthem", "theory anthem"),  # articles only as whole words
        ("«Paris»", "«paris»"),  # only ASCII punctuation is removed
        ("100 °C", "100 °c"),
        ("...", ""),
        ("", ""),
    ],
)
def test_normalize_follows_squad(text: str, expected: str) -> None:
    assert _normalize(text) == expected


@given(_texts)
def test_normalize_equals_the_official_script(text: str) -> None:
    assert _normalize(text) == _squad_normalize_answer(text)


# --- exact_match / token_f1 -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower", 1.0),
        ("Paris", "London", 0.0),
        ("Paris.", "  paris ", 1.0),
        ("Paris, France", "Paris", 0.0),
        ("", "", 1.0),  # SQuAD v2: both empty
        ("the", "", 1.0),  # both empty after normalization
        ("", "Paris", 0.0),
        ("Paris", "", 0.0),
    ],
)
def test_exact_match_hand_values(response: str, reference: str, expected: float) -> None:
    assert exact_match(response, reference) == expected


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("the quick brown fox", "a quick brown fox", 1.0),
        ("quick brown fox", "quick brown dog", 2 / 3),  # p = r = 2/3
        ("fox", "quick brown fox", 0.5),  # p = 1, r = 1/3: 2 * 1/3 / (4/3)
        ("It was written by George Orwell.", "George Orwell", 0.5),  # p = 2/6, r = 1
        ("x x y", "x y y", 2 / 3),  # bags: one x and one y in common
        ("x x x", "x", 0.5),  # p = 1/3, r = 1
        ("100 degrees Celsius", "100 °C", 0.4),  # p = 1/3, r = 1/2
        ("Paris", "London", 0.0),
        ("", "", 1.0),
        ("", "fox", 0.0),
        ("fox", "?", 0.0),
        ("an", "the", 1.0),
    ],
)
def test_token_f1_hand_values(response: str, reference: str, expected: float) -> None:
    assert token_f1(response, reference) == pytest.approx(expected, abs=1e-15)


@given(_texts, _texts)
def test_answer_metrics_equal_the_official_script(response: str, reference: str) -> None:
    assert exact_match(response, reference) == _squad_compute_exact(reference, response)
    assert token_f1(response, reference) == _squad_compute_f1(reference, response)


@given(_texts, _texts)
def test_answer_metrics_are_in_unit_interval(response: str, reference: str) -> None:
    assert exact_match(response, reference) in (0.0, 1.0)
    assert 0.0 <= token_f1(response, reference) <= 1.0
    assert type(token_f1(response, reference)) is float
    assert token_f1(response, reference) == token_f1(reference, response)  # F1 is symmetric


@given(_texts)
def test_an_answer_matches_itself(text: str) -> None:
    assert exact_match(text, text) == 1.0
    assert token_f1(text, text) == 1.0


@pytest.mark.parametrize("function", [exact_match, token_f1])
def test_answer_metrics_reject_non_str(function: Any) -> None:
    with pytest.raises(TypeError, match=r"^'response' must be a str \(got NoneType\)$"):
        function(None, "x")
    with pytest.raises(TypeError, match=r"^'reference' must be a str \(got int\)$"):
        function("x", 4)


# --- context_recall / context_precision ------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "contexts", "expected"),
    [
        ("paris france", ["Paris is the capital of France."], 1.0),
        ("paris france", ["London is in England."], 0.0),
        ("paris france", ["I love Paris.", "nothing else"], 0.5),
        ("paris france", ["Paris", "FRANCE!"], 1.0),  # tokens may come from different contexts
        ("paris paris france", ["paris"], 0.5),  # distinct tokens: {paris, france}
        ("the capital", ["capitals"], 0.0),  # whole tokens, not substrings
        ("100 °C", ["water boils at 100 degrees"], 0.5),
        ("paris", [], 0.0),  # nothing retrieved recalls nothing
        ("paris", ["", "..."], 0.0),
    ],
)
def test_context_recall_hand_values(reference: str, contexts: list[str], expected: float) -> None:
    assert context_recall(reference, contexts) == expected


@pytest.mark.parametrize(
    ("reference", "contexts", "expected"),
    [
        ("paris", ["Paris is in France.", "Unrelated text."], 0.5),
        ("paris", ["Paris", "paris!", "PARIS"], 1.0),
        ("paris france", ["a", "b", "c", "France"], 0.25),
        ("city of light", ["one of many"], 1.0),  # function words count (only articles are dropped)
        ("the city", ["the town"], 0.0),  # articles are dropped
        ("paris", [], 0.0),  # documented: nothing retrieved scores 0, not NaN
        ("paris", [""], 0.0),
    ],
)
def test_context_precision_hand_values(reference: str, contexts: list[str], expected: float) -> None:
    assert context_precision(reference, contexts) == expected


@pytest.mark.parametrize("function", [context_recall, context_precision])
@pytest.mark.parametrize("reference", ["", "   ", "the", "?!", "A."])
def test_context_metrics_reject_a_reference_without_tokens(function: Any, reference: str) -> None:
    message = (
        rf"^'reference' has no tokens after normalization \(got {re.escape(repr(reference))}\); "
        r"a context metric needs at least one reference token to look for$"
    )
    with pytest.raises(ValueError, match=message):
        function(reference, ["Paris"])


@pytest.mark.parametrize("function", [context_recall, context_precision])
def test_context_metrics_reject_bad_types(function: Any) -> None:
    with pytest.raises(TypeError, match=r"^'retrieved_contexts' must be a list of str \(got str\)$"):
        function("paris", "Paris is in France.")
    with pytest.raises(TypeError, match=r"^'retrieved_contexts'\[1\] must be a str \(got int\)$"):
        function("paris", ["Paris", 3])
    with pytest.raises(TypeError, match=r"^'retrieved_contexts' must be a list of str \(got NoneType\)$"):
        function("paris", None)
    with pytest.raises(TypeError, match=r"^'reference' must be a str \(got bytes\)$"):
        function(b"paris", ["Paris"])


@given(_texts, _contexts)
def test_context_metrics_are_in_unit_interval(reference: str, contexts: list[str]) -> None:
    if not _normalize(reference):
        return  # no tokens: a ValueError, tested above
    recall = context_recall(reference, contexts)
    precision = context_precision(reference, contexts)
    assert 0.0 <= recall <= 1.0
    assert 0.0 <= precision <= 1.0
    assert (recall > 0) == (precision > 0)  # both say whether any reference token was retrieved
    assert context_recall(reference, [*contexts, reference]) == 1.0  # the reference recalls itself


@given(_texts, _contexts, _texts)
def test_context_recall_never_drops_when_a_context_is_added(
    reference: str, contexts: list[str], extra: str
) -> None:
    if _normalize(reference):
        assert context_recall(reference, [*contexts, extra]) >= context_recall(reference, contexts)


# --- RagEvalReport --------------------------------------------------------------------------------


def test_report_is_frozen_and_serializes() -> None:
    report = RagEvalReport(metrics={"exact_match": 0.5}, coverage={"exact_match": 4}, n_samples=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.n_samples = 5  # type: ignore[misc]
    assert report.to_dict() == {"metrics": {"exact_match": 0.5}, "coverage": {"exact_match": 4}, "n_samples": 4}
    assert json.loads(json.dumps(report.to_dict())) == report.to_dict()


def test_report_table() -> None:
    report = RagEvalReport(
        metrics={"exact_match": 0.5, "context_precision": 1 / 3},
        coverage={"exact_match": 2, "token_f1": 0, "context_precision": 3},
        n_samples=3,
    )
    assert str(report) == (
        "RAG evaluation over 3 samples\n"
        "metric               mean  samples\n"
        "-----------------  ------  -------\n"
        "exact_match        0.5000        2\n"
        "token_f1                -        0\n"
        "context_precision  0.3333        3"
    )
    assert str(RagEvalReport({}, {"non_empty_rate": 1}, 1)).splitlines()[0] == "RAG evaluation over 1 sample"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metrics": {}, "coverage": {}, "n_samples": -1}, r"^'n_samples' must be a non-negative integer \(got -1\)$"),
        (
            {"metrics": {}, "coverage": {}, "n_samples": 2.0},
            r"^'n_samples' must be a non-negative integer \(got 2\.0\)$",
        ),
        (
            {"metrics": {}, "coverage": {"token_f1": 3}, "n_samples": 2},
            r"^'coverage\['token_f1'\]' must be an integer in \[0, n_samples=2\] \(got 3\)$",
        ),
        (
            {"metrics": {"token_f1": 0.5}, "coverage": {}, "n_samples": 2},
            r"^'coverage' has no entry for metric\(s\) \['token_f1'\]$",
        ),
    ],
)
def test_report_rejects_inconsistent_values(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RagEvalReport(**kwargs)


# --- evaluate_rag ---------------------------------------------------------------------------------

SAMPLES: list[dict[str, Any]] = [
    {"user_input": "capital of France?", "response": "Paris", "reference": "Paris",
     "retrieved_contexts": ["Paris is the capital of France.", "Lyon is in France."]},
    {"user_input": "2 + 2?", "response": "five", "reference": "four", "retrieved_contexts": []},
    {"user_input": "who wrote it?", "response": "George Orwell wrote it", "reference": "George Orwell",
     "retrieved_contexts": ["Orwell wrote 1984."]},
    {"user_input": "no reference", "response": "whatever", "retrieved_contexts": ["x"]},
]


def test_evaluate_rag_hand_values() -> None:
    report = evaluate_rag(SAMPLES)
    # exact_match: 1, 0, 0 over the three samples with a reference.
    # token_f1: 1, 0, (p = 2/4, r = 1) 2/3. context_recall: 1, 0, 1/2.
    # context_precision: 1/2 ('Lyon is in France.' shares nothing with 'Paris'), 0, 1.
    # non_empty_rate: 3 of 4 samples retrieved something.
    assert report.metrics == pytest.approx(
        {"exact_match": 1 / 3, "token_f1": 5 / 9, "context_recall": 0.5, "context_precision": 0.5,
         "non_empty_rate": 0.75},
        abs=1e-15,
    )
    assert list(report.metrics) == list(_DEFAULT)
    assert report.coverage == {"exact_match": 3, "token_f1": 3, "context_recall": 3, "context_precision": 3,
                               "non_empty_rate": 4}
    assert report.n_samples == 4


def test_evaluate_rag_keeps_the_requested_order_and_subset() -> None:
    report = evaluate_rag(SAMPLES, metrics=["non_empty_rate", "exact_match"])
    assert list(report.metrics) == ["non_empty_rate", "exact_match"]
    assert report.to_dict() == {
        "metrics": {"non_empty_rate": 0.75, "exact_match": 1 / 3},
        "coverage": {"non_empty_rate": 4, "exact_match": 3},
        "n_samples": 4,
    }


def test_evaluate_rag_coverage_rules() -> None:
    samples: list[dict[str, Any]] = [
        # no response: the answer metrics skip it, the context metrics score it.
        {"reference": "Paris", "retrieved_contexts": ["Paris"]},
        # retrieved_contexts absent or None: not known, so the context metrics skip it (they scored it 0,
        # as if nothing had been retrieved: context_recall 1/3 here); non_empty_rate, the spec's share of
        # samples that retrieved any context, counts every sample, these as retrieving none.
        {"response": "Paris", "reference": "Paris"},
        {"response": "Paris", "reference": "Paris", "retrieved_contexts": None},
        # an empty reference: SQuAD v2 scores the answer; the context metrics skip it.
        {"response": "", "reference": "", "retrieved_contexts": ["Paris"]},
        # reference None counts as absent.
        {"response": "Paris", "reference": None, "retrieved_contexts": ["Paris"]},
        # an empty list: nothing retrieved, 0.
        {"response": "Lyon", "reference": "Lyon", "retrieved_contexts": []},
    ]
    report = evaluate_rag(samples)
    assert report.coverage == {"exact_match": 4, "token_f1": 4, "context_recall": 2, "context_precision": 2,
                               "non_empty_rate": 6}
    assert report.metrics == {"exact_match": 1.0, "token_f1": 1.0, "context_recall": 0.5,
                              "context_precision": 0.5, "non_empty_rate": 0.5}


def test_samples_without_retrieved_contexts_have_no_context_metric() -> None:
    """Answers scored with no retrieved_contexts field (Ragas' None): every metric that reads contexts leaves
    them out, where it gave context_recall 0, faithfulness 0 and hallucination = 1 - claim precision."""
    answers_only = [{"response": "Paris is in France.", "reference": "Paris is in France."},
                    {"response": "Lyon", "reference": "Paris", "retrieved_contexts": None}]
    report = evaluate_rag(answers_only, metrics=list(_RAG_METRICS))
    assert report.metrics == {"exact_match": 0.5, "token_f1": 0.5, "answer_contains": 0.5, "rouge_l": 0.5,
                              "chrf": 0.5, "claim_recall": 0.5, "claim_precision": 0.5, "claim_f1": 0.5,
                              "non_empty_rate": 0.0}  # the spec's share of samples that retrieved any context
    assert {name for name, n in report.coverage.items() if n == 0} == {
        "faithfulness", "context_utilization", "noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant",
        "hallucination", "context_recall", "context_precision"}
    assert report.coverage["non_empty_rate"] == 2


def test_a_metric_that_applies_to_no_sample_is_left_out() -> None:
    report = evaluate_rag([{"user_input": "q", "retrieved_contexts": ["c"]}])
    assert report.metrics == {"non_empty_rate": 1.0}
    assert report.coverage == {"exact_match": 0, "token_f1": 0, "context_recall": 0, "context_precision": 0,
                               "non_empty_rate": 1}


def test_evaluate_rag_accepts_any_iterable_and_tuples() -> None:
    samples = ({"response": "x b", "reference": "b", "retrieved_contexts": ("b",)} for _ in range(2))
    report = evaluate_rag(samples)
    assert report.metrics == {"exact_match": 0.0, "token_f1": 2 / 3, "context_recall": 1.0,
                              "context_precision": 1.0, "non_empty_rate": 1.0}


def test_evaluate_rag_accepts_the_other_ragas_fields() -> None:
    sample = {"response": "x", "reference": "x", "retrieved_context_ids": ["d1"], "reference_context_ids": ["d1"],
              "rubrics": {"score1": "bad"}, "persona_name": "p", "query_style": "s", "query_length": "short",
              "multi_responses": ["x"], "reference_contexts": ["x"], "user_input": "q"}
    assert evaluate_rag([sample], metrics=["exact_match"]).metrics == {"exact_match": 1.0}


def test_evaluate_rag_mean_is_exact() -> None:
    # fsum: ten samples of token_f1 0.1-ish average without accumulated rounding.
    samples = [{"response": "a1 b c d e f g h i j", "reference": "a1"}] * 10
    single = token_f1("a1 b c d e f g h i j", "a1")
    assert evaluate_rag(samples, metrics=["token_f1"]).metrics["token_f1"] == single


def test_the_registry_is_the_source_of_truth() -> None:
    default = inspect.signature(evaluate_rag).parameters["metrics"].default
    # The spec's five are the default; the registry holds them (in that order) and issue 35's beside them.
    assert default == _DEFAULT
    assert [name for name in _RAG_METRICS if name in default] == list(default)
    assert all(metric.description for metric in _RAG_METRICS.values())


@pytest.mark.parametrize(
    ("metrics", "error", "message"),
    [
        (["exact_match", "bleu"], ValueError,
         r"^'metrics' has unknown metric name\(s\) \['bleu'\]; valid names are \['exact_match', 'token_f1', "
         r"'answer_contains', 'rouge_l', 'chrf', 'claim_recall', .*'non_empty_rate', 'answer_similarity', "
         r"'answer_relevance', 'context_relevance'\]$"),
        ([], ValueError, r"^'metrics' must name at least one metric; valid names are \["),
        (["token_f1", "token_f1"], ValueError, r"^'metrics' lists 'token_f1' more than once$"),
        ("token_f1", TypeError, r"^'metrics' must be a sequence of metric names, not a single str \(got 'token_f1'\)$"),
    ],
)
def test_evaluate_rag_rejects_bad_metrics(metrics: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        evaluate_rag(SAMPLES, metrics=metrics)


@pytest.mark.parametrize(
    ("samples", "error", "message"),
    [
        ([], ValueError, r"^'samples' is empty; there is nothing to evaluate$"),
        (SAMPLES[0], TypeError, r"^'samples' must be an iterable of samples, not a single mapping$"),
        ([SAMPLES[0], "text"], TypeError, r"^samples\[1\] must be a mapping of RagSample fields \(got str\)$"),
        ([{"response": 1}], TypeError, r"^samples\[0\]\['response'\] must be a str \(got int\)$"),
        ([SAMPLES[0], {"reference": ["Paris"]}], TypeError,
         r"^samples\[1\]\['reference'\] must be a str \(got list\): one reference answer per sample \(for several "
         r"gold answers, take the max of ef\.evaluation\.exact_match or token_f1 over them, as SQuAD's script does\)$"),
        ([{"user_input": b"q"}], TypeError, r"^samples\[0\]\['user_input'\] must be a str \(got bytes\)$"),
        ([{"retrieved_contexts": "Paris"}], TypeError,
         r"^samples\[0\]\['retrieved_contexts'\] must be a list of str \(got str\)$"),
        ([{"reference_contexts": ["a", None]}], TypeError,
         r"^samples\[0\]\['reference_contexts'\]\[1\] must be a str \(got NoneType\)$"),
        ([{"referece": "Paris"}], ValueError,
         r"^samples\[0\] has unknown key 'referece'; a sample holds only the fields of Ragas' SingleTurnSample: "
         r"user_input, retrieved_contexts, reference_contexts, retrieved_context_ids, reference_context_ids, "
         r"response, multi_responses, reference, rubrics, persona_name, query_style, query_length$"),
    ],
)
def test_evaluate_rag_rejects_bad_samples(samples: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        evaluate_rag(samples)


_samples = st.lists(
    st.fixed_dictionaries(
        {},
        optional={"response": _texts, "reference": _texts | st.none(), "retrieved_contexts": _contexts,
                  "user_input": _texts},
    ),
    min_size=1,
    max_size=5,
)


@given(_samples)
def test_evaluate_rag_properties(samples: list[dict[str, Any]]) -> None:
    report = evaluate_rag(samples)
    assert report.n_samples == len(samples)
    assert report.coverage["non_empty_rate"] == len(samples)
    for name, value in report.metrics.items():
        assert 0.0 <= value <= 1.0, name
        assert report.coverage[name] > 0
    for name, count in report.coverage.items():
        assert (name in report.metrics) == (count > 0)
    with_answer = [s for s in samples if s.get("response") is not None and s.get("reference") is not None]
    assert report.coverage["exact_match"] == report.coverage["token_f1"] == len(with_answer)


# --- ef rag ---------------------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["rag", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_example_table(capsys: pytest.CaptureFixture[str]) -> None:
    # Seven samples carry a reference, one (the Berlin Wall) does not; one retrieved nothing.
    # exact_match: Canberra, Leonardo da Vinci                                  -> 2/7
    # token_f1: 1 + 0.5 (Orwell) + 0.4 (100 °C) + 0 + 0 + 0.4 (206) + 1         -> 3.3/7
    # answer_contains: Canberra, Orwell, 206, Leonardo                          -> 4/7
    # rouge_l: 1 + 0.5 (LCS 2 of 6 and 2) + 0.4 (LCS 1 of 3 and 2) + 0 + 0 + 1/3 (1 of 5 and 1) + 1 -> 0.4619
    # chrf: sacreBLEU's sentence chrF of each, averaged (the oracle below)
    # Claims, lexical rule (half of a claim's content words): the reference claim '100 °C' has
    # {100, c}, half in the response: recall 1; the response claim {100, degrees, celsius} has a
    # third in the reference: precision 0. 'An adult has 206 bones.' is not supported by '206'.
    # claim_recall: 1 + 1 + 1 + 0 + 0 + 1 + 1 -> 5/7; claim_precision and claim_f1: 1 + 1 + 0 + 0 + 0 + 0 + 1 -> 3/7
    # faithfulness (8 samples, the Berlin Wall too): all but the gold answer, which retrieved nothing -> 7/8
    # context_utilization: the 5 samples whose contexts support the reference claim, each used -> 1
    # noise_sensitivity_in_relevant: 100 degrees Celsius, An adult has 206 bones -> 2/7
    # noise_sensitivity_in_irrelevant: Jupiter (only the Jupiter context supports it) -> 1/7
    # hallucination: 'I could not find this in the documents.' -> 1/7
    # context_recall: 1 + 1 + 0.5 ('°c' is not retrieved) + 0 + 0 + 1 + 1       -> 4.5/7
    # context_precision: 0.5 + 1 + 0.5 + 0 + 0 (nothing retrieved) + 0.5 + 0.5 -> 3/7
    sacrebleu = pytest.importorskip("sacrebleu")
    rows = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    chrfs = [sacrebleu.sentence_chrf(r["response"], [r["reference"]]).score / 100 for r in rows if "reference" in r]
    status, out, err = _run(capsys, str(EXAMPLE))
    assert (status, err) == (0, "")
    assert out == (
        "RAG evaluation over 8 samples\n"
        "metric                             mean  samples\n"
        "-------------------------------  ------  -------\n"
        "exact_match                      0.2857        7\n"
        "token_f1                         0.4714        7\n"
        "answer_contains                  0.5714        7\n"
        "rouge_l                          0.4619        7\n"
        f"chrf                             {sum(chrfs) / 7:.4f}        7\n"
        "claim_recall                     0.7143        7\n"
        "claim_precision                  0.4286        7\n"
        "claim_f1                         0.4286        7\n"
        "faithfulness                     0.8750        8\n"
        "context_utilization              1.0000        5\n"
        "noise_sensitivity_in_relevant    0.2857        7\n"
        "noise_sensitivity_in_irrelevant  0.1429        7\n"
        "hallucination                    0.1429        7\n"
        "context_recall                   0.6429        7\n"
        "context_precision                0.4286        7\n"
        "non_empty_rate                   0.8750        8\n"
    )


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, str(EXAMPLE), "--json", "--metrics", "exact_match,non_empty_rate")
    assert status == 0
    document = json.loads(out)
    document.pop("ef_version", None)  # which ef wrote it: another issue's addition
    assert document == {
        "metrics": {"exact_match": 2 / 7, "non_empty_rate": 0.875},
        "coverage": {"exact_match": 7, "non_empty_rate": 8},
        "n_samples": 8,
    }


def test_cli_metrics_may_repeat_and_precede_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(capsys, "--metrics", "token_f1", "--metrics", "context_recall", "--json", str(EXAMPLE))
    assert status == 0
    assert list(json.loads(out)["metrics"]) == ["token_f1", "context_recall"]


def test_cli_reads_gzip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"response": "a", "reference": "a"}\n'))
    status, out, _ = _run(capsys, str(path), "--json", "--metrics", "exact_match")
    assert (status, json.loads(out)["metrics"]) == (0, {"exact_match": 1.0})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"response": "a"}\n{"response": "b"\n', "{path}:2: malformed JSON: Expecting ',' delimiter (column 17)"),
        ('\n\n["a"]\n', "{path}:3: expected a JSON object, got array"),
        ('{"response": "a"}\r\n{"reference": 4}\r\n', "{path}:2: sample['reference'] must be a str (got int)"),
        # SQuAD's several gold answers: said what to do (it was only "must be a str (got list)")
        ('{"response": "a", "reference": ["a", "an a"]}\n',
         "{path}:1: sample['reference'] must be a str (got list): one reference answer per sample (for several "
         "gold answers, take the max of ef.evaluation.exact_match or token_f1 over them, as SQuAD's script does)"),
        ('{"retrieved_contexts": "one passage"}\n',
         "{path}:1: sample['retrieved_contexts'] must be a list of str (got str)"),
        # the fields ef only forwards to Ragas: a traceback ending "TypeError: samples[0]['persona_name'] ...", exit 1
        ('{"response": "a"}\n{"response": "a", "persona_name": 3}\n',
         "{path}:2: sample['persona_name'] must be a str (got int)"),
        ('{"retrieved_context_ids": [true]}\n',
         "{path}:1: sample['retrieved_context_ids'][0] must be a str or int id (got bool)"),
        ('{"rubrics": ["x"]}\n', "{path}:1: sample['rubrics'] must be a mapping of str to str (got list)"),
        ('{"id": 7, "response": "a"}\n', "{path}:1: sample has unknown key 'id'; a sample holds only the fields"),
        ("\n  \n", "{path}: no samples (the file has no JSON lines)"),
        (b'{"response": "\xff"}\n', "{path}:1: not valid UTF-8 (invalid start byte)"),
    ],
)
def test_cli_bad_file_names_file_and_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str | bytes, message: str
) -> None:
    path = tmp_path / "samples.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    status, out, err = _run(capsys, str(path))
    assert (status, out) == (2, "")
    assert err.startswith("ef rag: error: " + message.format(path=path))
    assert err.count("\n") == 1


def test_cli_unknown_metric_and_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = _run(capsys, str(EXAMPLE), "--metrics", "bleu")
    assert status == 2
    assert err == (
        "ef rag: error: --metrics has unknown metric name(s) ['bleu']; valid names are ['exact_match', "
        "'token_f1', 'answer_contains', 'rouge_l', 'chrf', 'claim_recall', 'claim_precision', 'claim_f1', "
        "'faithfulness', 'context_utilization', 'noise_sensitivity_in_relevant', 'noise_sensitivity_in_irrelevant', "
        "'hallucination', 'context_recall', 'context_precision', 'non_empty_rate', 'answer_similarity', "
        "'answer_relevance', 'context_relevance']\n"
    )
    # evaluate_rag's keywords are the flags the user typed (was "'metrics' lists ...", "'checker' ...")
    status, _, err = _run(capsys, str(EXAMPLE), "-m", "token_f1,token_f1")
    assert (status, err) == (2, "ef rag: error: --metrics lists 'token_f1' more than once\n")
    status, _, err = _run(capsys, str(EXAMPLE), "--checker", str(tmp_path))
    assert (status, err) == (2, f"ef rag: error: --checker '{tmp_path}' is not a model directory: it has no "
                                "config.json (save a CrossEncoder or a transformers sequence-classification "
                                "model there)\n")
    missing = tmp_path / "nope.jsonl"
    status, _, err = _run(capsys, str(missing))
    assert (status, err) == (2, f"ef rag: error: [Errno 2] No such file or directory: '{missing}'\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "<stdin>: no samples (the file has no JSON lines)"),  # was '-: no samples'
        ('{"id": 1}\n', "<stdin>:1: sample has unknown key 'id'; a sample holds"),  # was '-:1: sample ...'
        ("x\n", "<stdin>:1: malformed JSON: Expecting value (column 1)"),  # the reader's own, unchanged
    ],
)
def test_cli_names_standard_input_as_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(text.encode()))))
    status, out, err = _run(capsys, "-")
    assert (status, out) == (2, "")
    assert err.startswith(f"ef rag: error: {message}")


def test_cli_help_lists_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["rag", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert exit_info.value.code == 0
    for name, metric in _RAG_METRICS.items():
        assert f"{name}: {metric.description}" in out


# --- docs/rag-and-beir.md: every example runs as shown ------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rag-and-beir.md"


def _fenced(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_doc_python_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest

    monkeypatch.chdir(ROOT)  # the examples use paths relative to the repository
    blocks = [block for block in _fenced("pycon") if "ragas" not in block]  # test_ragas.py runs that one
    assert len(blocks) == 3
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, Any] = {}
    for i, block in enumerate(blocks):
        runner.run(doctest.DocTestParser().get_doctest(block, globs, f"{DOC.name}[{i}]", str(DOC), 0))
    assert runner.summarize(verbose=False) == doctest.TestResults(failed=0, attempted=23)


def test_doc_console_examples(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    (block,) = _fenced("console")
    commands = re.split(r"^\$ ", block, flags=re.M)[1:]
    assert len(commands) == 2
    for command in commands:
        line, expected = command.split("\n", 1)
        argv = line.split()
        assert argv[:2] == ["ef", "rag"]
        assert main(argv[1:]) == 0
        assert capsys.readouterr().out == expected, line


def test_doc_table_lists_the_registry() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("### RAG answers and contexts, no LLM", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, flags=re.M)
    assert rows == [(name, metric.description) for name, metric in _RAG_METRICS.items()]
