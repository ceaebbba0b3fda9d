"""RAG answer and context measures: pure functions of one sample's texts, no LLM, no numpy.

The answer measures (:func:`exact_match`, :func:`token_f1`) are the official SQuAD v1.1 script's,
with SQuAD v2's rule for empty answers, and :func:`answer_contains` is the "match" of RAG
benchmarks on the same normalization; the context measures (:func:`context_recall`,
:func:`context_precision`) are lexical proxies built on it too. ROUGE-L and chrF come from
:mod:`ef.measures.overlap`, the claim diagnostics (claim recall, faithfulness …) from
:mod:`ef.measures.claims`.
Two answers that are both empty (after normalization) score as each measure's reference
implementation scores them, so that a number can be checked against it: ``1.0`` for exact match,
token F1 and answer-contains (SQuAD v2's ``compute_exact`` / ``compute_f1``: an unanswerable
question answered with nothing is right), ``0.0`` for ROUGE-L and chrF (``rouge_score`` and
``sacrebleu`` give 0 when a side has no word or character: nothing in common to measure).

:data:`RAG_SCORERS` says, for each, how it scores a sample (a mapping of Ragas'
``SingleTurnSample`` fields) and which samples it applies to; the registry
(:data:`ef.measures.MEASURES`) holds them as its ``origin="rag"`` entries.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ef.measures._text import check_contexts, check_str, normalize, squad_tokens
from ef.measures.claims import CLAIM_METRICS, lexical_analysis
from ef.measures.overlap import chrf, rouge_l

__all__ = [
    "RAG_SCORERS",
    "RagScorer",
    "answer_contains",
    "check_contexts",
    "chrf",
    "context_precision",
    "context_recall",
    "exact_match",
    "normalize",
    "rouge_l",
    "token_f1",
]

_tokens = squad_tokens
_check_str = check_str


def _reference_tokens(reference: str) -> set[str]:
    tokens = set(_tokens(_check_str(reference, "reference")))
    if not tokens:
        raise ValueError(
            f"'reference' has no tokens after normalization (got {reference!r}); a context metric "
            "needs at least one reference token to look for"
        )
    return tokens


# --- the metrics ----------------------------------------------------------------------------------


def exact_match(response: str, reference: str) -> float:
    """``1.0`` if `response` equals `reference` after normalization, else ``0.0``.

    Normalization is the official SQuAD v1.1 script's: lower case, ASCII punctuation removed,
    the articles *a*, *an*, *the* removed, white space collapsed. Two answers that both normalize
    to nothing match (SQuAD v2's rule for unanswerable questions; :func:`rouge_l` and :func:`chrf`
    score that pair ``0.0``, as ``rouge_score`` and ``sacrebleu`` do).

    Parameters
    ----------
    response
        The generated answer.
    reference
        The ground-truth answer.

    Returns
    -------
    float
        ``1.0`` or ``0.0``.

    Raises
    ------
    TypeError
        If either argument is not a ``str``.

    Examples
    --------
    >>> exact_match('The Eiffel Tower', 'eiffel tower')
    1.0
    >>> exact_match('Paris', 'London')
    0.0
    >>> exact_match('', 'the')  # both empty after normalization
    1.0
    """
    _check_str(response, "response")
    _check_str(reference, "reference")
    return 1.0 if normalize(response) == normalize(reference) else 0.0


def token_f1(response: str, reference: str) -> float:
    """Token-overlap F1 of `response` against `reference` (the SQuAD F1).

    The harmonic mean of token precision and recall over the normalized token bags — a graded
    credit where :func:`exact_match` is all-or-nothing. A token counts as often as it occurs in
    both bags. If either side normalizes to no tokens, the score is ``1.0`` when both do and
    ``0.0`` otherwise (SQuAD v2's ``compute_f1``; the v1.1 script gave ``0.0`` to both empty,
    :func:`rouge_l` and :func:`chrf` still do, as ``rouge_score`` and ``sacrebleu``).

    Parameters
    ----------
    response
        The generated answer; precision is measured over its tokens.
    reference
        The ground-truth answer; recall is measured over its tokens.

    Returns
    -------
    float
        A value in ``[0, 1]``.

    Raises
    ------
    TypeError
        If either argument is not a ``str``.

    Examples
    --------
    >>> token_f1('the quick brown fox', 'a quick brown fox')
    1.0
    >>> round(token_f1('quick brown fox', 'quick brown dog'), 4)
    0.6667
    >>> token_f1('', 'fox'), token_f1('.', 'the')  # one empty; both empty
    (0.0, 1.0)
    """
    response_tokens = _tokens(_check_str(response, "response"))
    reference_tokens = _tokens(_check_str(reference, "reference"))
    if not response_tokens or not reference_tokens:
        return 1.0 if response_tokens == reference_tokens else 0.0
    n_same = sum((Counter(response_tokens) & Counter(reference_tokens)).values())
    if n_same == 0:
        return 0.0
    precision = n_same / len(response_tokens)
    recall = n_same / len(reference_tokens)
    return 2 * precision * recall / (precision + recall)


def answer_contains(response: str, reference: str) -> float:
    """``1.0`` if the normalized `reference` occurs in the normalized `response` as whole words.

    The "match" (or "accuracy") that RAG benchmarks report for short answers (FlashRAG's
    ``acc``, KILT's answer-in-output): a long answer that states the reference somewhere gets
    credit that :func:`exact_match` denies it. Both sides are normalized as in
    :func:`exact_match` and compared as token sequences, so ``'Paris'`` is found in ``'It is
    Paris.'`` but ``'cat'`` is not found in ``'concatenate'`` (a plain substring test would find
    it). A reference that normalizes to nothing matches only a response that does too (SQuAD v2,
    as :func:`exact_match`).

    Parameters
    ----------
    response
        The generated answer.
    reference
        The ground-truth answer.

    Returns
    -------
    float
        ``1.0`` or ``0.0``.

    Raises
    ------
    TypeError
        If either argument is not a ``str``.

    Examples
    --------
    >>> answer_contains('It was written by George Orwell.', 'george orwell')
    1.0
    >>> answer_contains('Orwell, George', 'George Orwell')  # order matters
    0.0
    >>> answer_contains('concatenate', 'cat'), answer_contains('', 'the')
    (0.0, 1.0)
    """
    response_tokens = _tokens(_check_str(response, "response"))
    reference_tokens = _tokens(_check_str(reference, "reference"))
    if not reference_tokens:
        return 1.0 if not response_tokens else 0.0
    n = len(reference_tokens)
    for start in range(len(response_tokens) - n + 1):
        if response_tokens[start : start + n] == reference_tokens:
            return 1.0
    return 0.0


def context_recall(reference: str, retrieved_contexts: Sequence[str]) -> float:
    """Lexical recall of the `reference` tokens by the retrieved contexts.

    The fraction of the (normalized) reference's distinct tokens that appear anywhere in
    `retrieved_contexts` — a deterministic *proxy* for "did retrieval surface the information
    the answer needs". Tokens are compared whole, after the normalization of
    :func:`exact_match`. For the LLM-judged context recall, use :func:`as_ragas_dataset` and
    Ragas.

    Parameters
    ----------
    reference
        The ground-truth answer.
    retrieved_contexts
        The retrieved passages. An empty list recalls nothing: ``0.0``.

    Returns
    -------
    float
        A value in ``[0, 1]``.

    Raises
    ------
    ValueError
        If `reference` has no token after normalization (``''``, ``'the'``, ``'?'``): there is
        nothing to recall, and neither ``0.0`` nor ``1.0`` would be a measurement.
        :func:`evaluate_rag` skips such samples for this metric.
    TypeError
        If `reference` is not a ``str`` or `retrieved_contexts` not a list of ``str``.

    Examples
    --------
    >>> context_recall('paris france', ['Paris is the capital of France.'])
    1.0
    >>> context_recall('paris france', ['London is in England.'])
    0.0
    >>> context_recall('paris france', ['I love Paris.', 'nothing else'])
    0.5
    >>> context_recall('paris', [])  # nothing retrieved
    0.0
    """
    wanted = _reference_tokens(reference)
    found: set[str] = set()
    for context in check_contexts(retrieved_contexts, "'retrieved_contexts'"):
        found.update(_tokens(context))
    return len(wanted & found) / len(wanted)


def context_precision(reference: str, retrieved_contexts: Sequence[str]) -> float:
    """Fraction of the retrieved contexts that lexically overlap the `reference`.

    A deterministic *proxy* for retrieval precision — a context counts as useful if it shares at
    least one (normalized) token with the reference answer. Articles are dropped by the
    normalization but other function words are not, so a reference such as ``'city of light'``
    also matches any context containing ``of``.

    Parameters
    ----------
    reference
        The ground-truth answer.
    retrieved_contexts
        The retrieved passages. An empty list scores ``0.0`` (not NaN): a retriever that returned
        nothing gets no credit; ``non_empty_rate`` in :func:`evaluate_rag` tells these apart.

    Returns
    -------
    float
        A value in ``[0, 1]``.

    Raises
    ------
    ValueError
        If `reference` has no token after normalization; see :func:`context_recall`.
    TypeError
        If `reference` is not a ``str`` or `retrieved_contexts` not a list of ``str``.

    Examples
    --------
    >>> context_precision('paris', ['Paris is in France.', 'Unrelated text.'])
    0.5
    >>> context_precision('paris', [])  # nothing retrieved
    0.0
    """
    wanted = _reference_tokens(reference)
    contexts = check_contexts(retrieved_contexts, "'retrieved_contexts'")
    if not contexts:
        return 0.0
    useful = sum(1 for context in contexts if not wanted.isdisjoint(_tokens(context)))
    return useful / len(contexts)


# --- how each measure scores a sample -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RagScorer:
    """How a RAG measure scores one sample, and which samples it applies to.

    Parameters
    ----------
    name
        The measure's name (``"exact_match"`` …).
    description
        One line, for ``ef rag --help`` and the docs.
    score
        ``score(sample)``: the measure of one sample (a mapping of ``SingleTurnSample`` fields).
    needs
        The fields a sample must carry (not ``None``) to be scored.
    applies
        A further condition a sample must meet, if any.
    kind
        ``"score"`` (higher is better) or ``"loss"`` (lower is better: the noise sensitivities
        and hallucination).
    """

    name: str
    description: str
    score: Callable[[Mapping[str, Any]], float]
    needs: tuple[str, ...]
    applies: Callable[[Mapping[str, Any]], bool] | None = None
    kind: Literal["score", "loss"] = "score"


def _has_reference_tokens(sample: Mapping[str, Any]) -> bool:
    return bool(_tokens(sample["reference"]))


def _contexts(sample: Mapping[str, Any]) -> Sequence[str]:
    # Absent or None retrieved_contexts: not known. The measures that read contexts need the field (a
    # sample without it is left out, as Ragas and DeepEval refuse it); the claim measures that do not
    # read them score it with no context, and non_empty_rate (the spec's share of the samples that
    # retrieved any context, over every sample) as retrieving none.
    contexts = sample.get("retrieved_contexts")
    return [] if contexts is None else contexts


def _claim_value(sample: Mapping[str, Any], name: str) -> float | None:
    analysis = lexical_analysis(sample["response"], sample.get("reference"), tuple(_contexts(sample)))
    return analysis.metric(name)


def _claim_scorer(name: str, description: str, needs: tuple[str, ...]) -> RagScorer:
    def score(sample: Mapping[str, Any]) -> float:
        value = _claim_value(sample, name)
        if value is None:
            raise ValueError(f"{name} is not defined for this sample (no claim to count)")
        return value

    def applies(sample: Mapping[str, Any]) -> bool:
        return _claim_value(sample, name) is not None

    kind: Literal["score", "loss"] = (
        "loss" if name.startswith("noise_sensitivity") or name == "hallucination" else "score"
    )
    return RagScorer(name, description, score, needs=needs, applies=applies, kind=kind)


_CLAIM_DESCRIPTIONS = {
    "claim_recall": "share of the reference's sentences the response supports (lexical rule)",
    "claim_precision": "share of the response's sentences the reference supports (lexical rule)",
    "claim_f1": "harmonic mean of claim_precision and claim_recall",
    "faithfulness": "share of the response's sentences some retrieved context supports (lexical rule)",
    "context_utilization": "of the reference sentences some context supports, the share the response supports",
    "noise_sensitivity_in_relevant": "share of response sentences the reference does not support but a "
    "relevant context does (lower is better)",
    "noise_sensitivity_in_irrelevant": "share of response sentences the reference does not support, "
    "supported only by irrelevant contexts (lower is better)",
    "hallucination": "share of response sentences neither the reference nor any context supports "
    "(lower is better)",
}


RAG_SCORERS: tuple[RagScorer, ...] = (
    RagScorer(
        "exact_match",
        "response equals reference after SQuAD normalization",
        lambda s: exact_match(s["response"], s["reference"]),
        needs=("response", "reference"),
    ),
    RagScorer(
        "token_f1",
        "SQuAD token-overlap F1 of response against reference",
        lambda s: token_f1(s["response"], s["reference"]),
        needs=("response", "reference"),
    ),
    RagScorer(
        "answer_contains",
        "response contains the reference's words in order, after SQuAD normalization",
        lambda s: answer_contains(s["response"], s["reference"]),
        needs=("response", "reference"),
    ),
    RagScorer(
        "rouge_l",
        "ROUGE-L F-measure (longest common word subsequence) of response against reference",
        lambda s: rouge_l(s["response"], s["reference"]),
        needs=("response", "reference"),
    ),
    RagScorer(
        "chrf",
        "chrF (character 6-gram F-beta, beta 2, as sacreBLEU) of response against reference",
        lambda s: chrf(s["response"], s["reference"]),
        needs=("response", "reference"),
    ),
    *(
        _claim_scorer(
            name,
            _CLAIM_DESCRIPTIONS[name],
            ("response", "reference") if name.startswith("claim_") else
            ("response", "retrieved_contexts") if name == "faithfulness" else
            ("response", "reference", "retrieved_contexts"),
        )
        for name in CLAIM_METRICS
    ),
    RagScorer(
        "context_recall",
        "share of the reference's distinct tokens found in the retrieved contexts",
        lambda s: context_recall(s["reference"], _contexts(s)),
        needs=("reference", "retrieved_contexts"),
        applies=_has_reference_tokens,
    ),
    RagScorer(
        "context_precision",
        "share of retrieved contexts sharing a token with the reference",
        lambda s: context_precision(s["reference"], _contexts(s)),
        needs=("reference", "retrieved_contexts"),
        applies=_has_reference_tokens,
    ),
    RagScorer(
        "non_empty_rate",
        "share of samples that retrieved at least one context",
        lambda s: 1.0 if _contexts(s) else 0.0,
        needs=(),
    ),
)
"""The RAG measures, in the order :func:`~ef.evaluation.evaluate_rag` reports them."""
