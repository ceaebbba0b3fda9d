"""The measure registry: one entry for every measure ef computes, and the :class:`Measure` value.

Each :class:`MeasureFamily` carries its canonical name, its description, its kind (``"score"``:
higher is better; ``"loss"``: lower is better; ``"count"``: a number of things, no direction;
``"text"``: ``relstring``), how it is parameterised and its default parameters, how it is
aggregated over queries, its per-query kernel where one exists (a pure function in
:mod:`ef.measures.per_query` or :mod:`ef.measures.answers`) and the name of its vectorised kernel
in :mod:`ef.measures.bulk` (imported, with numpy, only when a measure is computed over a run).

The entries are, in this order: every measure of trec_eval 10.0 that reads standard qrels and
runs (``origin="trec_eval"``, in trec_eval's output order), ef's additions (``"ef"``: Judged@k,
ERR@k, nDCG with exponential gain), the definitions fastrag's spec requires (``"fastrag"``:
Precision over the retrieved window, binary-gain NDCG) and ef's lexical RAG measures (``"rag"``,
which score a RAG sample rather than a ranking). The spellings each is accepted by are read by
:mod:`ef.measures.parse` and listed by :attr:`MeasureFamily.spellings`.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, total_ordering
from numbers import Integral, Real
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ef._validate import check_positive_int
from ef.measures import answers, per_query
from ef.measures._names import AT_ALIASES, IRM_FAMILIES, MTEB_ALIASES, PLAIN_ALIASES
from ef.measures.params import doubles as _doubles
from ef.measures.params import pairs as _pairs

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from ef.measures.bulk import HitTable

__all__ = [
    "MEASURES",
    "RAG_MEASURES",
    "RETRIEVAL_METRICS",
    "Aggregate",
    "Kind",
    "Measure",
    "MeasureFamily",
    "Origin",
    "ParamKind",
    "spellings",
]

Kind = Literal["score", "loss", "count", "text"]
ParamKind = Literal["none", "cutoff", "optional_cutoff", "recall", "multiple", "doubles", "pairs"]
Aggregate = Literal["mean", "sum", "geometric", "count", "none"]
Origin = Literal["trec_eval", "ef", "fastrag", "rag", "user"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class MeasureFamily:
    """One registry entry: a measure family such as ``P`` (``P_5``, ``P_10`` …) or ``map``.

    Parameters
    ----------
    name
        The canonical name of the family: trec_eval's for its measures (``"P"``, ``"ndcg_cut"``,
        ``"recip_rank"`` …), ef's for the others.
    description
        One sentence: what the measure is, with its edge cases.
    kind
        ``"score"`` (higher is better), ``"loss"`` (lower is better: ``unj``, ``rbp_resid``),
        ``"count"`` (``num_ret`` …: a number of documents or queries, which is neither) or
        ``"text"`` (``relstring``: a string per query).
    param
        ``"none"``; ``"cutoff"`` (a positive rank, one measure per cutoff); ``"optional_cutoff"``;
        ``"recall"`` (a recall level in ``[0, 1]``, one measure per level); ``"multiple"`` (a
        multiple of R, one measure per multiple); ``"doubles"`` (a list of numbers for one
        measure, kept in its name: ``utility_2,-1,0,0``) or ``"pairs"`` (``name=value`` pairs for
        one measure, kept in its name: ``ndcg_1=3,2=9``).
    defaults
        The parameters trec_eval uses when ``-m`` names the family alone (for ``"doubles"``: the
        one measure's numbers).
    aggregate
        How the per-query values are summarised: ``"mean"``, ``"sum"`` (trec_eval's counts),
        ``"geometric"`` (``gm_map``, ``gm_bpref``), ``"count"`` (``num_q``) or ``"none"``
        (``relstring``: per query only).
    bulk
        The name of the vectorised kernel in :mod:`ef.measures.bulk`: ``kernel(table, measure)``
        returns the per-query values for every query of a :class:`~ef.measures.bulk.HitTable`.
        ``None`` for the RAG measures, which score samples.
    per_query
        The pure per-query kernel, where one exists: ``f(ranked, relevant[, k])`` for a ranking
        measure (:mod:`ef.measures.per_query`), ``f(sample)`` for a RAG measure.
    summary_only
        ``True`` when ``ef trec-eval -q`` prints no line per query (``num_q``, ``gm_map``,
        ``gm_bpref``, as trec_eval).
    origin
        ``"trec_eval"``, ``"ef"`` (ef's additions, as ir_measures and gdeval define them),
        ``"fastrag"`` (fastrag's spec'd definitions) or ``"rag"`` (ef's lexical RAG measures).
    needs
        For a RAG measure: the sample fields it reads, which must not be ``None``.
    applies
        For a RAG measure: a further condition a sample must meet to be scored, if any.
    """

    name: str
    description: str
    kind: Kind
    param: ParamKind
    defaults: tuple[int | float, ...]
    aggregate: Aggregate
    bulk: str | Callable[..., npt.NDArray[Any]] | None
    per_query: Callable[..., float] | None = None
    summary_only: bool = False
    origin: Origin = "trec_eval"
    needs: tuple[str, ...] = ()
    applies: Callable[[Mapping[str, Any]], bool] | None = None

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every spelling of this family's measures (K a cutoff, X a number, N a relevance level).

        >>> MEASURES["success"].spellings
        ('success_K', 'success.K,K,...', 'hit_rate@K', 'success@K', 'Success@K', 'Success(rel=N)@K')
        """
        return spellings(self.name)

    @property
    def higher_is_better(self) -> bool:
        """``False`` only for a loss; a count or text has no direction and reads as ``True``."""
        return self.kind != "loss"

    @property
    def integer(self) -> bool:
        """Whether the values are counts, printed without decimals."""
        return self.kind == "count"

    @property
    def trec(self) -> bool:
        """Whether trec_eval 10.0 has this measure (``ef trec-eval -m all_trec`` and its help)."""
        return self.origin == "trec_eval"

    @property
    def summary(self) -> str:
        """How the values of the queries are summarised, in words (for messages).

        >>> MEASURES["gm_map"].summary, MEASURES["num_ret"].summary, MEASURES["map"].summary
        ('geometric mean', 'sum', 'mean')
        """
        return {"geometric": "geometric mean", "none": "text, not a number"}.get(self.aggregate, self.aggregate)

    @property
    def scores_rankings(self) -> bool:
        """``True`` for a measure of a ranking against qrels; ``False`` for a RAG measure of a sample."""
        return self.origin != "rag"

    @property
    def kernel(self) -> Callable[[HitTable, Measure], npt.NDArray[Any]]:
        """The bulk kernel itself (imports numpy); ``ValueError`` for a RAG measure, which has none."""
        if self.bulk is None:
            raise ValueError(f"measure {self.name!r} scores RAG samples (evaluate_rag), not a run")
        if callable(self.bulk):  # a measure of register_measure: the user's code, its output checked
            return functools.partial(_checked_kernel, self.name, self.bulk)
        kernel: Callable[[HitTable, Measure], npt.NDArray[Any]] = getattr(
            importlib.import_module("ef.measures.bulk"), self.bulk
        )
        return kernel


def _checked_kernel(
    name: str, kernel: Callable[[HitTable, Measure], Any], table: HitTable, measure: Measure
) -> npt.NDArray[Any]:
    """A registered kernel's values, as floats, one per query: else an error naming the measure, not
    numpy's ("zip() argument 2 is longer", "'list' object has no attribute 'tolist'") further on."""
    import numpy as np

    values = kernel(table, measure)
    try:
        out = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"measure {name!r}: its kernel must return numbers, one per query "
                        f"(got {type(values).__name__})") from None
    if out.shape != (table.n,):
        raise ValueError(f"measure {name!r}: its kernel must return one value per query, shape ({table.n},) "
                         f"(got shape {out.shape})")
    return out


def _family(
    name: str,
    description: str,
    bulk: str | Callable[..., npt.NDArray[Any]] | None,
    *,
    kind: Kind = "score",
    param: ParamKind = "none",
    defaults: tuple[int | float, ...] = (),
    aggregate: Aggregate = "mean",
    per_query: Callable[..., float] | None = None,
    summary_only: bool = False,
    origin: Origin = "trec_eval",
    needs: tuple[str, ...] = (),
    applies: Callable[[Mapping[str, Any]], bool] | None = None,
) -> MeasureFamily:
    return MeasureFamily(
        name, description, kind, param, defaults, aggregate, bulk, per_query, summary_only, origin, needs, applies
    )


_GAIN_NOTE = "gains default to the grade, trec_eval's level=gain parameters override them"

_REGISTRY: dict[str, MeasureFamily] = {
    f.name: f
    for f in (
        _family(
            "num_q",
            "Number of queries evaluated (summary only).",
            "num_q",
            aggregate="count",
            kind="count",
            summary_only=True,
        ),
        _family(
            "num_ret",
            "Number of documents retrieved (after -M).",
            "num_ret",
            aggregate="sum",
            kind="count",
        ),
        _family(
            "num_rel",
            "Number of relevant documents judged (grade >= relevance level).",
            "num_rel",
            aggregate="sum",
            kind="count",
        ),
        _family(
            "num_rel_ret", "Number of relevant documents retrieved.", "num_rel_ret", aggregate="sum", kind="count"
        ),
        _family(
            "map",
            "Mean average precision: precision at each relevant document retrieved, "
            "summed and divided by all relevant judged.",
            "average_precision",
            per_query=per_query.average_precision,
        ),
        _family(
            "gm_map",
            "Geometric mean of average precision (each floored at 1e-5); the "
            "per-query value is the query's average precision (summary only).",
            "average_precision",
            aggregate="geometric",
            summary_only=True,
        ),
        _family("Rprec", "Precision after R documents, R = number of relevant judged.", "r_precision"),
        _family(
            "bpref",
            "Binary preference: for each relevant retrieved, the fraction of the "
            "first R judged non-relevant ranked below it.",
            "bpref",
        ),
        _family(
            "recip_rank",
            "Reciprocal rank of the first relevant document (ef extension: an "
            "optional cutoff, recip_rank_10 = MRR@10; trec_eval's -m recip_rank.10 is the full recip_rank).",
            "reciprocal_rank",
            param="optional_cutoff",
            per_query=per_query.reciprocal_rank,
        ),
        _family(
            "iprec_at_recall",
            "Interpolated precision at a recall level: the best precision at any rank whose recall reaches it.",
            "iprec_at_recall",
            param="recall",
            defaults=_RECALL_LEVELS,
        ),
        _family(
            "P",
            "Precision at k: relevant in the top k divided by k (also when fewer than k were retrieved).",
            "precision",
            param="cutoff",
            defaults=_CUTOFFS,
            per_query=per_query.precision_at_k,
        ),
        _family(
            "relstring",
            "The grades of the top N as a string: a digit per grade 0-9, > above 9, - not in the "
            "qrels, . listed with a negative grade (per query only; default N = 10).",
            "relstring",
            param="doubles",
            defaults=(10,),
            aggregate="none",
            kind="text",
        ),
        _family(
            "recall",
            "Recall at k: relevant in the top k divided by all relevant judged.",
            "recall",
            param="cutoff",
            defaults=_CUTOFFS,
            per_query=per_query.recall_at_k,
        ),
        _family(
            "infAP",
            "Inferred AP (Yilmaz and Aslam) for sampled judgements: documents not in the qrels are "
            "skipped, those with a negative grade count as pooled but unjudged.",
            "inferred_ap",
        ),
        _family(
            "gm_bpref",
            "Geometric mean of bpref (each floored at 1e-5; summary only).",
            "bpref",
            aggregate="geometric",
            summary_only=True,
        ),
        _family(
            "Rprec_mult",
            "Precision at x times R documents, cut at (long)(x * R + 0.9).",
            "r_precision_multiple",
            param="multiple",
            defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        ),
        _family(
            "utility",
            "Set utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed "
            "(parameters a,b,c,d, default 1,-1,0,0; the collection size is taken as 0).",
            "utility",
            param="doubles",
            defaults=(1.0, -1.0, 0.0, 0.0),
        ),
        _family(
            "11pt_avg",
            "Interpolated precision averaged over recall levels (default the 11 levels 0.0, 0.1, ..., 1.0).",
            "eleven_point_average",
            param="doubles",
            defaults=_RECALL_LEVELS,
        ),
        _family(
            "binG",
            "Binary G: over R, the sum at each relevant retrieved of 1 / log2(2 + non-relevant ranked above).",
            "binary_g",
        ),
        _family(
            "G",
            f"Normalised gain: gain / log2(2 + ideal cost - gain so far), over the ideal gain; {_GAIN_NOTE}.",
            "g",
            param="pairs",
        ),
        _family(
            "dcg",
            f"Discounted cumulative gain, not normalised; {_GAIN_NOTE}.",
            "dcg",
            param="pairs",
        ),
        _family(
            "ideal_dcg",
            f"The DCG of the ideal ranking of every judged document; {_GAIN_NOTE}.",
            "ideal_dcg",
            param="pairs",
        ),
        _family(
            "ndcg",
            "Normalised DCG over the whole ranking: gain = grade, discount "
            "log2(rank + 1), ideal from every judged grade > 0; level=gain parameters override gains.",
            "ndcg",
            param="pairs",
        ),
        _family(
            "ndcg_rel",
            f"nDCG averaged over the relevant documents (unretrieved ones at the final nDCG); {_GAIN_NOTE}.",
            "ndcg_rel",
            param="pairs",
        ),
        _family(
            "Rndcg",
            f"nDCG averaged at the ranks where the ideal gain changes; {_GAIN_NOTE}.",
            "r_ndcg",
            param="pairs",
        ),
        _family(
            "ndcg_cut",
            "Normalised DCG at k (the ideal ranking is cut at k too).",
            "ndcg",
            param="cutoff",
            defaults=_CUTOFFS,
            per_query=per_query.ndcg_at_k,
        ),
        _family(
            "map_cut",
            "Average precision at k, divided by all relevant judged.",
            "average_precision",
            param="cutoff",
            defaults=_CUTOFFS,
            per_query=per_query.average_precision,
        ),
        _family(
            "relative_P",
            "Relative precision at k: relevant in the top k over min(k, R).",
            "relative_precision",
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "success",
            "1 if a relevant document is in the top k, else 0 (hit rate).",
            "success",
            param="cutoff",
            defaults=(1, 5, 10),
            per_query=per_query.hit_rate_at_k,
        ),
        _family("set_P", "Set precision: relevant retrieved over retrieved.", "set_precision"),
        _family(
            "set_relative_P",
            "Relative set precision: relevant retrieved over min(retrieved, R).",
            "set_relative_precision",
        ),
        _family("set_recall", "Set recall: relevant retrieved over R.", "set_recall"),
        _family("set_map", "Unranked set MAP: relevant retrieved squared over (retrieved * R).", "set_map"),
        _family(
            "set_F",
            "Set F measure (x + 1) P R / (x P + R) on the retrieved set (parameter x, default 1).",
            "set_f",
            param="doubles",
            defaults=(1.0,),
        ),
        _family(
            "num_nonrel_judged_ret",
            "Number of judged non-relevant documents retrieved.",
            "num_nonrel_judged_ret",
            aggregate="sum",
            kind="count",
        ),
        _family(
            "rbp",
            "Rank-biased precision (Moffat and Zobel) (1 - p) sum gain_i p^i, p = 0.9 unless p=X; "
            "gains are scaled to [0, 1] per query when one lies outside.",
            "rank_biased_precision",
            param="pairs",
        ),
        _family(
            "rbp_resid",
            "RBP's residual: how much RBP could rise if every unjudged retrieved document and every "
            "document past the ranking were relevant, p^n + (1 - p) sum over unjudged p^i (0 when all are judged).",
            "rbp_residual",
            param="pairs",
            kind="loss",
        ),
        _family(
            "unj",
            "Share of the top k not judged (when fewer than k were retrieved, the rest count as judged).",
            "unjudged",
            param="cutoff",
            defaults=(5, 10, 20),
            kind="loss",
        ),
        _family(
            "judged",
            "ef (ir_measures' Judged@k): share of the top k that is judged, over min(k, retrieved).",
            "judged",
            param="cutoff",
            defaults=(10,),
            origin="ef",
        ),
        _family(
            "ERR",
            "ef (gdeval's ERR@k): expected reciprocal rank with stop probability (2^g - 1) / 16 for grades 0-4.",
            "err",
            param="cutoff",
            defaults=(20,),
            origin="ef",
        ),
        _family(
            "ndcg_exp",
            "ef (gdeval's nDCG, ir_measures' dcg='exp-log2'): nDCG with gain 2^grade - 1, optionally cut at k.",
            "ndcg_exp",
            param="optional_cutoff",
            origin="ef",
        ),
        _family(
            "hits",
            "ef (ranx's hits@k): the number of relevant documents in the top k (all retrieved without k), "
            "averaged over queries.",
            "hits",
            param="optional_cutoff",
            origin="ef",
        ),
        _family(
            "f1_cut",
            "ef (ranx's f1@k): 2 P R / (P + R) of P@k and recall@k (0 when both are 0); ranx's f1 is set_F.",
            "f1_cut",
            param="cutoff",
            defaults=(10,),
            origin="ef",
        ),
        _family(
            "dcg_cut",
            "ef (ranx's dcg@k): DCG of the top k, gain = grade (> 0), discount log2(rank + 1), not normalised.",
            "dcg_cut",
            param="cutoff",
            defaults=(10,),
            origin="ef",
        ),
        _family(
            "dcg_exp",
            "ef (ranx's dcg_burges@k): DCG with gain 2^grade - 1, not normalised, optionally cut at k.",
            "dcg_exp",
            param="optional_cutoff",
            origin="ef",
        ),
        _family(
            "ndcg_judged",
            "ef (ir_measures' nDCG(judged_only=True), trec_eval -J): nDCG, optionally cut at k, of the "
            "ranking with every unjudged document removed first.",
            "ndcg_judged",
            param="optional_cutoff",
            origin="ef",
        ),
        _family(
            "precision_window",
            "fastrag's Precision: relevant in the top k over the documents there, min(k, retrieved) "
            "(0 when nothing was retrieved).",
            "precision_window",
            param="cutoff",
            defaults=(5,),
            per_query=per_query.precision_window,
            origin="fastrag",
        ),
        _family(
            "ndcg_binary",
            "fastrag's NDCG: nDCG at k with gain 1 for every relevant document, whatever its grade, "
            "the ideal over min(R, k) documents.",
            "ndcg_binary",
            param="cutoff",
            defaults=(5,),
            per_query=per_query.binary_ndcg_at_k,
            origin="fastrag",
        ),
        *(
            _family(
                rag.name,
                rag.description,
                None,
                kind=rag.kind,
                per_query=rag.score,
                origin="rag",
                needs=rag.needs,
                applies=rag.applies,
            )
            for rag in answers.RAG_SCORERS
        ),
    )
}
MEASURES: Mapping[str, MeasureFamily] = MappingProxyType(_REGISTRY)

"""Every measure family ef computes, keyed by its canonical name: trec_eval's measures in its output
order, then ef's, fastrag's and the RAG measures. Read-only."""


# The families a per-measure relevance level (rel=N) changes, with the ir_measures name they print as.
_REL_NAMES = {
    "P": "P",
    "recall": "R",
    "map": "AP",
    "map_cut": "AP",
    "recip_rank": "RR",
    "success": "Success",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "infAP": "infAP",
    "set_P": "SetP",
    "set_recall": "SetR",
    "num_rel": "NumRel",
    "rbp": "RBP",
}

_ORDER = {name: i for i, name in enumerate(MEASURES)}
_USER: set[str] = set()  # the families register_measure added
# A parameter text keeps to these characters: each measure's name then parses back to it.
_TEXT = re.compile(r"[0-9A-Za-z.,=+-]+")


def _at(family: str) -> str:
    """The parameter of `family`: a cutoff K, or a number X (a recall level, a multiple of R)."""
    return "X" if MEASURES[family].param in ("recall", "multiple") else "K"


def _irm_forms(irm: str) -> list[str]:
    if irm == "RBP":
        return ["RBP", "RBP(p=X)", "RBP(p=X,rel=N)"]
    plain, cut = IRM_FAMILIES[irm]
    forms = []
    if plain is not None:
        forms += [irm] + ([f"{irm}(rel=N)"] if plain in _REL_NAMES else [])
    if cut is not None:
        forms += [f"{irm}@{_at(cut)}"] + ([f"{irm}(rel=N)@{_at(cut)}"] if cut in _REL_NAMES else [])
    if irm == "nDCG":
        forms += ["nDCG(dcg='exp-log2')", "nDCG(dcg='exp-log2')@K"]
    return forms


def spellings(family: str) -> tuple[str, ...]:
    """Every spelling of `family`'s measures: trec_eval's first, then ef's, then ir_measures'.

    K stands for a cutoff, X for a number or recall level, N for a relevance level, L=G for
    trec_eval's ``level=gain`` pairs (the same forms :func:`valid_forms` lists).

    >>> spellings("ndcg_cut")
    ('ndcg_cut_K', 'ndcg_cut.K,K,...', 'ndcg@K', 'ndcg_cut@K', 'NDCG@K', 'ndcg_at_K', 'nDCG@K')
    >>> spellings("recip_rank")  # doctest: +NORMALIZE_WHITESPACE
    ('recip_rank', 'recip_rank_K', 'mrr@K', 'recip_rank@K', 'MRR@K', 'mrr_at_K', 'mrr', 'MRR', 'RR', 'RR(rel=N)',
     'RR@K', 'RR(rel=N)@K')
    """
    spec = MEASURES[family]
    x = _at(family)
    forms = {
        "cutoff": [f"{family}_K", f"{family}.K,K,..."],
        "recall": [f"{family}_X", f"{family}.X,X,..."],
        "multiple": [f"{family}_X", f"{family}.X,X,..."],
        "optional_cutoff": [family, f"{family}_K"],
        "doubles": [family, f"{family}_X,..."],
        "pairs": [family, f"{family}_{'p=X,' if family in ('rbp', 'rbp_resid') else ''}L=G,..."],
    }.get(spec.param, [family])
    forms += [f"{alias}@{x}" for alias, f in AT_ALIASES.items() if f == family]
    forms += [f"{alias}_at_K" for alias, f in MTEB_ALIASES.items() if f == family]
    forms += [alias for alias, f in PLAIN_ALIASES.items() if f == family and alias != family]
    for irm, (plain, cut) in IRM_FAMILIES.items():
        forms += [form for form in _irm_forms(irm) if "dcg=" not in form
                  and ((plain == family and "@" not in form) or (cut == family and "@" in form))]
    if family == "ndcg_exp":
        forms += ["nDCG(dcg='exp-log2')", "nDCG(dcg='exp-log2')@K"]
    return tuple(dict.fromkeys(forms))


def _bad(family: str, error: Exception) -> Exception:
    """`error` (from ef._validate's template) prefixed with the measure it is about."""
    return type(error)(f"Measure({family!r}): {error}")


@total_ordering
@dataclass(frozen=True)
class Measure:
    """One measure with its parameter, e.g. ``P_5``; ``str()`` gives the canonical name.

    ``param`` is a cutoff (an ``int``), a recall level or a multiple of R (a ``float``); ``text``
    is trec_eval's parameter text for the families that keep it in their name
    (``utility_2,-1,0,0``, ``ndcg_1=3,2=9``); ``rel`` is a relevance level for this measure alone
    (ir_measures' ``P(rel=2)@5``). A measure is checked when it is built, so every measure that
    exists can be computed and ``parse_measure(str(m)) == m``. Equality and hashing follow the
    fields, so every spelling of a measure gives an equal measure; measures sort in trec_eval's
    output order (their family's place in :data:`MEASURES`), then by parameter.

    Raises
    ------
    ValueError
        For a family that is not in :data:`MEASURES`, a parameter out of range, a parameter the
        family does not take, or parameter text it cannot read.
    TypeError
        For a parameter of the wrong type: a cutoff must be an integer (``numpy.int64(5)`` is
        one, ``5.0`` and ``True`` are not), a level or multiple a real number.

    Examples
    --------
    >>> from ef.measures import parse_measure
    >>> parse_measure("ndcg@10") == parse_measure("ndcg_cut_10") == parse_measure("nDCG@10")
    True
    >>> str(parse_measure("precision@5")), str(parse_measure("iprec_at_recall_0.5"))
    ('P_5', 'iprec_at_recall_0.50')
    >>> str(parse_measure("P(rel=2)@5")), str(parse_measure("utility_2,-1,0,0"))
    ('P(rel=2)@5', 'utility_2,-1,0,0')
    >>> [str(m) for m in sorted([Measure("P", 10), Measure("map"), Measure("P", 5)])]
    ['map', 'P_5', 'P_10']
    >>> Measure("nope")
    Traceback (most recent call last):
    ...
    ValueError: Measure('nope'): 'family' must be a measure family of ef.measures.MEASURES (got 'nope')
    >>> Measure("P", 5.0)
    Traceback (most recent call last):
    ...
    TypeError: Measure('P'): 'param' must be a positive integer (a cutoff) (got 5.0)
    """

    family: str
    param: int | float | None = None
    text: str | None = None
    rel: int | None = None

    def __post_init__(self) -> None:
        family = self.family
        if not isinstance(family, str):
            raise TypeError(f"Measure: 'family' must be a str (got {family!r})")
        spec = MEASURES.get(family)
        if spec is None:
            raise ValueError(f"Measure({family!r}): 'family' must be a measure family of ef.measures.MEASURES "
                             f"(got {family!r})")
        object.__setattr__(self, "param", self._checked_param(spec))
        if self.text is not None:
            self._check_text(spec)
        if self.rel is not None:
            self._check_rel()

    def _checked_param(self, spec: MeasureFamily) -> int | float | None:
        param: object = self.param  # callers pass anything: checked as such
        kind = spec.param
        if param is None:
            if kind in ("cutoff", "recall", "multiple"):
                raise _bad(self.family, ValueError(f"'param' must be given: {self.family} takes a "
                                                   f"{'cutoff' if kind == 'cutoff' else 'number'} (got None)"))
            return None
        if kind in ("cutoff", "optional_cutoff"):
            try:
                return check_positive_int(param, "param", what="a positive integer (a cutoff)")
            except (TypeError, ValueError) as error:
                raise _bad(self.family, error) from None
        if kind in ("recall", "multiple"):
            if isinstance(param, bool) or not isinstance(param, Real):
                raise _bad(self.family, TypeError(f"'param' must be a real number (got {param!r})"))
            value = float(param)  # an int level is the same level: 1 is 1.0
            if kind == "recall" and not (0.0 <= value <= 1.0 and float(f"{value:.2f}") == value):
                raise _bad(self.family, ValueError(
                    f"'param' must be a recall level in [0, 1] with at most 2 decimals (got {param!r})"))
            if kind == "multiple":
                name = _multiple_name(self.family, value) if value == value and abs(value) != float("inf") else ""
                if not name or float(name[len(self.family) + 1 :]) != value:
                    # trec_eval prints "%3.2f": 0.123 would be named, and read back as, 0.12.
                    raise _bad(self.family, ValueError(
                        f"'param' must be a finite multiple with at most 2 decimals (got {param!r})"))
            return value
        raise _bad(self.family, ValueError(f"'param' must be None: {self.family} takes no cutoff (got {param!r})"))

    def _check_text(self, spec: MeasureFamily) -> None:
        text = self.text
        if spec.param not in ("doubles", "pairs"):
            raise _bad(self.family, ValueError(f"'text' must be None: {self.family} takes no parameter text "
                                               f"(got {text!r})"))
        if not isinstance(text, str):
            raise _bad(self.family, TypeError(f"'text' must be a str (got {text!r})"))
        if not _TEXT.fullmatch(text):
            raise _bad(self.family, ValueError(
                f"'text' must be numbers, letters and . , = + - only (got {text!r})"))
        name = f"{self.family}_{text}"
        (_doubles if spec.param == "doubles" else _pairs)(name, self.family, text)

    def _check_rel(self) -> None:
        rel: object = self.rel
        if self.family not in _REL_NAMES:
            raise _bad(self.family, ValueError(
                f"'rel' must be None: a relevance level is taken by {', '.join(sorted(_REL_NAMES))} (got {rel!r})"))
        if isinstance(rel, bool) or not isinstance(rel, Integral):
            raise _bad(self.family, TypeError(f"'rel' must be a positive integer (got {rel!r})"))
        if int(rel) < 1:
            raise _bad(self.family, ValueError(f"'rel' must be a positive integer (got {rel!r})"))
        object.__setattr__(self, "rel", int(rel))
        if self.family == "rbp":
            # RBP(p=X,rel=N) is binary: only p counts, and it prints in the name (trec_eval's 0.9 if none).
            if self.text is None:
                object.__setattr__(self, "text", "p=0.9")
            elif not re.fullmatch(r"p=[^,=]+", self.text):
                raise _bad(self.family, ValueError(f"'text' must be one p=X with rel= (got {self.text!r})"))

    def __str__(self) -> str:
        if self.rel is not None:
            args = [f"rel={self.rel}"]
            if self.family == "rbp":
                args.insert(0, str(self.text))
            cut = "" if self.param is None else f"@{self.param}"
            return f"{_REL_NAMES[self.family]}({','.join(args)}){cut}"
        if self.text is not None:
            return f"{self.family}_{self.text}"
        if self.param is None:
            return self.family
        if self.spec.param in ("recall", "multiple"):
            return _multiple_name(self.family, float(self.param))
        return f"{self.family}_{self.param}"

    def _key(self) -> tuple[int, int, float, str, int]:
        param = -1.0 if self.param is None else float(self.param)
        return _ORDER[self.family], 0 if self.param is None else 1, param, self.text or "", self.rel or 0

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return self._key() < other._key()

    @property
    def spec(self) -> MeasureFamily:
        """The registry entry of this measure's family."""
        return MEASURES[self.family]

    @cached_property
    def doubles(self) -> tuple[float, ...]:
        """The numbers of a ``"doubles"`` family: parsed from ``text``, else the family's defaults."""
        if self.text is None:
            return tuple(float(d) for d in self.spec.defaults)
        return _doubles(f"{self.family}_{self.text}", self.family, self.text)

    @cached_property
    def _pairs(self) -> tuple[tuple[str, float], ...]:
        return () if self.text is None else _pairs(f"{self.family}_{self.text}", self.family, self.text)

    @cached_property
    def gain_pairs(self) -> tuple[tuple[int, float], ...]:
        """``(grade, gain)`` of a ``"pairs"`` family's ``level=gain`` parameters (the first of a level wins)."""
        out: dict[int, float] = {}
        for key, value in self._pairs:
            if key != "p":
                out.setdefault(int(key), value)
        return tuple(sorted(out.items()))

    @cached_property
    def persistence(self) -> float:
        """RBP's p: the last ``p=X`` parameter, else trec_eval's 0.9."""
        found = [value for key, value in self._pairs if key == "p"]
        return found[-1] if found else 0.9

    def evaluate(self, table: HitTable) -> npt.NDArray[Any]:
        """The per-query values of this measure over every query of `table` (at its own ``rel``, if any).

        The bulk kernel, numpy's; a ``ValueError`` for a RAG measure, which scores samples.
        """
        kernel = self.spec.kernel
        return kernel(table if self.rel is None else table.at_level(self.rel), self)

    def score(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        """This measure of one ranking, with its pure per-query kernel (no numpy).

        `relevant` maps doc ids to grades, as :func:`~ef.measures.per_query.ndcg_at_k` takes them.
        ``ValueError`` for a measure without a per-query kernel (compute those over a run with
        :meth:`evaluate` or :func:`~ef.evaluation.evaluate_run`).

        >>> Measure("P", 2).score(["d1", "x", "d2"], {"d1": 1.0, "d2": 1.0})
        0.5
        >>> Measure("recall", 2, rel=2).score(["d1", "d2"], {"d1": 1.0, "d2": 2.0})
        1.0
        """
        function = self.spec.per_query
        if function is None or not self.spec.scores_rankings:
            raise ValueError(f"measure {str(self)!r} has no per-query kernel of a ranking; "
                             "compute it over a run (Measure.evaluate, evaluate_run)")
        if self.rel is not None:
            # A level of its own: grades below it count as judged non-relevant.
            ranked, grades = per_query.check_ranking(ranked, relevant)
            relevant = {doc: (grade if grade >= self.rel else 0.0) for doc, grade in grades.items()}
        return function(ranked, relevant) if self.param is None else function(ranked, relevant, self.param)


def _multiple_name(family: str, value: float) -> str:
    # trec_eval's "%s_%3.2f" into a buffer of len(name) + 10 bytes.
    return f"{family}_{value:3.2f}"[: len(family) + 9]


class _ReadOnlyDict(dict[str, Any]):
    """A ``dict`` (as the spec types it) that refuses changes: a view of the registry, not a copy to edit."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("RETRIEVAL_METRICS is a read-only view of ef.measures.MEASURES")

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)  # a copy or a pickle is a plain dict, free to edit

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]


RETRIEVAL_METRICS: dict[str, Callable[[Sequence[str], Mapping[str, float], int], float]] = _ReadOnlyDict(
    (name, function)
    for name, family in (("map", "map_cut"), ("mrr", "recip_rank"), ("ndcg", "ndcg_cut"), ("precision", "P"),
                         ("recall", "recall"))
    if (function := MEASURES[family].per_query) is not None
)
"""The retrieval metrics :func:`~ef.evaluation.evaluate_retrieval` can compute, each keyed by the short
name used in the ``metrics=`` argument and in report keys (``"ndcg@10"``, ``"mrr@10"`` …): a
read-only view of :data:`MEASURES`' per-query kernels, ``f(ranked, relevant, k)`` (changing it is a
``TypeError``).

Public so downstream packages can consume this single source of truth — the name→function
registry *and* the set of valid metric names — instead of hand-mirroring it.
"""

RAG_MEASURES: Mapping[str, MeasureFamily] = MappingProxyType(
    {name: family for name, family in MEASURES.items() if family.origin == "rag"}
)
"""The RAG measures of :data:`MEASURES` (what :func:`~ef.evaluation.evaluate_rag` computes), in order."""
