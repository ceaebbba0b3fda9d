"""ef sweep: a baseline given in CONFIG is named as CONFIG's, as its other keys are."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.datasets import demo_dataset


@pytest.mark.parametrize(("baseline", "message"), [
    ('"whole"', "'baseline' 'whole' is not a cell of this sweep (give a cell's id or label)"),
    ("{ k1 = -1 }", "'baseline': 'k1' must be a number >= 0.0 (got -1)"),
])
def test_a_bad_baseline_in_config_names_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], baseline: str, message: str
) -> None:
    # It said "'baseline' ...", as if passed to ef.sweep.sweep in Python; a bad 'measures' or
    # 'correction' of the same file is named "CONFIG: 'measures'".
    from ef.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text(f"baseline = {baseline}\n[grid]\nk = [5, 10]\n", encoding="utf-8")
    argv = ["sweep", str(config), "--dataset", str(demo_dataset()), "--out", str(tmp_path / "out"), "-q"]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"ef sweep: error: {config}: {message}\n"
