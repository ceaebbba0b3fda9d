"""The benchmark report's worst answers: answer, reference, contexts, each claim marked supported or not.

Claims and support are :mod:`ef.measures.claims`'s lexical rule (a sentence is a claim; a text
supports it when it holds at least half of its content words), the rule behind the claim metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ef.measures.claims import SUPPORT_THRESHOLD, lexical_analysis
from ef.report._page import Cell, Section, Table, Text

__all__ = ["RANKING_METRICS", "references_by_id", "worst_answers_section"]

RANKING_METRICS = ("claim_f1", "token_f1", "rouge_l", "chrf", "claim_recall", "faithfulness", "answer_contains",
                   "exact_match")
"""The metrics that rank the answers, the first one the result has (all are higher-is-better)."""

_CONTEXT_CHARS = 600


def references_by_id(samples: object) -> dict[str, str | None]:
    """Sample id → reference answer, from EvalSamples, their dicts, or a mapping id → reference."""
    if samples is None:
        return {}
    if isinstance(samples, Mapping):
        out: dict[str, str | None] = {}
        for key, value in samples.items():
            if not isinstance(key, str) or not (value is None or isinstance(value, str)):
                raise TypeError(f"'samples' as a mapping must map sample ids to reference answers (got {key!r}: "
                                f"{type(value).__name__})")
            out[key] = value
        return out
    if isinstance(samples, str | bytes) or not isinstance(samples, Iterable):
        raise TypeError(f"'samples' must be EvalSamples or a mapping of sample id to reference (got "
                        f"{type(samples).__name__})")
    out = {}
    for i, sample in enumerate(samples):
        data = sample if isinstance(sample, Mapping) else None
        sample_id = data.get("id") if data is not None else getattr(sample, "id", None)
        reference = data.get("reference_answer") if data is not None else getattr(sample, "reference_answer", None)
        if not isinstance(sample_id, str) or not (reference is None or isinstance(reference, str)):
            raise TypeError(f"'samples'[{i}] must be an EvalSample (an 'id' and a 'reference_answer')")
        out[sample_id] = reference
    return out


def _mark(flag: bool) -> Cell:
    return Cell("supported", css="rel") if flag else Cell("not supported", css="nonrel")


def _contexts_cell(row: Sequence[bool]) -> Cell:
    which = [str(j + 1) for j, flag in enumerate(row) if flag]
    return Cell("contexts " + ", ".join(which), css="rel") if which else Cell("none", css="nonrel")


def _sample_section(index: int, record: Mapping[str, Any], reference: str | None, metric: str, value: float) -> Section:
    answer = record.get("answer") or ""
    contexts = [str(chunk.get("content", "")) for chunk in record.get("retrieved") or []]
    fields: list[tuple[Cell, Cell]] = [
        (Cell("query"), Cell(str(record.get("query", "")))),
        (Cell("answer"), Cell(answer)),
        (Cell("reference"), Cell("-" if reference is None else reference)),
    ]
    for j, (text, chunk) in enumerate(zip(contexts, record.get("retrieved") or [], strict=True), start=1):
        shown = text if len(text) <= _CONTEXT_CHARS else text[:_CONTEXT_CHARS] + " …"
        fields.append((Cell(f"context {j} ({chunk.get('source_uri', '')})"), Cell(shown)))
    blocks: list[Table | Text] = [Table(f"worst-{index}-fields", ("", "text"), tuple(fields))]
    analysis = lexical_analysis(answer, reference, tuple(contexts))
    rows: list[tuple[Cell, ...]] = []
    for i, claim in enumerate(analysis.response_claims):
        by_reference = _mark(analysis.response_in_reference[i]) if reference is not None else Cell("-")
        rows.append((Cell("answer"), Cell(claim), by_reference, _contexts_cell(analysis.response_in_contexts[i])))
    for i, claim in enumerate(analysis.reference_claims):
        rows.append((Cell("reference"), Cell(claim), _mark(analysis.reference_in_response[i]),
                     _contexts_cell(analysis.reference_in_contexts[i])))
    if rows:
        blocks.append(Table(
            f"worst-{index}-claims", ("from", "claim", "by the other side", "by the contexts"), tuple(rows),
            caption="An answer claim is checked against the reference, a reference claim against the answer.",
        ))
    else:
        blocks.append(Text("No claim: the answer is empty and there is no reference.", css="note"))
    return Section(f"worst-{index}", f"{record['sample_id']}: {metric} {value:.4f}", tuple(blocks))


def worst_answers_section(
    records: Sequence[Mapping[str, Any]], references: Mapping[str, str | None], metrics: Sequence[str], n: int
) -> Section | None:
    """The `n` answered samples with the lowest ranking metric, or ``None`` if there is nothing to rank."""
    metric = next((name for name in RANKING_METRICS if name in metrics), None)
    if metric is None:
        return None
    scored = [
        (record["scores"][metric], position, record)
        for position, record in enumerate(records)
        if record.get("answer") is not None and record["scores"].get(metric) is not None
    ]
    if not scored:
        return None
    scored.sort(key=lambda item: (item[0], item[1]))  # lowest first, ties in sample order
    sections = tuple(
        _sample_section(i, record, references.get(record["sample_id"]), metric, value)
        for i, (value, _, record) in enumerate(scored[:n])
    )
    intro = Text(
        f"The {len(sections)} answered samples with the lowest {metric}. A sentence is a claim; a text supports "
        f"it when it holds at least {SUPPORT_THRESHOLD:.0%} of the claim's content words (ef.measures.claims). "
        + ("" if references else "Pass samples= to show the reference answers."),
        css="note",
    )
    return Section("worst-answers-section", f"Worst answers by {metric}", (intro, *sections))
