"""The README section's example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "fastrag.md"


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 2
    exec(compile(blocks[1], str(DOC), "exec"), {})  # the data-model example asserts its own numbers
    exec(compile(blocks[0], str(DOC), "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Benchmark over 3 samples (0 failed)"
    assert [line.split()[0] for line in lines[3:]] == [
        "recall@3[source_uri]",
        "precision@3[source_uri]",
        "mrr@3[source_uri]",
        "ndcg@3[source_uri]",
        "hit_rate@3[source_uri]",
        "latency_ms",
    ]
