"""What a benchmark reads and records: :class:`EvalSample` in, :class:`QueryOutcome` out, as JSONL.

A samples file holds one JSON object per line with the :class:`EvalSample` fields::

    {"id": "q1", "query": "capital of France?", "relevant_ids": ["https://w/paris"],
     "reference_answer": "Paris", "metadata": {}}

Only ``id`` and ``query`` are required. Readers report ``<path>:<line>: <reason>`` for a bad
line and never skip one silently.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from ef._validate import (
    check_choice,
    check_id,
    check_instance,
    check_non_empty_str,
    check_non_negative_int,
    check_non_negative_number,
    check_positive_int,
    check_str,
    describe,
    find_non_finite,
    to_plain,
)
from fastrag.benchmark._jsonl import read_jsonl, write_jsonl
from fastrag.documents import Chunk

__all__ = ["EvalSample", "QueryOutcome", "load_samples", "read_outcomes", "save_samples"]


def _check_keys(data: Any, kind: str, required: Sequence[str], optional: Sequence[str]) -> None:
    check_instance(data, kind, Mapping, what="a JSON object")
    missing = [key for key in required if key not in data]
    if missing:
        raise ValueError(f"{kind} is missing {', '.join(repr(k) for k in missing)}")
    unknown = set(data) - set(required) - set(optional)
    if unknown:
        raise ValueError(f"{kind} has unknown field(s) {', '.join(repr(k) for k in sorted(unknown))}")


def _json_metadata(metadata: object, where: str) -> Mapping[str, Any]:
    """`metadata` as a plain, JSON-ready copy; NaN or infinity inside is a ``ValueError``."""
    check_instance(metadata, "metadata", Mapping, what="a mapping")
    if not metadata:
        return {}
    plain = to_plain(metadata)
    bad = find_non_finite(plain, "metadata")
    if bad is not None:
        raise ValueError(f"{where}: {bad[0]} is {bad[1]!r}, which JSON cannot hold; use null or a string")
    return plain  # type: ignore[return-value]


def _check_utf8(value: str, name: str) -> str:
    """`value` if UTF-8 can encode it: a lone surrogate cannot, so no results file could hold the
    sample and a benchmark would fail midway (a Chunk refuses it the same way)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"'{name}' is not encodable as UTF-8: {error.reason} at {error.start}") from None
    return value


