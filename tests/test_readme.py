"""The README's examples run as written, in order, in one namespace."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_readme_starts_with_the_two_commands() -> None:
    first_block = re.search(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert first_block is not None
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines()]
    assert commands == ["make eval", "make test"]
    # CI runs the same command (its status kept while the sanitizers' job finishes beside it)
    assert re.search(r"^make test( \|\| status=\$\?)?$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), flags=re.M)


def test_readme_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EF_NO_PROGRESS", "1")
    blocks = re.findall(r"```pycon\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 13
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, object] = {}
    for i, block in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(block, globs, f"README.md[{i}]", str(README), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies its globals: carry them to the next block
    results = runner.summarize(verbose=False)
    assert results.failed == 0
    assert results.attempted == 84
