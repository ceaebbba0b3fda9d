"""Types of the compiled run engine (``_kernel.c``); ``_reference.py`` is the same in Python."""

from collections.abc import Callable, Mapping
from typing import Any

Fault = tuple[Any, ...]
Buffer = bytes | bytearray | memoryview

class Judged:
    def __init__(self, query_ids: list[str], doc_ids: list[list[str]], /) -> None: ...

class Ranker:
    def __init__(self, judged: Judged, max_docs: int, /) -> None: ...
    def feed(self, data: Buffer, final: bool, whole: bool, /) -> int | Fault: ...
    def result(self) -> tuple[bytes, bytes, bytes, bytes, bytes | None]: ...
    def shares_query(self, other: Ranker, /) -> bool: ...

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
