"""DeepEval's test cases and saved datasets in, as ef's RAG samples (Ragas' field names), without deepeval.

DeepEval's ``EvaluationDataset.save_as(file_type, directory)`` writes its goldens (and, with
``include_test_cases=True``, its test cases) as ``json``, ``jsonl`` or ``csv``, each record with
the fields ``input``, ``actual_output``, ``expected_output``, ``retrieval_context``, ``context``,
``name``, ``comments``, ``source_file``, ``tools_called``, ``expected_tools``,
``additional_metadata`` and ``custom_column_key_values``. :func:`read_deepeval` reads those files;
:func:`from_deepeval` converts test cases in memory (``LLMTestCase`` or ``Golden`` objects, or
anything with the same attributes, or dicts with the same keys). Both give one
:class:`~ef.evaluation.RagSample` per test case, field by field (:data:`DEEPEVAL_FIELDS`):

========================  ======================  ===============================================
DeepEval                  ef (Ragas)              why
========================  ======================  ===============================================
``input``                 ``user_input``          the question
``actual_output``         ``response``            what the application answered
``retrieval_context``     ``retrieved_contexts``  what the application retrieved
``expected_output``       ``reference``           the ideal answer
``context``               ``reference_contexts``  DeepEval: "the ideal retrieval results"
========================  ======================  ===============================================

A retrieval context item with a source (DeepEval's ``RetrievedContextData``; a file holds it as
``deepeval_source=SOURCE,deepeval_context=TEXT``) gives its text to ``retrieved_contexts`` and its
source to ``retrieved_context_ids``, when every item of the list has one.

Nothing is dropped silently: a DeepEval field ef has no place for (``name``, ``comments``,
``tools_called``, ``additional_metadata`` ...) that holds a value is an error unless
``drop_unmapped=True`` leaves such fields out knowingly; a field DeepEval does not have, holding a
value, is always an error; so is a multi-turn (conversational) golden. Errors name the file and
line (``goldens.json:14``) or the test case (``test_cases[2]``), and the field.

>>> samples = from_deepeval([{"input": "capital of France?", "actual_output": "Paris",
...                           "expected_output": "Paris", "retrieval_context": ["Paris is the capital."]}])
>>> samples
[{'user_input': 'capital of France?', 'response': 'Paris', 'retrieved_contexts': ['Paris is the capital.'], \
'reference': 'Paris'}]
>>> from ef.evaluation import evaluate_rag
>>> evaluate_rag(samples, metrics=["exact_match", "context_recall"]).metrics
{'exact_match': 1.0, 'context_recall': 1.0}
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from ef.io._source import decode_utf8, display_name, read_bytes
from ef.io.frames import is_frame
from ef.io.jsonl import json_type, loads

__all__ = ["DEEPEVAL_FIELDS", "DEEPEVAL_FILE_TYPES", "from_deepeval", "read_deepeval"]

DEEPEVAL_FIELDS: Mapping[str, str] = {
    "input": "user_input",
    "actual_output": "response",
    "retrieval_context": "retrieved_contexts",
    "expected_output": "reference",
    "context": "reference_contexts",
}
"""DeepEval's test case field -> the :class:`~ef.evaluation.RagSample` field it becomes."""

DEEPEVAL_FILE_TYPES: tuple[str, ...] = ("json", "jsonl", "csv")
"""The ``file_type`` values of DeepEval's ``EvaluationDataset.save_as``, which :func:`read_deepeval` reads."""

# DeepEval's fields that have no place in a RagSample: refused when they hold a value, unless
# drop_unmapped. Golden's and LLMTestCase's (deepeval/dataset/golden.py, test_case/llm_test_case.py).
_UNMAPPED: tuple[str, ...] = (
    "name", "comments", "source_file", "tools_called", "expected_tools", "additional_metadata", "metadata",
    "custom_column_key_values", "token_cost", "completion_time", "tags", "flaky", "multimodal", "images_mapping",
    "id", "mcp_servers", "mcp_tools_called", "mcp_resources_called", "mcp_prompts_called",
)
# A ConversationalGolden's: ef scores single-turn samples.
_MULTI_TURN: tuple[str, ...] = ("scenario", "turns", "expected_outcome", "user_description", "persona")
# The spellings LLMTestCase and Golden also accept or write (pydantic aliases, by_alias=True).
_ALIASES: Mapping[str, str] = {
    "actualOutput": "actual_output",
    "expectedOutput": "expected_output",
    "retrievalContext": "retrieval_context",
    "additionalMetadata": "additional_metadata",
    "toolsCalled": "tools_called",
    "expectedTools": "expected_tools",
    "sourceFile": "source_file",
    "tokenCost": "token_cost",
    "completionTime": "completion_time",
    "customColumnKeyValues": "custom_column_key_values",
    "imagesMapping": "images_mapping",
    "mcpToolsCalled": "mcp_tools_called",
    "mcpResourcesCalled": "mcp_resources_called",
    "mcpPromptsCalled": "mcp_prompts_called",
}
_KNOWN = frozenset((*DEEPEVAL_FIELDS, *_UNMAPPED, *_MULTI_TURN))
_STR_FIELDS = ("input", "actual_output", "expected_output")
# DeepEval's csv and jsonl cells join a list with "|" and split it back the same way (deepeval/dataset/
# utils.py DELIMITER): a passage holding "|" comes back as two, in DeepEval as here.
_DELIMITER = "|"
# utils.py's _RETRIEVED_CONTEXT_MARKER, but across lines too: the writer puts a passage's newlines in
# as they are, and DeepEval's own reader (no DOTALL) leaves such an item as the marker string.
_MARKER = re.compile(r"deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)", re.DOTALL)


