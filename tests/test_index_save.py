"""Saving an index: the previous index survives a failed save, folders get the usual permissions."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

import ef.io._atomic
from ef.io._atomic import temporary_name
from ef.source_manager import SearchableCorpus, ingest

OLD = {"a": "apples and pears", "b": "bananas"}
NEW = {"x": "xylophone"}


def folders(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def saved_old(tmp_path: Path) -> Path:
    ingest(OLD, show_progress=False).save(tmp_path / "idx")
    return tmp_path / "idx"


def test_saved_folders_get_mkdir_permissions_not_0700(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        target = ingest(OLD, show_progress=False).save(tmp_path / "deep" / "idx")
    finally:
        os.umask(previous)
    modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode)
             for p in [tmp_path / "deep", target, *target.rglob("*")] if p.is_dir()}
    assert modes == {"deep": 0o755, "deep/idx": 0o755, "deep/idx/bm25": 0o755}


def test_a_save_failing_at_the_swap_keeps_the_previous_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = saved_old(tmp_path)

    def failing(first: str, second: str) -> bool:
        raise OSError(errno.EIO, os.strerror(errno.EIO), second)

    monkeypatch.setattr(ef.io._atomic, "_exchange", failing)
    with pytest.raises(OSError, match="Input/output error"):
        ingest(NEW, show_progress=False).save(target, overwrite=True)
    assert SearchableCorpus.load(target, show_progress=False).source_ids == ("a", "b")
    assert folders(tmp_path) == ["idx"]


def test_two_renames_failing_between_them_put_the_previous_index_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where no atomic swap exists, the old index is moved aside first: a failure of the second
    # rename must not leave the target empty.
    target = saved_old(tmp_path)
    real_replace = os.replace
    calls: list[str] = []

    def second_fails(source: str, destination: str) -> None:
        calls.append(os.path.basename(destination))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), destination)
        real_replace(source, destination)

    monkeypatch.setattr(ef.io._atomic, "_exchange", lambda first, second: False)
    monkeypatch.setattr(ef.io._atomic.os, "replace", second_fails)
    with pytest.raises(OSError, match="No space left on device"):
        ingest(NEW, show_progress=False).save(target, overwrite=True)
    assert calls[1:] == ["idx", "idx"]  # the failed rename, then the one putting the old index back
    assert SearchableCorpus.load(target, show_progress=False).source_ids == ("a", "b")
    assert folders(tmp_path) == ["idx"]


def test_two_renames_replace_the_index_when_nothing_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = saved_old(tmp_path)
    monkeypatch.setattr(ef.io._atomic, "_exchange", lambda first, second: False)
    ingest(NEW, show_progress=False).save(target, overwrite=True)
    assert SearchableCorpus.load(target, show_progress=False).source_ids == ("x",)
    assert folders(tmp_path) == ["idx"]


def test_a_symlinked_index_folder_stays_a_link(tmp_path: Path) -> None:
    real = saved_old(tmp_path)
    (tmp_path / "link").symlink_to(real)
    ingest(NEW, show_progress=False).save(tmp_path / "link", overwrite=True)
    assert (tmp_path / "link").is_symlink()
    assert SearchableCorpus.load(real, show_progress=False).source_ids == ("x",)
    assert folders(tmp_path) == ["idx", "link"]


def test_a_killed_saves_folder_is_cleared_by_the_next_save(tmp_path: Path) -> None:
    host = temporary_name().split("-")[1]
    stale = tmp_path / f".ef-{host}-{2**22 + 12345}-{'0' * 12}.tmp"  # above any pid_max: no such process
    (stale / "bm25").mkdir(parents=True)
    (stale / "sources.jsonl").write_text("half")
    saved_old(tmp_path)
    assert folders(tmp_path) == ["idx"]
