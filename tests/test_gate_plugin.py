"""The ef.testing plugin as pytest loads it: by the pytest11 entry point an installed ef declares,
and by ``-p ef.testing`` beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_SMALL_TEST = '''
def test_fixture_is_there(ef_baseline, pytestconfig):
    assert ef_baseline.update is pytestconfig.getoption("--ef-update-baseline")
'''


@pytest.mark.slow  # a pytest run in a subprocess each
@pytest.mark.parametrize("flags", [[], ["-p", "ef.testing"], ["--ef-update-baseline"]])
def test_the_entry_point_loads_the_plugin_once(tmp_path: Path, flags: list[str]) -> None:
    # An installed ef registers the pytest11 entry point "ef.testing": here a stand-in distribution
    # on PYTHONPATH declares it, as pip's metadata would; "-p ef.testing" beside it is no duplicate.
    site = tmp_path / "site"
    info = site / "ef_plugin_standin-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ef-plugin-standin\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nef.testing = ef.testing\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (project / "test_small.py").write_text(_SMALL_TEST)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", *flags], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
