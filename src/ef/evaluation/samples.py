"""RAG samples from disk: a JSON Lines file of :class:`~ef.evaluation.RagSample` records, checked.

>>> import json, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "samples.jsonl")
>>> with open(path, "w") as f:
...     _ = f.write(json.dumps({"user_input": "q", "response": "a", "retrieved_contexts": ["a"]}) + "\\n")
>>> [s["response"] for s in read_rag_samples(path)]
['a']
"""

from __future__ import annotations

import os
from typing import Any

from ef.evaluation._rag import _check_sample
from ef.io._source import display_name
from ef.io.jsonl import iter_json_objects

__all__ = ["read_rag_samples"]


def read_rag_samples(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The samples of a JSON Lines file (plain or gzip, ``-`` for stdin), each checked as
    :func:`~ef.evaluation.evaluate_rag` checks it.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line that is not a JSON object or a sample with a missing or
        mistyped field, and for a file without samples.
    """
    name = display_name(path)  # '<stdin>' for '-', as the JSON reader's own errors say
    samples: list[dict[str, Any]] = []
    for number, record in iter_json_objects(path):
        try:
            _check_sample(record, f"{name}:{number}: sample", forwarded=True)  # as evaluate_rag checks it
        except TypeError as error:  # bad input in a file is a ValueError naming file:line
            raise ValueError(str(error)) from None
        samples.append(record)
    if not samples:
        raise ValueError(f"{name}: no samples (the file has no JSON lines)")
    return samples
