"""pandas and polars DataFrames in and out: runs and qrels as long frames, reports as long frames.

Neither library is a dependency of ef: each is imported only when a frame is built, and a missing
one is an ``ImportError`` with the command that installs it (``pip install 'ef-eval[pandas]'``). A
frame is recognised by its class's module, so reading a mapping never imports either library.

A run frame has a query id, a doc id and a score column; a qrels frame a query id, a doc id and a
relevance column. Each is found by its name: ef's and ir_measures' (``query_id``, ``doc_id``,
``score`` / ``relevance``), PyTerrier's (``qid``, ``docno``, ``score`` / ``label``) or ranx's
(``q_id``); ``columns=`` names yours (``{"query_id": "topic", "score": "sim"}``). Other columns
(PyTerrier's ``rank``, ``query`` and ``docid``, a run name ...) are not read. A frame without a
column for a role, or with two candidates for one, is a ``ValueError`` listing the columns found.

>>> import pandas as pd
>>> frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [0.5, 0.25]})
>>> run_from_frame(frame)
{'q1': {'d1': 0.5, 'd2': 0.25}}
>>> pyterrier = pd.DataFrame({"qid": ["q1"], "docid": [7], "docno": ["d1"], "rank": [0], "score": [2.5]})
>>> run_from_frame(pyterrier)
{'q1': {'d1': 2.5}}
>>> run_from_frame(pd.DataFrame({"topic": ["q1"], "doc": ["d1"], "sim": [1.0]}),
...                columns={"query_id": "topic", "doc_id": "doc", "score": "sim"})
{'q1': {'d1': 1.0}}
>>> long_frame({"q1": {"ndcg@10": 0.5}}, "pandas")
  query_id  measure  value
0       q1  ndcg@10    0.5
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from numbers import Real
from types import ModuleType
from typing import Any, Literal, Protocol

__all__ = [
    "COLUMN_ALIASES",
    "FRAME_COLUMNS",
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "DataFrameLike",
    "PerQueryFrames",
    "frame_columns",
    "frame_from_columns",
    "frame_library",
    "is_frame",
    "long_frame",
    "qrels_from_frame",
    "require",
    "run_from_frame",
]

Library = Literal["pandas", "polars"]
ColumnType = Literal["str", "float", "int"]


class DataFrameLike(Protocol):
    """What ef reads of a pandas or polars DataFrame, for type hints: its ``columns``."""

    @property
    def columns(self) -> Any: ...


RUN_COLUMNS = ("query_id", "doc_id", "score")
"""The columns of a run frame, in this order when ef builds one."""
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
"""The columns of a qrels frame."""
COLUMN_ALIASES: Mapping[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "q_id"),
    "doc_id": ("doc_id", "docno"),
    "score": ("score",),
    "relevance": ("relevance", "label"),
}
"""The names a frame's column may have for each role, ef's (and ir_measures') first, then PyTerrier's
(``qid``, ``docno``, ``label``) and ranx's (``q_id``)."""
FRAME_COLUMNS = ("query_id", "measure", "value")
"""The columns of a report's long per-query frame: one row per (query, measure)."""

_LIBRARIES: tuple[Library, ...] = ("pandas", "polars")


def require(library: str) -> ModuleType:
    """The `library` module (``"pandas"`` or ``"polars"``), or an ``ImportError`` with the install hint.

    >>> require("pandas").__name__
    'pandas'
    >>> require("numpy")
    Traceback (most recent call last):
    ...
    ValueError: 'library' must be 'pandas' or 'polars' (got 'numpy')
    """
    if not isinstance(library, str):
        raise TypeError(f"'library' must be 'pandas' or 'polars' (got {library!r})")
    if library not in _LIBRARIES:
        raise ValueError(f"'library' must be 'pandas' or 'polars' (got {library!r})")
    try:
        return importlib.import_module(library)
    except ImportError as error:
        hint = f"pip install 'ef-eval[{library}]'"
        raise ImportError(f"this needs {library}, an optional dependency of ef: {hint}") from error


def frame_library(value: object) -> Library | None:
    """``"pandas"`` or ``"polars"`` if `value` is a DataFrame of that library, else ``None``.

    Told by the class's module, so neither library is imported to answer.
    """
    for cls in type(value).__mro__:
        root = cls.__module__.partition(".")[0]
        if root in _LIBRARIES and cls.__name__ == "DataFrame":
            return root
    return None


def is_frame(value: object) -> bool:
    """Whether `value` is a pandas or polars DataFrame."""
    return frame_library(value) is not None


def frame_columns(frame: Any) -> list[str]:
    """The column names of a pandas or polars frame, as str (a pandas frame may have others)."""
    return [str(name) for name in frame.columns]


def _role_columns(
    frame: Any, name: str, expected: tuple[str, ...], columns: Mapping[str, str] | None
) -> dict[str, str]:
    """The frame's column for each role of `expected`: `columns` first, else the one alias present."""
    found = frame_columns(frame)
    if not isinstance(columns, Mapping | None):
        raise TypeError(f"'columns' must be a mapping of roles to column names (got {columns!r})")
    given = dict(columns or {})
    if any(role not in expected for role in given):
        raise ValueError(f"'columns' must map some of {list(expected)} to column names (got {columns!r})")
    out: dict[str, str] = {}
    for role in expected:
        if role in given:
            if given[role] not in found:
                raise ValueError(f"'columns' names {given[role]!r} for {role} but the '{name}' DataFrame has no "
                                 f"such column (found {found})")
            out[role] = given[role]
            continue
        present = [alias for alias in COLUMN_ALIASES[role] if alias in found]
        if len(present) != 1:
            spelled = " or ".join(COLUMN_ALIASES[role])
            why = f"two columns for {role}: {present}" if present else f"no {role} column ({spelled})"
            raise ValueError(
                f"'{name}' DataFrame has {why} (found {found}); name it with columns={{{role!r}: ...}}"
            )
        out[role] = present[0]
    return out


def _columns(
    frame: Any, name: str, expected: tuple[str, ...], columns: Mapping[str, str] | None = None
) -> dict[str, list[Any]]:
    if not is_frame(frame):  # a dict of columns failed inside, on .columns
        raise TypeError(f"'frame' must be a pandas or polars DataFrame (got {type(frame).__name__})")
    roles = _role_columns(frame, name, expected, columns)
    return {role: frame[column].to_list() for role, column in roles.items()}


def _nested(
    frame: Any, name: str, expected: tuple[str, ...], columns_given: Mapping[str, str] | None = None
) -> dict[str, dict[str, Any]]:
    columns = _columns(frame, name, expected, columns_given)
    value_column = expected[2]
    out: dict[str, dict[str, Any]] = {}
    rows = zip(columns["query_id"], columns["doc_id"], columns[value_column], strict=True)
    for row, (query_id, doc_id, value) in enumerate(rows):
        for column, id_ in (("query_id", query_id), ("doc_id", doc_id)):
            if not isinstance(id_, str):
                # An int id never equals the str ids of the other side: every query would match nothing.
                raise TypeError(
                    f"'{name}' column {column!r} must hold str ids (got {id_!r} of type {type(id_).__name__} "
                    f"in row {row})"
                )
            if not id_:  # no file can hold it; a dict would score it as one more query
                raise ValueError(f"'{name}' column {column!r} holds an empty id ('') in row {row}")
        _check_value(value, name, value_column, row)
        docs = out.setdefault(query_id, {})
        if doc_id in docs:
            raise ValueError(f"'{name}' lists doc {doc_id!r} twice for query {query_id!r} (row {row})")
        docs[doc_id] = value
    return out


def _check_value(value: object, name: str, column: str, row: int) -> None:
    """A score or grade: a real number, not NaN (a frame's missing value), and for a grade finite.

    The dicts these functions return are public: a NaN or a str from the frame was handed on as
    it was (only a scorer that read them later refused it)."""
    if column == "score" and isinstance(value, Decimal):  # pd.read_sql's NUMERIC: evaluate_run takes it
        if value.is_nan():
            raise ValueError(_missing(name, column, row))
        return
    if isinstance(value, bool) or not isinstance(value, Real):  # numpy's bool_ is no Real either
        raise TypeError(
            f"'{name}' column {column!r} must hold numbers (got {value!r:.80} of type {type(value).__name__} "
            f"in row {row})"
        )
    if math.isnan(value):
        raise ValueError(_missing(name, column, row))
    if column == "relevance" and math.isinf(value):  # a run may rank at infinity, as a TREC file may
        raise ValueError(f"'{name}' column {column!r} must hold finite grades (got {value!r} in row {row})")


def _missing(name: str, column: str, row: int) -> str:
    return f"'{name}' column {column!r} holds NaN (a missing value?) in row {row}"


def run_from_frame(frame: Any, *, columns: Mapping[str, str] | None = None) -> dict[str, dict[str, float]]:
    """A run frame (``query_id``, ``doc_id``, ``score``) as ``{query_id: {doc_id: score}}``.

    The columns are found by name (:data:`COLUMN_ALIASES`: PyTerrier's ``qid``, ``docno`` too) or
    named by `columns` (``{"query_id": "topic"}``); other columns are not read. Rows keep their
    order within a query.

    Raises
    ------
    ValueError
        For a role without a column or with two (the message lists the columns), a bad `columns`,
        a doc listed twice in a query, or a NaN score (a missing value).
    TypeError
        For an id that is not a str, a score that is not a number, or `frame` not a DataFrame.
    """
    return _nested(frame, "run", RUN_COLUMNS, columns)


def qrels_from_frame(frame: Any, *, columns: Mapping[str, str] | None = None) -> dict[str, dict[str, float]]:
    """A qrels frame (``query_id``, ``doc_id``, ``relevance``) as ``{query_id: {doc_id: relevance}}``.

    The columns are found by name (PyTerrier's ``qid``, ``docno``, ``label`` too) or named by
    `columns`, as for :func:`run_from_frame`.

    Raises
    ------
    ValueError
        For a role without a column or with two (the message lists the columns), a bad `columns`,
        a doc judged twice in a query, or a grade that is NaN or infinite.
    TypeError
        For an id that is not a str, a grade that is not a number, or `frame` not a DataFrame.
    """
    return _nested(frame, "qrels", QRELS_COLUMNS, columns)


def long_frame(per_query: Mapping[str, Mapping[str, float]], library: str) -> Any:
    """``{query_id: {measure: value}}`` as a long frame: columns ``query_id``, ``measure``, ``value``.

    One row per (query, measure), queries and measures in the mapping's order; `library` is
    ``"pandas"`` or ``"polars"``.

    >>> long_frame({"q1": {"mrr": 1.0, "P_5": 0.2}, "q2": {"mrr": 0.5, "P_5": 0.0}}, "polars").shape
    (4, 3)
    """
    if not isinstance(per_query, Mapping):  # None failed inside, on .items()
        raise TypeError(
            f"'per_query' must be a mapping {{query_id: {{measure: value}}}} (got {type(per_query).__name__})"
        )
    if library not in _LIBRARIES:  # else found only after every row was read
        raise ValueError(f"'library' must be 'pandas' or 'polars' (got {library!r})")
    query_ids: list[str] = []
    measures: list[str] = []
    values: list[float] = []
    for query_id, row in per_query.items():
        for measure, value in row.items():
            query_ids.append(query_id)
            measures.append(measure)
            values.append(float(value))
    return frame_from_columns(
        {"query_id": query_ids, "measure": measures, "value": values},
        {"query_id": "str", "measure": "str", "value": "float"},
        library,
    )


def frame_from_columns(
    columns: Mapping[str, Sequence[str | float | int]], types: Mapping[str, ColumnType], library: str
) -> Any:
    """A pandas or polars frame of `columns` (name -> values), each of the type `types` gives it.

    The types are given, not inferred, so an empty column keeps its type.

    >>> frame_from_columns({"measure": ["mrr"], "n": [3]}, {"measure": "str", "n": "int"}, "polars").dtypes
    [String, Int64]
    """
    module = require(library)
    if library == "pandas":
        dtypes = {"str": "str", "float": "float64", "int": "int64"}
        return module.DataFrame(
            {name: module.Series(list(values), dtype=dtypes[types[name]]) for name, values in columns.items()},
            columns=list(columns),
        )
    schema = {"str": module.String, "float": module.Float64, "int": module.Int64}
    return module.DataFrame(
        {name: list(values) for name, values in columns.items()},
        schema={name: schema[types[name]] for name in columns},
    )


class PerQueryFrames:
    """``to_pandas()`` / ``to_polars()`` for a report with a ``per_query`` mapping: one long frame,
    columns ``query_id``, ``measure``, ``value`` (see :func:`long_frame`)."""

    per_query: Mapping[str, Mapping[str, float]]

    def to_pandas(self) -> Any:
        """``per_query`` as a long pandas DataFrame (``ImportError``: ``pip install 'ef-eval[pandas]'``)."""
        return long_frame(self.per_query, "pandas")

    def to_polars(self) -> Any:
        """``per_query`` as a long polars DataFrame (``ImportError``: ``pip install 'ef-eval[polars]'``)."""
        return long_frame(self.per_query, "polars")

    def _repr_html_(self) -> str:
        """The report's means as an HTML table, for notebooks (Jupyter shows it instead of the repr).

        >>> from ef.evaluation import evaluate_run
        >>> report = evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}, "q2": {"d2": 1}}, ["P@1", "num_ret"])
        >>> print(report._repr_html_())
        <table class="ef-report"><caption>Mean over 2 queries (counts summed)</caption>
        <thead><tr><th>measure</th><th>value</th></tr></thead>
        <tbody><tr><td>P@1</td><td>0.5000</td></tr><tr><td>num_ret</td><td>1</td></tr></tbody></table>
        """
        import html

        metrics: Mapping[str, float] = getattr(self, "metrics", {})
        n_queries = getattr(self, "n_queries", len(self.per_query))
        rows = "".join(
            f"<tr><td>{html.escape(str(name))}</td><td>{value if isinstance(value, int) else f'{value:.4f}'}</td></tr>"
            for name, value in metrics.items()
        )
        caption = f"Mean over {n_queries} quer{'y' if n_queries == 1 else 'ies'}"
        if any(isinstance(value, int) for value in metrics.values()):
            caption += " (counts summed)"
        return (
            f'<table class="ef-report"><caption>{caption}</caption>\n'
            "<thead><tr><th>measure</th><th>value</th></tr></thead>\n"
            f"<tbody>{rows}</tbody></table>"
        )
