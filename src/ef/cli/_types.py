"""``type=`` converters of flags that several commands share: one rule and one message each.

A value they refuse is a usage error (``argparse.ArgumentTypeError``) that argparse words as
``argument FLAG: expected ... (got 'VALUE')``.
"""

from __future__ import annotations

import argparse

__all__ = ["k_values", "measure_names", "natural", "probability", "relevance_level"]


def k_values(text: str) -> tuple[int, ...]:
    """Cutoffs such as ``1,10,100``: positive integers, sorted, each once (``ef eval --k``, ``ef compare -k``).

    >>> k_values("100,1,10,1")
    (1, 10, 100)
    """
    try:
        values = [int(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or any(k < 1 for k in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated positive integers such as 1,10,100 (got {text!r})")
    return tuple(sorted(set(values)))


def measure_names(value: str) -> list[str]:
    """Comma-separated names; a piece that starts with a digit or '.' is a parameter of the
    trec_eval form before it (``P.5,10``, ``iprec_at_recall..25,.5``), as ``ef trec-eval -m`` reads it.

    >>> measure_names("P.5,10,ndcg@10, map")
    ['P.5,10', 'ndcg@10', 'map']
    """
    names: list[str] = []
    for piece in (part.strip() for part in value.split(",")):
        if not piece:
            raise argparse.ArgumentTypeError(f"expected measure names separated by commas (got {value!r})")
        if (piece[0].isdigit() or piece[0] == ".") and names and "." in names[-1]:
            names[-1] += "," + piece
        elif piece[0].isdigit() or piece[0] == ".":
            raise argparse.ArgumentTypeError(f"{piece!r} is no measure name (in {value!r})")
        else:
            names.append(piece)
    return names


def natural(value: str, minimum: int) -> int:
    """An integer >= `minimum` (``--seed``: 0; ``--resamples``, ``-l``, ``-M``: 1)."""
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum} (got {value!r})")
    return number


def relevance_level(value: str) -> int:
    """``-l``, every command's: the lowest grade that counts as relevant, an integer >= 1.

    trec_eval takes 0 and below too, where its own numbers break: at 0 its Rndcg can print -nan,
    below 0 a document no qrels line judges counts as relevant (P_2 1.0 on two unjudged documents,
    map above 1). ef refuses them rather than print what it cannot defend.

    >>> relevance_level("2")
    2
    """
    try:
        return natural(value, 1)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected an integer grade >= 1, such as 1 or 2 (got {value!r})") from None


def probability(value: str) -> float:
    """A level strictly between 0 and 1 (``--alpha``, ``--confidence``)."""
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 < number < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, exclusive (got {value!r})")
    return number
