"""A resumed Ray build trusts a shard only if its SHA-256 (recorded when written) and its values hold.

Ray itself is replaced by a deterministic fake encoder here: what is tested is which shards a
resumed build keeps and which it encodes again, not Ray.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ef.source_manager import _ray
from ef.source_manager._ray import RayEngine, encode_shards, shard_path

TEXTS = [f"text number {i}" for i in range(5)]  # shards of 2 rows: 0-1, 2-3, 4


def _vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    vector = np.random.default_rng(seed).standard_normal(4).astype(np.float32)
    return vector / np.linalg.norm(vector)  # type: ignore[no-any-return]


EXPECTED = np.stack([_vector(t) for t in TEXTS])


@pytest.fixture
def encoded(monkeypatch: pytest.MonkeyPatch) -> list[list[tuple[int, int]]]:
    """Every call's encoded row ranges; Ray replaced by `_vector`."""
    calls: list[list[tuple[int, int]]] = []

    @contextlib.contextmanager
    def session(address: str | None, **options: Any) -> Iterator[None]:
        yield None

    def batches(ray: Any, texts: Sequence[str], ranges: Sequence[tuple[int, int]],
                **options: Any) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        calls.append(list(ranges))
        for start, end in ranges:
            rows = np.arange(start, end, dtype=np.int64)
            yield rows, np.stack([_vector(texts[i]) for i in rows])

    monkeypatch.setattr(_ray, "ray_session", session)
    monkeypatch.setattr(_ray, "_encoded_batches", batches)
    monkeypatch.setattr(_ray, "_quiet_data", lambda: None)
    return calls


def _build(directory: Path) -> tuple[np.ndarray, int]:
    engine = RayEngine(shard_dir=directory, shard_rows=2)
    shards, reused = encode_shards(
        TEXTS, engine=engine, directory=directory, model="fake", device=None, batch_size=2, show_progress=False
    )
    return np.concatenate([np.asarray(s) for s in shards]), reused


def test_an_untouched_build_is_reused_whole(tmp_path: Path, encoded: list[list[tuple[int, int]]]) -> None:
    first, reused = _build(tmp_path)
    assert (np.array_equal(first, EXPECTED), reused, encoded) == (True, 0, [[(0, 2), (2, 4), (4, 5)]])
    again, reused = _build(tmp_path)
    assert (np.array_equal(again, EXPECTED), reused, len(encoded)) == (True, 3, 1)


@pytest.mark.parametrize("damage", ["nan", "zeros", "other values", "truncated"])
def test_a_damaged_shard_is_encoded_again(tmp_path: Path, encoded: list[list[tuple[int, int]]], damage: str) -> None:
    _build(tmp_path)
    path = shard_path(tmp_path, 1)
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-3])
    else:
        bad = {"nan": np.full((2, 4), np.nan), "zeros": np.zeros((2, 4)), "other values": EXPECTED[:2]}[damage]
        np.save(path, bad.astype(np.float32), allow_pickle=False)
    again, reused = _build(tmp_path)
    assert (np.array_equal(again, EXPECTED), reused, encoded[1:]) == (True, 2, [[(2, 4)]])


def test_nan_under_a_matching_hash_is_encoded_again(tmp_path: Path, encoded: list[list[tuple[int, int]]]) -> None:
    # A recorded hash that matches (the file was damaged before it was hashed, or the hash was
    # rewritten): the values are checked too.
    _build(tmp_path)
    path = shard_path(tmp_path, 2)
    np.save(path, np.full((1, 4), np.inf, dtype=np.float32), allow_pickle=False)
    path.with_name(path.name + ".sha256").write_text(hashlib.sha256(path.read_bytes()).hexdigest() + "\n")
    again, reused = _build(tmp_path)
    assert (np.array_equal(again, EXPECTED), reused, encoded[1:]) == (True, 2, [[(4, 5)]])


def test_a_shard_without_its_hash_is_encoded_again(tmp_path: Path, encoded: list[list[tuple[int, int]]]) -> None:
    _build(tmp_path)
    shard_path(tmp_path, 0).with_name("shard-000000.npy.sha256").unlink()
    again, reused = _build(tmp_path)
    assert (np.array_equal(again, EXPECTED), reused, encoded[1:]) == (True, 2, [[(0, 2)]])
