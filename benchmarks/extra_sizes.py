"""What each extra of ef-eval costs on disk: the installed size of its dependency closure, beyond the core.

Reads the distributions installed in this environment (``importlib.metadata``): for the core and for
each extra, the closure of its requirements (markers evaluated here), and the bytes of the files
each distribution installed. Prints one line per extra, MB beyond the core, and the largest parts.
Run it in an environment with every extra installed (``make test`` builds one): an extra whose
closure is not all installed here is reported with what is missing.

    python benchmarks/extra_sizes.py
"""

from __future__ import annotations

import contextlib
import importlib.metadata as metadata
import re
from collections.abc import Iterable

from packaging.requirements import Requirement

DIST = "ef-eval"
OLD_DIST = "ef"  # an environment installed before the rename (issue 34) knows the distribution as ef


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _requirements(dist: str, extras: Iterable[str] = ()) -> list[Requirement]:
    out = []
    for line in metadata.requires(dist) or []:
        req = Requirement(line)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras)):
            if req.marker is not None and not extras and "extra" in str(req.marker):
                continue
            out.append(req)
    return out


def closure(roots: list[Requirement]) -> tuple[set[str], set[str]]:
    """Installed distribution names reachable from `roots`, and the names not installed."""
    seen: set[str] = set()
    missing: set[str] = set()
    todo = list(roots)
    while todo:
        req = todo.pop()
        name = _name(req.name)
        if name in seen or name in missing:
            continue
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.add(name)
            continue
        seen.add(name)
        todo.extend(_requirements(name, req.extras))
    return seen, missing


def size(name: str) -> int:
    total = 0
    for file in metadata.distribution(name).files or []:
        with contextlib.suppress(OSError):
            total += file.locate().stat().st_size
    return total


def main() -> None:
    try:
        dist = DIST
        own = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        dist = OLD_DIST
        own = metadata.distribution(dist)
    extras = list(own.metadata.get_all("Provides-Extra") or [])
    core, core_missing = closure(_requirements(dist))
    core_bytes = sum(size(n) for n in core)
    print(f"core: {core_bytes / 1e6:,.0f} MB in {len(core)} distributions"
          + (f" (not installed here: {sorted(core_missing)})" if core_missing else ""))
    for name, part in sorted(((n, size(n)) for n in core), key=lambda x: -x[1])[:5]:
        print(f"  {name:<28} {part / 1e6:8.1f} MB")
    for extra in extras:
        reqs = [r for r in (Requirement(line) for line in metadata.requires(dist) or [])
                if r.marker is not None and r.marker.evaluate({"extra": extra})]
        names, missing = closure(reqs)
        added = names - core
        total = sum(size(n) for n in added)
        biggest = sorted(((n, size(n)) for n in added), key=lambda x: -x[1])[:3]
        parts = ", ".join(f"{n} {b / 1e6:,.0f}" for n, b in biggest)
        note = f"; not installed here: {sorted(missing)}" if missing else ""
        print(f"[{extra}] +{total / 1e6:,.0f} MB beyond the core ({parts}){note}")


if __name__ == "__main__":
    main()