@dataclass(frozen=True, slots=True)
class EvalSample:
    """One evaluation query with its ground truth.

    Parameters
    ----------
    id
        Unique within a benchmark; resuming a run matches outcomes to samples by it.
    query
        The text handed to the retriever or pipeline.
    relevant_ids
        The ids of the relevant documents, distinct: chunk ids for metrics with ``key="id"``,
        source URIs for ``key="source_uri"``. Empty when unknown — the ranking metrics then
        score ``None`` (missing) for this sample.
    reference_answer
        The expected answer for the answer metrics, or ``None``.
    metadata
        Free-form JSON-ready extras; not part of equality or the hash.

    Examples
    --------
    >>> EvalSample("q1", "capital of France?", ["paris"]).relevant_ids
    ('paris',)
    >>> EvalSample("q1", "capital of France?", "paris")
    Traceback (most recent call last):
    ...
    TypeError: 'relevant_ids' must be a sequence of str ids, not a single str
    """

    id: str
    query: str
    relevant_ids: Sequence[str] = ()  # stored as a tuple
    reference_answer: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        _check_utf8(check_non_empty_str(self.id, "id"), "id")
        _check_utf8(check_str(self.query, "query"), "query")
        given: object = self.relevant_ids  # checked as object: callers may pass anything
        if isinstance(given, str):
            raise TypeError("'relevant_ids' must be a sequence of str ids, not a single str")
        if not isinstance(given, Iterable):
            raise TypeError(f"'relevant_ids' must be a sequence of str ids (got {describe(given)})")
        relevant = tuple(check_id(doc_id, "relevant_ids") for doc_id in given)
        for i, doc_id in enumerate(relevant):
            _check_utf8(doc_id, f"relevant_ids[{i}]")
        if len(set(relevant)) != len(relevant):
            duplicate = next(d for i, d in enumerate(relevant) if d in relevant[:i])
            raise ValueError(f"'relevant_ids' must list each id once (got {duplicate!r} twice or more)")
        object.__setattr__(self, "relevant_ids", relevant)
        if self.reference_answer is not None:
            check_str(self.reference_answer, "reference_answer", what="a str or None")
            _check_utf8(self.reference_answer, "reference_answer")
        object.__setattr__(self, "metadata", _json_metadata(self.metadata, f"sample {self.id!r}"))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of one samples-file line."""
        return {
            "id": self.id,
            "query": self.query,
            "relevant_ids": list(self.relevant_ids),
            "reference_answer": self.reference_answer,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalSample:
        """Parse one samples-file line; unknown or missing fields are a ``ValueError``.

        >>> EvalSample.from_dict({"id": "q1", "query": "q", "relevant_ids": ["a"]}).relevant_ids
        ('a',)
        >>> EvalSample.from_dict({"id": "q1", "question": "q"})
        Traceback (most recent call last):
        ...
        ValueError: sample is missing 'query'
        """
        _check_keys(data, "sample", ("id", "query"), ("relevant_ids", "reference_answer", "metadata"))
        # Absent or null means none; any other non-list ("", 0, {}) is a mistake, not an empty list.
        relevant = data.get("relevant_ids")
        if relevant is None:
            relevant = ()
        else:
            check_instance(relevant, "relevant_ids", (list, tuple), what="a list of str ids")
        metadata = data.get("metadata")
        if metadata is None:
            metadata = {}
        else:
            check_instance(metadata, "metadata", Mapping, what="a JSON object or null")
        return cls(data["id"], data["query"], tuple(relevant), data.get("reference_answer"), metadata)


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What the target did for one sample, as measured by the harness.

    Parameters
    ----------
    sample_id
        The :attr:`EvalSample.id` this outcome answers.
    query
        The query text that was run (kept so a resumed run can check it still matches).
    retrieved
        The retrieved chunks, best first.
    answer
        The pipeline's answer; ``None`` for a bare retriever.
    latency_ms
        Wall time of the target's call, measured by the harness.
    total_tokens, cost_usd
        Usage the pipeline reported, or ``None``.
    error
        ``"<ExceptionType>: <message>"`` when the call raised or timed out; every score of this
        sample is then missing.

    Examples
    --------
    >>> outcome = QueryOutcome("q1", "query", [Chunk("p", 0, "text")], latency_ms=3.5)
    >>> outcome.retrieved[0].source_uri, outcome.ok
    ('p', True)
    >>> QueryOutcome("q1", "query", latency_ms=-1.0)
    Traceback (most recent call last):
    ...
    ValueError: 'latency_ms' must be a finite number >= 0 (got -1.0)
    """

    sample_id: str
    query: str
    retrieved: Sequence[Chunk] = ()  # stored as a tuple
    answer: str | None = None
    latency_ms: float | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        check_non_empty_str(self.sample_id, "sample_id")
        check_str(self.query, "query")
        given: object = self.retrieved  # checked as object: callers may pass anything
        if isinstance(given, str | bytes | AbstractSet | Mapping) or not isinstance(given, Iterable):
            raise TypeError(f"'retrieved' must be a sequence of Chunk (got {describe(given)})")
        retrieved = tuple(check_instance(chunk, "retrieved", Chunk, what="a sequence of Chunk") for chunk in given)
        object.__setattr__(self, "retrieved", retrieved)
        if self.answer is not None:
            check_str(self.answer, "answer", what="a str or None")
        # Stored as Python numbers: a numpy scalar here would abort writing the outcomes file.
        for name, check in (
            ("latency_ms", check_non_negative_number),
            ("total_tokens", check_non_negative_int),
            ("cost_usd", check_non_negative_number),
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, check(value, name))
        if self.error is not None:
            check_str(self.error, "error", what="a str or None")

    @property
    def ok(self) -> bool:
        """``True`` unless the call raised or timed out."""
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of one outcomes-file line."""
        return {
            "sample_id": self.sample_id,
            "query": self.query,
            "retrieved": [chunk.to_dict() for chunk in self.retrieved],
            "answer": self.answer,
            "latency_ms": self.latency_ms,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QueryOutcome:
        """Parse one outcomes-file line (the inverse of :meth:`to_dict`).

        >>> outcome = QueryOutcome("q1", "q", [Chunk("p", 0, "t")], latency_ms=1.0)
        >>> QueryOutcome.from_dict(outcome.to_dict()) == outcome
        True
        """
        _check_keys(
            data,
            "outcome",
            ("sample_id", "query"),
            ("retrieved", "answer", "latency_ms", "total_tokens", "cost_usd", "error"),
        )
        retrieved = data.get("retrieved")
        if retrieved is None:
            retrieved = []
        else:
            check_instance(retrieved, "retrieved", list, what="a list of chunks")
        return cls(
            data["sample_id"],
            data["query"],
            tuple(Chunk.from_dict(chunk) for chunk in retrieved),
            data.get("answer"),
            data.get("latency_ms"),
            data.get("total_tokens"),
            data.get("cost_usd"),
            data.get("error"),
        )


_HEADER_KEY = "fastrag_outcomes"
_HEADER_VERSION = 1
_TARGET_KINDS = ("retriever", "pipeline")


@dataclass(frozen=True, slots=True)
class OutcomesHeader:
    """The header line of an outcomes file: what every outcome after it was run with.

    ``run_benchmark`` writes it first, as ``{"fastrag_outcomes": 1, "top_k": 5, "target":
    "retriever", "run_name": "my_pkg.BM25Retriever"}``, and resuming refuses a file whose header
    does not match the run, since the recorded chunks depend on how many were asked for, from
    which kind of target and from which target (``run_name``; files written before it existed
    have ``None`` there, and are refused for resuming).

    >>> OutcomesHeader.from_dict(OutcomesHeader(5, "pipeline", "bm25").to_dict())
    OutcomesHeader(top_k=5, target='pipeline', run_name='bm25')
    >>> OutcomesHeader(0, "retriever")
    Traceback (most recent call last):
    ...
    ValueError: 'top_k' must be a positive integer (got 0)
    """

    top_k: int
    target: str
    run_name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "top_k", check_positive_int(self.top_k, "top_k"))
        check_choice(self.target, "target", _TARGET_KINDS)
        if self.run_name is not None:
            check_non_empty_str(self.run_name, "run_name", what="a non-empty str or None")

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the header line."""
        data: dict[str, Any] = {_HEADER_KEY: _HEADER_VERSION, "top_k": self.top_k, "target": self.target}
        if self.run_name is not None:
            data["run_name"] = self.run_name
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> OutcomesHeader:
        """Parse a header line; an unknown format version or field is a ``ValueError``."""
        _check_keys(data, "header", (_HEADER_KEY, "top_k", "target"), ("run_name",))
        if data[_HEADER_KEY] != _HEADER_VERSION:
            raise ValueError(
                f"header has format version {data[_HEADER_KEY]!r}; this fastrag reads version {_HEADER_VERSION}"
            )
        return cls(data["top_k"], data["target"], data.get("run_name"))

    def differences(self, other: OutcomesHeader) -> tuple[str, str] | None:
        """``("top_k=1", "top_k=2")``-style descriptions of the fields that differ, or ``None``.

        >>> OutcomesHeader(5, "retriever", "a").differences(OutcomesHeader(5, "retriever", "b"))
        ("run_name='a'", "run_name='b'")
        """
        fields = [name for name in ("top_k", "target", "run_name") if getattr(self, name) != getattr(other, name)]
        if not fields:
            return None

        def show(header: OutcomesHeader, name: str) -> str:
            value = getattr(header, name)
            return f"{name}={value!r}" if name == "run_name" else f"{name}={value}"

        return " and ".join(show(self, n) for n in fields), " and ".join(show(other, n) for n in fields)


