"""Claim-level answer diagnostics in RAGChecker's vocabulary, computed without a model.

RAGChecker (Ru et al., NeurIPS 2024) splits the response and the reference answer into claims and
asks an LLM which claims each text entails. Here a claim is a sentence (:func:`ef.measures._text.sentences`)
and "supported" is a documented lexical rule, :class:`LexicalSupport`; a local NLI or
fact-checking model can take its place (:mod:`ef.measures.checker`). :func:`analyse_claims` records,
for one sample, which claim is supported by which text; :class:`ClaimAnalysis` turns that into the
metrics:

==============================  ==============================================================
``claim_recall``                reference claims the response supports
``claim_precision``             response claims the reference supports
``claim_f1``                    their harmonic mean (RAGChecker's overall F1)
``faithfulness``                response claims some retrieved context supports
``context_utilization``         of the reference claims some context supports, those the
                                response supports too
``noise_sensitivity_in_relevant``    response claims the reference does not support but a
                                relevant context does (one that supports a reference claim)
``noise_sensitivity_in_irrelevant``  response claims the reference does not support, supported
                                only by irrelevant contexts (none relevant)
``hallucination``               response claims neither the reference nor any context supports
==============================  ==============================================================

What the lexical rule misses: it reads words, not meaning. A claim that repeats the reference's
words but negates them ("X is not Y") or swaps who did what is "supported"; a correct paraphrase
in other words is not. Long passages contain many words, so a context supports more claims the
longer it is. English stop words are ignored; other languages count every word.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ef.measures._text import check_contexts, check_str, sentences, words

__all__ = [
    "CLAIM_METRICS",
    "SUPPORT_THRESHOLD",
    "ClaimAnalysis",
    "LexicalSupport",
    "SupportJudge",
    "analyse_claims",
    "claim_support",
    "content_words",
    "lexical_analysis",
]

SUPPORT_THRESHOLD = 0.5
"""The share of a claim's content words a text must contain to support it (see :func:`claim_support`).

