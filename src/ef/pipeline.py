"""A retrieval pipeline as data: chunking, a first-stage retriever, an optional reranker, and k.

A :class:`Pipeline` is a frozen value. Its :attr:`~Pipeline.id` is derived from its content
(the parameters that apply to it, as canonical JSON, hashed), so the same pipeline has the same
id in every process and any change of a parameter changes it: a sweep keys its saved cells and
its caches by it. :func:`expand_grid` turns a grid (each parameter a value or a list of values)
into the list of pipelines of its cartesian product; :func:`collapse_to_sources` turns a run of
chunks into a run of their sources, each at its best chunk's score.

>>> p = Pipeline("bm25", size=200, overlap=40, k=10)
>>> p.label
'bm25 k1=1.2 b=0.75 | 200 words/40 | k=10'
>>> p.id == Pipeline.from_dict(p.to_dict()).id, p.id == Pipeline("bm25", size=200, overlap=40, k=20).id
(True, False)
>>> Pipeline("dense", k1=2.0)
Traceback (most recent call last):
...
ValueError: 'k1' applies to retriever 'bm25' or 'hybrid', not 'dense' (got k1=2.0)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from numbers import Real
from typing import Any

from ef._validate import check_choice, check_non_empty_str, check_non_negative_int, check_positive_int, describe
from ef.segments import UNITS

__all__ = [
    "DEFAULT_MODEL",
    "RERANK_KINDS",
    "RETRIEVERS",
    "Pipeline",
    "collapse_to_sources",
    "content_id",
    "expand_grid",
    "parse_rerank",
]

RETRIEVERS = ("bm25", "dense", "hybrid")
"""First-stage retrievers: BM25 (bm25s, Lucene), a sentence-transformers model, or their fusion."""
DEFAULT_MODEL = "all-MiniLM-L6-v2"
RERANK_KINDS = ("bi", "cross")
"""``bi:MODEL``: cosine of a sentence-transformers bi-encoder; ``cross:PATH``: a CrossEncoder."""
STEMMERS = ("english", "none")
STOPWORDS = ("english", "none")
_SCHEMA = "ef.pipeline/1"  # hashed with the content: a change of meaning changes every id
_LEXICAL = ("k1", "b", "stemmer", "stopwords")
_DEFAULTS: dict[str, Any] = {
    "model": None, "k1": 1.2, "b": 0.75, "stemmer": "english", "stopwords": "english",
    "unit": "words", "size": None, "overlap": 0, "rerank": None, "rerank_depth": 100,
    "fusion_depth": 100, "k": 100,
}
_RERANK_ALIASES = {"minilm": f"bi:{DEFAULT_MODEL}"}


def parse_rerank(spec: str, name: str = "rerank") -> tuple[str, str]:
    """``(kind, model)`` of a reranker spec: ``bi:MODEL``, ``cross:PATH`` or ``minilm``.

    `name` is the argument the spec came in, said in the error (``Pipeline.rerank``'s by default;
    :func:`ef.rerank.make_reranker` names its ``spec``).

    >>> parse_rerank("minilm")
    ('bi', 'all-MiniLM-L6-v2')
    >>> parse_rerank("colbert")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'rerank' must be 'bi:MODEL' (bi-encoder cosine), 'cross:PATH' (...) or 'minilm' (got 'colbert')
    """
    check_non_empty_str(spec, name)
    spec = _RERANK_ALIASES.get(spec, spec)
    kind, _, model = spec.partition(":")
    if kind not in RERANK_KINDS or not model.strip():
        raise ValueError(
            f"{name!r} must be 'bi:MODEL' (bi-encoder cosine), 'cross:PATH' (a local CrossEncoder) "
            f"or 'minilm' (got {spec!r})"
        )
    return kind, model


def _number(value: object, name: str, low: float, high: float | None) -> float:
    rule = f"a number >= {low}" if high is None else f"a number between {low} and {high}"
    if isinstance(value, bool) or not isinstance(value, Real):  # numpy's floats too, not its bool
        raise TypeError(f"'{name}' must be {rule} (got {describe(value)})")
    number = float(value)
    if not (number >= low and (high is None or number <= high)):  # also refuses NaN
        raise ValueError(f"'{name}' must be {rule} (got {describe(value)})")
    if math.isinf(number):  # a pipeline's id is its JSON, which holds no infinity
        raise ValueError(f"'{name}' must be a finite number (got {describe(value)})")
    return number


@dataclass(frozen=True, slots=True)
class Pipeline:
    """One retrieval configuration; every field has BEIR's or ef eval's default.

    Parameters
    ----------
    retriever
        ``"bm25"``, ``"dense"`` (a sentence-transformers model) or ``"hybrid"`` (reciprocal rank
        fusion of the two).
    model
        The dense model of ``"dense"`` and ``"hybrid"`` (default ``all-MiniLM-L6-v2``; a local
        directory or a name in the Hugging Face cache, never downloaded); ``None`` for bm25.
    k1, b, stemmer, stopwords
        BM25's parameters (``"bm25"`` and ``"hybrid"`` only): Lucene BM25, English Snowball
        stemmer and English stopwords by default, or ``"none"``.
    unit, size, overlap
        The chunking (:func:`ef.segments.window_spans`): ``size`` ``None`` keeps every document
        whole; otherwise windows of `size` `unit`\\ s sharing `overlap`.
    rerank
        ``None``, or a reranker over the first stage's top `rerank_depth` chunks:
        ``"bi:MODEL"``, ``"cross:PATH"`` or ``"minilm"`` (``bi:all-MiniLM-L6-v2``); see :mod:`ef.rerank`.
    rerank_depth
        How many first-stage chunks the reranker orders (only with `rerank`).
    fusion_depth
        How many chunks each of hybrid's two lists contributes to the fusion (only ``"hybrid"``).
    k
        How many chunks the pipeline passes on, best first (at most `rerank_depth` with a
        reranker, at most `fusion_depth` for hybrid).

    A parameter that does not apply to the retriever must keep its default: ``Pipeline("dense",
    k1=2.0)`` is a ValueError, so two pipelines that behave alike never have two ids.
    """

    retriever: str = "bm25"
    model: str | None = None
    k1: float = 1.2
    b: float = 0.75
    stemmer: str = "english"
    stopwords: str = "english"
    unit: str = "words"
    size: int | None = None
    overlap: int = 0
    rerank: str | None = None
    rerank_depth: int = 100
    fusion_depth: int = 100
    k: int = 100

    def __post_init__(self) -> None:
        check_choice(self.retriever, "retriever", RETRIEVERS)
        lexical = self.retriever != "dense"
        if self.retriever == "bm25":
            if self.model is not None:
                raise ValueError(f"'model' applies to retriever 'dense' or 'hybrid', not 'bm25' (got {self.model!r})")
        else:
            # None is the default model; '' is refused (it was taken for the default silently)
            object.__setattr__(self, "model", check_non_empty_str(
                DEFAULT_MODEL if self.model is None else self.model, "model"
            ))
        object.__setattr__(self, "k1", _number(self.k1, "k1", 0.0, None))
        object.__setattr__(self, "b", _number(self.b, "b", 0.0, 1.0))
        check_choice(self.stemmer, "stemmer", STEMMERS)
        check_choice(self.stopwords, "stopwords", STOPWORDS)
        if not lexical:
            for name in _LEXICAL:
                if getattr(self, name) != _DEFAULTS[name]:
                    raise ValueError(
                        f"'{name}' applies to retriever 'bm25' or 'hybrid', not 'dense' "
                        f"(got {name}={getattr(self, name)!r})"
                    )
        check_choice(self.unit, "unit", UNITS)
        if self.size is not None:
            object.__setattr__(self, "size", check_positive_int(self.size, "size"))
        object.__setattr__(self, "overlap", check_non_negative_int(self.overlap, "overlap"))
        if self.size is None and self.overlap:
            raise ValueError(f"'overlap' needs a chunk 'size' (got overlap={self.overlap}, size=None)")
        if self.size is not None and self.overlap >= self.size:
            raise ValueError(f"'overlap' must be smaller than 'size' (got overlap={self.overlap}, size={self.size})")
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))
        object.__setattr__(self, "rerank_depth", check_positive_int(self.rerank_depth, "rerank_depth"))
        object.__setattr__(self, "fusion_depth", check_positive_int(self.fusion_depth, "fusion_depth"))
        if self.rerank is None:
            if self.rerank_depth != _DEFAULTS["rerank_depth"]:
                raise ValueError(
                    f"'rerank_depth' applies only with a 'rerank' model (got rerank_depth={self.rerank_depth})"
                )
        else:
            kind, model = parse_rerank(self.rerank)
            object.__setattr__(self, "rerank", f"{kind}:{model}")
            if self.k > self.rerank_depth:
                raise ValueError(
                    f"'k' must be at most 'rerank_depth': the reranker orders only its top {self.rerank_depth} "
                    f"(got k={self.k})"
                )
        if self.retriever != "hybrid" and self.fusion_depth != _DEFAULTS["fusion_depth"]:
            raise ValueError(f"'fusion_depth' applies to retriever 'hybrid', not {self.retriever!r}")
        if self.retriever == "hybrid" and self.first_stage_depth > self.fusion_depth:
            raise ValueError(
                f"hybrid fuses each list's top {self.fusion_depth} ('fusion_depth'): "
                f"{'rerank_depth' if self.rerank else 'k'} must be at most that (got {self.first_stage_depth})"
            )

    @property
    def first_stage_depth(self) -> int:
        """How many chunks the first stage retrieves: `rerank_depth` with a reranker, else `k`."""
        return self.rerank_depth if self.rerank is not None else self.k

    def to_dict(self) -> dict[str, Any]:
        """The parameters that apply to this pipeline, by field name (what the id is made of).

        >>> Pipeline("dense", rerank="minilm", k=10).to_dict()  # doctest: +NORMALIZE_WHITESPACE
        {'retriever': 'dense', 'model': 'all-MiniLM-L6-v2', 'unit': 'words', 'size': None, 'overlap': 0,
         'rerank': 'bi:all-MiniLM-L6-v2', 'rerank_depth': 100, 'k': 10}
        """
        out: dict[str, Any] = {"retriever": self.retriever}
        if self.retriever != "bm25":
            out["model"] = self.model
        if self.retriever != "dense":
            out.update({name: getattr(self, name) for name in _LEXICAL})
        out.update(unit=self.unit, size=self.size, overlap=self.overlap, rerank=self.rerank)
        if self.rerank is not None:
            out["rerank_depth"] = self.rerank_depth
        if self.retriever == "hybrid":
            out["fusion_depth"] = self.fusion_depth
        out["k"] = self.k
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pipeline:
        """A pipeline from field names (as :meth:`to_dict` writes them); an unknown name is an error.

        >>> Pipeline.from_dict({"retriever": "bm25", "chunk": 3})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: unknown pipeline parameter(s) 'chunk'; known: retriever, model, k1, b, stemmer, ..., k
        """
        if not isinstance(data, Mapping):
            raise TypeError(f"a pipeline must be a mapping of parameters (got {describe(data)})")
        known = [f.name for f in fields(cls)]
        unknown = [name for name in data if name not in known]
        if unknown:
            raise ValueError(
                f"unknown pipeline parameter(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}"
            )
        return cls(**dict(data))

    @property
    def id(self) -> str:
        """16 hex digits of the SHA-256 of the canonical JSON of :meth:`to_dict`: stable across processes.

        >>> Pipeline().id
        '56592447368bc92f'
        >>> import hashlib, json  # spelled out
        >>> text = json.dumps(["ef.pipeline/1", Pipeline().to_dict()], sort_keys=True, separators=(",", ":"))
        >>> hashlib.sha256(text.encode()).hexdigest()[:16]
        '56592447368bc92f'
        """
        return content_id(_SCHEMA, self.to_dict())

    @property
    def label(self) -> str:
        """A short readable name: retriever, chunking, reranker and k.

        >>> Pipeline("hybrid", size=100, rerank="minilm", rerank_depth=50, k=10).label
        'hybrid all-MiniLM-L6-v2 k1=1.2 b=0.75 | 100 words | rerank bi:all-MiniLM-L6-v2@50 | k=10'
        """
        return " | ".join(
            part for part in (self.retriever_label, self.chunking_label, self.rerank_label, f"k={self.k}") if part
        )

    @property
    def retriever_label(self) -> str:
        """The first stage, in words: ``bm25 k1=1.2 b=0.75``, ``dense all-MiniLM-L6-v2`` ..."""
        parts = [self.retriever]
        if self.model is not None:
            parts.append(self.model)
        if self.retriever != "dense":
            parts += [f"k1={self.k1!r}", f"b={self.b!r}"]  # exact: two pipelines never share a label
            parts += [f"{name}=none" for name in ("stemmer", "stopwords") if getattr(self, name) == "none"]
        if self.retriever == "hybrid" and self.fusion_depth != _DEFAULTS["fusion_depth"]:
            parts.append(f"fusion@{self.fusion_depth}")
        return " ".join(parts)

    @property
    def chunking_label(self) -> str:
        """``whole docs``, ``200 words/40`` (size/overlap), ``1000 chars`` ..."""
        if self.size is None:
            return "whole docs"
        return f"{self.size} {self.unit}" + (f"/{self.overlap}" if self.overlap else "")

    @property
    def rerank_label(self) -> str:
        """``rerank MODEL@DEPTH``, or empty without a reranker."""
        return "" if self.rerank is None else f"rerank {self.rerank}@{self.rerank_depth}"

    def chunking(self) -> tuple[str, int | None, int]:
        """``(unit, size, overlap)``: pipelines that share it share their chunks."""
        return (self.unit, self.size, self.overlap)

    def first_stage(self) -> tuple[tuple[str, Any], ...]:
        """The first stage's own parameters (retriever, model, BM25's, fusion depth), without chunking or k."""
        data = self.to_dict()
        keep = ("retriever", "model", *_LEXICAL, "fusion_depth")
        return tuple((name, data[name]) for name in keep if name in data)

    def replace(self, **changes: Any) -> Pipeline:
        """A copy with some fields changed (checked as a new pipeline)."""
        return Pipeline(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})


def content_id(schema: str, data: object) -> str:
    """16 hex digits of SHA-256 over `schema` and `data` as canonical JSON (sorted keys, no spaces).

    >>> content_id("x/1", {"b": 1, "a": [1.0, None]}) == content_id("x/1", {"a": [1.0, None], "b": 1})
    True
    """
    check_non_empty_str(schema, "schema")
    try:
        text = json.dumps([schema, data], sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:  # NaN, a set, mixed key types: json's message names no argument
        raise type(error)(f"'data' must be JSON data without NaN or infinity, to have one id ({error})") from None
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_WHOLE = ("whole", "none", "")


def _grid_value(name: str, value: object) -> object:
    """A config's spelling of a value: ``size = "whole"`` and ``rerank = "none"`` mean None."""
    if name in ("size", "rerank", "model") and (value is None or (isinstance(value, str) and value.lower() in _WHOLE)):
        return None
    return value


