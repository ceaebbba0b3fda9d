"""docs/coming-from.md: every example runs as written, each in a namespace of its own (issue 34)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coming-from.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_the_page_has_an_example_for_each_peer() -> None:
    assert len(BLOCKS) == 12
    text = PAGE.read_text(encoding="utf-8")
    for peer in ("### pytrec_eval", "### ranx", "### ir_measures", "### BEIR", "### MTEB", "### PyTerrier",
                 "### DeepEval"):
        assert peer in text


@pytest.mark.parametrize(
    "number",
    # ranx compiles its Run and Qrels with numba on first use (~30 s)
    [pytest.param(i, marks=pytest.mark.slow) if "import ranx" in block else i for i, block in enumerate(BLOCKS)],
)
def test_example_runs(number: int) -> None:
    exec(compile(BLOCKS[number], f"{PAGE}[{number}]", "exec"), {"__name__": f"coming_from_{number}"})
