"""Saves and writes fail up front or name what the caller named: evaluate_retrieval's run_path,
save_samples' arguments, and an index saved into a folder it cannot write."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ef.evaluation import evaluate_retrieval
from ef.source_manager import ingest
from fastrag.benchmark import EvalSample, save_samples

QRELS = {"q1": {"d1": 1.0}}
QUERIES = {"q1": "first query"}


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, query: str, *, limit: int = 10) -> list[str]:
        self.calls += 1
        return ["d1"]


def test_a_directory_as_run_path_fails_before_retrieving(tmp_path: Path) -> None:
    retriever = Counting()
    with pytest.raises(IsADirectoryError) as error:
        evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), run_path=tmp_path)
    assert (str(error.value), retriever.calls) == (
        f"[Errno 21] 'run_path' is a directory; name the run file to write: '{tmp_path}'", 0
    )


def test_a_run_path_in_a_missing_folder_fails_before_retrieving(tmp_path: Path) -> None:
    retriever = Counting()
    path = tmp_path / "no" / "run.trec"
    with pytest.raises(FileNotFoundError) as error:
        evaluate_retrieval(retriever, QRELS, QUERIES, k_values=(1,), run_path=path)
    assert (str(error.value), retriever.calls) == (
        f"[Errno 2] 'run_path' is in a folder that does not exist ({tmp_path / 'no'}): '{path}'", 0
    )


def test_a_good_run_path_is_written(tmp_path: Path) -> None:
    evaluate_retrieval(Counting(), QRELS, QUERIES, k_values=(1,), run_path=tmp_path / "run.trec")
    assert (tmp_path / "run.trec").read_text().split()[:3] == ["q1", "Q0", "d1"]


def test_save_samples_with_swapped_arguments_says_so(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(TypeError) as error:
        save_samples(str(path), [EvalSample("q1", "x")])  # type: ignore[arg-type]
    assert str(error.value) == (
        f"save_samples(samples, path): 'samples' is a path ({str(path)!r}); the samples come first"
    )
    assert not path.exists()


def test_save_samples_names_a_sample_that_is_not_one(tmp_path: Path) -> None:
    with pytest.raises(TypeError) as error:
        save_samples([EvalSample("q1", "x"), {"id": "q2"}], tmp_path / "s.jsonl")  # type: ignore[list-item]
    assert str(error.value) == "'samples'[1] must be an EvalSample (got dict)"


def test_an_index_saved_into_a_read_only_folder_names_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = ingest({"d1": "some text", "d2": "other words"}, embedder="bm25", show_progress=False)
    folder = tmp_path / "ro"
    folder.mkdir()
    real_mkdir = os.mkdir

    def mkdir(path: str | os.PathLike[str], mode: int = 0o777, **kwargs: object) -> None:
        if Path(path).parent == folder:  # what the kernel says for a folder one cannot write into
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        real_mkdir(path, mode, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    target = folder / "index"
    with pytest.raises(PermissionError) as error:
        index.save(target)
    assert str(error.value) == f"[Errno 13] cannot save the index (Permission denied): '{target}'"
    assert list(folder.iterdir()) == []