def _applicable(values: dict[str, Any]) -> dict[str, Any]:
    """`values` less the parameters that do not apply to its retriever, chunking or reranker."""
    retriever = values.get("retriever", "bm25")
    out = dict(values)
    if retriever == "dense":
        for name in _LEXICAL:
            out.pop(name, None)
    if retriever == "bm25":
        out.pop("model", None)
    if retriever != "hybrid":
        out.pop("fusion_depth", None)
    if out.get("rerank") is None:
        out.pop("rerank_depth", None)
    if out.get("size") is None:
        out.pop("overlap", None)
    return out


def expand_grid(grid: Mapping[str, Any] | Pipeline | Iterable[Mapping[str, Any] | Pipeline]) -> list[Pipeline]:
    """The pipelines of a grid: the cartesian product of its values, or a list of grids and pipelines.

    Each key of a grid is a :class:`Pipeline` field; its value is one value or a list of them. A
    parameter that does not apply to a combination is left at its default there (``k1`` for a
    dense cell, ``rerank_depth`` without a reranker, ``overlap`` for whole documents), so the
    combinations that then coincide are one pipeline, kept at its first place. ``size`` ``"whole"``
    and ``rerank`` ``"none"`` stand for ``None``. A list of grids is the concatenation of their
    pipelines; the same pipeline listed twice there is an error.

    >>> cells = expand_grid({"retriever": ["bm25", "dense"], "size": [100, "whole"], "k1": [0.9, 1.2]})
    >>> [c.label for c in cells]  # doctest: +NORMALIZE_WHITESPACE
    ['bm25 k1=0.9 b=0.75 | 100 words | k=100', 'bm25 k1=1.2 b=0.75 | 100 words | k=100',
     'bm25 k1=0.9 b=0.75 | whole docs | k=100', 'bm25 k1=1.2 b=0.75 | whole docs | k=100',
     'dense all-MiniLM-L6-v2 | 100 words | k=100', 'dense all-MiniLM-L6-v2 | whole docs | k=100']
    """
    if isinstance(grid, Pipeline):
        return [grid]
    if isinstance(grid, Mapping):
        return _product(grid)
    if not isinstance(grid, Iterable) or isinstance(grid, str | bytes):  # type: ignore[unreachable,unused-ignore]
        raise TypeError(f"'grid' must be a mapping, a Pipeline or a list of them (got {describe(grid)})")
    out: list[Pipeline] = []
    seen: dict[str, int] = {}
    for position, item in enumerate(grid):
        for pipeline in expand_grid(item) if isinstance(item, Mapping | Pipeline) else _bad_item(position, item):
            if pipeline.id in seen:
                raise ValueError(
                    f"'grid' lists pipeline {pipeline.label!r} twice (items {seen[pipeline.id]} and {position})"
                )
            seen[pipeline.id] = position
            out.append(pipeline)
    if not out:
        raise ValueError("'grid' holds no pipeline")
    return out


