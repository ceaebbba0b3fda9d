"""Issue 35's answer metrics: hand-computed values, rouge_score and sacreBLEU as oracles, the claim rule.

answer_contains, rouge_l, chrf, the sentence and word splitting, the lexical claim diagnostics, and
their use through evaluate_rag and fastrag. The local checker model and MiniLM are in
tests/test_answers_models.py.
"""

from __future__ import annotations

import asyncio
import functools
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import evaluate_rag
from ef.measures import RAG_MEASURES
from ef.measures._text import sentences, words
from ef.measures.answers import answer_contains
from ef.measures.claims import (
    CLAIM_METRICS,
    SUPPORT_THRESHOLD,
    LexicalSupport,
    analyse_claims,
    claim_support,
    content_words,
)
from ef.measures.overlap import chrf, lcs_length, rouge_l

# --- words and sentences --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Don't PANIC: it's 42!", ["don", "t", "panic", "it", "s", "42"]),
        ("snake_case and-dash", ["snake", "case", "and", "dash"]),  # _ separates, as in rouge_score
        ("naïve Café", ["naïve", "café"]),
        ("Москва — столица России.", ["москва", "столица", "россии"]),
        ("東京は日本", ["東", "京", "は", "日", "本"]),
        ("서울은 수도", ["서", "울", "은", "수", "도"]),
        ("GPT-4o 2024年", ["gpt", "4o", "2024", "年"]),
        ("", []),
        ("... —", []),
    ],
)
def test_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # vowel signs and virama are marks: was ['ह', 'न', 'द', 'भ', 'ष']
        ("ที่นี่ กรุงเทพ", ["ที่นี่", "กรุงเทพ"]),  # was ['ท', 'น', 'กร', 'งเทพ']
        ("שָׁלוֹם", ["שָׁלוֹם"]),  # niqqud: was ['ש', 'לו', 'ם']
        ("nai\u0308ve cafe\u0301", ["nai\u0308ve", "cafe\u0301"]),  # decomposed (NFD) Latin: was ['nai', 've', 'cafe']
        ("İstanbul", ["i\u0307stanbul"]),  # 'İ'.lower() is 'i' + U+0307: was ['i', 'stanbul']
        ("か\u3099ん", ["か\u3099", "ん"]),  # a kana keeps its voicing mark
        ("\u0301 a", ["a"]),  # a mark with no letter before it is no word
    ],
)
def test_words_keep_combining_marks(text: str, expected: list[str]) -> None:
    """A combining mark (Unicode M*) belongs to the word it is written on: Hindi, Thai, Hebrew, decomposed
    Latin were cut into letters, and different words shared pieces."""
    assert words(text) == expected


def test_rouge_l_reads_whole_hindi_words() -> None:
    assert rouge_l("हिन्दी भाषा", "भाषा") == 2 / 3  # LCS 1 of 2 and 1 (was 4 / 7: LCS 2 of 5 letters and 2)
    assert rouge_l("दिन", "दान") == 0.0  # 'day' and 'donation' (was 1.0: both read as ['द', 'न'])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris is in France. It is big!  Is it? Yes.", ["Paris is in France.", "It is big!", "Is it?", "Yes."]),
        ("It has 2.1 million people.", ["It has 2.1 million people."]),  # no space after the inner period
        ("Dr. Smith, e.g. here, met J. Doe. Then left.", ["Dr. Smith, e.g. here, met J. Doe.", "Then left."]),
        ("Steps:\n1. Mix.\n2. Bake.", ["Steps:", "1. Mix.", "2. Bake."]),  # list numbers stay with their item
        ("- one\n\n- two", ["- one", "- two"]),  # every line break ends a claim
        ('He said "stop." Then he left.', ['He said "stop."', "Then he left."]),
        ("東京は首都です。大阪は都市です。", ["東京は首都です。", "大阪は都市です。"]),
        ("Москва — столица России. Она большая!", ["Москва — столица России.", "Она большая!"]),
        ("no final stop", ["no final stop"]),
        ("", []),
        (" \n\t ", []),
        ("**\n--", []),  # no word: no claim
        ("The answer is no. Paris is in France.", ["The answer is no.", "Paris is in France."]),  # was one claim
        ("No. It is in Paris.", ["No.", "It is in Paris."]),  # was one claim
        ("See No. 5 and no. 6 here.", ["See No. 5 and no. 6 here."]),  # 'No.' before a number abbreviates it
    ],
)
def test_sentences(text: str, expected: list[str]) -> None:
    assert sentences(text) == expected


