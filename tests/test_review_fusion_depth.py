"""fuse / fit / tune take a numpy integer for `depth`, as every other count of ef does
(np.int64(10) was refused as "not a positive integer")."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ef.fusion import fit, fuse, tune

A = {f"q{i}": {"d1": 3.0, "d2": 2.0, "d3": 1.0} for i in range(4)}
B = {f"q{i}": {"d3": 3.0, "d2": 2.0, "d1": 1.0} for i in range(4)}
QRELS = {f"q{i}": {"d3": 1} for i in range(4)}


def test_fuse_takes_a_numpy_depth() -> None:
    fused = fuse([A, B], method="rrf", depth=np.int64(1))  # type: ignore[arg-type]
    # at depth 1 each run keeps its top doc only: d1 from A, d3 from B, tied, d2 gone
    assert sorted(fused.to_dict()["q0"]) == ["d1", "d3"]
    assert fused.to_dict() == fuse([A, B], method="rrf", depth=1).to_dict()


def test_fit_and_tune_take_a_numpy_depth() -> None:
    tables = fit([A, B], QRELS, method="posfuse", depth=np.int64(2))["tables"]  # type: ignore[arg-type]
    assert [t.tolist() for t in tables] == [t.tolist() for t in fit([A, B], QRELS, method="posfuse", depth=2)["tables"]]
    report = tune([A, B], QRELS, method="wsum", folds=2, step=0.5, depth=np.int64(2))  # type: ignore[arg-type]
    expected = tune([A, B], QRELS, method="wsum", folds=2, step=0.5, depth=2)
    assert (report.final, dict(report.held_out), report.fused_run) == (
        expected.final,
        dict(expected.held_out),
        expected.fused_run,
    )


@pytest.mark.parametrize("depth", [np.int64(0), 1.0, np.True_])
def test_a_depth_that_is_no_positive_integer_is_still_named(depth: object) -> None:
    with pytest.raises(
        ValueError, match="^" + re.escape(f"'depth' must be a positive integer or None (got {depth!r})") + "$"
    ):
        fuse([A, B], depth=depth)  # type: ignore[arg-type]