def _bad_item(position: int, item: object) -> list[Pipeline]:
    raise TypeError(f"'grid'[{position}] must be a mapping or a Pipeline (got {describe(item)})")


def _product(grid: Mapping[str, Any]) -> list[Pipeline]:
    known = {f.name for f in fields(Pipeline)}
    unknown = [name for name in grid if name not in known]
    if unknown:
        known_names = ", ".join(f.name for f in fields(Pipeline))
        raise ValueError(f"unknown grid parameter(s) {', '.join(map(repr, unknown))}; known: {known_names}")
    axes: list[list[tuple[str, Any]]] = []
    for name, value in grid.items():
        options = list(value) if isinstance(value, list | tuple) else [value]
        if not options:
            raise ValueError(f"grid parameter {name!r} has no value")
        read = [_grid_value(name, v) for v in options]
        for i, v in enumerate(read):
            if v in read[:i]:  # a typo, most likely: the cell would be swept once, silently
                raise ValueError(f"grid parameter {name!r} lists {options[i]!r} twice")
        axes.append([(name, v) for v in read])
    out: dict[str, Pipeline] = {}
    for combination in itertools.product(*axes):
        values: dict[str, Any] = _applicable(dict(combination))
        try:
            pipeline = Pipeline(**values)
        except (TypeError, ValueError) as error:
            shown = ", ".join(f"{n}={v!r}" for n, v in values.items())
            raise type(error)(f"grid combination ({shown}): {error}") from None
        out.setdefault(pipeline.id, pipeline)
    return list(out.values())


