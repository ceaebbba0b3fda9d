"""Score a run already read: the mid-level API under :func:`~ef.evaluation.evaluate_run`.

:func:`evaluate_run` takes measure names and returns a report keyed by them; the tools built on
ef (``ef trec-eval``, :func:`~ef.evaluation.evaluate_retrieval`, fastrag) need one level lower:
read the inputs once (:func:`load_run_and_qrels`, a run file tokenised while the qrels are read),
score them with parsed :class:`~ef.measures.Measure`\\ s and get each measure's value per query
as an array, with trec_eval's summaries (:func:`score_run`, a :class:`RunScores`).

>>> from ef.evaluation.scoring import score_run
>>> run = {"q1": {"d1": 0.9, "d2": 0.8}, "q2": {"d3": 0.4}}
>>> scores = score_run(run, {"q1": {"d2": 1}, "q2": {"d3": 1}}, ["mrr", "P_1"])
>>> scores.query_ids, scores.per_query()  # keyed by each measure's canonical name
(('q1', 'q2'), {'q1': {'recip_rank': 0.5, 'P_1': 0.0}, 'q2': {'recip_rank': 1.0, 'P_1': 1.0}})
>>> scores.means()
{'recip_rank': 0.75, 'P_1': 0.5}
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from ef.evaluation import _hits, _inputs, _run
from ef.io.frames import DataFrameLike
from ef.measures import Measure, parse_measure

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["ReadRun", "RunScores", "load_run_and_qrels", "score_run"]

Run = Mapping[str, Mapping[str, float]]


class ReadRun(Protocol):
    """A run file as :func:`load_run_and_qrels` returns it, for :func:`score_run`.

    A run file or a pipe, scored window by window (a pipe's bytes kept to be read again);
    either way ``to_dict()`` reads it whole, ``{query_id: {doc_id: score}}`` (for a report that
    shows every ranking), and the run id comes with the scores (:attr:`RunScores.run_id`).
    """

    def to_dict(self) -> dict[str, dict[str, float]]: ...


@dataclass(frozen=True)
class RunScores:
    """Each measure's value for every evaluated query, and its summary over them.

    ``query_ids`` are in trec_eval's order (byte-wise); ``values[m][i]`` is measure ``m`` of
    ``query_ids[i]``; ``summary[m]`` is trec_eval's ``all`` line (a mean, a sum for counts, a
    geometric mean for ``gm_map``; absent for a measure without one). ``skipped`` counts the
    judged queries the run lacks that were left out (``missing="skip"``); ``run_id`` is a run
    file's run id (its last line's, as trec_eval prints it), ``""`` for a mapping.
    """

    query_ids: tuple[str, ...]
    values: Mapping[Measure, npt.NDArray[np.float64]]
    summary: Mapping[Measure, float]
    skipped: int = 0
    run_id: str = ""

    def per_query(self) -> dict[str, dict[str, float]]:
        """``{query_id: {str(measure): value}}``, counts as ints: the drill-down of a report."""
        columns = {m: [int(v) if m.spec.integer else v for v in values.tolist()] for m, values in self.values.items()}
        return {q: {str(m): column[i] for m, column in columns.items()} for i, q in enumerate(self.query_ids)}

    def means(self) -> dict[str, float]:
        """``{str(measure): summary}``, counts as ints: the headline numbers."""
        return {str(m): int(v) if m.spec.integer else v for m, v in self.summary.items()}


def load_run_and_qrels(
    run: Run | ReadRun | str | os.PathLike[str] | DataFrameLike, qrels: Run | str | os.PathLike[str] | DataFrameLike
) -> tuple[Run | ReadRun, Run]:
    """Read `run` and `qrels` for :func:`score_run`: paths read, DataFrames converted, mappings checked.

    A run already read (:class:`ReadRun`) passes through. A run path (TREC, plain or ``.gz``,
    ``-`` for standard input) is opened for :func:`score_run` (a regular file is streamed when
    scored, a pipe opened and read as it is scored) while the qrels (TREC or BEIR TSV) are read.

    Raises
    ------
    TypeError
        For an input of another type, or a non-str id.
    ValueError
        For a malformed file (``file:line: ...``), a DataFrame with other columns, arguments
        that look swapped (``(qrels, run)``), or a run that holds no query (an empty mapping or
        DataFrame; a run file of no ranking line is refused when scored).
    """
    plain_run, plain_qrels = _inputs.normalise(run, qrels)
    if isinstance(plain_run, _hits.RunFile | _hits.RunBytes):
        return plain_run, _run._load_qrels(plain_qrels)
    return _run._load(plain_run, plain_qrels)


def score_run(
    run: Run | ReadRun | DataFrameLike,
    qrels: Run | DataFrameLike,
    measures: Sequence[Measure | str],
    *,
    missing: str = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
) -> RunScores:
    """Score a run already read with trec_eval's semantics, every measure, every query at once.

    Parameters
    ----------
    run
        ``{query_id: {doc_id: score}}``, a run file read by :func:`load_run_and_qrels`
        (:class:`ReadRun`) or a DataFrame with the columns ``query_id``, ``doc_id``,
        ``score``.
    qrels
        ``{query_id: {doc_id: grade}}`` or a DataFrame with ``query_id``, ``doc_id``, ``relevance``.
    measures
        :class:`~ef.measures.Measure`\\ s, or names that :func:`ef.measures.parse_measure` reads;
        none gives the evaluated queries and the run id alone.
    missing, relevance_level, max_docs
        As for :func:`~ef.evaluation.evaluate_run`.

    Raises
    ------
    TypeError
        For a str as `measures`, an input of another type, a non-str id.
    ValueError
        For an unknown measure name, a bad option, a bad score or grade, arguments that look
        swapped, or when no query can be evaluated.
    """
    if isinstance(measures, str):
        raise TypeError(f"'measures' must be a sequence of measures, not a str (got {measures!r})")
    # No measure is allowed: the evaluated queries and the run id alone (trec_eval's -m runid).
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    level, depth = _run._check_options(missing, relevance_level, max_docs)
    loaded_run, loaded_qrels = load_run_and_qrels(run, qrels)
    result = _run._evaluate(
        loaded_run,  # type: ignore[arg-type]  # a ReadRun is what _run._load returned: RunFile or RunBytes
        loaded_qrels,
        parsed,
        missing=cast(_run.Missing, missing),  # checked by _check_options
        relevance_level=level,
        max_docs=depth,
    )
    return RunScores(
        tuple(result.query_ids), dict(result.values), dict(result.summary), result.skipped, result.run_id
    )
