"""Two empty answers: each answer metric scores them as its reference implementation does, and
says so (exact match, token F1, answer-contains: 1.0, SQuAD v2's rule; ROUGE-L and chrF: 0.0,
rouge_score's and sacrebleu's). Pinned against the installed libraries where they are."""

from __future__ import annotations

import re

import pytest

from ef.evaluation import evaluate_rag
from ef.measures.answers import answer_contains, exact_match, token_f1
from ef.measures.overlap import chrf, rouge_l

# (response, reference): both empty, both empty after normalization, one empty, white space only
PAIRS = [("", ""), (".", "the"), ("a an the", "?!"), ("", "Paris"), ("Paris", ""), ("   ", "\t\n"), (".", ".")]


def _squad_v2_f1(prediction: str, gold: str) -> float:
    """SQuAD v2.0's official compute_f1 / compute_exact (evaluate-v2.0.py), on ef's tokens."""
    from collections import Counter

    from ef.measures._text import squad_tokens

    gold_toks, pred_toks = squad_tokens(gold), squad_tokens(prediction)
    if len(gold_toks) == 0 or len(pred_toks) == 0:
        return float(gold_toks == pred_toks)
    common = Counter(gold_toks) & Counter(pred_toks)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision, recall = num_same / len(pred_toks), num_same / len(gold_toks)
    return 2 * precision * recall / (precision + recall)


@pytest.mark.parametrize(("response", "reference"), PAIRS)
def test_the_squad_measures_follow_squad_v2(response: str, reference: str) -> None:
    expected = _squad_v2_f1(response, reference)
    assert token_f1(response, reference) == expected
    both_empty = not re.sub(r"\b(a|an|the)\b|[^\w]", "", response.lower() + reference.lower())
    assert exact_match(response, reference) == (1.0 if both_empty else 0.0)
    assert answer_contains(response, reference) == (1.0 if both_empty else 0.0)


def test_the_values_of_two_empty_answers() -> None:
    assert [f("", "") for f in (exact_match, token_f1, answer_contains, rouge_l, chrf)] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert [f("the", ".") for f in (exact_match, token_f1, answer_contains, rouge_l, chrf)] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert [f(".", ".") for f in (exact_match, token_f1, answer_contains, rouge_l, chrf)] == [1.0, 1.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize(("response", "reference"), PAIRS)
def test_rouge_l_follows_rouge_score(response: str, reference: str) -> None:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    expected = rouge_scorer.RougeScorer(["rougeL"]).score(reference, response)["rougeL"].fmeasure
    assert rouge_l(response, reference) == expected


@pytest.mark.parametrize(("response", "reference"), PAIRS)
def test_chrf_follows_sacrebleu(response: str, reference: str) -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    assert chrf(response, reference) == sacrebleu.sentence_chrf(response, [reference]).score / 100


def test_evaluate_rag_reports_each_convention() -> None:
    report = evaluate_rag(
        [{"response": "", "reference": ""}, {"response": "Paris", "reference": "Paris"}],
        metrics=["exact_match", "token_f1", "answer_contains", "rouge_l", "chrf"],
    )
    assert report.metrics == {"exact_match": 1.0, "token_f1": 1.0, "answer_contains": 1.0, "rouge_l": 0.5, "chrf": 0.5}


@pytest.mark.parametrize("metric", [exact_match, token_f1, answer_contains, rouge_l, chrf])
@pytest.mark.parametrize(("response", "reference", "name"), [(None, "x", "response"), ("x", b"x", "reference")])
def test_a_non_str_names_the_argument(metric: object, response: object, reference: object, name: str) -> None:
    with pytest.raises(TypeError, match=rf"^'{name}' must be a str"):
        metric(response, reference)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        (None, ["a"], "'a' must be a sequence of str tokens (got NoneType)"),  # was 0
        (["a"], None, "'b' must be a sequence of str tokens (got NoneType)"),  # was 0
        (3, ["a"], "'a' must be a sequence of str tokens (got int)"),
        ([["a"]], ["a"], "'a' must hold str tokens (got ['a'])"),  # unhashable, inside
        (["a", None], ["a"], "'a' must hold str tokens (got None)"),
    ],
)
def test_lcs_length_names_what_is_no_token_list(a: object, b: object, message: str) -> None:
    from ef.measures.overlap import lcs_length

    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        lcs_length(a, b)  # type: ignore[arg-type]
    assert lcs_length("abc", "abd") == lcs_length(["a", "b", "c"], ["a", "b", "d"]) == 2
