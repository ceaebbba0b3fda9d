"""Scale-out flags on a loaded index and a model's device: applied where they can be, refused by name where not."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from ef.cli._scale import check_loaded
from ef.source_manager._ann import AnnIndex, AnnSpec
from ef.source_manager._models import load_model

pytest.importorskip("faiss")


def _vectors(n: int, dim: int) -> np.ndarray:
    matrix = np.random.default_rng(5).standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _loaded(kind: str, params: dict[str, int]) -> SimpleNamespace:
    """What check_loaded sees of a SearchableCorpus loaded from --index-dir: its dense index's ANN."""
    ann = AnnIndex.build(AnnSpec(kind, params), [_vectors(300, 8)])
    dense = SimpleNamespace(ann=ann, exact_search=None)
    return SimpleNamespace(_collection=SimpleNamespace(index=dense))


def _args(kind: str, **params: int) -> argparse.Namespace:
    return argparse.Namespace(ann=kind, ann_param=list(params.items()))


@pytest.mark.parametrize(("kind", "built", "asked", "applied"), [
    ("hnsw", {"M": 8}, {"ef_search": 8}, {"M": 8, "ef_construction": 128, "ef_search": 8}),
    ("ivf", {"nlist": 8}, {"nprobe": 2}, {"nlist": 8, "nprobe": 2, "train_size": 300}),
    ("ivf", {"nlist": 8}, {"nprobe": 50}, {"nlist": 8, "nprobe": 8, "train_size": 300}),  # at most nlist, as built
])
def test_query_time_knobs_apply_to_a_loaded_index(
    kind: str, built: dict[str, int], asked: dict[str, int], applied: dict[str, int]
) -> None:
    index = _loaded(kind, built)
    check_loaded(index, _args(kind, **asked), Path("cache"))
    assert index._collection.index.ann.params == applied


def test_a_knob_changes_the_search() -> None:
    index = _loaded("ivf", {"nlist": 8, "nprobe": 8})
    queries = _vectors(20, 8)[::-1].copy()
    exact = [r[0].tolist() for r in index._collection.index.ann.search(queries, 10)]  # every list probed
    check_loaded(index, _args("ivf", nprobe=1), Path("cache"))
    assert [r[0].tolist() for r in index._collection.index.ann.search(queries, 10)] != exact


@pytest.mark.parametrize(("kind", "built", "asked", "message"), [
    ("hnsw", {"M": 8}, {"M": 16}, "--ann-param M=16: --index-dir cache holds an hnsw index built with M=8; "
     "a build parameter takes a new index (delete it or choose another directory); ef_search applies to a loaded one"),
    ("ivf", {"nlist": 8}, {"train_size": 100}, "--ann-param train_size=100: --index-dir cache holds an ivf index "
     "built with train_size=300; a build parameter takes a new index (delete it or choose another directory); "
     "nprobe applies to a loaded one"),
])
def test_build_time_knobs_that_differ_are_refused(
    kind: str, built: dict[str, int], asked: dict[str, int], message: str
) -> None:
    index = _loaded(kind, built)
    with pytest.raises(ValueError) as error:
        check_loaded(index, _args(kind, **asked), Path("cache"))
    assert str(error.value) == message


def test_a_build_knob_equal_to_the_saved_one_is_fine() -> None:
    index = _loaded("hnsw", {"M": 8})
    check_loaded(index, _args("hnsw", M=8, ef_search=16), Path("cache"))
    assert index._collection.index.ann.params["ef_search"] == 16


def test_a_bogus_device_is_named_not_blamed_on_the_model() -> None:
    pytest.importorskip("torch")
    with pytest.raises(ValueError) as error:
        load_model("st:no-such-model", device="bogus")
    assert str(error.value).startswith("'device' 'bogus' is not a torch device (")


def test_cuda_on_a_torch_without_cuda_is_named() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError) as error:
        load_model("st:no-such-model", device="cuda")
    assert str(error.value) == (
        f"'device' 'cuda': this torch ({torch.__version__}) cannot use CUDA (torch.cuda.is_available() is False); "
        "pass device='cpu' or install a CUDA build of torch"
    )
