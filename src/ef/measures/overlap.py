"""Reference-overlap answer measures from summarization and translation: ROUGE-L and chrF.

Pure functions of two strings, no numpy. :func:`rouge_l` is ``rouge_score``'s ROUGE-L F-measure
on Unicode-aware words (:func:`ef.measures._text.words`: on ASCII text, exactly
``rouge_score.rouge_scorer.RougeScorer(['rougeL']).score(reference, response)``); :func:`chrf` is
sacreBLEU's sentence-level chrF (character 6-grams, beta 2, white space ignored), as a fraction.
The tests pin both against the installed ``rouge_score`` and ``sacrebleu``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ef.measures._text import check_str, words

__all__ = ["chrf", "lcs_length", "rouge_l"]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token lists.

    Bit-parallel (Allison and Dix 1986; Crochemore et al. 2001): one bit per token of `b` in a
    Python integer, one addition and a few bitwise operations per token of `a`, instead of the
    ``len(a) * len(b)`` cells of the dynamic-programming table; the tests check it against the table.

    >>> lcs_length(['a', 'b', 'c', 'd'], ['a', 'c', 'x', 'd'])
    3
    >>> lcs_length(list('ABCBDAB'), list('BDCABA'))
    4
    >>> lcs_length(None, ['a'])  # was 0: None has no common subsequence to measure
    Traceback (most recent call last):
    ...
    TypeError: 'a' must be a sequence of str tokens (got NoneType)
    """
    for name, tokens in (("a", a), ("b", b)):
        if not isinstance(tokens, Sequence):
            raise TypeError(f"{name!r} must be a sequence of str tokens (got {type(tokens).__name__})")
        wrong = [t for t in tokens if not isinstance(t, str)] if not isinstance(tokens, str) else []
        if wrong:  # a list token failed as unhashable, an int token compared as itself
            raise TypeError(f"{name!r} must hold str tokens (got {wrong[0]!r:.80})")
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(b)) - 1
    v = full
    for token in a:
        u = v & masks.get(token, 0)
        v = ((v + u) | (v - u)) & full
    # Each zero bit of v marks one token of b in the common subsequence.
    return len(b) - v.bit_count()


def rouge_l(response: str, reference: str) -> float:
    """ROUGE-L F-measure: the longest common subsequence of words, as F1 of its precision and recall.

    Precision is the LCS length over the response's words, recall over the reference's; words are
    :func:`ef.measures._text.words` (lower case, letters and digits, a CJK character alone). As in
    ``rouge_score``, no stemming, and ``0.0`` when either side has no word (two empty answers
    included, as ``rouge_score`` scores them: there is no sequence to have in common; the SQuAD
    measures, :func:`~ef.measures.answers.exact_match` and
    :func:`~ef.measures.answers.token_f1`, give that pair ``1.0``, as SQuAD v2 does).

    Parameters
    ----------
    response
        The generated answer.
    reference
        The ground-truth answer.

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
    >>> rouge_l('the cat sat on the mat', 'the cat lay on the mat')  # LCS 5 of 6 and 6
    0.8333333333333334
    >>> rouge_l('on the mat the cat', 'the cat on the mat')  # order matters: LCS 3
    0.6
    >>> rouge_l('東京は首都', '首都は東京')  # 5 words each, LCS 2 (東京)
    0.4
    >>> rouge_l('', '')
    0.0
    """
    response_words = words(check_str(response, "response"))
    reference_words = words(check_str(reference, "reference"))
    if not response_words or not reference_words:
        return 0.0
    common = lcs_length(reference_words, response_words)
    precision = common / len(response_words)
    recall = common / len(reference_words)
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


_CHAR_ORDER = 6
_BETA = 2.0


def _char_ngrams(text: str) -> list[Counter[str]]:
    line = "".join(text.split())
    return [Counter([line[i : i + n] for i in range(len(line) - n + 1)]) for n in range(1, _CHAR_ORDER + 1)]


def chrf(response: str, reference: str) -> float:
    """chrF: the F-beta (beta = 2) of character n-gram precision and recall, n = 1 to 6, in ``[0, 1]``.

    sacreBLEU's sentence chrF (``sacrebleu.sentence_chrf(response, [reference]).score / 100``):
    white space is removed, case kept; precision and recall are averaged over the n-gram orders
    that both texts have, then combined with recall weighted twice as much as precision. It reads
    characters, so it needs no tokenizer and works the same for every script. ``0.0`` when either
    side has no character besides white space, two empty answers included (sacreBLEU's
    ``sentence_chrf('', [''])`` is 0 too; the SQuAD measures give that pair ``1.0``).

    Parameters
    ----------
    response
        The generated answer (sacreBLEU's hypothesis).
    reference
        The ground-truth answer.

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
    >>> chrf('Paris', 'Paris')
    1.0
    >>> round(chrf('ab', 'abc'), 4)  # P = 1, R = (2/3 + 1/2) / 2 = 7/12: 5PR / (4P + R)
    0.6364
    >>> chrf('', 'Paris'), chrf('Paris', 'Rome'), chrf('', '')
    (0.0, 0.0, 0.0)
    """
    hyp = _char_ngrams(check_str(response, "response"))
    ref = _char_ngrams(check_str(reference, "reference"))
    factor = _BETA**2
    precision_sum = recall_sum = 0.0
    orders = 0
    for hyp_ngrams, ref_ngrams in zip(hyp, ref, strict=True):
        if not hyp_ngrams or not ref_ngrams:
            continue  # sacreBLEU's effective order: an order one side lacks is left out
        n_hyp = hyp_ngrams.total()
        n_ref = ref_ngrams.total()
        n_match = 0
        for gram, count in hyp_ngrams.items():
            other = ref_ngrams.get(gram)
            if other is not None:
                n_match += count if count < other else other
        precision_sum += n_match / n_hyp
        recall_sum += n_match / n_ref
        orders += 1
    if orders == 0:
        return 0.0
    precision = precision_sum / orders
    recall = recall_sum / orders
    if precision + recall == 0:
        return 0.0
    # sacreBLEU scores in percent and the fraction is its .score / 100 (Ragas' ChrfScore too): the
    # same two roundings make it that number to the last bit (without, 1 pair in 12 differed by an ulp).
    return 100 * ((1 + factor) * precision * recall / (factor * precision + recall)) / 100
