"""ef.datasets probed: its registry is read-only (KNOWN["beir/scifact"] = ... changed the checksum
load and fetch verify against), and load refuses what it read silently before."""

from __future__ import annotations

import re
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ef.datasets import KNOWN, demo_dataset, fetch, load, resolve_name, where_present
from ef.datasets._registry import ALIASES, CQADUPSTACK_FORUMS
from ef.evaluation import write_beir


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


# --- load, probed --------------------------------------------------------------------------------


def _folder(root: Path, *, corpus: str | None = None, queries: str | None = None, qrels: str | None = None) -> Path:
    folder = root / "mini"
    write_beir(folder, {"d1": "x", "d2": "y"}, {"q1": "a"}, {"q1": {"d1": 1}})
    for name, text in (("corpus.jsonl", corpus), ("queries.jsonl", queries), ("qrels.tsv", qrels)):
        if text is not None:
            (folder / name).write_text(text)
    return folder


@pytest.mark.parametrize(
    ("part", "text", "message"),
    [
        ("qrels", "query-id\tcorpus-id\tscore\n", "the qrels of split 'test' hold no judgement"),
        ("qrels", "", "the qrels of split 'test' hold no judgement"),
        ("queries", "", "its queries hold no query"),
        ("corpus", "", "its corpus holds no document"),
    ],
)
def test_a_dataset_of_nothing_is_refused(tmp_path: Path, part: str, text: str, message: str) -> None:
    folder = _folder(tmp_path, **{part: text})
    with pytest.raises(ValueError, match="^" + re.escape(f"{folder}: {message}: not a dataset to evaluate on") + "$"):
        load(folder)


def test_corpus_false_does_not_read_the_corpus_to_check_it(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    dataset = load(folder, corpus=False)
    assert (dataset.qrels, dataset.queries) == ({"q1": {"d1": 1}}, {"q1": "a"})


@pytest.mark.parametrize("split", ["", " test", "test/../x", "../qrels"])
def test_a_split_that_names_no_split_is_refused(split: str) -> None:
    message = f"'split' must be a split name such as 'test' or 'dev', or None (got {split!r})"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        load(demo_dataset(), split)  # '' read the test split silently


def test_a_zip_of_write_beirs_flat_layout_reads_as_its_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    archive = tmp_path / "mini.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.iterdir()):
            out.write(path, f"mini/{path.name}")
    from_zip, from_folder = load(archive), load(folder)
    assert (from_zip.corpus, from_zip.queries, from_zip.qrels) == (
        from_folder.corpus, from_folder.queries, from_folder.qrels
    ) == ({"d1": "x", "d2": "y"}, {"q1": "a"}, {"q1": {"d1": 1}})


@pytest.mark.parametrize(("known", "kind"), [(None, "NoneType"), ("beir/scifact", "str")])
def test_where_present_names_its_argument(known: object, kind: str) -> None:
    message = f"'known' must be a KnownDataset, such as ef.datasets.KNOWN['beir/scifact'] (got {kind})"
    with pytest.raises(TypeError, match="^" + re.escape(message) + "$"):
        where_present(known)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"timeout": "60"}, TypeError, "'timeout' must be a finite number of seconds > 0 (got '60')"),
        ({"timeout": 0}, ValueError, "'timeout' must be a finite number of seconds > 0 (got 0)"),
        ({"timeout": float("nan")}, ValueError, "'timeout' must be a finite number of seconds > 0 (got nan)"),
        ({"show_progress": "no"}, TypeError, "'show_progress' must be a bool (got 'no')"),
    ],
)
def test_fetch_checks_its_options_before_looking_for_anything(keywords: dict[str, Any], error: type[Exception],
                                                               message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import urllib.request

    def offline(*args: object, **kwargs: object) -> None:
        raise AssertionError("went online")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        fetch("beir/scifact", **keywords)
