"""BEIR files (corpus.jsonl, queries.jsonl, qrels TSV). SKELETON: being written (issue 2)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["read_beir", "write_beir"]

_DEFAULT_QRELS_PATHS: tuple[str, ...] = ("qrels/test.tsv", "qrels.tsv")


def read_beir(
    directory: str, *, qrels: str | None = None
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    raise NotImplementedError


def write_beir(
    directory: str,
    corpus: Mapping[str, str],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, float]],
) -> None:
    raise NotImplementedError
