"""read_run / read_qrels name a path of the wrong type (os.fspath's message named no argument)."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from ef.trec import read_qrels, read_run


@pytest.mark.parametrize("reader", [read_run, read_qrels], ids=["read_run", "read_qrels"])
@pytest.mark.parametrize(("path", "kind"), [(None, "NoneType"), (5, "int"), (io.StringIO("q1 0 d1 1\n"), "StringIO")])
def test_a_path_of_the_wrong_type_is_named(reader: Callable[[object], object], path: object, kind: str) -> None:
    message = rf"^'path' must be a str or os\.PathLike path, or '-' for standard input \(got {kind}\)$"
    with pytest.raises(TypeError, match=message):
        reader(path)