# --- answer_contains ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("It was written by George Orwell.", "george orwell", 1.0),
        ("Orwell, George", "George Orwell", 0.0),  # the words in order
        ("The answer is Paris", "Paris", 1.0),
        ("Parisian food", "Paris", 0.0),  # whole tokens, not a substring
        ("concatenate", "cat", 0.0),
        ("100 °C at sea level", "100 °C", 1.0),
        ("Paris", "Paris, France", 0.0),  # the reference must fit inside
        ("Москва — столица", "москва", 1.0),
        ("", "", 1.0),  # both empty (SQuAD v2)
        ("the", "", 1.0),
        ("Paris", "", 0.0),
        ("", "Paris", 0.0),
    ],
)
def test_answer_contains(response: str, reference: str, expected: float) -> None:
    assert answer_contains(response, reference) == expected


def test_answer_contains_needs_text() -> None:
    with pytest.raises(TypeError, match=r"^'reference' must be a str \(got int\)$"):
        answer_contains("a", 3)  # type: ignore[arg-type]


# --- ROUGE-L: rouge_score is the oracle -----------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("the cat sat on the mat", "the cat lay on the mat", 5 / 6),  # LCS 5 of 6 and 6
        ("on the mat the cat", "the cat on the mat", 0.6),  # LCS 3 of 5 and 5
        ("George Orwell", "It was written by George Orwell.", 0.5),  # LCS 2: p = 1, r = 2/6
        ("a b c", "c b a", 1 / 3),  # LCS 1
        ("東京は首都", "首都は東京", 0.4),  # LCS 2 of 5 and 5
        ("Москва столица", "столица Москва", 0.5),
        ("x", "y", 0.0),
        ("", "", 0.0),  # rouge_score: no words on a side, no score
        ("...", "Paris", 0.0),
    ],
)
def test_rouge_l_hand_values(response: str, reference: str, expected: float) -> None:
    assert rouge_l(response, reference) == pytest.approx(expected, abs=1e-15)