def collapse_to_sources(
    run: Mapping[str, Mapping[str, float]] | Mapping[str, Sequence[tuple[str, float]]],
    source_of: Mapping[str, str] | Callable[[str], str],
) -> dict[str, dict[str, float]]:
    """A run of chunks as a run of their sources, each source at its best chunk's score (max).

    Chunk ids change with every chunking, but BEIR-style qrels judge whole documents: a chunk run
    is scored at the level the judgements were written by giving each source the highest score
    of its chunks in the run (its best-ranked chunk), and dropping the source's other chunks.

    Parameters
    ----------
    run
        ``{query_id: {chunk_id: score}}``, or ``{query_id: [(chunk_id, score), ...]}``.
    source_of
        The source of each chunk id: a mapping or a function.

    Examples
    --------
    >>> run = {"q1": {"a#0": 0.2, "b#0": 0.9, "a#1": 0.7}}
    >>> collapse_to_sources(run, lambda chunk: chunk.split("#")[0])
    {'q1': {'b': 0.9, 'a': 0.7}}
    """
    if not isinstance(run, Mapping):
        raise TypeError(f"'run' must be a mapping {{query_id: {{chunk_id: score}}}} (got {describe(run)})")
    if not isinstance(source_of, Mapping) and not callable(source_of):
        raise TypeError(
            f"'source_of' must be a mapping chunk_id -> source id or a function (got {describe(source_of)})"
        )
    out: dict[str, dict[str, float]] = {}
    given: Mapping[str, object] = run  # its values are checked: a caller's may be anything
    for query_id, ranking in given.items():
        if isinstance(ranking, Mapping):
            pairs: Iterable[Any] = ranking.items()
        elif isinstance(ranking, Sequence) and not isinstance(ranking, str | bytes):
            pairs = ranking
        else:
            raise TypeError(
                f"'run'[{query_id!r}] must be a mapping {{chunk_id: score}} or a list of (chunk_id, score) pairs "
                f"(got {describe(ranking)})"
            )
        best: dict[str, float] = {}
        for pair in pairs:
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise TypeError(f"'run'[{query_id!r}] must hold (chunk_id, score) pairs (got {describe(pair)})")
            chunk_id, value = pair
            # NaN compares false with everything: the source's score hung on the order of its chunks
            if isinstance(value, bool) or not isinstance(value, Real):
                raise TypeError(f"'run'[{query_id!r}][{chunk_id!r}] must be a number (got {describe(value)})")
            score = float(value)
            if math.isnan(score):
                raise ValueError(f"'run'[{query_id!r}][{chunk_id!r}] must be a number, not NaN")
            source = _source(source_of, chunk_id, query_id)
            if source not in best or score > best[source]:
                best[source] = score
        out[query_id] = dict(sorted(best.items(), key=lambda item: -item[1]))
    return out


def _source(source_of: Mapping[str, str] | Callable[[str], str], chunk_id: str, query_id: str) -> str:
    """The source of `chunk_id`, named in the error when `source_of` has none or gives no str."""
    if isinstance(source_of, Mapping):
        if chunk_id not in source_of:
            raise KeyError(f"'source_of' has no source for chunk {chunk_id!r} (query {query_id!r})")
        source: object = source_of[chunk_id]
    else:
        source = source_of(chunk_id)
    if not isinstance(source, str):
        raise TypeError(f"'source_of' must give a str source id (got {describe(source)} for chunk {chunk_id!r})")
    return source
