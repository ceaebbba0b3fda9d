"""RAG answer and context measures: pure functions of one sample's texts, no LLM, no numpy.

The answer measures (:func:`exact_match`, :func:`token_f1`) are the official SQuAD v1.1 script's,
with SQuAD v2's rule for empty answers; the context measures (:func:`context_recall`,
:func:`context_precision`) are lexical proxies built on the same normalization.
:data:`RAG_SCORERS` says, for each, how it scores a sample (a mapping of Ragas'
``SingleTurnSample`` fields) and which samples it applies to; the registry
(:data:`ef.measures.MEASURES`) holds them as its ``origin="rag"`` entries.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RAG_SCORERS",
    "RagScorer",
    "check_contexts",
    "context_precision",
    "context_recall",
    "exact_match",
    "normalize",
    "token_f1",
]


# --- normalization: the official SQuAD v1.1 evaluation script ------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


def normalize(text: str) -> str:
    """Lower case, drop ASCII punctuation and the articles a/an/the, collapse white space.

    The exact order of SQuAD v1.1's ``normalize_answer``: punctuation goes before articles, so
    ``"the-end"`` becomes ``"theend"`` and keeps its letters.

    >>> normalize('  The Eiffel-Tower, a landmark!')
    'eiffeltower landmark'
    """
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _tokens(text: str) -> list[str]:
    return normalize(text).split()


def _check_str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be a str (got {type(value).__name__})")
    return value


def check_contexts(value: object, label: str) -> Sequence[str]:
    """Check a list of passages; `label` is how errors name it (``'retrieved_contexts'``)."""
    # A bare str is a sequence too: iterating it would score single characters as contexts.
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise TypeError(f"{label} must be a list of str (got {type(value).__name__})")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise TypeError(f"{label}[{i}] must be a str (got {type(item).__name__})")
    return value


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
    to nothing match (SQuAD v2's rule for unanswerable questions).

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
    ``0.0`` otherwise (SQuAD v2).

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
    """

    name: str
    description: str
    score: Callable[[Mapping[str, Any]], float]
    needs: tuple[str, ...]
    applies: Callable[[Mapping[str, Any]], bool] | None = None


def _has_reference_tokens(sample: Mapping[str, Any]) -> bool:
    return bool(_tokens(sample["reference"]))


def _contexts(sample: Mapping[str, Any]) -> Sequence[str]:
    # Absent or None retrieved_contexts: nothing was retrieved.
    contexts = sample.get("retrieved_contexts")
    return [] if contexts is None else contexts


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
        "context_recall",
        "share of the reference's distinct tokens found in the retrieved contexts",
        lambda s: context_recall(s["reference"], _contexts(s)),
        needs=("reference",),
        applies=_has_reference_tokens,
    ),
    RagScorer(
        "context_precision",
        "share of retrieved contexts sharing a token with the reference",
        lambda s: context_precision(s["reference"], _contexts(s)),
        needs=("reference",),
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
