"""The compiled kernel (``_kernel.c``), or where it cannot be imported its pure-Python reference,
said once on stderr: what ``_hits`` (the run engine's door), ``ef.fusion`` and ``ef.io``'s run
writer and :class:`~ef.io.ranked.RankedRun` call. A module of its own, so that those modules
import it and not each other."""

from __future__ import annotations

import sys

try:
    from ef.evaluation import _kernel as engine
except ImportError as missing:  # a source checkout never built, or a platform without a compiler
    from ef.evaluation import _reference as engine  # type: ignore[no-redef]

    print(
        f"ef: the compiled run engine is not available ({missing}); runs are scored by the pure-Python "
        "reference, about 30x slower (reinstall ef with a C compiler to build it)",
        file=sys.stderr,
    )

__all__ = ["engine"]