Chosen on the development half of RAGChecker's meta-evaluation set (``benchmarks/bench_rag_agreement.py``,
docs/rag-and-beir.md): of 0.3-0.8 in steps of 0.1, 0.5 gave claim F1 and claim precision their highest
Pearson correlation with the annotators' overall and correctness labels (claim recall peaked at 0.4,
56.3 against 52.4 at 0.5 for completeness); one threshold serves all the claim metrics."""

# Function words carry no claim: "the capital of France is Paris" is supported by "Paris, capital
# of France" without "the", "of", "is". English only; other languages count every word.
_STOP_WORD_TEXT = """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself nor of off on once only or other our ours ourselves out over own same she should so
    some such than that the their theirs them themselves then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t"""
_STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())


def content_words(text: str) -> frozenset[str]:
    """The distinct words of `text` that are not English stop words; all its words if every one is.

    >>> sorted(content_words('The capital of France is Paris.'))
    ['capital', 'france', 'paris']
    >>> sorted(content_words('It is what it is.'))  # only stop words: keep them
    ['is', 'it', 'what']
    """
    all_words = frozenset(words(text))
    content = all_words - _STOP_WORDS
    return content if content else all_words


def claim_support(claim: str, text: str) -> float:
    """The share of the claim's content words (:func:`content_words`) that occur in `text`.

    The lexical rule behind "supported": a text supports a claim when this is at least the
    threshold (:data:`SUPPORT_THRESHOLD` unless chosen). Words are compared whole, lower-cased
    (:func:`ef.measures._text.words`), so ``"Paris"`` matches ``"paris,"`` but not ``"Parisian"``.
    A claim without any word is supported by nothing: ``0.0``.

    >>> claim_support('Paris is the capital of France.', 'France: capital city Paris')
    1.0
    >>> claim_support('Paris is the capital of Spain.', 'France: capital city Paris')
    0.6666666666666666
    """
    claim_words = content_words(check_str(claim, "claim"))
    if not claim_words:
        return 0.0
    return len(claim_words & frozenset(words(check_str(text, "text")))) / len(claim_words)


class SupportJudge(Protocol):
    """What decides whether a text supports a claim: :class:`LexicalSupport` or a local model."""

    def supported(self, claims: Sequence[str], texts: Sequence[str]) -> list[list[bool]]:
        """``result[i][j]``: whether ``texts[j]`` supports ``claims[i]``."""
        ...


@dataclass(frozen=True, slots=True)
class LexicalSupport:
    """A text supports a claim when it holds at least `threshold` of the claim's content words.

    Parameters
    ----------
    threshold
        In ``(0, 1]``; :data:`SUPPORT_THRESHOLD` by default.

    >>> LexicalSupport(0.5).supported(['Paris is in France.'], ['Paris, France', 'Rome, Italy'])
    [[True, False]]
    """

    threshold: float = SUPPORT_THRESHOLD

    def __post_init__(self) -> None:
        value = self.threshold
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            raise ValueError(f"'threshold' must be a number in (0, 1] (got {value!r})")

    def supported(self, claims: Sequence[str], texts: Sequence[str]) -> list[list[bool]]:
        """Each claim against each text; every text's words are read once.

        Raises
        ------
        TypeError
            If `claims` or `texts` is not a list of ``str`` (a str's characters were read as claims).
        """
        check_contexts(claims, "'claims'")
        text_words = [frozenset(words(text)) for text in check_contexts(texts, "'texts'")]
        out = []
        for claim in claims:
            wanted = content_words(claim)
            need = self.threshold * len(wanted)
            # A claim without words is supported by nothing.
            out.append([bool(wanted) and len(wanted & have) >= need - 1e-9 for have in text_words])
        return out


def _check_flags(flags: Sequence[object], where: str) -> None:
    """Each flag a bool (numpy's too): a judge's "no" is truthy, and was counted as supported."""
    for j, flag in enumerate(flags):
        if not isinstance(flag, bool) and type(flag).__name__ not in ("bool_", "bool"):
            raise TypeError(f"{where}[{j}] must be a bool (got {flag!r:.80})")


def _mean(flags: Sequence[bool]) -> float:
    return math.fsum(1.0 for flag in flags if flag) / len(flags)


@dataclass(frozen=True, slots=True)
class ClaimAnalysis:
    """Which claim is supported by which text, for one sample; the claim metrics as properties.

    A metric is ``None`` where it is not defined: the response-side metrics when the response has
    no claim, the reference-side ones when the reference has none (or was not given),
    ``context_utilization`` when no context supports a reference claim.

    Parameters
    ----------
    response_claims, reference_claims
        The sentences of the response and of the reference (empty without a reference).
    response_in_reference
        Per response claim: supported by the reference (empty without a reference).
    reference_in_response
        Per reference claim: supported by the response.
    response_in_contexts, reference_in_contexts
        Per claim, per retrieved context: supported by that context.
    """

    response_claims: tuple[str, ...]
    reference_claims: tuple[str, ...]
    response_in_reference: tuple[bool, ...]
    reference_in_response: tuple[bool, ...]
    response_in_contexts: tuple[tuple[bool, ...], ...]
    reference_in_contexts: tuple[tuple[bool, ...], ...]
    has_reference: bool = True

    def __post_init__(self) -> None:
        # One flag per claim (and per context): a row too short or too long divided by zero or
        # failed inside zip() in a metric, long after the analysis was made.
        n_response, n_reference = len(self.response_claims), len(self.reference_claims)
        rows = self.response_in_contexts or self.reference_in_contexts
        n_contexts = len(rows[0]) if rows else 0
        expected = (
            ("response_in_reference", self.response_in_reference, n_response if self.has_reference else 0),
            ("reference_in_response", self.reference_in_response, n_reference),
            ("response_in_contexts", self.response_in_contexts, n_response),
            ("reference_in_contexts", self.reference_in_contexts, n_reference),
        )
        for name, flags, n in expected:
            if len(flags) != n:
                raise ValueError(f"{name!r} must hold {n} entries, one per claim (got {len(flags)})")
        for name, table in (("response_in_contexts", self.response_in_contexts),
                            ("reference_in_contexts", self.reference_in_contexts)):
            for i, row in enumerate(table):
                if len(row) != n_contexts:
                    raise ValueError(f"{name!r}[{i}] must hold {n_contexts} flags, one per context (got {len(row)})")
                _check_flags(row, f"{name!r}[{i}]")
        _check_flags(self.response_in_reference, "'response_in_reference'")
        _check_flags(self.reference_in_response, "'reference_in_response'")

    @property
    def relevant_contexts(self) -> tuple[bool, ...]:
        """Per context: does it support at least one reference claim."""
        n_contexts = len(self.response_in_contexts[0]) if self.response_in_contexts else (
            len(self.reference_in_contexts[0]) if self.reference_in_contexts else 0
        )
        return tuple(any(row[j] for row in self.reference_in_contexts) for j in range(n_contexts))

    @property
    def claim_recall(self) -> float | None:
        """Share of the reference claims the response supports."""
        return _mean(self.reference_in_response) if self.reference_claims else None

    @property
    def claim_precision(self) -> float | None:
        """Share of the response claims the reference supports."""
        if not self.has_reference or not self.response_claims:
            return None
        return _mean(self.response_in_reference)

    @property
    def claim_f1(self) -> float | None:
        """Harmonic mean of claim precision and recall; ``0.0`` for a response without claims."""
        recall = self.claim_recall
        if recall is None:
            return None
        precision = self.claim_precision
        if precision is None or precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    @property
    def faithfulness(self) -> float | None:
        """Share of the response claims at least one retrieved context supports."""
        if not self.response_claims:
            return None
        return _mean([any(row) for row in self.response_in_contexts])

    @property
    def context_utilization(self) -> float | None:
        """Of the reference claims some context supports, the share the response supports too."""
        in_context = [i for i, row in enumerate(self.reference_in_contexts) if any(row)]
        if not in_context:
            return None
        return _mean([self.reference_in_response[i] for i in in_context])

    def _noise(self, relevant: bool) -> float | None:
        if not self.has_reference or not self.response_claims:
            return None
        flags = self.relevant_contexts
        out = []
        for correct, row in zip(self.response_in_reference, self.response_in_contexts, strict=True):
            in_relevant = any(s and r for s, r in zip(row, flags, strict=True))
            in_irrelevant = any(s and not r for s, r in zip(row, flags, strict=True))
            out.append(not correct and (in_relevant if relevant else in_irrelevant and not in_relevant))
        return _mean(out)

    @property
    def noise_sensitivity_in_relevant(self) -> float | None:
        """Share of response claims that are wrong (the reference does not support them) and that
        a relevant context supports."""
        return self._noise(True)

    @property
    def noise_sensitivity_in_irrelevant(self) -> float | None:
        """Share of response claims that are wrong and that only irrelevant contexts support."""
        return self._noise(False)

    @property
    def hallucination(self) -> float | None:
        """Share of response claims that neither the reference nor any context supports."""
        if not self.has_reference or not self.response_claims:
            return None
        return _mean([not c and not any(row) for c, row in
                      zip(self.response_in_reference, self.response_in_contexts, strict=True)])

    def metric(self, name: str) -> float | None:
        """The metric called `name` (one of :data:`CLAIM_METRICS`)."""
        if name not in CLAIM_METRICS:
            raise ValueError(f"unknown claim metric {name!r}; the claim metrics are {list(CLAIM_METRICS)}")
        value: float | None = getattr(self, name)
        return value


CLAIM_METRICS: tuple[str, ...] = (
    "claim_recall",
    "claim_precision",
    "claim_f1",
    "faithfulness",
    "context_utilization",
    "noise_sensitivity_in_relevant",
    "noise_sensitivity_in_irrelevant",
    "hallucination",
)
"""The metrics of :class:`ClaimAnalysis`, in the order reports list them."""


def analyse_claims(
    response: str,
    reference: str | None,
    retrieved_contexts: Sequence[str] = (),
    *,
    judge: SupportJudge | None = None,
) -> ClaimAnalysis:
    """Split response and reference into claims and record which text supports which claim.

    Parameters
    ----------
    response
        The generated answer.
    reference
        The ground-truth answer, or ``None``: then only ``faithfulness`` is defined.
    retrieved_contexts
        The retrieved passages; each is judged on its own, as in RAGChecker.
    judge
        What "supported" means: :class:`LexicalSupport` at :data:`SUPPORT_THRESHOLD` by
        default, or a :class:`~ef.measures.checker.Checker` built on a local model.

    Returns
    -------
    ClaimAnalysis

    Raises
    ------
    TypeError
        If `response` or `reference` is not a ``str`` or `retrieved_contexts` not a list of ``str``.

    Examples
    --------
    >>> analysis = analyse_claims(
    ...     'Paris is the capital of France. It has ten million bridges.',
    ...     'Paris is the capital of France. It lies on the Seine.',
    ...     ['Paris, the capital of France, lies on the river Seine.', 'Bridges: ten million.'])
    >>> analysis.claim_recall, analysis.claim_precision, analysis.faithfulness
    (0.5, 0.5, 1.0)
    >>> analysis.relevant_contexts, analysis.noise_sensitivity_in_irrelevant
    ((True, False), 0.5)
    """
    response_claims = tuple(sentences(check_str(response, "response")))
    has_reference = reference is not None
    reference_claims = tuple(sentences(check_str(reference, "reference"))) if reference is not None else ()
    contexts = list(check_contexts(retrieved_contexts, "'retrieved_contexts'"))
    if judge is None:
        judge = LexicalSupport()
    if not callable(getattr(judge, "supported", None)):
        raise TypeError(
            f"'judge' must have a supported(claims, texts) method, as LexicalSupport and ef.measures.checker's "
            f"Checker do (got {type(judge).__name__})"
        )
    response_texts = [*contexts, *([reference] if reference is not None else [])]
    response_in = _judged(judge, response_claims, response_texts)
    reference_in = _judged(judge, reference_claims, [*contexts, response])
    n = len(contexts)
    return ClaimAnalysis(
        response_claims=response_claims,
        reference_claims=reference_claims,
        response_in_reference=tuple(row[n] for row in response_in) if has_reference else (),
        reference_in_response=tuple(row[n] for row in reference_in),
        response_in_contexts=tuple(tuple(row[:n]) for row in response_in),
        reference_in_contexts=tuple(tuple(row[:n]) for row in reference_in),
        has_reference=has_reference,
    )


def _judged(judge: SupportJudge, claims: Sequence[str], texts: Sequence[str]) -> list[list[bool]]:
    """The judge's verdicts, one row per claim and one flag per text, or the error naming the judge
    (a row too short was an IndexError here, a "no" counted as supported)."""
    verdicts: object = _listed(judge.supported(claims, texts))
    if not isinstance(verdicts, Sequence) or isinstance(verdicts, str) or len(verdicts) != len(claims):
        shown = len(verdicts) if isinstance(verdicts, Sequence) else type(verdicts).__name__
        raise ValueError(f"the judge must return one row per claim ({len(claims)}) (got {shown})")
    rows: list[list[bool]] = []
    for i, given in enumerate(verdicts):
        row = _listed(given)
        if not isinstance(row, Sequence) or isinstance(row, str) or len(row) != len(texts):
            shown = len(row) if isinstance(row, Sequence) else type(row).__name__
            raise ValueError(f"the judge's row {i} must hold one flag per text ({len(texts)}) (got {shown})")
        _check_flags(row, f"the judge's flags[{i}]")
        rows.append([bool(flag) for flag in row])
    return rows


def _listed(value: object) -> object:
    """A numpy array (a model judge's ``probabilities > 0.5``) as the nested list it stands for: it is
    no Sequence, and was refused as "not one row per claim" (its numbers are checked as flags after)."""
    if type(value).__module__ == "numpy" and type(value).__name__ == "ndarray":
        return value.tolist()  # type: ignore[attr-defined]
    return value


def lexical_analysis(response: str, reference: str | None, contexts: Sequence[str]) -> ClaimAnalysis:
    """:func:`analyse_claims` with the default judge, remembered: the claim measures of one sample
    share one analysis. `contexts` may be any list of str (a list could not be remembered before)."""
    return _lexical_analysis(response, reference, tuple(check_contexts(contexts, "'contexts'")))


@functools.lru_cache(maxsize=32)
def _lexical_analysis(response: str, reference: str | None, contexts: tuple[str, ...]) -> ClaimAnalysis:
    return analyse_claims(response, reference, contexts)