def _parse_outcome_line(data: Any) -> QueryOutcome | OutcomesHeader:
    if isinstance(data, Mapping) and _HEADER_KEY in data:
        return OutcomesHeader.from_dict(data)
    return QueryOutcome.from_dict(data)


def read_outcome_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, QueryOutcome | OutcomesHeader]]:
    """Every line of an outcomes file, header lines included, as ``(line_number, record)``.

    A sample may fail and be retried, so it can have several outcomes, but nothing follows its
    successful one: a second outcome after a success (the same lines appended twice, two runs
    writing one file) is a ``ValueError("path:line: ...")`` naming both lines, not a silent pick.
    """
    succeeded: dict[str, int] = {}
    for number, record in read_jsonl(path, _parse_outcome_line):
        if isinstance(record, QueryOutcome):
            first = succeeded.get(record.sample_id)
            if first is not None:
                raise ValueError(
                    f"{os.fspath(path)}:{number}: another outcome for sample {record.sample_id!r}, which "
                    f"already succeeded on line {first}; a sample has no outcome after its successful one"
                )
            if record.ok:
                succeeded[record.sample_id] = number
        yield number, record


def load_samples(path: str | os.PathLike[str]) -> list[EvalSample]:
    """Read a samples JSONL file; a bad line or a repeated id raises ``ValueError("path:line: …")``.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples.jsonl"
    >>> save_samples([EvalSample("q1", "alpha", ["a"]), EvalSample("q2", "beta")], path)
    >>> [s.id for s in load_samples(path)]
    ['q1', 'q2']
    >>> _ = path.write_text('{"id": "q1", "query": "alpha"}\\n{"id": "q1", "query": "beta"}\\n')
    >>> load_samples(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: ...samples.jsonl:2: sample id 'q1' already used on line 1
    """
    samples: list[EvalSample] = []
    first_line: dict[str, int] = {}
    for number, sample in read_jsonl(path, EvalSample.from_dict):
        if sample.id in first_line:
            raise ValueError(
                f"{os.fspath(path)}:{number}: sample id {sample.id!r} already used on line {first_line[sample.id]}"
            )
        first_line[sample.id] = number
        samples.append(sample)
    return samples