def from_deepeval(test_cases: Iterable[Any], *, drop_unmapped: bool = False) -> list[dict[str, Any]]:
    """ef's RAG samples of DeepEval test cases in memory, one per test case, in order.

    Parameters
    ----------
    test_cases
        ``LLMTestCase`` or ``Golden`` objects (``dataset.test_cases``, ``dataset.goldens``), any
        objects with their attributes, or dicts with their keys (``model_dump()``, with or without
        ``by_alias``).
    drop_unmapped
        Leave out DeepEval's fields that ef has no place for (``name``, ``tools_called``,
        ``metadata`` ...) rather than refuse a test case where one holds a value.

    Raises
    ------
    TypeError
        `test_cases` is not an iterable of test cases, or a field has the wrong type; the message
        names ``test_cases[i]`` and the field.
    ValueError
        No test cases; a multi-turn test case; a field ef has no place for that holds a value.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Case:  # what deepeval.test_case.LLMTestCase holds, for this example
    ...     input: str
    ...     actual_output: str | None = None
    ...     expected_output: str | None = None
    ...     retrieval_context: list[str] | None = None
    ...     context: list[str] | None = None
    ...     name: str | None = None
    >>> from_deepeval([Case("2 + 2?", "4", "4", context=["2 + 2 = 4"])])
    [{'user_input': '2 + 2?', 'response': '4', 'reference': '4', 'reference_contexts': ['2 + 2 = 4']}]
    >>> from_deepeval([Case("2 + 2?", "4", name="sums")])
    Traceback (most recent call last):
    ...
    ValueError: test_cases[0]: DeepEval field 'name' holds a value and ef's RAG samples have no field for it; \
pass drop_unmapped=True (ef rag: --drop-unmapped) to leave such fields out
    >>> from_deepeval([Case("2 + 2?", "4", name="sums")], drop_unmapped=True)
    [{'user_input': '2 + 2?', 'response': '4'}]
    """
    _check_drop(drop_unmapped)
    given: object = test_cases
    if is_frame(given):  # iterating one gives its column names
        raise TypeError("'test_cases' is a DataFrame, and iterating one gives its column names: pass "
                        "frame.to_dict('records') (pandas) or frame.to_dicts() (polars)")
    if isinstance(given, Mapping) or _is_case(given):
        raise TypeError("'test_cases' must be an iterable of test cases, not a single test case")
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        hint = (
            " (an EvaluationDataset: pass its .test_cases or .goldens)"
            if hasattr(given, "test_cases") or hasattr(given, "goldens") else ""
        )
        raise TypeError(f"'test_cases' must be an iterable of DeepEval test cases (got {type(given).__name__}){hint}")
    samples = [
        _sample(_fields(case, f"test_cases[{i}]"), f"test_cases[{i}]", in_file=False, drop=drop_unmapped)
        for i, case in enumerate(given)
    ]
    if not samples:
        raise ValueError("'test_cases' is empty; there is nothing to convert")
    return samples


