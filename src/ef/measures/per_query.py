"""Per-query ranking measures: pure functions of a ranked list and its judgements, no numpy.

Semantics are trec_eval's (and so pytrec_eval's and BEIR's): a document is *relevant* when its
grade is ``> 0``; a negative grade counts as unjudged; DCG uses the grade as a linear gain and a
``log2(rank + 1)`` discount; the ideal ranking places every judged relevant document, retrieved
or not. Each function validates its input and raises an exception naming the argument:
``TypeError`` for a value of the wrong type (an int or bytes doc id, a set as a ranking),
``ValueError`` for a wrong value (a cutoff below 1, a NaN grade, a doc id ranked twice). Every
function returns a Python ``float``, whatever numeric type the grades have.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence, Set

from ef._validate import check_positive_int, finite_float

__all__ = [
    "Qrels",
    "average_precision",
    "binary_ndcg_at_k",
    "check_ranking",
    "dcg_at_k",
    "hit_rate_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "precision_window",
    "recall_at_k",
    "reciprocal_rank",
]

Qrels = Mapping[str, Mapping[str, float]]
"""Graded relevance judgements — ``{query_id: {doc_id: relevance}}``.

A ``relevance`` of ``0`` means *judged non-relevant*; ``> 0`` means relevant (graded judgements
feed :func:`ndcg_at_k`, binary relevance the rest). This is the in-memory form of a BEIR
``qrels.tsv``.
"""


def _check_k(k: int, *, name: str = "k") -> int:
    return check_positive_int(k, name)


def _check_optional_k(k: int | None) -> int | None:
    return None if k is None else _check_k(k)


def _check_ranked(ranked: Sequence[str]) -> Sequence[str]:
    """`ranked` as a sequence of distinct str ids; an unordered or one-shot iterable is refused."""
    given: object = ranked  # callers pass anything: check it as such
    if type(given) is not list and type(given) is not tuple:  # the common cases skip the ABC checks
        if isinstance(given, str | bytes):
            raise TypeError(f"'ranked' must be a sequence of doc ids, not a single {type(given).__name__}")
        if isinstance(given, Set | Mapping) or not isinstance(given, Iterable):
            # A set has no order, so no ranks: scoring it would score an arbitrary order.
            raise TypeError(f"'ranked' must be a sequence of doc ids, best first (got {type(given).__name__})")
        if not isinstance(given, Sequence):
            ranked = list(ranked)  # a numpy array or a generator: read it once, in order
    for doc_id in ranked:
        if type(doc_id) is not str and not isinstance(doc_id, str):
            raise TypeError(f"'ranked' must hold str doc ids (got {doc_id!r})")
    if len(set(ranked)) != len(ranked):
        seen: set[str] = set()
        for doc_id in ranked:
            if doc_id in seen:
                raise ValueError(f"'ranked' lists doc id {doc_id!r} more than once")
            seen.add(doc_id)
    return ranked


def _check_relevant(relevant: Mapping[str, float]) -> dict[str, float]:
    """The grades as Python floats (so a float32 grade computes, and returns, in double precision)."""
    if type(relevant) is not dict and not isinstance(relevant, Mapping):
        raise TypeError(f"'relevant' must be a mapping {{doc_id: grade}} (got {type(relevant).__name__})")
    grades: dict[str, float] = {}
    for doc_id, value in relevant.items():
        if type(doc_id) is not str and not isinstance(doc_id, str):
            raise TypeError(f"'relevant' must be keyed by str doc ids (got {doc_id!r})")
        grade = finite_float(value)
        if grade is None:
            raise ValueError(f"'relevant' grade of doc id {doc_id!r} must be a finite number (got {value!r:.60})")
        grades[doc_id] = grade
    return grades


def _check(ranked: Sequence[str], relevant: Mapping[str, float]) -> tuple[Sequence[str], dict[str, float]]:
    return _check_ranked(ranked), _check_relevant(relevant)


def _n_relevant(relevant: Mapping[str, float]) -> int:
    return sum(1 for grade in relevant.values() if grade > 0)


def _hits(ranked: Sequence[str], relevant: Mapping[str, float]) -> list[int]:
    """0-based ranks of the relevant documents in ``ranked``."""
    return [i for i, doc_id in enumerate(ranked) if relevant.get(doc_id, 0) > 0]


def _dcg(ranked: Sequence[str], grades: Mapping[str, float], k: int, shift: int) -> float:
    """DCG of the top `k` with every gain multiplied by ``2**shift``: exact, since a power of two."""
    total = 0.0
    for i, doc_id in enumerate(ranked[:k]):
        grade = grades.get(doc_id, 0.0)
        if grade > 0:
            total += math.ldexp(grade, shift) / math.log2(i + 2)
    return total


def dcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Discounted cumulative gain of `ranked` at cutoff `k`.

    ``sum(grade_i / log2(i + 2))`` over the top `k` results (`i` 0-indexed), with ``grade_i``
    the relevance of the `i`-th doc (``0`` if unjudged) — the linear-gain DCG that BEIR /
    ``pytrec_eval`` use. Negative grades count as unjudged (trec_eval).

    >>> round(dcg_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3), 4)
    1.5
    """
    k = _check_k(k)
    ranked, grades = _check(ranked, relevant)
    total = _dcg(ranked, grades, k, 0)
    if math.isinf(total):
        raise ValueError(
            f"the DCG of these 'relevant' grades (up to {max(grades.values()):g}) is larger than a float can "
            "hold; ndcg_at_k, which does not depend on the scale of the grades, still scores them"
        )
    return total


def ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Normalized DCG at cutoff `k` — ``ef``'s **primary** retrieval metric.

    :func:`dcg_at_k` divided by the ideal DCG (the DCG of the best possible ranking of the
    judged docs). ``1.0`` is a perfect ranking; ``0.0`` when no relevant doc was judged.

    >>> ndcg_at_k(['d1', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)  # perfect order
    1.0
    >>> round(ndcg_at_k(['x', 'd1'], {'d1': 1.0}, 2), 4)  # relevant doc at rank 2
    0.6309
    >>> ndcg_at_k(['x'], {'d1': 0.0}, 5)  # nothing relevant was judged
    0.0
    """
    k = _check_k(k)
    ranked, grades = _check(ranked, relevant)
    positive = sorted((g for g in grades.values() if g > 0), reverse=True)
    if not positive:
        return 0.0
    # Gains scaled so the largest is in [0.5, 1): no sum can overflow (three grades of 1e308 would),
    # and scaling by a power of two is exact, so the ratio is the unscaled one to the last bit.
    shift = -math.frexp(positive[0])[1]
    ideal = sum(math.ldexp(g, shift) / math.log2(i + 2) for i, g in enumerate(positive[:k]))
    return _dcg(ranked, grades, k, shift) / ideal


def recall_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the relevant docs that appear in the top `k` results.

    ``0.0`` when no relevant doc was judged.

    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    >>> recall_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 3)
    1.0
    """
    k = _check_k(k)
    ranked, relevant = _check(ranked, relevant)
    n_rel = _n_relevant(relevant)
    if n_rel == 0:
        return 0.0
    return len(_hits(ranked[:k], relevant)) / n_rel


def precision_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Fraction of the top `k` results that are relevant.

    Divides by `k` even when fewer than `k` results were retrieved (trec_eval's ``P.k``).

    >>> precision_at_k(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0}, 2)
    0.5
    >>> precision_at_k(['d1'], {'d1': 1.0}, 4)  # a short ranking still divides by k
    0.25
    """
    k = _check_k(k)
    ranked, relevant = _check(ranked, relevant)
    return len(_hits(ranked[:k], relevant)) / k


def reciprocal_rank(ranked: Sequence[str], relevant: Mapping[str, float], k: int | None = None) -> float:
    """Reciprocal of the rank of the first relevant result (``0`` if none).

    Averaged over queries this is MRR. `k` optionally caps how far down the ranking to look.

    >>> reciprocal_rank(['x', 'd1', 'd2'], {'d1': 1.0})
    0.5
    >>> reciprocal_rank(['x', 'd1'], {'d1': 1.0}, k=1)  # relevant doc past the cutoff
    0.0
    """
    k = _check_optional_k(k)
    ranked, relevant = _check(ranked, relevant)
    window = ranked if k is None else ranked[:k]
    for i, doc_id in enumerate(window):
        if relevant.get(doc_id, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def average_precision(ranked: Sequence[str], relevant: Mapping[str, float], k: int | None = None) -> float:
    """Average precision of `ranked` — the per-query term of MAP.

    The mean of the precision measured at each relevant result's rank. `k` optionally caps the
    ranking. The mean is over *all* judged relevant docs, retrieved or not (trec_eval's ``map``
    and ``map_cut.k``); ``0.0`` when none was judged.

    >>> average_precision(['d1', 'x', 'd2'], {'d1': 1.0, 'd2': 1.0})
    0.8333333333333333
    """
    k = _check_optional_k(k)
    ranked, relevant = _check(ranked, relevant)
    n_rel = _n_relevant(relevant)
    if n_rel == 0:
        return 0.0
    window = ranked if k is None else ranked[:k]
    total = 0.0
    for n_found, i in enumerate(_hits(window, relevant), start=1):
        total += n_found / (i + 1)
    return total / n_rel


def hit_rate_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """``1.0`` if a relevant doc is in the top `k` results, else ``0.0`` (trec_eval's ``success.k``).

    >>> hit_rate_at_k(['x', 'd1'], {'d1': 1.0}, 2), hit_rate_at_k(['x', 'd1'], {'d1': 1.0}, 1)
    (1.0, 0.0)
    """
    k = _check_k(k)
    ranked, relevant = _check(ranked, relevant)
    return 1.0 if _hits(ranked[:k], relevant) else 0.0


def precision_window(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """Relevant docs in the top `k` over the docs there, ``min(k, len(ranked))`` (fastrag's Precision).

    Unlike :func:`precision_at_k`, a ranking shorter than `k` divides by what it holds; an empty
    one scores ``0.0``.

    >>> precision_window(['d1', 'x'], {'d1': 1.0}, 5), precision_at_k(['d1', 'x'], {'d1': 1.0}, 5)
    (0.5, 0.2)
    """
    k = _check_k(k)
    ranked, relevant = _check(ranked, relevant)
    window = ranked[:k]
    return len(_hits(window, relevant)) / len(window) if window else 0.0


def binary_ndcg_at_k(ranked: Sequence[str], relevant: Mapping[str, float], k: int) -> float:
    """nDCG at `k` with gain ``1`` for every relevant doc, whatever its grade (fastrag's NDCG).

    The ideal ranking holds ``min(R, k)`` relevant docs. On binary judgements it equals
    :func:`ndcg_at_k`; on graded ones it ignores the grades.

    >>> relevant = {'d1': 1.0, 'd2': 3.0}
    >>> round(binary_ndcg_at_k(['d1', 'd2'], relevant, 2), 4), round(ndcg_at_k(['d1', 'd2'], relevant, 2), 4)
    (1.0, 0.7967)
    """
    k = _check_k(k)
    ranked, grades = _check(ranked, relevant)
    binary = {doc_id: 1.0 for doc_id, grade in grades.items() if grade > 0}
    return ndcg_at_k(ranked, binary, k)


def check_ranking(ranked: Sequence[str], relevant: Mapping[str, float]) -> tuple[Sequence[str], dict[str, float]]:
    """`ranked` and `relevant` checked as every kernel here checks them, the grades as floats.

    ``TypeError`` for a ranking that is not a sequence of str ids (a set, a bare str) or grades
    that are not a mapping; ``ValueError`` for an id ranked twice or a grade that is not finite.

    >>> check_ranking(('d1', 'd2'), {'d1': 1})
    (('d1', 'd2'), {'d1': 1.0})
    """
    return _check(ranked, relevant)
