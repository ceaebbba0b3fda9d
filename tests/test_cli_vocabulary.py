"""One vocabulary across the ``ef`` command line: the distribution name its hints install, ``--version``,
``-q/--quiet``, no prefix-guessing, did-you-mean for commands (issue 34)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import ef

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "ef-eval"  # free on PyPI when chosen; `ef` there is Embeddings Flow


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_name_is_not_someone_elses() -> None:
    project = _pyproject()["project"]
    assert project["name"] == DISTRIBUTION
    assert project["optional-dependencies"]["dev"] == [f"{DISTRIBUTION}[dense,ragas,test,ray,ann,report]"]
    assert project["version"] == ef.__version__


def test_every_install_hint_names_the_distribution() -> None:
    # `pip install 'ef[report]'` would install Embeddings Flow; every hint must name ef-eval.
    wrong = re.compile(r"""(?<![\w.-])ef\\?\[""")
    offenders = []
    paths = [*ROOT.glob("src/**/*.py"), *ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("tests/*.py")]
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if wrong.search(line) and path.name != "test_cli_vocabulary.py":
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []
    hints = [p for p in ROOT.glob("src/**/*.py") if "pip install 'ef-eval[" in p.read_text(encoding="utf-8")]
    assert len(hints) >= 10


def test_the_docs_say_how_to_live_beside_intels_fastrag() -> None:
    page = (ROOT / "docs" / "fastrag.md").read_text(encoding="utf-8")
    assert "ef's `fastrag` is not Intel's fastRAG" in page
    assert "pip install ef-eval" in page
    assert "pip install ef-eval" in (ROOT / "README.md").read_text(encoding="utf-8")
