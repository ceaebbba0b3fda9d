"""The benchmark that tests/test_fault_injection.py kills: importable by its child processes
without the rest of the test module (which loads the whole index stack)."""

from __future__ import annotations

from fastrag.benchmark import EvalSample
from fastrag.benchmark.metrics import MRR, NDCG, Recall
from fastrag.documents import Chunk

N = 30
SAMPLES = [EvalSample(f"q{i}", f"query {i}", [f"p{i % 7}"]) for i in range(N)]
METRICS = [Recall(k=3, key="source_uri"), MRR(k=3, key="source_uri"), NDCG(k=3, key="source_uri")]


class Pages:
    """Deterministic: query i retrieves pages (i % 5, i % 7, i % 3); counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def retrieve(self, query: str, k: int) -> list[Chunk]:
        self.calls.append(query)
        i = int(query.split()[-1])
        return [Chunk(f"p{i % 5}", 0, "a"), Chunk(f"p{i % 7}", 0, "b"), Chunk(f"p{i % 3}", 0, "c")][:k]
