"""The public surface: every public module names its API in ``__all__``, and the ``ef`` command line
is built on that API alone (what it needs from ef's private plumbing has a deliberate public name)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
CLI = SRC / "ef" / "cli"


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _absolute(node: ast.ImportFrom) -> str:
    """The module `node` imports from, with a relative import resolved against ``ef.cli``."""
    if node.level == 0:
        return node.module or ""
    package = ["ef", "cli"]  # every file checked is a module of ef.cli: `.` is ef.cli, `..` is ef
    base = package[: max(0, len(package) - (node.level - 1))]
    return ".".join([*base, *([node.module] if node.module else [])])


def _inside_cli(module: str) -> bool:
    return module == "ef.cli" or module.startswith("ef.cli.")


def private_uses(source: str) -> list[str]:
    """What `source` (a module of ``ef.cli``) takes from outside ``ef.cli`` that is private: a module
    with a ``_name`` part, a ``_name`` imported from another module, or ``ef._x`` reached by attribute."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = _absolute(node)
            if _inside_cli(module) or module.split(".")[0] != "ef":
                continue
            if any(_private(part) for part in module.split(".")):
                found.append(f"{node.lineno}: {module}")
            found += [f"{node.lineno}: {module}.{alias.name}" for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: {alias.name}" for alias in node.names
                if alias.name.split(".")[0] == "ef" and not _inside_cli(alias.name)
                and any(_private(part) for part in alias.name.split("."))
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            chain = [node.attr]
            value: ast.expr = node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            dotted = ".".join([value.id, *reversed(chain)]) if isinstance(value, ast.Name) else ""
            if dotted.startswith("ef.") and not _inside_cli(dotted):
                found.append(f"{node.lineno}: {dotted}")
    return sorted(found, key=lambda where: int(where.split(":")[0]))  # ast.walk goes breadth first


def test_the_checker_finds_each_way_of_reaching_a_private_name() -> None:
    source = (
        "import ef\n"
        "import ef.io._atomic\n"
        "from ef.io._atomic import atomic_writer\n"
        "from ef.compare import _natural\n"
        "from ef.cli._output import write\n"  # the CLI's own private modules are its business
        "from ef.cli.compare import _natural as n\n"
        "from .. import _console\n"
        "from . import _runs\n"
        "from __future__ import annotations\n"
        "import argparse._sys\n"  # not ef's
        "x = ef._console.format_table\n"
        "y = ef.__version__\n"
    )
    assert private_uses(source) == [
        "2: ef.io._atomic",
        "3: ef.io._atomic",
        "4: ef.compare._natural",
        "7: ef._console",
        "11: ef._console",
    ]


def test_the_cli_uses_only_public_api() -> None:
    offenders = {
        path.name: found
        for path in sorted(CLI.glob("*.py"))
        if (found := private_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def _public_modules() -> list[tuple[str, Path]]:
    modules = []
    for package in ("ef", "fastrag"):
        for path in sorted((SRC / package).rglob("*.py")):
            parts = list(path.relative_to(SRC).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if not any(_private(part) or part == "__main__" for part in parts):
                modules.append((".".join(parts), path))
    return modules


PUBLIC = _public_modules()


def _declared_all(path: Path) -> list[str] | None:
    """The top-level ``__all__ = [...]`` of `path` as written, or ``None`` when it has none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return list(ast.literal_eval(value))
    return None


def test_the_public_modules_are_found() -> None:
    names = [name for name, _ in PUBLIC]
    assert {"ef", "ef.io", "ef.tables", "ef.cli", "ef.cli.eval", "fastrag", "fastrag.benchmark"} <= set(names)
    assert not [name for name in names if "._" in name or name.startswith("_")]


@pytest.mark.parametrize(("module", "path"), PUBLIC, ids=[name for name, _ in PUBLIC])
def test_every_public_module_declares_all_and_each_name_exists(module: str, path: Path) -> None:
    declared = _declared_all(path)
    assert declared is not None, f"{module} defines no __all__"
    assert len(declared) == len(set(declared)), f"{module}.__all__ repeats a name"
    imported = importlib.import_module(module)
    assert list(imported.__all__) == declared
    assert [name for name in declared if not hasattr(imported, name)] == []


def test_the_names_the_cli_needed_are_public_and_are_the_plumbing_itself() -> None:
    import ef._console
    import ef.io
    import ef.io._atomic
    import ef.tables

    assert ef.io.__all__ == ["atomic_writer"]
    assert ef.io.atomic_writer is ef.io._atomic.atomic_writer
    assert ef.tables.__all__ == ["format_table"]
    assert ef.tables.format_table is ef._console.format_table


def test_format_table_aligns_left_the_columns_named_by_left() -> None:
    from ef.tables import format_table

    assert format_table(["a", "b", "c"], [["x", "y", 1.0]], left=2) == "a  b       c\n-  -  ------\nx  y  1.0000"
    assert format_table(["a", "b"], [["x", None]], title="t") == "t\na  b\n-  -\nx  -"
    with pytest.raises(ValueError, match=r"^'left' must be a positive integer \(got 0\)$"):
        format_table(["a"], [], left=0)
