"""Types of the compiled run engine (``_kernel.c``); ``_reference.py`` is the same in Python."""

from collections.abc import Callable, Mapping
from typing import Any

import numpy.typing as npt

Fault = tuple[Any, ...]
Buffer = bytes | bytearray | memoryview | npt.NDArray[Any]

class Judged:
    def __init__(self, query_ids: list[str], doc_ids: list[list[str]], /) -> None: ...

class Ranker:
    def __init__(self, judged: Judged, max_docs: int, /) -> None: ...
    def feed(self, data: Buffer, final: bool, whole: bool, /) -> int | Fault: ...
    def result(self) -> tuple[bytes, bytes, bytes, bytes, bytes | None]: ...
    def shares_query(self, other: Ranker, /) -> bool: ...

def deal(data: Buffer, parts: int, final: bool, /) -> tuple[list[bytes], int, int]: ...
def read_run(data: Buffer, /) -> dict[str, dict[str, float]] | Fault: ...
def rank_mapping(
    run: Mapping[str, Mapping[str, object]],
    qrels: Mapping[str, Mapping[str, float]],
    query_ids: list[str],
    max_docs: int,
    convert: Callable[[str, str, object], float],
    bad_doc: Callable[[str, object], None],
    /,
) -> tuple[bytes, bytes, bytes, bytes]: ...
def stack_columns(
    runs: list[Any], /
) -> tuple[list[str], list[str], bytes, bytes, bytes, bytes, bytes, bytes, bytes, bool] | None: ...
def trec_order(group: Buffer, score: Buffer, doc: Buffer, heads: Buffer, ids: list[str] | None, /) -> bytes: ...
def build_run(
    queries: list[str], bounds: Buffer, ids: list[str], doc: Buffer, score: Buffer, /
) -> dict[str, dict[str, float]]: ...
