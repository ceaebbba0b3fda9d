"""Measures of your own: :func:`register_measure` adds one to the registry (:mod:`ef.measures.registry`)
for every reader of names, :func:`unregister_measure` removes it. A module above both the registry and
the parser (:mod:`ef.measures.parse`): a new name is checked by reading it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ef.measures.parse import parse_measure
from ef.measures.registry import _ORDER, _REGISTRY, _USER, Aggregate, Kind, Measure, MeasureFamily, ParamKind, _family

if TYPE_CHECKING:
    import numpy.typing as npt

    from ef.measures.bulk import HitTable

__all__ = ["register_measure", "unregister_measure"]


def register_measure(
    name: str,
    kernel: Callable[[HitTable, Measure], npt.NDArray[Any]],
    *,
    description: str,
    kind: Kind = "score",
    param: ParamKind = "none",
    defaults: tuple[int | float, ...] = (),
    aggregate: Aggregate = "mean",
) -> MeasureFamily:
    """Add a measure of your own to the registry: every reader of names then takes it.

    `kernel(table, measure)` returns one float per query of a :class:`~ef.measures.bulk.HitTable`
    (``table.n`` values; the table holds each retrieved judged document's query, 0-based rank and
    grade, ``num_ret`` and the judged grades); ``measure.param`` is the cutoff of ``name@K`` /
    ``name_K`` when `param` is ``"cutoff"`` or ``"optional_cutoff"``. `kind`, `param`, `defaults`
    and `aggregate` mean what they mean in :class:`MeasureFamily`. ``ValueError`` for a name
    already registered (ef's own included), one the parser already reads as another measure
    (``mrr``, ``nDCG``, ``ndcg_at_10``) or one it could not read back (``map_at``, whose
    ``map_at_10`` is MTEB's ``map_cut_10``).

    >>> import numpy as np
    >>> family = register_measure("first_hit_grade", lambda table, m: np.zeros(table.n), description="Zero.")
    >>> from ef.evaluation import evaluate_run
    >>> evaluate_run({"q": {"d": 1.0}}, {"q": {"d": 1}}, ["first_hit_grade"]).metrics
    {'first_hit_grade': 0.0}
    >>> unregister_measure("first_hit_grade")
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ValueError(f"'name' must be letters, digits and _ starting with a letter (got {name!r})")
    if name in _REGISTRY:
        raise ValueError(f"measure {name!r} is already registered")
    if not callable(kernel):
        raise TypeError(f"'kernel' must be callable (got {kernel!r})")
    if param not in ("none", "cutoff", "optional_cutoff"):
        raise ValueError(f"'param' must be 'none', 'cutoff' or 'optional_cutoff' (got {param!r})")
    if param == "cutoff" and not defaults:
        raise ValueError("'defaults' must give the cutoffs a family named alone stands for (param='cutoff')")
    # A name the parser already reads ("mrr", "nDCG", "ndcg_at_10") would either stay ef's measure,
    # leaving the new one unreachable, or take that spelling from every reader: refused either way.
    parse = parse_measure
    try:
        taken = parse(name).family
    except ValueError:
        taken = None
    if taken is not None:
        raise ValueError(f"measure {name!r} is already a spelling of ef's {taken!r}: choose another name")
    family = _family(name, description, kernel, kind=kind, param=param, defaults=defaults, aggregate=aggregate,
                     origin="user")
    _REGISTRY[name] = family
    _ORDER[name] = len(_ORDER)
    _USER.add(name)
    # Read back as the readers will: a cutoff measure named alone is expanded to its defaults, not parsed.
    forms = {"none": [name], "optional_cutoff": [name, f"{name}@10", f"{name}_10"],
             "cutoff": [f"{name}@10", f"{name}_10"]}[param]
    for form in forms:
        try:
            read = parse(form).family
        except ValueError:
            read = None
        if read != name:
            unregister_measure(name)
            raise ValueError(f"measure {name!r}: the parser would read {form!r} as "
                             f"{'nothing' if read is None else repr(read)}, not this measure: choose another name")
    return family


def unregister_measure(name: str) -> None:
    """Remove a measure :func:`register_measure` added (ef's own cannot be removed)."""
    if name not in _USER:
        raise ValueError(f"only a measure added by register_measure can be removed (got {name!r})")
    _USER.discard(name)
    del _REGISTRY[name]
    del _ORDER[name]
