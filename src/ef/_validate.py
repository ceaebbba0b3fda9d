"""Argument checks shared by ef and fastrag, with one message template.

Every message reads ``'<name>' must be <rule> (got <value>)``. A value of the wrong type is a
``TypeError``, a value of the right type outside the rule a ``ValueError``. Integers are accepted
in any form that is an :class:`numbers.Integral` (so ``numpy.int64(5)`` works like ``5``) and are
returned as Python ``int``; ``bool`` is refused wherever a number is asked for: ``True`` as a
cutoff is a mistake, not 1. Each check returns the value in its plain Python form, so a record can
store what it checked. `name` is quoted in the message unless it quotes itself, as a path into an
argument does (``"'ann_params'['M']"``).

>>> check_positive_int(0, "k")
Traceback (most recent call last):
...
ValueError: 'k' must be a positive integer (got 0)
>>> check_choice("dense", "unit", ("words", "chars"))
Traceback (most recent call last):
...
ValueError: 'unit' must be one of 'words', 'chars' (got 'dense')
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real

__all__ = [
    "check_bool",
    "check_choice",
    "check_device",
    "check_finite_number",
    "check_fraction",
    "check_id",
    "check_instance",
    "check_non_empty_str",
    "check_non_negative_int",
    "check_non_negative_number",
    "check_positive_int",
    "check_positive_number",
    "check_str",
    "describe",
    "find_non_finite",
    "find_not_json",
    "finite_float",
    "to_plain",
]

_SCALARS = (str, bytes, int, float, type(None))
_SHOWN_CHARS = 60


def describe(value: object) -> str:
    """How a message shows `value`: a scalar by its (shortened) repr, anything else by its type.

    >>> describe(-1), describe("x"), describe([1, 2]), describe(float("nan"))
    ('-1', "'x'", 'list', 'nan')
    """
    if isinstance(value, _SCALARS) or (type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0):
        return f"{value!r:.{_SHOWN_CHARS}}"
    return type(value).__name__


def _fail(error: type[Exception], name: str, rule: str, value: object) -> Exception:
    # A name that quotes itself is a path into an argument, shown as given: "'ann_params'['M']".
    shown = name if "'" in name else f"'{name}'"
    return error(f"{shown} must be {rule} (got {describe(value)})")


def _integer(value: object, name: str, rule: str) -> int:
    if type(value) is int:  # the common case, without the (slow) ABC checks below
        return value
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise _fail(TypeError, name, rule, value)
    return int(value)


def check_positive_int(value: object, name: str, *, what: str = "a positive integer") -> int:
    """`value` as a Python ``int`` if it is an integer ``>= 1``.

    >>> import numpy as np
    >>> check_positive_int(np.int64(5), "k")
    5
    >>> check_positive_int(2.0, "k")
    Traceback (most recent call last):
    ...
    TypeError: 'k' must be a positive integer (got 2.0)
    """
    number = _integer(value, name, what)
    if number < 1:
        raise _fail(ValueError, name, what, value)
    return number


def check_non_negative_int(value: object, name: str, *, what: str = "a non-negative integer") -> int:
    """`value` as a Python ``int`` if it is an integer ``>= 0``.

    >>> check_non_negative_int(-1, "index")
    Traceback (most recent call last):
    ...
    ValueError: 'index' must be a non-negative integer (got -1)
    >>> check_non_negative_int(True, "index")
    Traceback (most recent call last):
    ...
    TypeError: 'index' must be a non-negative integer (got True)
    """
    number = _integer(value, name, what)
    if number < 0:
        raise _fail(ValueError, name, what, value)
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


def _number(value: object, name: str, rule: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(TypeError, name, rule, value)
    number = finite_float(value)
    if number is None:
        raise _fail(ValueError, name, rule, value)
    return number


def check_finite_number(value: object, name: str) -> float:
    """`value` as a Python ``float`` if it is a finite real number (not a bool).

    >>> check_finite_number(float("nan"), "grade")
    Traceback (most recent call last):
    ...
    ValueError: 'grade' must be a finite number (got nan)
    """
    return _number(value, name, "a finite number")


def check_non_negative_number(value: object, name: str, *, what: str = "a finite number >= 0") -> float:
    """`value` as a Python ``float`` if it is a finite real number ``>= 0``.

    >>> check_non_negative_number(-1.0, "latency_ms")
    Traceback (most recent call last):
    ...
    ValueError: 'latency_ms' must be a finite number >= 0 (got -1.0)
    """
    number = _number(value, name, what)
    if number < 0:
        raise _fail(ValueError, name, what, value)
    return number


def check_positive_number(value: object, name: str, *, what: str = "a finite number > 0") -> float:
    """`value` as a Python ``float`` if it is a finite real number ``> 0``.

    >>> check_positive_number(0, "timeout_s")
    Traceback (most recent call last):
    ...
    ValueError: 'timeout_s' must be a finite number > 0 (got 0)
    """
    number = _number(value, name, what)
    if number <= 0:
        raise _fail(ValueError, name, what, value)
    return number


def check_fraction(value: object, name: str, *, what: str = "a number between 0 and 1") -> float:
    """`value` as a Python ``float`` if it is a real number in ``[0, 1]`` (a probability, a share).

    >>> check_fraction(1.5, "confidence")
    Traceback (most recent call last):
    ...
    ValueError: 'confidence' must be a number between 0 and 1 (got 1.5)
    """
    number = _number(value, name, what)
    if not 0.0 <= number <= 1.0:
        raise _fail(ValueError, name, what, value)
    return number


def check_str(value: object, name: str, *, what: str = "a str") -> str:
    """`value` if it is a ``str`` (the empty one included).

    >>> check_str(b"x", "query")
    Traceback (most recent call last):
    ...
    TypeError: 'query' must be a str (got b'x')
    """
    if not isinstance(value, str):
        raise _fail(TypeError, name, what, value)
    return value


def check_non_empty_str(value: object, name: str, *, what: str = "a non-empty str") -> str:
    """`value` if it is a ``str`` with at least one character.

    >>> check_non_empty_str("", "source_id")
    Traceback (most recent call last):
    ...
    ValueError: 'source_id' must be a non-empty str (got '')
    """
    if not isinstance(value, str):
        raise _fail(TypeError, name, what, value)
    if not value:
        raise _fail(ValueError, name, what, value)
    return value


def check_choice(value: object, name: str, choices: Sequence[str]) -> str:
    """`value` if it is one of the names in `choices`.

    >>> check_choice(1, "key", ("id", "source_uri"))
    Traceback (most recent call last):
    ...
    TypeError: 'key' must be one of 'id', 'source_uri' (got 1)
    """
    rule = "one of " + ", ".join(map(repr, choices))
    if not isinstance(value, str):
        raise _fail(TypeError, name, rule, value)
    if value not in choices:
        raise _fail(ValueError, name, rule, value)
    return value


def check_bool(value: object, name: str) -> bool:
    """`value` as a Python ``bool`` if it is one (``numpy.bool_`` too): ``0``, ``1`` or ``"yes"``
    for a flag is a mistake to name, not a truthiness to guess at.

    >>> import numpy as np
    >>> check_bool(np.True_, "show_progress")
    True
    >>> check_bool(1, "show_progress")
    Traceback (most recent call last):
    ...
    TypeError: 'show_progress' must be a bool (got 1)
    """
    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")
    if not isinstance(value, bool) and not numpy_bool:
        raise _fail(TypeError, name, "a bool", value)
    return bool(value)


def check_device(value: object, name: str = "device") -> str | None:
    """A torch device as its name (``torch.device("cuda", 0)`` as ``"cuda:0"``), a name as it is,
    or None; anything else is named. torch is not imported: whether the device exists is for the
    model to say when it loads.

    >>> check_device("cuda:0"), check_device(None)
    ('cuda:0', None)
    >>> check_device(0)
    Traceback (most recent call last):
    ...
    TypeError: 'device' must be a torch device or its name such as 'cpu' or 'cuda:0', or None (got 0)
    """
    if value is None or isinstance(value, str):
        return value
    if type(value).__module__ == "torch" and type(value).__name__ == "device":
        return str(value)
    raise _fail(TypeError, name, "a torch device or its name such as 'cpu' or 'cuda:0', or None", value)


def check_instance(value: object, name: str, kind: type | tuple[type, ...], *, what: str | None = None) -> object:
    """`value` if it is an instance of `kind`; `what` words the rule (default: ``a <Kind>``).

    >>> check_instance("d1", "segment", int, what="a Segment")
    Traceback (most recent call last):
    ...
    TypeError: 'segment' must be a Segment (got 'd1')
    """
    if not isinstance(value, kind):
        if what is None:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            what = " or ".join(f"a {k.__name__}" for k in kinds)
        raise _fail(TypeError, name, what, value)
    return value


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


def to_plain(value: object) -> object:
    """`value` with numpy scalars and arrays, at any depth, turned into Python numbers and lists.

    Vector stores hand back ``numpy.float32`` scores; JSON cannot write them, and
    ``isinstance(numpy.float32(nan), float)`` is false, so they would slip past a NaN check.

    >>> import numpy as np
    >>> to_plain({"score": np.float32(0.5), "ids": np.array([1, 2]), "n": [np.int64(3)]})
    {'score': 0.5, 'ids': [1, 2], 'n': [3]}
    """
    if isinstance(value, Mapping):
        return {key: to_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [to_plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(to_plain(item) for item in value)
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return to_plain(value.tolist())  # a numpy scalar's tolist() is its Python number, an array's a list
    return value


def find_non_finite(value: object, where: str) -> tuple[str, float] | None:
    """The path and value of the first NaN or infinity inside `value` (dicts and lists), if any:
    what JSON cannot hold.

    >>> find_non_finite({"a": [1.0, {"b": float("inf")}]}, "metadata")
    ("metadata['a'][1]['b']", inf)
    """
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, Mapping):
        items: Iterable[tuple[object, object]] = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = find_non_finite(item, f"{where}[{key!r}]")
        if found is not None:
            return found
    return None


def find_not_json(value: object, where: str) -> str | None:
    """What in `value` JSON cannot hold, as ``"<path> is …"``, or ``None`` if it is all JSON.

    JSON holds str, int, finite float, bool, None, lists (and tuples, written as lists) and
    objects keyed by strings. Anything else — a set, a datetime, bytes, NaN, a key that is not a
    string (``json.dumps`` would turn ``1`` into ``"1"``) — would fail, or change, when written.

    >>> find_not_json({"a": [1, {"b": {"x"}}]}, "metadata")
    "metadata['a'][1]['b'] is of type set, which JSON cannot hold"
    >>> find_not_json({"a": float("inf")}, "metadata")
    "metadata['a'] is inf, which JSON cannot hold"
    >>> find_not_json({2: "b"}, "metadata")
    'metadata has the key 2 (of type int); JSON keys are strings'
    >>> find_not_json({"a": [None, True, "s", 1, 0.5]}, "metadata") is None
    True
    """
    if value is None or isinstance(value, str | bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, which JSON cannot hold"
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r:.60} (of type {type(key).__name__}); JSON keys are strings"
            found = find_not_json(item, f"{where}[{key!r}]")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for position, item in enumerate(value):
            found = find_not_json(item, f"{where}[{position}]")
            if found is not None:
                return found
        return None
    return f"{where} is of type {type(value).__name__}, which JSON cannot hold"
