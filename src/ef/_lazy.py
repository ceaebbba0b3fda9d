"""Package faces that import each public name from its module on first use (PEP 562).

Importing a package then costs only its own small ``__init__``: ``import ef.evaluation`` loads no
orchestrator and no numpy until a name is used. Type checkers see the plain imports, made under
``TYPE_CHECKING`` in each face.

>>> import types
>>> face = types.ModuleType("face")
>>> face.__getattr__, face.__dir__ = lazy_names(face.__dict__, "face", {"dedent": "textwrap"})
>>> face.dedent("  x")
'x'
>>> face.missing
Traceback (most recent call last):
...
AttributeError: module 'face' has no attribute 'missing'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    namespace: MutableMapping[str, Any], package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of a face whose names live in `homes` (name ->
    module); a name is imported once, then kept in `namespace` (the face's ``globals()``)."""

    def get(name: str) -> Any:
        module = homes.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *homes})

    return get, names