def save_samples(samples: Iterable[EvalSample], path: str | os.PathLike[str]) -> None:
    """Write `samples` to `path` as JSONL, one sample per line (replacing the file).

    >>> save_samples("samples.jsonl", [EvalSample("q1", "x")])
    Traceback (most recent call last):
    ...
    TypeError: save_samples(samples, path): 'samples' is a path ('samples.jsonl'); the samples come first
    """
    if isinstance(samples, str | bytes | os.PathLike):
        raise TypeError(f"save_samples(samples, path): 'samples' is a path ({samples!r}); the samples come first")
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"save_samples(samples, path): 'path' must be a file path (got {type(path).__name__})")
    items = list(samples)
    for position, sample in enumerate(items):
        if not isinstance(sample, EvalSample):
            raise TypeError(f"'samples'[{position}] must be an EvalSample (got {type(sample).__name__})")
    write_jsonl(path, (sample.to_dict() for sample in items))


def read_outcomes(path: str | os.PathLike[str]) -> Iterator[tuple[int, QueryOutcome]]:
    """Yield ``(line_number, outcome)`` from an outcomes JSONL file written by the harness.

    The header line (see :class:`OutcomesHeader`) is checked and skipped; files without one, as
    written before it existed, read the same.
    """
    for number, record in read_outcome_lines(path):
        if isinstance(record, QueryOutcome):
            yield number, record