def read_deepeval(
    path: str | os.PathLike[str],
    *,
    file_type: Literal["json", "jsonl", "csv"] | None = None,
    drop_unmapped: bool = False,
) -> list[dict[str, Any]]:
    """ef's RAG samples of a file DeepEval's ``EvaluationDataset.save_as`` wrote, one per record.

    The layout is told by the first character, as DeepEval writes them: ``[`` a JSON array of
    records (``json``), ``{`` one record per line (``jsonl``), anything else a CSV with a header
    row (``csv``); `file_type` names it instead. The file may be gzip-compressed, or ``-``
    (standard input). How each layout holds a list, as DeepEval writes and reads it:

    - ``json``: a JSON array of str (``null``: absent).
    - ``jsonl``: one str, the items joined with ``|`` (``""`` is the empty list), or an array.
    - ``csv``: one cell, the items joined with ``|``. An empty cell is an absent field (the CSV
      DeepEval writes cannot tell ``None``, ``""`` and ``[]`` apart); every cell is read as text
      (pandas, which DeepEval reads with, would read an answer ``42`` as a number).

    Parameters
    ----------
    path
        The file.
    file_type
        ``"json"``, ``"jsonl"`` or ``"csv"`` (DeepEval's names); ``None`` tells it from the content.
    drop_unmapped
        As :func:`from_deepeval`.

    Raises
    ------
    ValueError
        ``file:line: ...`` naming the record's first line and the field, for anything not read as
        written: a record that is not an object, a field of the wrong type, a multi-turn golden, a
        field ef has no place for that holds a value (see the module), a CSV row whose cells do not
        match the header; and for a file without records.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "goldens.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"input": "q", "actual_output": "a", "retrieval_context": "a|b", "context": null}\\n')
    >>> read_deepeval(path)
    [{'user_input': 'q', 'response': 'a', 'retrieved_contexts': ['a', 'b']}]
    """
    _check_drop(drop_unmapped)
    if file_type is not None and file_type not in DEEPEVAL_FILE_TYPES:
        raise ValueError(f"'file_type' must be one of {list(DEEPEVAL_FILE_TYPES)} or None (got {file_type!r})")
    name = display_name(path)
    text = decode_utf8(read_bytes(path), name)
    if file_type is None:
        first = text.lstrip()[:1]
        file_type = "json" if first == "[" else "jsonl" if first == "{" else "csv"
    records = {"json": _json_records, "jsonl": _jsonl_records, "csv": _csv_records}[file_type](text, name)
    samples = [
        _sample(fields, where, in_file=True, drop=drop_unmapped, joined=file_type != "json")
        for where, fields in records
    ]
    if not samples:
        raise ValueError(f"{name}: no test cases (DeepEval's save_as writes at least one)")
    return samples


def _check_drop(drop_unmapped: object) -> None:
    if not isinstance(drop_unmapped, bool):  # "no" would be true
        raise TypeError(f"'drop_unmapped' must be a bool (got {drop_unmapped!r})")


# --- the three layouts, as (where, fields) per record ---------------------------------------------