def _lcs_table(a: list[str], b: list[str]) -> int:
    """The textbook dynamic-programming table: the oracle of the bit-parallel lcs_length."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def test_lcs_length() -> None:
    assert lcs_length(list("ABCBDAB"), list("BDCABA")) == 4  # CLRS's example
    assert lcs_length([], ["a"]) == lcs_length(["a"], []) == 0
    assert lcs_length(["x"] * 200, ["x"] * 70) == 70  # 70 bits, carries past the top bit


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=80), st.lists(st.sampled_from("abcde"), max_size=80))
def test_lcs_length_equals_the_table(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _lcs_table(a, b) == lcs_length(b, a)


@functools.cache
def _rouge_scorer(tokenizer: Any = None) -> Any:
    rouge_scorer = pytest.importorskip("rouge_score.rouge_scorer")
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=tokenizer)


_ascii = st.text(alphabet=st.sampled_from(list("abcAB c.,-_'\n09")), max_size=40)
_unicode = st.text(max_size=30) | st.lists(
    st.sampled_from(["東", "京", "Мос", "ква", "naïve", "the", "a", "_", "—", "1.5", " ", "\u00a0", "ü"]), max_size=12
).map("".join)


@settings(max_examples=100, deadline=None)
@given(_ascii, _ascii)
def test_rouge_l_equals_rouge_score_on_ascii(response: str, reference: str) -> None:
    expected = _rouge_scorer().score(reference, response)["rougeL"].fmeasure
    assert rouge_l(response, reference) == expected


class _Words:
    """ef's words as a rouge_score tokenizer: the LCS and the F-measure are rouge_score's own."""

    def tokenize(self, text: str) -> list[str]:
        return words(text)


_WORDS = _Words()


@settings(max_examples=100, deadline=None)
@given(_unicode, _unicode)
def test_rouge_l_equals_rouge_score_with_ef_words_on_any_text(response: str, reference: str) -> None:
    scorer = _rouge_scorer(_WORDS)
    assert rouge_l(response, reference) == scorer.score(reference, response)["rougeL"].fmeasure


# --- chrF: sacreBLEU is the oracle ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "expected"),
    [
        ("Paris", "Paris", 1.0),
        ("ab", "abc", 35 / 55),  # orders 1-2: P = 1, R = (2/3 + 1/2) / 2 = 7/12; 5PR / (4P + R)
        ("a b", "ab", 1.0),  # white space is removed
        ("Ab", "ab", 0.25),  # case kept: order 1 P = R = 1/2, order 2 ('Ab' against 'ab') P = R = 0
        ("Paris", "Rome", 0.0),
        ("", "Paris", 0.0),
        ("", "", 0.0),
    ],
)
def test_chrf_hand_values(response: str, reference: str, expected: float) -> None:
    assert chrf(response, reference) == pytest.approx(expected, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(_unicode, _unicode)
def test_chrf_equals_sacrebleu(response: str, reference: str) -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    assert chrf(response, reference) == sacrebleu.sentence_chrf(response, [reference]).score / 100  # to the last bit


def test_chrf_is_sacrebleu_score_over_100_to_the_last_bit() -> None:
    """sacreBLEU (and Ragas' ChrfScore) compute the score in percent, then divide by 100: two roundings
    the fraction must repeat. Without them one pair in twelve differed in the last bit."""
    sacrebleu = pytest.importorskip("sacrebleu")
    assert sacrebleu.sentence_chrf("the cat", ["cat"]).score / 100 == 0.7565789473684209
    assert chrf("the cat", "cat") == 0.7565789473684209  # was 0.756578947368421
    assert chrf("the cat", "Paris France") == 0.05  # was 0.049999999999999996


def test_chrf_and_rouge_l_on_long_texts() -> None:
    sacrebleu = pytest.importorskip("sacrebleu")
    long_a = " ".join(f"word{i % 97} Москва 東京" for i in range(150))  # 600 words, 3,300 characters
    long_b = " ".join(f"word{i % 89} столица 京都" for i in range(120))
    assert chrf(long_a, long_b) == sacrebleu.sentence_chrf(long_a, [long_b]).score / 100
    assert rouge_l(long_a, long_a) == 1.0


# --- the claim rule -------------------------------------------------------------------------------


def test_content_words_and_support() -> None:
    assert content_words("The capital of France is Paris.") == {"capital", "france", "paris"}
    assert content_words("It is what it is.") == {"it", "is", "what"}  # only stop words: all kept
    assert content_words("Москва — это столица") == {"москва", "это", "столица"}  # no Russian stop list
    assert claim_support("Paris is the capital of France.", "France: capital city Paris") == 1.0
    assert claim_support("Paris is the capital of Spain.", "France: capital city Paris") == 2 / 3
    assert claim_support("...", "anything") == 0.0


def test_lexical_support_threshold_is_inclusive() -> None:
    # 'red green blue yellow': half of the four content words in the text.
    claim, text = "red green blue yellow", "red and green"
    assert LexicalSupport(0.5).supported([claim], [text]) == [[True]]
    assert LexicalSupport(0.51).supported([claim], [text]) == [[False]]
    assert LexicalSupport(1.0).supported([claim], ["yellow blue green red"]) == [[True]]
    assert LexicalSupport().threshold == SUPPORT_THRESHOLD == 0.5


@pytest.mark.parametrize("threshold", [0, -0.1, 1.5, math.nan, "0.5", True])
def test_lexical_support_rejects_bad_thresholds(threshold: Any) -> None:
    with pytest.raises(ValueError, match=r"^'threshold' must be a number in \(0, 1\] \(got "):
        LexicalSupport(threshold)


def test_analyse_claims_hand_computed() -> None:
    response = "Paris is the capital of France. It has ten million bridges. Lyon is in Spain."
    reference = "Paris is the capital of France. It lies on the Seine."
    contexts = [
        "Paris, the capital of France, lies on the river Seine.",  # supports both reference claims: relevant
        "Bridges: ten million.",  # supports no reference claim: irrelevant
        "Lyon is a city in France, not in Spain; Paris is the capital.",  # supports 'Paris is the capital of France.'
    ]
    analysis = analyse_claims(response, reference, contexts)
    assert analysis.response_claims == ("Paris is the capital of France.", "It has ten million bridges.",
                                        "Lyon is in Spain.")
    assert analysis.reference_claims == ("Paris is the capital of France.", "It lies on the Seine.")
    assert analysis.response_in_reference == (True, False, False)
    assert analysis.reference_in_response == (True, False)
    # {lyon, spain} are both in the third context: supported, though it says the opposite (the rule's blind spot).
    assert analysis.response_in_contexts == ((True, False, True), (False, True, False), (False, False, True))
    assert analysis.reference_in_contexts == ((True, False, True), (True, False, False))
    assert analysis.relevant_contexts == (True, False, True)
    assert analysis.claim_recall == 0.5
    assert analysis.claim_precision == 1 / 3
    assert analysis.claim_f1 == pytest.approx(2 * 0.5 / 3 / (0.5 + 1 / 3), abs=1e-15)
    assert analysis.faithfulness == 1.0
    assert analysis.context_utilization == 0.5  # both reference claims are in a context; the response has one
    assert analysis.noise_sensitivity_in_relevant == 1 / 3  # Lyon: wrong, from a relevant context
    assert analysis.noise_sensitivity_in_irrelevant == 1 / 3  # the bridges: wrong, only from the irrelevant one
    assert analysis.hallucination == 0.0
    assert [analysis.metric(name) for name in CLAIM_METRICS] == [
        analysis.claim_recall, analysis.claim_precision, analysis.claim_f1, analysis.faithfulness,
        analysis.context_utilization, analysis.noise_sensitivity_in_relevant,
        analysis.noise_sensitivity_in_irrelevant, analysis.hallucination,
    ]
    with pytest.raises(ValueError, match=r"^unknown claim metric 'bleu'; the claim metrics are \['claim_recall', "):
        analysis.metric("bleu")


def test_analyse_claims_edge_cases() -> None:
    empty = analyse_claims("", "Paris is the capital.", ["Paris is the capital."])
    # An empty answer recalls nothing; the response-side metrics have no claim to count.
    assert (empty.claim_recall, empty.claim_f1, empty.claim_precision, empty.faithfulness) == (0.0, 0.0, None, None)
    assert empty.context_utilization == 0.0
    assert (empty.noise_sensitivity_in_relevant, empty.hallucination) == (None, None)

    no_reference = analyse_claims("Paris is the capital.", None, ["Paris is the capital."])
    assert (no_reference.faithfulness, no_reference.claim_recall, no_reference.claim_precision) == (1.0, None, None)
    assert (no_reference.context_utilization, no_reference.hallucination) == (None, None)

    empty_reference = analyse_claims("Paris.", "", [])
    assert (empty_reference.claim_recall, empty_reference.claim_precision) == (None, 0.0)

    nothing_retrieved = analyse_claims("Paris is big.", "Paris is big.", [])
    assert (nothing_retrieved.faithfulness, nothing_retrieved.context_utilization) == (0.0, None)
    assert nothing_retrieved.hallucination == 0.0  # the reference supports it
    assert nothing_retrieved.relevant_contexts == ()

    with pytest.raises(TypeError, match=r"^'response' must be a str \(got NoneType\)$"):
        analyse_claims(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'retrieved_contexts' must be a list of str \(got str\)$"):
        analyse_claims("x", "x", "one passage")


def test_analyse_claims_in_other_scripts() -> None:
    ja = analyse_claims("東京は日本の首都です。大阪は大きい。", "東京は首都です。", ["日本の首都は東京です。"])
    # reference claim 東京は首都です。: words 東 京 は 首 都 で す, all in the first response sentence.
    # response claims: the first holds 東京は首都です's 7 words of its 10 (of 東京は日本の首都です: 9 distinct... )
    assert ja.response_claims == ("東京は日本の首都です。", "大阪は大きい。")
    assert ja.reference_in_response == (True,)
    # 東京は日本の首都です: distinct words {東 京 は 日 本 の 首 都 で す} = 10; in the reference: 7 -> 0.7 >= 0.5.
    # 大阪は大きい: {大 阪 は き い} = 5; in the reference only は -> 0.2.
    assert ja.response_in_reference == (True, False)
    assert (ja.claim_recall, ja.claim_precision, ja.faithfulness) == (1.0, 0.5, 0.5)

    ru = analyse_claims("Москва — столица России. Она основана в 1147 году.", "Москва — столица России.",
                        ["Столица России — Москва."])
    assert (ru.claim_recall, ru.claim_precision, ru.faithfulness) == (1.0, 0.5, 0.5)


def test_analyse_claims_with_very_long_contexts() -> None:
    filler = " ".join(f"token{i}" for i in range(50_000))  # ~450,000 characters
    contexts = [filler + " Paris is the capital of France.", filler]
    analysis = analyse_claims("Paris is the capital of France.", "The capital of France is Paris.", contexts)
    assert analysis.response_in_contexts == ((True, False),)
    assert (analysis.faithfulness, analysis.context_utilization) == (1.0, 1.0)
    assert analysis.relevant_contexts == (True, False)
    # A long context holds many words: a claim made of its words is "supported" wherever they stand.
    assert analyse_claims("token7 token9000 token49999.", None, contexts).faithfulness == 1.0


# --- through evaluate_rag -------------------------------------------------------------------------

SAMPLES: list[dict[str, Any]] = [
    {"user_input": "Capital of France?", "response": "Paris is the capital of France.",
     "reference": "The capital of France is Paris.", "retrieved_contexts": ["Paris is France's capital."]},
    {"user_input": "Who wrote 1984?", "response": "It was Aldous Huxley.", "reference": "George Orwell wrote it.",
     "retrieved_contexts": ["Nineteen Eighty-Four is a novel by George Orwell."]},
    {"user_input": "Empty answer", "response": "", "reference": "Something is here.", "retrieved_contexts": []},
    {"user_input": "No reference", "response": "Water boils at 100 degrees.",
     "retrieved_contexts": ["At sea level water boils at 100 degrees Celsius."]},
]


def test_evaluate_rag_claim_metrics_hand_computed() -> None:
    names = [name for name in RAG_MEASURES if name in CLAIM_METRICS]
    report = evaluate_rag(SAMPLES, metrics=names)
    # recall over the 3 references: 1 (paris, capital, france), 0 (george orwell wrote: none), 0 (empty answer).
    # precision over 2 answers with a reference and a sentence: 1, 0 ({aldous, huxley} not in the reference).
    # faithfulness over the 3 answers with a sentence: 1 ({paris, capital, france}: 'france' of "France's"),
    # 0, 1 (water, boils, 100, degrees).
    # context_utilization: sample 1 (its reference claim is in the context and the answer) and sample 2
    # ({george, orwell} of {george, orwell, wrote}: 2/3 in the context, not in the answer): (1 + 0) / 2.
    # noise: the Huxley claim is wrong and in no context; hallucination: it, 1 of 2 answers -> 1/2.
    assert report.metrics == {
        "claim_recall": 1 / 3, "claim_precision": 0.5, "claim_f1": 1 / 3, "faithfulness": 2 / 3,
        "context_utilization": 0.5, "noise_sensitivity_in_relevant": 0.0, "noise_sensitivity_in_irrelevant": 0.0,
        "hallucination": 0.5,
    }
    assert report.coverage == {
        "claim_recall": 3, "claim_precision": 2, "claim_f1": 3, "faithfulness": 3, "context_utilization": 2,
        "noise_sensitivity_in_relevant": 2, "noise_sensitivity_in_irrelevant": 2, "hallucination": 2,
    }
    # The same through a judge object, on the path a checker model takes.
    assert evaluate_rag(SAMPLES, metrics=names, checker=LexicalSupport()).to_dict() == report.to_dict()
    stricter = evaluate_rag(SAMPLES, metrics=["claim_recall"], checker=LexicalSupport(1.0))
    assert stricter.metrics == {"claim_recall": 1 / 3}


def test_evaluate_rag_answer_metrics() -> None:
    report = evaluate_rag(SAMPLES, metrics=["answer_contains", "rouge_l", "chrf"])
    assert report.coverage == {"answer_contains": 3, "rouge_l": 3, "chrf": 3}
    assert report.metrics["answer_contains"] == 0.0
    # LCS 'the capital of france' 4 of 6 and 6; 'it' 1 of 4 and 4; the empty answer 0.
    assert report.metrics["rouge_l"] == pytest.approx((2 / 3 + 1 / 4 + 0) / 3, abs=1e-15)


def test_evaluate_rag_rejects_a_bad_checker(tmp_path: Any) -> None:
    with pytest.raises(TypeError, match=r"^'checker' must be a local model directory \(str or path\), a Checker"):
        evaluate_rag(SAMPLES, metrics=["faithfulness"], checker=0.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^'checker' must be a local model directory \(got '.*nope': no such"):
        evaluate_rag(SAMPLES, metrics=["faithfulness"], checker=str(tmp_path / "nope"))
    with pytest.raises(ValueError, match=r"is not a model directory: it has no config.json"):
        evaluate_rag(SAMPLES, metrics=["faithfulness"], checker=tmp_path)


# --- as fastrag metrics ---------------------------------------------------------------------------


def test_fastrag_answer_metrics_match_the_kernels() -> None:
    from fastrag.benchmark import EvalSample, QueryOutcome
    from fastrag.benchmark.metrics import (
        METRICS,
        AnswerContains,
        ChrF,
        Faithfulness,
        Hallucination,
        RougeL,
        parse_metric,
    )
    from fastrag.documents import Chunk

    sample = EvalSample("q", "Capital of France?", reference_answer=SAMPLES[0]["reference"])
    outcome = QueryOutcome("q", "?", [Chunk("w", 0, SAMPLES[0]["retrieved_contexts"][0])],
                           answer=SAMPLES[0]["response"])
    def score(metric: Any) -> float | None:
        value: float | None = asyncio.run(metric.score(sample, outcome))
        return value

    assert score(AnswerContains()) == 0.0
    assert score(RougeL()) == pytest.approx(2 / 3, abs=1e-15)
    assert score(ChrF()) == chrf(SAMPLES[0]["response"], SAMPLES[0]["reference"])
    analysis = analyse_claims(SAMPLES[0]["response"], SAMPLES[0]["reference"], SAMPLES[0]["retrieved_contexts"])
    for name in CLAIM_METRICS:
        assert score(parse_metric(name)) == analysis.metric(name), name
        assert METRICS[name]().higher_is_better == (RAG_MEASURES[name].kind == "score")
        assert METRICS[name].needs_answer
    no_reference = EvalSample("q", "?")
    assert asyncio.run(Faithfulness().score(no_reference, outcome)) == 1.0  # needs no reference
    assert asyncio.run(Hallucination().score(no_reference, outcome)) is None
    assert asyncio.run(RougeL().score(no_reference, outcome)) is None
    assert asyncio.run(Faithfulness().score(sample, QueryOutcome("q", "?"))) is None  # no answer


_sentences_text = st.lists(
    st.sampled_from(["Paris is big.", "It rains!", "東京は首都です。", "Москва — столица.", "The the.", "e.g. x",
                     "\n", " ", "1.", "Is it?", "no stop", "…"]),
    max_size=8,
).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(_sentences_text, _sentences_text, st.lists(_sentences_text, max_size=3))
def test_claim_metrics_are_shares_and_a_text_supports_itself(
    response: str, reference: str, contexts: list[str]
) -> None:
    analysis = analyse_claims(response, reference, contexts)
    for name in CLAIM_METRICS:
        value = analysis.metric(name)
        assert value is None or 0.0 <= value <= 1.0, name
    same = analyse_claims(response, response, [response])
    if same.response_claims:  # every claim's words are in the text it came from
        assert (same.claim_recall, same.claim_precision, same.faithfulness) == (1.0, 1.0, 1.0)
        assert (same.hallucination, same.noise_sensitivity_in_relevant) == (0.0, 0.0)
