"""Public helpers that took any object and failed inside: each names its argument now."""

from __future__ import annotations

import pytest

from ef.datasets import load, resolve_name
from ef.gate import gate
from ef.measures.answers import normalize


@pytest.mark.parametrize(("text", "shown"), [(None, "NoneType"), (b"The end", "bytes"), (["a"], "list")])
def test_normalize_refuses_what_is_not_a_str(text: object, shown: str) -> None:
    with pytest.raises(TypeError, match=rf"^'text' must be a str \(got {shown}\)$"):
        normalize(text)  # type: ignore[arg-type]


def test_normalize_still_normalizes() -> None:
    assert normalize("  The Eiffel-Tower, a landmark!") == "eiffeltower landmark"


@pytest.mark.parametrize(("name", "kind"), [(None, "NoneType"), (5, "int"), (b"beir/scifact", "bytes")])
def test_resolve_name_refuses_what_is_not_a_str(name: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^'name' must be a str \(got {kind}\)$"):
        resolve_name(name)  # type: ignore[arg-type]


def test_load_refuses_an_empty_name_rather_than_reading_the_current_directory() -> None:
    with pytest.raises(ValueError, match=r"^'name_or_path' must not be empty \(a dataset name or a path\)$"):
        load("")


def test_gate_refuses_a_single_str_of_measures() -> None:
    run = {f"q{i}": {"d1": 2.0, "d2": 1.0} for i in range(4)}
    qrels = {f"q{i}": {"d1": 1} for i in range(4)}
    with pytest.raises(TypeError, match=r"^'measures' must be a sequence of measure names \(got 'ndcg@10'\)$"):
        gate(run, run, "ndcg@10", qrels=qrels)
