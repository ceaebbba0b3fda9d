"""Small argument checks shared by ef and fastrag, with one message template.

Messages follow ``'<name>' must be <rule> (got <value>)``; a value of the wrong type is a
``TypeError``, a value of the right type outside the rule a ``ValueError``. Integers are accepted
in any form that is an :class:`numbers.Integral` (so ``numpy.int64(5)`` works like ``5``), but
``bool`` is refused: ``True`` as a cutoff is a mistake, not 1.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["check_finite_number", "check_id", "check_positive_int", "finite_float"]


def check_positive_int(value: object, name: str, *, what: str = "a positive integer") -> int:
    """`value` as a Python ``int`` if it is an integer ``>= 1``.

    >>> import numpy as np
    >>> check_positive_int(np.int64(5), "k")
    5
    >>> check_positive_int(0, "k")
    Traceback (most recent call last):
    ...
    ValueError: 'k' must be a positive integer (got 0)
    >>> check_positive_int(2.0, "k")
    Traceback (most recent call last):
    ...
    TypeError: 'k' must be a positive integer (got 2.0)
    """
    if type(value) is int:  # the common case, without the (slow) ABC checks below
        number = value
    elif isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"'{name}' must be {what} (got {value!r})")
    else:
        number = int(value)
    if number < 1:
        raise ValueError(f"'{name}' must be {what} (got {value!r})")
    return number


def finite_float(value: object) -> float | None:
    """`value` as a Python ``float`` if it is a real number (not a bool) that a float holds
    finitely; ``None`` otherwise (NaN, infinity, ``10**400``, a str, ``numpy.bool_``).

    >>> import numpy as np
    >>> finite_float(np.float32(0.5)), finite_float(10**400), finite_float(float("nan")), finite_float(True)
    (0.5, None, None, None)
    """
    if isinstance(value, float) and type(value) is float:  # the common case, without the ABC checks below
        return value if math.isfinite(value) else None
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, Real)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range: no float can stand for it
        return None
    return number if math.isfinite(number) else None


def check_finite_number(value: object, name: str) -> float:
    """`value` as a Python ``float`` if it is a finite real number (not a bool).

    >>> check_finite_number(float("nan"), "grade")
    Traceback (most recent call last):
    ...
    ValueError: 'grade' must be a finite number (got nan)
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"'{name}' must be a finite number (got {value!r:.60})")
    number = finite_float(value)
    if number is None:
        raise ValueError(f"'{name}' must be a finite number (got {value!r:.60})")
    return number


def check_id(value: object, name: str) -> str:
    """`value` if it is a ``str``: ids are text, and ``1`` never equals ``"1"`` in a dict.

    >>> check_id(b"d1", "ranked")
    Traceback (most recent call last):
    ...
    TypeError: 'ranked' must hold str ids (got b'd1')
    """
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must hold str ids (got {value!r})")
    return value
