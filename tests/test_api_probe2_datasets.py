"""ef.datasets' registry is read-only: a user cannot corrupt what load, fetch and resolve_name
verify against (it was a plain dict: KNOWN["beir/scifact"] = ... changed the checksum ef checks)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ef.datasets import KNOWN, resolve_name
from ef.datasets._registry import ALIASES, CQADUPSTACK_FORUMS


def test_known_cannot_be_changed() -> None:
    scifact = KNOWN["beir/scifact"]
    with pytest.raises(TypeError, match=r"^'mappingproxy' object does not support item assignment$"):
        KNOWN["beir/scifact"] = replace(scifact, relevance_level=3)  # type: ignore[index]
    with pytest.raises(TypeError, match=r"^'mappingproxy' object does not support item deletion$"):
        del KNOWN["beir/scifact"]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        KNOWN.clear()  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        KNOWN.update({})  # type: ignore[attr-defined]
    assert resolve_name("beir/scifact") == (scifact, None)
    assert scifact.archive is not None
    assert scifact.archive.md5 == "5f7d1de60b170fc8027bb7898e2efca1"


def test_a_known_dataset_is_frozen() -> None:
    with pytest.raises(AttributeError):
        KNOWN["trec-dl-2019"].relevance_level = 1  # type: ignore[misc]
    assert KNOWN["trec-dl-2019"].relevance_level == 2


def test_its_documented_use_still_works() -> None:
    assert (KNOWN["trec-dl-2019"].relevance_level, KNOWN["beir/scifact"].archive.md5) == (  # type: ignore[union-attr]
        2, "5f7d1de60b170fc8027bb7898e2efca1"
    )
    assert "beir/scifact" in KNOWN
    assert len(KNOWN) == len(list(KNOWN.values())) == len(dict(KNOWN))
    assert KNOWN.get("nope") is None


def test_the_aliases_cannot_be_changed() -> None:
    with pytest.raises(TypeError, match=r"^'mappingproxy' object does not support item assignment$"):
        ALIASES["beir/scifact/v9"] = ("beir/scifact", None)  # type: ignore[index]
    assert ALIASES["msmarco-passage/trec-dl-2020/judged"] == ("trec-dl-2020", None)
    assert isinstance(CQADUPSTACK_FORUMS, tuple)
    assert len(CQADUPSTACK_FORUMS) == 12
