"""Deterministic, reference-based lexical RAG evaluation — no LLM.

The measures themselves (:func:`exact_match`, :func:`token_f1`, :func:`context_recall`,
:func:`context_precision`) live in :mod:`ef.measures.answers`; their names, descriptions and the
sample fields each reads are the registry's (``ef.measures.RAG_MEASURES``). :func:`evaluate_rag`
averages them over :class:`RagSample`\\ s.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from ef._console import format_table
from ef._validate import finite_float
from ef.io.frames import is_frame
from ef.measures import RAG_MEASURES
from ef.measures.answers import check_contexts
from ef.measures.claims import CLAIM_METRICS, SupportJudge, analyse_claims
from ef.measures.semantic import SEMANTIC_METRICS

__all__ = ["RagEvalReport", "RagSample", "evaluate_rag"]


class RagSample(TypedDict, total=False):
    """One end-to-end RAG interaction — the unit :func:`evaluate_rag` scores.

    The field names match Ragas' ``SingleTurnSample`` exactly, so a :class:`RagSample` is the
    interchange shape ``app_ef`` / ``srag`` / ``raglab`` produce and :func:`as_ragas_dataset`
    forwards unchanged. ``ef`` itself fills only ``retrieved_contexts`` (from ``retrieve()``);
    ``response`` is the *caller's* LLM output — ``ef`` does not synthesize it.

    Every key is optional; a metric scores the samples that carry the fields it reads. A value of
    ``None`` counts as absent (Ragas writes ``null`` for unset fields). The other fields of Ragas'
    ``SingleTurnSample`` (``retrieved_context_ids``, ``reference_context_ids``, …) are accepted
    and forwarded by :func:`as_ragas_dataset`; any other key is a ``ValueError``.

    Keys:
        user_input: the user's question.
        response: the generated answer (the caller's LLM produced it).
        retrieved_contexts: the context passages handed to the LLM — what ``retrieve()``
            returned, as text.
        reference: the ground-truth answer, if known.
        reference_contexts: the ground-truth context passages, if known.

    >>> sample: RagSample = {'user_input': 'capital of France?', 'response': 'Paris',
    ...                      'retrieved_contexts': ['Paris is the capital of France.'],
    ...                      'reference': 'Paris'}
    >>> from ef.evaluation import exact_match
    >>> exact_match(sample['response'], sample['reference'])
    1.0
    """

    user_input: str
    response: str
    retrieved_contexts: list[str]
    reference: str
    reference_contexts: list[str]


# The fields of ragas 0.4.3's SingleTurnSample, so that samples are checked without importing
# ragas; tests/test_ragas.py pins this against the installed ragas.
_RAGAS_FIELDS: tuple[str, ...] = (
    "user_input",
    "retrieved_contexts",
    "reference_contexts",
    "retrieved_context_ids",
    "reference_context_ids",
    "response",
    "multi_responses",
    "reference",
    "rubrics",
    "persona_name",
    "query_style",
    "query_length",
)
_STR_FIELDS = ("user_input", "response", "reference")
_LIST_FIELDS = ("retrieved_contexts", "reference_contexts")
_FORWARDED_STR_FIELDS = ("persona_name", "query_style", "query_length")
_ID_LIST_FIELDS = ("retrieved_context_ids", "reference_context_ids")  # Ragas: list of str or int


# --- evaluation -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RagEvalReport:
    """The outcome of :func:`evaluate_rag` — lexical RAG metrics over a sample set.

    ``metrics`` maps each metric to its mean over the samples it applied to; ``coverage`` records
    how many samples that was (a metric needing a ``reference`` skips samples without one).
    ``n_samples`` is the total scored. A metric that applied to no sample has a coverage of ``0``
    and no entry in ``metrics`` (a mean over nothing is not a number).

    >>> report = RagEvalReport(
    ...     metrics={'exact_match': 0.5}, coverage={'exact_match': 4}, n_samples=4)
    >>> report.metrics['exact_match']
    0.5
    """

    metrics: Mapping[str, float]
    coverage: Mapping[str, int]
    n_samples: int

    def __post_init__(self) -> None:
        if isinstance(self.n_samples, bool) or not isinstance(self.n_samples, int) or self.n_samples < 0:
            raise ValueError(f"'n_samples' must be a non-negative integer (got {self.n_samples!r})")
        for label, value in (("metrics", self.metrics), ("coverage", self.coverage)):
            if not isinstance(value, Mapping):
                raise TypeError(f"'{label}' must be a mapping of metric name to value (got {type(value).__name__})")
        for name, mean in self.metrics.items():
            if not isinstance(name, str) or finite_float(mean) is None:
                # A report is printed and written as JSON: NaN would be invalid there.
                raise ValueError(f"'metrics' must map str names to finite numbers (got {name!r}: {mean!r})")
        for name, count in self.coverage.items():
            if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= self.n_samples:
                raise ValueError(
                    f"'coverage[{name!r}]' must be an integer in [0, n_samples={self.n_samples}] "
                    f"(got {count!r})"
                )
        missing = [name for name in self.metrics if name not in self.coverage]
        if missing:
            raise ValueError(f"'coverage' has no entry for metric(s) {missing!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: ``metrics``, ``coverage``, ``n_samples``.

        >>> RagEvalReport({'token_f1': 0.75}, {'token_f1': 2}, 3).to_dict()
        {'metrics': {'token_f1': 0.75}, 'coverage': {'token_f1': 2}, 'n_samples': 3}
        """
        return {"metrics": dict(self.metrics), "coverage": dict(self.coverage), "n_samples": self.n_samples}

    def _frame(self, library: str) -> Any:
        from ef.io.frames import frame_from_columns

        names = list(self.metrics)
        values = [self.metrics[n] for n in names]
        return frame_from_columns(
            {"measure": names, "value": values, "n_samples": [self.coverage[n] for n in names]},
            {"measure": "str", "value": "float", "n_samples": "int"},
            library,
        )

    def to_pandas(self) -> Any:
        """The means as a pandas DataFrame: ``measure``, ``value``, ``n_samples`` (the samples it applied to).

        A RAG report keeps no per-sample values, so this is one row per metric. Raises
        ``ImportError`` with the install hint (``pip install 'ef-eval[pandas]'``) without pandas.
        """
        return self._frame("pandas")

    def to_polars(self) -> Any:
        """The means as a polars DataFrame: ``measure``, ``value``, ``n_samples``; see :meth:`to_pandas`."""
        return self._frame("polars")

    def __str__(self) -> str:
        """The means as a table: one row per metric, with the samples it was computed over.

        >>> print(RagEvalReport({'exact_match': 0.5}, {'exact_match': 2, 'token_f1': 0}, 4))
        RAG evaluation over 4 samples
        metric         mean  samples
        -----------  ------  -------
        exact_match  0.5000        2
        token_f1          -        0
        """
        rows = [[name, self.metrics.get(name), count] for name, count in self.coverage.items()]
        noun = "sample" if self.n_samples == 1 else "samples"
        return format_table(
            ["metric", "mean", "samples"], rows, title=f"RAG evaluation over {self.n_samples} {noun}"
        )

    def _repr_html_(self) -> str:
        """The table of :meth:`__str__` as HTML, for notebooks."""
        import html

        rows = "".join(
            f"<tr><td>{html.escape(name)}</td>"
            f"<td>{'-' if name not in self.metrics else f'{self.metrics[name]:.4f}'}</td><td>{count}</td></tr>"
            for name, count in self.coverage.items()
        )
        noun = "sample" if self.n_samples == 1 else "samples"
        return (
            f'<table class="ef-report"><caption>RAG evaluation over {self.n_samples} {noun}</caption>\n'
            "<thead><tr><th>metric</th><th>mean</th><th>samples</th></tr></thead>\n"
            f"<tbody>{rows}</tbody></table>"
        )


def _is_missing(value: object) -> bool:
    """``True`` for what a table writes for an absent field: NaN (pandas' ``to_dict``) or ``pd.NA``.

    ``None`` is kept: it means absent already. A NaN is never a valid value of a RagSample field
    (all are text or lists of text), so reading it as absent cannot hide a bad number.
    """
    if isinstance(value, float):
        return math.isnan(value)
    return type(value).__name__ == "NAType"


def _plain_value(value: object) -> object:
    """A numpy array (a list column after a Parquet round trip) as the list it stands for."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        return value.tolist()
    return value


def _check_sample(
    sample: object, where: str, *, fields: Sequence[str] = _RAGAS_FIELDS, forwarded: bool = False
) -> Mapping[str, Any]:
    """Check one sample's keys and field types; `where` names it in errors (``samples[3]``).

    `fields` are the keys a sample may have: Ragas' ``SingleTurnSample`` fields. With
    `forwarded`, the fields ef does not read are checked against Ragas' types too (for
    :func:`evaluate_rag`; :func:`as_ragas_dataset` has Ragas check them). Returns the
    sample as a new dict without the fields a DataFrame marks absent (NaN, ``pd.NA``), and with
    numpy arrays as lists.
    """
    if not isinstance(sample, Mapping):
        raise TypeError(f"{where} must be a mapping of RagSample fields (got {type(sample).__name__})")
    for key in sample:
        if key not in fields:
            raise ValueError(
                f"{where} has unknown key {key!r}; a sample holds only the fields of Ragas' "
                f"SingleTurnSample: {', '.join(fields)}"
            )
    sample = {key: _plain_value(value) for key, value in sample.items() if not _is_missing(value)}
    for key in _STR_FIELDS:
        value = sample.get(key)
        if value is not None and not isinstance(value, str):
            # A list of gold answers is SQuAD's (and Natural Questions', TriviaQA's) shape: say what to do.
            several = (": one reference answer per sample (for several gold answers, take the max of "
                       "ef.evaluation.exact_match or token_f1 over them, as SQuAD's script does)"
                       if key == "reference" and isinstance(value, list | tuple) else "")
            raise TypeError(f"{where}[{key!r}] must be a str (got {type(value).__name__}){several}")
    for key in _LIST_FIELDS:
        value = sample.get(key)
        if value is not None:
            check_contexts(value, f"{where}[{key!r}]")
    if forwarded:
        _check_forwarded(sample, where)
    return sample


def _check_forwarded(sample: Mapping[str, Any], where: str) -> None:
    """The fields ef only forwards, against Ragas' SingleTurnSample types: a wrong one would fail
    inside Ragas, long after, naming no sample."""
    for key in _FORWARDED_STR_FIELDS:
        value = sample.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{where}[{key!r}] must be a str (got {type(value).__name__})")
    value = sample.get("multi_responses")
    if value is not None:
        check_contexts(value, f"{where}['multi_responses']")
    for key in _ID_LIST_FIELDS:
        value = sample.get(key)
        if value is None:
            continue
        if isinstance(value, str) or not isinstance(value, Sequence):
            raise TypeError(f"{where}[{key!r}] must be a list of str or int ids (got {type(value).__name__})")
        for i, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, str | int):
                raise TypeError(f"{where}[{key!r}][{i}] must be a str or int id (got {type(item).__name__})")
    rubrics = sample.get("rubrics")
    if rubrics is not None:
        if not isinstance(rubrics, Mapping):
            raise TypeError(f"{where}['rubrics'] must be a mapping of str to str (got {type(rubrics).__name__})")
        for name, text in rubrics.items():
            if not isinstance(name, str) or not isinstance(text, str):
                raise TypeError(
                    f"{where}['rubrics'] must map str to str (got {type(name).__name__}: {type(text).__name__})"
                )


def _valid_names() -> list[str]:
    return [*RAG_MEASURES, *SEMANTIC_METRICS]


def _check_metric_names(metrics: Sequence[str]) -> tuple[str, ...]:
    given: object = metrics
    if isinstance(given, str) or not isinstance(given, Iterable):
        raise TypeError(f"'metrics' must be a sequence of metric names, not a single {type(given).__name__} "
                        f"(got {given!r})")
    names = tuple(metrics)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"'metrics' must hold metric names as str (got {name!r})")
    unknown = [name for name in names if name not in RAG_MEASURES and name not in SEMANTIC_METRICS]
    if unknown:
        raise ValueError(f"'metrics' has unknown metric name(s) {unknown!r}; valid names are {_valid_names()}")
    if not names:
        raise ValueError(f"'metrics' must name at least one metric; valid names are {_valid_names()}")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValueError(f"'metrics' lists {name!r} more than once")
    return names


def _judge(checker: object) -> SupportJudge | None:
    """`checker` as a claim-support judge: ``None`` (the lexical rule), a judge, or a model path."""
    if checker is None:
        return None
    if isinstance(checker, str | os.PathLike):
        from ef.measures.checker import Checker

        return Checker(checker)
    if callable(getattr(checker, "supported", None)):
        return checker  # type: ignore[return-value]  # duck-typed SupportJudge
    raise TypeError(
        "'checker' must be a local model directory (str or path), a Checker or LexicalSupport, or None "
        f"(got {type(checker).__name__})"
    )


def _check_samples(given: object) -> None:
    """The TypeError for `samples` that are not an iterable of samples: a single mapping, a
    DataFrame (iterating one gives its column names), a str or a non-iterable."""
    if isinstance(given, Mapping):
        raise TypeError("'samples' must be an iterable of samples, not a single mapping")
    if is_frame(given):  # iterating one gives its column names
        raise TypeError(
            "'samples' is a DataFrame, and iterating one gives its column names, not its rows: pass "
            "samples.to_dict('records') (pandas) or samples.to_dicts() (polars)"
        )
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise TypeError(
            f"'samples' must be an iterable of samples (mappings of RagSample fields) (got {type(given).__name__})"
        )


def evaluate_rag(
    samples: Iterable[RagSample | Mapping[str, Any]],
    *,
    metrics: Sequence[str] = ("exact_match", "token_f1", "context_recall", "context_precision", "non_empty_rate"),
    checker: str | os.PathLike[str] | SupportJudge | None = None,
    semantic_model: str | os.PathLike[str] | None = None,
) -> RagEvalReport:
    """Score RAG samples with deterministic, reference-based lexical metrics.

    Each sample is a :class:`RagSample` — ``(user_input, response, retrieved_contexts,
    reference)``. ``evaluate_rag`` computes only metrics that need **no LLM**:
    :func:`exact_match`, :func:`token_f1`, :func:`context_recall`, :func:`context_precision` and
    ``non_empty_rate`` (the share of samples that retrieved any context). This keeps ``ef`` a
    facade — it never synthesizes an answer and never calls a model. For the LLM-judged metrics
    — faithfulness, answer relevancy, … — pass the same samples to :func:`as_ragas_dataset` and
    run Ragas with your own LLM.

    Which samples a metric scores (its ``coverage``):

    - ``exact_match``, ``token_f1``: samples with a ``response`` and a ``reference``.
    - ``context_recall``, ``context_precision``: samples with ``retrieved_contexts`` whose
      ``reference`` has at least one token after normalization (an empty reference marks an
      unanswerable question, which the answer metrics score by SQuAD v2's rule but which has
      nothing for a context to hold).
    - ``non_empty_rate``: every sample.

    A ``retrieved_contexts`` that is absent or ``None`` is not known: the metrics that read
    contexts leave the sample out (an empty list is nothing retrieved, and scores ``0.0``);
    ``non_empty_rate``, the share of all samples that retrieved any context, counts it as none.

    Parameters
    ----------
    samples
        An iterable of :class:`RagSample`\\ s (or plain mappings of the same shape).
    metrics
        Which metrics to compute — any of ``exact_match`` / ``token_f1`` / ``context_recall`` /
        ``context_precision`` / ``non_empty_rate``. The reference-based ones skip samples that
        carry no ``reference``. Beyond the default five: ``answer_contains``, ``rouge_l``,
        ``chrf`` (reference-overlap answer metrics), the claim diagnostics of
        :mod:`ef.measures.claims` (``claim_recall``, ``claim_precision``, ``claim_f1``,
        ``faithfulness``, ``context_utilization``, ``noise_sensitivity_in_relevant``,
        ``noise_sensitivity_in_irrelevant``, ``hallucination``: each scores the samples where it
        is defined) and the embedding similarities of :mod:`ef.measures.semantic`
        (``answer_similarity``, ``answer_relevance``, ``context_relevance``: the ``dense`` extra).
    checker
        What decides that a text supports a claim, for the claim metrics: ``None`` for the
        lexical rule (:class:`~ef.measures.claims.LexicalSupport` at its default threshold), a
        judge object (``LexicalSupport(0.4)``, a :class:`~ef.measures.checker.Checker`), or the
        path of a local NLI / cross-encoder / fact-checking model directory, loaded offline as a
        :class:`~ef.measures.checker.Checker`.
    semantic_model
        A local sentence-transformers model directory for the semantic metrics; ``None`` for the
        bundled all-MiniLM-L6-v2. Loaded only when a semantic metric is asked for.

    Returns
    -------
    RagEvalReport
        The mean of each metric over the samples it applied to. A metric that applied to none
        is left out of ``metrics`` and has a ``coverage`` of ``0``.

    Raises
    ------
    ValueError
        For an unknown metric name, if `samples` is empty, or if a sample has a key that is not
        a field of Ragas' ``SingleTurnSample`` (the message names the sample's index and key).
    TypeError
        If a sample is not a mapping or a field has the wrong type (the message names the
        sample's index and key), or `checker` is neither a path nor a judge.
    ImportError
        For a semantic metric or a checker path without the ``dense`` extra.

    Examples
    --------
    >>> samples = [
    ...     {'user_input': 'capital of France?', 'response': 'Paris',
    ...      'reference': 'Paris',
    ...      'retrieved_contexts': ['Paris is the capital of France.']},
    ...     {'user_input': '2 + 2?', 'response': 'five', 'reference': 'four',
    ...      'retrieved_contexts': []},
    ... ]
    >>> report = evaluate_rag(samples)
    >>> report.metrics['exact_match']
    0.5
    >>> report.metrics['non_empty_rate']
    0.5

    A sample without a ``reference`` counts only for ``non_empty_rate``:

    >>> report = evaluate_rag(samples + [{'retrieved_contexts': ['Four is 2 + 2.']}])
    >>> report.coverage['exact_match'], report.n_samples, round(report.metrics['non_empty_rate'], 4)
    (2, 3, 0.6667)

    The claim diagnostics, lexically (a sentence is a claim):

    >>> report = evaluate_rag(samples, metrics=['claim_recall', 'faithfulness', 'chrf'])
    >>> report.metrics['claim_recall'], report.metrics['faithfulness'], report.coverage['faithfulness']
    (0.5, 0.5, 2)
    """
    names = _check_metric_names(metrics)
    _check_samples(samples)
    checked = [_check_sample(sample, f"samples[{i}]", forwarded=True) for i, sample in enumerate(samples)]
    if not checked:
        raise ValueError("'samples' is empty; there is nothing to evaluate")

    judge = _judge(checker)
    semantic = None
    wanted_semantic = [name for name in names if name in SEMANTIC_METRICS]
    if wanted_semantic:
        from ef.measures.semantic import SemanticScorer

        semantic = SemanticScorer(semantic_model)
        # One batched pass over every distinct text the metrics read.
        semantic.embed(text for sample in checked for text in SemanticScorer.texts_of(wanted_semantic, sample))
    analyses: list[Any] = []
    if judge is not None and any(name in CLAIM_METRICS for name in names):
        analyses = [
            None if sample.get("response") is None
            else analyse_claims(sample["response"], sample.get("reference"),
                                sample.get("retrieved_contexts") or [], judge=judge)
            for sample in checked
        ]

    means: dict[str, float] = {}
    coverage: dict[str, int] = {}
    for name in names:
        if semantic is not None and name in SEMANTIC_METRICS:
            values = [semantic.metric(name, sample) for sample in checked]
            scores = [value for value in values if value is not None]
        elif analyses and name in CLAIM_METRICS:
            metric = RAG_MEASURES[name]
            scores = [
                value
                for sample, analysis in zip(checked, analyses, strict=True)
                if analysis is not None and all(sample.get(field) is not None for field in metric.needs)
                and (value := analysis.metric(name)) is not None
            ]
        else:
            metric = RAG_MEASURES[name]
            score = metric.per_query
            if score is None:  # every RAG entry of the registry has one
                raise RuntimeError(f"the registry's RAG measure {name!r} has no per-sample kernel")
            scores = [
                score(sample)
                for sample in checked
                if all(sample.get(field) is not None for field in metric.needs)
                and (metric.applies is None or metric.applies(sample))
            ]
        coverage[name] = len(scores)
        if scores:
            means[name] = math.fsum(scores) / len(scores)
    return RagEvalReport(metrics=means, coverage=coverage, n_samples=len(checked))