def _json_records(text: str, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    data = loads(text, name)  # strict: a key given twice, NaN, malformed JSON all name the file (and line)
    if not isinstance(data, list):
        raise ValueError(f"{name}: expected a JSON array of test cases, as DeepEval's save_as writes, "
                         f"got {json_type(data)}")
    for line, record in zip(_element_lines(text), data, strict=True):
        if not isinstance(record, dict):
            raise ValueError(f"{name}:{line}: expected a JSON object (a test case), got {json_type(record)}")
        yield f"{name}:{line}", record


def _element_lines(text: str) -> Iterator[int]:
    """The line each element of the (valid) top-level JSON array in `text` starts on."""
    import json

    decoder = json.JSONDecoder()
    at = _skip_blank(text, text.index("[") + 1)
    line, counted = 1, 0
    while text[at] != "]":
        line, counted = line + text.count("\n", counted, at), at  # from the last element on: linear, not square
        yield line
        at = _skip_blank(text, decoder.raw_decode(text, at)[1])
        if text[at] == ",":
            at = _skip_blank(text, at + 1)


def _skip_blank(text: str, at: int) -> int:
    while text[at] in " \t\n\r":  # JSON's white space; the array's "]" ends every walk
        at += 1
    return at


def _jsonl_records(text: str, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        record = loads(line, where)
        if not isinstance(record, dict):
            raise ValueError(f"{where}: expected a JSON object (a test case), got {json_type(record)}")
        yield where, record


# The csv cells DeepEval fills with json.dumps of a list or dict (save_as): these texts hold nothing.
_JSON_CELLS = frozenset({"tools_called", "expected_tools", "additional_metadata", "custom_column_key_values"})
_EMPTY_JSON = frozenset({"[]", "{}", "null"})


def _csv_records(text: str, name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    line = 0
    for row in reader:
        start, line = line + 1, reader.line_num  # a quoted cell may span lines: the record starts after the last
        if not row:
            continue
        where = f"{name}:{start}"
        if header is None:
            for i, column in enumerate(row):
                if column in row[:i]:
                    raise ValueError(f"{where}: column {column!r} appears twice in the header")
            header = row
            continue
        if len(row) != len(header):
            raise ValueError(f"{where}: {len(row)} cells, but the header on line 1 has {len(header)}")
        yield where, {
            column: None if cell == "" or (column in _JSON_CELLS and cell in _EMPTY_JSON) else cell
            for column, cell in zip(header, row, strict=True)
        }


# --- one record or object ------------------------------------------------------------------------


def _is_case(value: object) -> bool:
    return not isinstance(value, Mapping) and (hasattr(value, "input") or hasattr(value, "turns"))


def _fields(case: object, where: str) -> Mapping[str, Any]:
    """The fields of one test case in memory: a mapping's items, or a test case object's attributes."""
    if isinstance(case, Mapping):
        return case
    if not _is_case(case):
        raise TypeError(f"{where} must be a DeepEval test case (an object with .input, or a dict) "
                        f"(got {type(case).__name__})")
    declared = getattr(type(case), "model_fields", None)  # a pydantic model: LLMTestCase, Golden
    names = list(declared) if isinstance(declared, Mapping) else [
        field for field in (*DEEPEVAL_FIELDS, *_UNMAPPED, *_MULTI_TURN) if hasattr(case, field)
    ]
    return {field: getattr(case, field) for field in names}


def _holds(value: object) -> bool:
    """Whether a field holds anything: not None, not an empty text or collection, not False."""
    if value is None or value is False:
        return False
    if isinstance(value, str | list | tuple | dict | set):
        return len(value) > 0
    return True


def _kind(value: object, in_file: bool) -> str:
    return json_type(value) if in_file else type(value).__name__


def _sample(
    given: Mapping[str, Any], where: str, *, in_file: bool, drop: bool, joined: bool = False
) -> dict[str, Any]:
    """One RagSample of one test case's fields; `joined`: lists may be "|"-joined text (csv, jsonl)."""
    fields: dict[str, Any] = {}
    for key, value in given.items():
        field = _ALIASES.get(key, key)
        if field in fields:
            raise ValueError(f"{where}: gives DeepEval field {field!r} twice (as {field!r} and {key!r})")
        if field not in _KNOWN:
            if _holds(value):
                raise ValueError(
                    f"{where}: {key!r} is not a field of DeepEval's test cases, and ef cannot map it; "
                    f"the fields are {', '.join(DEEPEVAL_FIELDS)}, and {', '.join(_UNMAPPED)}"
                )
            continue
        fields[field] = value
    multi = [field for field in _MULTI_TURN if _holds(fields.get(field))]
    if multi:
        raise ValueError(f"{where}: a multi-turn (conversational) golden ({', '.join(map(repr, multi))}): "
                         "ef scores single-turn samples, one input and one output")
    if not drop:
        for field in _UNMAPPED:
            if _holds(fields.get(field)):
                raise ValueError(
                    f"{where}: DeepEval field {field!r} holds a value and ef's RAG samples have no field for it; "
                    "pass drop_unmapped=True (ef rag: --drop-unmapped) to leave such fields out"
                )
    null = "null" if in_file else "None"
    sample: dict[str, Any] = {}
    for field, target in DEEPEVAL_FIELDS.items():
        value = fields.get(field)
        if value is None:
            continue
        if field in _STR_FIELDS:
            if not isinstance(value, str):
                raise _error(in_file, f"{where}: {field!r} must be a str or {null} (got {_kind(value, in_file)})")
            sample[target] = value
            continue
        if joined and isinstance(value, str):
            value = value.split(_DELIMITER) if value else []
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise _error(in_file, f"{where}: {field!r} must be a list of str or {null} "
                                  f"(got {_kind(value, in_file)})")
        texts: list[str] = []
        sources: list[str | None] = []
        for i, item in enumerate(value):
            text, source = _item(item, in_file)
            if text is None:
                raise _error(in_file, f"{where}: {field!r}[{i}] must be a str (got {_kind(item, in_file)})")
            texts.append(text)
            sources.append(source)
        sample[target] = texts
        if any(source is not None for source in sources) and field == "retrieval_context":
            if all(source is not None for source in sources):
                sample["retrieved_context_ids"] = sources
            elif not drop:
                plain = [i for i, source in enumerate(sources) if source is None]
                raise ValueError(
                    f"{where}: 'retrieval_context' mixes passages with a source and passages without (items "
                    f"{', '.join(map(str, plain))}): ef keeps the sources, as retrieved_context_ids, only when "
                    "every passage has one; pass drop_unmapped=True (ef rag: --drop-unmapped) to leave them out"
                )
    return {key: sample[key] for key in _ORDER if key in sample}


_ORDER = ("user_input", "response", "retrieved_contexts", "retrieved_context_ids", "reference", "reference_contexts")


def _item(item: object, in_file: bool) -> tuple[str | None, str | None]:
    """(text, source) of one list item; text None if the item is neither a str nor a passage with a source."""
    if isinstance(item, str):
        match = _MARKER.fullmatch(item) if in_file else None
        return (item, None) if match is None else (match["context"], match["source"])
    text, source = getattr(item, "context", None), getattr(item, "source", None)  # RetrievedContextData
    if not in_file and isinstance(text, str) and isinstance(source, str):
        return text, source
    return None, None


def _error(in_file: bool, message: str) -> Exception:
    """A wrong type is a ValueError in a file (bad input naming file:line), a TypeError in memory."""
    return ValueError(message) if in_file else TypeError(message)
