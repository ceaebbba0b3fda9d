"""read_beir / write_beir name a directory or qrels path of the wrong type (they failed inside
os.path.join or os.fspath with a message that named neither)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.evaluation import read_beir, write_beir

TRIPLE = ({"d1": "Paris is in France."}, {"q1": "Where is Paris?"}, {"q1": {"d1": 1}})


@pytest.mark.parametrize(("directory", "kind"), [(None, "NoneType"), (b"/tmp/beir", "bytes"), (3, "int")])
def test_write_beir_names_a_directory_of_the_wrong_type(directory: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^'directory' must be a str or os\.PathLike\[str\] \(got {kind}\)$"):
        write_beir(directory, *TRIPLE)  # type: ignore[arg-type]


@pytest.mark.parametrize(("directory", "kind"), [(None, "NoneType"), (b"/tmp/beir", "bytes")])
def test_read_beir_names_a_directory_of_the_wrong_type(directory: object, kind: str) -> None:
    with pytest.raises(TypeError, match=rf"^'directory' must be a str or os\.PathLike\[str\] \(got {kind}\)$"):
        read_beir(directory)  # type: ignore[arg-type]


@pytest.mark.parametrize(("qrels", "kind"), [(5, "int"), (b"qrels.tsv", "bytes")])
def test_read_beir_names_a_qrels_path_of_the_wrong_type(tmp_path: Path, qrels: object, kind: str) -> None:
    write_beir(tmp_path, *TRIPLE)
    with pytest.raises(
        TypeError, match=rf"^'qrels' must be a str path relative to 'directory', or None \(got {kind}\)$"
    ):
        read_beir(tmp_path, qrels=qrels)  # type: ignore[arg-type]


def test_a_pathlib_directory_and_a_relative_qrels_path_still_read(tmp_path: Path) -> None:
    write_beir(tmp_path, *TRIPLE)
    assert read_beir(tmp_path, qrels="qrels.tsv") == TRIPLE
