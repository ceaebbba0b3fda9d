"""An index cached in a directory: loaded when it holds this corpus's index, else built and saved.

``ef eval --index-dir`` and any script evaluating one corpus repeatedly share this rule: a
directory holding an ef index (its ``manifest.json``) is loaded, and must have been built from the
same corpus (:func:`corpus_fingerprint` of its ids and texts); an empty or absent directory gets
the index built and saved; anything else is refused rather than overwritten.

>>> import os, tempfile
>>> corpus = {"d1": "Cats purr.", "d2": "Dogs bark."}
>>> folder = os.path.join(tempfile.mkdtemp(), "index")
>>> cached_index(corpus, folder, build={"show_progress": False})[1] == f"built, saved to {folder}"
True
>>> index, how = cached_index(corpus, folder, load={"show_progress": False})
>>> how.startswith("loaded from"), [h.segment.source_id for h in index.search("dogs")]
(True, ['d2'])
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ef.source_manager._collection import MANIFEST, corpus_fingerprint

if TYPE_CHECKING:
    from ef.source_manager._corpus import SearchableCorpus

__all__ = ["MANIFEST", "cached_index", "check_cache_dir", "corpus_fingerprint", "is_saved_index"]


def is_saved_index(directory: str | os.PathLike[str]) -> bool:
    """Whether `directory` holds an index :meth:`SearchableCorpus.save` wrote (its ``manifest.json``)."""
    return (Path(directory) / MANIFEST).is_file()


def check_cache_dir(directory: str | os.PathLike[str], *, name: str | None = None) -> None:
    """``FileExistsError`` if `directory` is neither an ef index nor empty or absent: nothing to load or save there.

    `name` is how messages call the directory (default: its path).
    """
    folder = Path(directory)
    label = name or str(folder)
    if is_saved_index(folder):
        return
    if folder.exists() and not (folder.is_dir() and not any(folder.iterdir())):
        raise FileExistsError(f"{label} exists and is not an ef index")


def cached_index(
    corpus: Mapping[str, str] | Iterable[tuple[str, str]],
    directory: str | os.PathLike[str] | None,
    *,
    load: Mapping[str, Any] | None = None,
    build: Mapping[str, Any] | None = None,
    check: Callable[[SearchableCorpus], None] | None = None,
    name: str | None = None,
    corpus_name: str = "this corpus",
) -> tuple[SearchableCorpus, str]:
    """The index of `corpus`: loaded from `directory`, or built with :func:`ingest` (and saved there).

    Parameters
    ----------
    corpus
        ``{doc_id: text}``, as :func:`ef.evaluation.read_beir` returns it, or ``(doc_id, text)``
        pairs that can be iterated more than once (a corpus streamed from disk: ``ef eval
        --engine ray`` on a dataset), as :func:`ingest` takes them.
    directory
        The cache; ``None`` builds without saving.
    load, build
        Keyword arguments of :meth:`SearchableCorpus.load` and of :func:`ingest`.
    check
        Called with a loaded index before it is used (e.g. to require an ANN kind); raise to refuse it.
    name, corpus_name
        How messages call the directory (default: its path) and the corpus.

    Returns
    -------
    tuple
        The index and how it came: ``"loaded from DIR"``, ``"built"`` or ``"built, saved to DIR"``.

    Raises
    ------
    ValueError
        If `directory` holds the index of another corpus.
    FileExistsError
        If `directory` is neither an ef index nor empty.
    """
    from ef.source_manager._corpus import SearchableCorpus, ingest

    if directory is None:
        return ingest(corpus, **(build or {})), "built"
    folder = Path(directory)
    label = name or str(folder)
    if is_saved_index(folder):
        index = SearchableCorpus.load(folder, **(load or {}))
        if check is not None:
            check(index)
        pairs = corpus.items() if isinstance(corpus, Mapping) else corpus
        if index.fingerprint != corpus_fingerprint(pairs):
            raise ValueError(
                f"{label} holds an index of another corpus than {corpus_name}: delete it or choose another directory"
            )
        return index, f"loaded from {folder}"
    check_cache_dir(folder, name=name)
    index = ingest(corpus, **(build or {}))
    index.save(folder)
    return index, f"built, saved to {folder}"
