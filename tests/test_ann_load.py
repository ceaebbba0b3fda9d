"""A saved FAISS index must be what its manifest says: another kind is "the index is damaged"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ef.source_manager._ann import ANN_FILE, AnnIndex, AnnSpec

pytest.importorskip("faiss")
DAMAGED = "the index is damaged: delete the directory and build it again"


def _vectors(n: int, dim: int) -> np.ndarray:
    matrix = np.random.default_rng(3).standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_an_ivf_file_under_an_hnsw_manifest_is_damaged(tmp_path: Path) -> None:
    corpus = _vectors(200, 8)
    ivf = AnnIndex.build(AnnSpec("ivf", {"nlist": 4}), [corpus])
    hnsw = AnnIndex.build(AnnSpec("hnsw", {"M": 8}), [corpus])
    ivf.save(tmp_path)
    with pytest.raises(ValueError) as error:
        AnnIndex.load(tmp_path, hnsw.info(), n_rows=200, dimension=8)
    assert str(error.value) == f"{tmp_path / ANN_FILE}: a FAISS IndexIVFFlat, but the manifest says hnsw; {DAMAGED}"


def test_an_hnsw_file_under_an_ivf_manifest_is_damaged(tmp_path: Path) -> None:
    corpus = _vectors(200, 8)
    ivf = AnnIndex.build(AnnSpec("ivf", {"nlist": 4}), [corpus])
    AnnIndex.build(AnnSpec("hnsw", {"M": 8}), [corpus]).save(tmp_path)
    with pytest.raises(ValueError) as error:
        AnnIndex.load(tmp_path, ivf.info(), n_rows=200, dimension=8)
    assert str(error.value) == f"{tmp_path / ANN_FILE}: a FAISS IndexHNSWFlat, but the manifest says ivf; {DAMAGED}"


def test_an_ivf_file_with_other_lists_than_its_manifest_is_damaged(tmp_path: Path) -> None:
    corpus = _vectors(200, 8)
    AnnIndex.build(AnnSpec("ivf", {"nlist": 4}), [corpus]).save(tmp_path)
    meta = AnnIndex.build(AnnSpec("ivf", {"nlist": 5}), [corpus]).info()
    with pytest.raises(ValueError) as error:
        AnnIndex.load(tmp_path, meta, n_rows=200, dimension=8)
    assert str(error.value) == f"{tmp_path / ANN_FILE}: has 4 IVF lists, the manifest 5; {DAMAGED}"


def test_a_matching_file_loads_and_searches(tmp_path: Path) -> None:
    corpus = _vectors(200, 8)
    ivf = AnnIndex.build(AnnSpec("ivf", {"nlist": 4, "nprobe": 4}), [corpus])
    ivf.save(tmp_path)
    again = AnnIndex.load(tmp_path, ivf.info(), n_rows=200, dimension=8)
    assert [r[0].tolist() for r in again.search(corpus[:3], 5)] == [r[0].tolist() for r in ivf.search(corpus[:3], 5)]


@pytest.mark.parametrize(("params", "reason"), [
    ({"M": 8, "ef_construction": 128}, "expected M, ef_construction, ef_search"),
    ({"M": 8, "ef_construction": 128, "ef_search": "x"},
     "'ann_params'['ef_search'] must be a positive integer (got 'x')"),
    ({"M": 8, "ef_construction": 128, "ef_search": 0}, "'ann_params'['ef_search'] must be a positive integer (got 0)"),
])
def test_manifest_parameters_search_needs_are_checked(tmp_path: Path, params: dict[str, object], reason: str) -> None:
    hnsw = AnnIndex.build(AnnSpec("hnsw", {"M": 8}), [_vectors(50, 8)])
    hnsw.save(tmp_path)
    with pytest.raises(ValueError) as error:
        AnnIndex.load(tmp_path, {**hnsw.info(), "params": params}, n_rows=50, dimension=8)
    assert str(error.value) == f"{tmp_path / 'manifest.json'}: 'index.dense.ann.params' ({reason}); {DAMAGED}"
