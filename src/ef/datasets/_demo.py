"""The dataset that ships inside ef: a small BEIR folder for the main job and the examples."""

from __future__ import annotations

from pathlib import Path

__all__ = ["demo_dataset"]

_DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


def demo_dataset() -> str:
    """The path of the bundled demo dataset: a BEIR folder of 100 short documents, 27 judged queries.

    Written for ef (not derived from any public dataset), with graded judgements (1 and 2), so the
    main job and the examples run on a fresh machine without a download.

    >>> from ef.evaluation import read_beir
    >>> corpus, queries, qrels = read_beir(demo_dataset())
    >>> len(corpus), len(qrels)
    (100, 27)
    """
    return str(_DEMO)
