"""JSON and JSON Lines reading, strict: every problem names ``file:line``.

One JSON value per line; blank lines are skipped. Refused, never guessed: bytes that are not
UTF-8, a line that is not JSON, an object with the same key twice (json keeps the last one
silently), the non-standard constants ``NaN``, ``Infinity`` and ``-Infinity``, and a number
beyond the range of a double (``1e400``, which Python's json reads as infinity).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "records.jsonl")
>>> _ = open(path, "w").write('{"id": "a"}\\n\\n{"id": "b"}\\n')
>>> list(iter_jsonl(path))
[(1, {'id': 'a'}), (3, {'id': 'b'})]
>>> _ = open(path, "w").write('{"id": "a", "id": "b"}\\n')
>>> list(iter_jsonl(path))  # doctest: +ELLIPSIS
Traceback (most recent call last):
ValueError: ...records.jsonl:1: key 'id' appears twice in one object
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from ef.io._source import Source, decode_utf8, display_name, iter_lines, read_bytes

__all__ = ["iter_json_objects", "iter_jsonl", "json_type", "loads", "read_json"]


class _RefusedError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RefusedError(f"key {key!r} appears twice in one object")
            seen.add(key)
    return record


def _constant(name: str) -> Any:
    raise _RefusedError(f"{name} is not valid JSON (JSON has no NaN or infinity)")


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e400 parsed as inf: the infinity JSON has no constant for, by the back door
        raise _RefusedError(f"the number {text} is beyond the range of a double (it would read as infinity)")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float)
_WITH_CONSTANTS = json.JSONDecoder(object_pairs_hook=_pairs)


def loads(text: str, where: str, *, constants: bool = False) -> Any:
    """Parse one JSON document; ``ValueError("<where>: <reason>")`` if it is not strict JSON.

    ``constants=True`` reads ``NaN`` and ``Infinity`` (and 1e400) as floats, for a caller that then
    refuses them naming the field (``ef report``'s saved reports).

    >>> loads('{"score": 1e400}', "run.json")
    Traceback (most recent call last):
    ...
    ValueError: run.json: the number 1e400 is beyond the range of a double (it would read as infinity)
    >>> loads('{\\n  "score": 0.5,\\n}', "run.json")
    Traceback (most recent call last):
    ...
    ValueError: run.json:3: malformed JSON: Expecting property name enclosed in double quotes (column 1)
    """
    if not isinstance(text, str):  # the decoder's own message names no argument
        raise TypeError(f"'text' must be a str (got {type(text).__name__})")
    try:
        return (_WITH_CONSTANTS if constants else _DECODER).decode(text)
    except _RefusedError as error:
        raise ValueError(f"{where}: {error}") from None
    except json.JSONDecodeError as error:  # a document of several lines says which (a JSON Lines line is one)
        line = f":{error.lineno}" if "\n" in text.strip() else ""
        raise ValueError(f"{where}{line}: malformed JSON: {error.msg} (column {error.colno})") from None


def iter_jsonl(source: Source) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of a JSON Lines file (plain or gzip, or ``-``)."""
    return _values(iter_lines(source), display_name(source))


def _values(lines: Iterable[tuple[int, bytes]], name: str) -> Iterator[tuple[int, Any]]:
    for number, raw in lines:
        if not raw.strip():
            continue
        where = f"{name}:{number}"
        yield number, loads(decode_utf8(raw, where), where)


def json_type(value: object) -> str:
    """The JSON name of `value`'s type, for messages: ``object``, ``array``, ``string`` …"""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def iter_json_objects(source: Source | bytes, name: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl`, where every value must be a JSON object (``file:line`` otherwise); or the
    records of `source`'s bytes, read already (a pipe's), whose errors name `name`.

    >>> list(iter_json_objects(b'{"a": 1}\\n\\n[2]\\n', "<stdin>"))
    Traceback (most recent call last):
    ...
    ValueError: <stdin>:3: expected a JSON object, got array
    """
    if isinstance(source, bytes):
        name = name or "<bytes>"
        numbered = enumerate((line.removesuffix(b"\r") for line in source.split(b"\n")), 1)
        values = _values(numbered, name)
    else:
        name, values = display_name(source), iter_jsonl(source)
    for number, value in values:
        if not isinstance(value, dict):
            raise ValueError(f"{name}:{number}: expected a JSON object, got {json_type(value)}")
        yield number, value


def read_json(source: Source, *, constants: bool = False) -> Any:
    """The one JSON document in `source` (``-``: standard input); errors name the file. `constants`:
    as :func:`loads`."""
    name = display_name(source)
    return loads(decode_utf8(read_bytes(source), name), name, constants=constants)
