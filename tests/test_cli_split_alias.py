"""A dataset name that carries a split and another --split: the error says the split, not Python's split=."""

from __future__ import annotations

import pytest

from ef.cli import main


@pytest.mark.parametrize(("argv", "command"), [
    (["eval", "beir/scifact/test", "--split", "train", "-q"], "eval"),
    (["compare", "--dataset", "beir/scifact/test", "--split", "train", "a.trec", "b.trec", "-q"], "compare"),
])
def test_a_name_with_a_split_and_another_split_flag(argv: list[str], command: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    # it said "but split='train' was asked for", the keyword of ef.datasets.load, to the command line
    assert capsys.readouterr().err == (
        f"ef {command}: error: 'beir/scifact/test' names split 'test', but split 'train' was asked for\n"
    )
