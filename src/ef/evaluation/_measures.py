"""The measure registry: one source of truth for every measure :func:`evaluate_run` computes.

Each :class:`MeasureFamily` carries its trec_eval name, its description, whether higher is better,
how it is parameterised, its trec_eval default parameters, how it is aggregated over queries, and
the vectorised kernel (in :mod:`ef.evaluation._bulk`) that computes it for all queries at once.
The parser, error messages, :class:`~ef.evaluation.RunEvalReport`, the ``ef trec-eval`` help and
the docs all read from :data:`MEASURES`: every measure of trec_eval 10.0 that reads standard qrels
and runs, then ef's additions (``judged``, ``ERR``, ``ndcg_exp``).

Three spellings are accepted:

==========================  =========================  ====================================
ef                          trec_eval                  ir_measures
==========================  =========================  ====================================
``ndcg@10``, ``ndcg``       ``ndcg_cut_10``, ``ndcg``  ``nDCG@10``, ``nDCG``
``recall@100``              ``recall_100``             ``R@100``
``precision@5``             ``P_5``                    ``P@5``
``mrr``, ``mrr@10``         ``recip_rank``             ``RR``, ``RR@10``
``map``, ``map@100``        ``map``, ``map_cut_100``   ``AP``, ``AP@100``
``hit_rate@10``             ``success_10``             ``Success@10``
``judged@10``               ``judged_10``              ``Judged@10``
``err@20``                  ``ERR_20``                 ``ERR@20``
``ndcg_exp@10``             ``ndcg_exp_10``            ``nDCG(dcg='exp-log2')@10``
==========================  =========================  ====================================

plus every other trec_eval name (``bpref``, ``utility_1,-1,0,0``, ``ndcg_1=3,2=9``, ``rbp_p=0.8`` …)
and ir_measures' per-measure relevance levels (``P(rel=2)@5``, ``R(rel=2)@100``, ``AP(rel=2)``,
``RBP(p=0.8,rel=1)`` …). trec_eval's ``-m`` syntax (``P.5,10``, a family alone for its default
parameters, ``official``, ``set`` and ``all_trec``) is read by :func:`expand_measure_specs`, with
trec_eval's own reading of parameters (see its docstring).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from ef.evaluation import _bulk

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "MEASURES",
    "Measure",
    "MeasureFamily",
    "expand_measure_spec",
    "expand_measure_specs",
    "parse_measure",
    "valid_forms",
]

ParamKind = Literal["none", "cutoff", "optional_cutoff", "recall", "multiple", "doubles", "pairs"]
Aggregate = Literal["mean", "sum", "geometric", "count", "none"]
# A kernel returns floats per query, or (relstring) strings: NDArray[Any] keeps callers float-typed.
Kernel = Callable[["_bulk.HitTable", "Measure"], "npt.NDArray[Any]"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class MeasureFamily:
    """One registry entry: a measure family such as ``P`` (``P_5``, ``P_10`` …) or ``map``.

    Parameters
    ----------
    name
        trec_eval's name of the family (``"P"``, ``"ndcg_cut"``, ``"recip_rank"`` …).
    description
        One line: what the measure is, with its trec_eval edge cases.
    higher_is_better
        ``True`` for scores, ``False`` for counts that are not quality scores.
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
    integer
        Whether values are counts, printed without decimals.
    kernel
        ``kernel(table, measure)`` returns the per-query values for all queries of a
        :class:`~ef.evaluation._bulk.HitTable`.
    per_query
        Whether ``ef trec-eval -q`` prints a line per query (trec_eval prints ``num_q``,
        ``gm_map`` and ``gm_bpref`` as summaries only).
    trec
        ``True`` for trec_eval's measures, ``False`` for ef's additions.
    """

    name: str
    description: str
    higher_is_better: bool
    param: ParamKind
    defaults: tuple[int | float, ...]
    aggregate: Aggregate
    integer: bool
    kernel: Kernel
    per_query: bool = True
    trec: bool = True


def _family(
    name: str,
    description: str,
    kernel: Kernel,
    *,
    param: ParamKind = "none",
    defaults: tuple[int | float, ...] = (),
    aggregate: Aggregate = "mean",
    integer: bool = False,
    higher_is_better: bool = True,
    per_query: bool = True,
    trec: bool = True,
) -> MeasureFamily:
    return MeasureFamily(
        name, description, higher_is_better, param, defaults, aggregate, integer, kernel, per_query, trec
    )


_GAIN_NOTE = "gains default to the grade, trec_eval's level=gain parameters override them"

# Ordered as trec_eval prints them (its te_trec_measures table), then ef's additions.
MEASURES: dict[str, MeasureFamily] = {
    f.name: f
    for f in (
        _family(
            "num_q",
            "Number of queries evaluated (summary only).",
            _bulk.num_q,
            aggregate="count",
            integer=True,
            higher_is_better=False,
            per_query=False,
        ),
        _family(
            "num_ret",
            "Number of documents retrieved (after -M).",
            _bulk.num_ret,
            aggregate="sum",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "num_rel",
            "Number of relevant documents judged (grade >= relevance level).",
            _bulk.num_rel,
            aggregate="sum",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "num_rel_ret", "Number of relevant documents retrieved.", _bulk.num_rel_ret, aggregate="sum", integer=True
        ),
        _family(
            "map",
            "Mean average precision: precision at each relevant document retrieved, "
            "summed and divided by all relevant judged.",
            _bulk.average_precision,
        ),
        _family(
            "gm_map",
            "Geometric mean of average precision (each floored at 1e-5); the "
            "per-query value is the query's average precision (summary only).",
            _bulk.average_precision,
            aggregate="geometric",
            per_query=False,
        ),
        _family("Rprec", "Precision after R documents, R = number of relevant judged.", _bulk.r_precision),
        _family(
            "bpref",
            "Binary preference: for each relevant retrieved, the fraction of the "
            "first R judged non-relevant ranked below it.",
            _bulk.bpref,
        ),
        _family(
            "recip_rank",
            "Reciprocal rank of the first relevant document (ef extension: an "
            "optional cutoff, recip_rank_10 = MRR@10; trec_eval's -m recip_rank.10 is the full recip_rank).",
            _bulk.reciprocal_rank,
            param="optional_cutoff",
        ),
        _family(
            "iprec_at_recall",
            "Interpolated precision at a recall level: the best precision at any rank whose recall reaches it.",
            _bulk.iprec_at_recall,
            param="recall",
            defaults=_RECALL_LEVELS,
        ),
        _family(
            "P",
            "Precision at k: relevant in the top k divided by k (also when fewer than k were retrieved).",
            _bulk.precision,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "relstring",
            "The grades of the top N as a string: a digit per grade 0-9, > above 9, - not in the "
            "qrels, . listed with a negative grade (per query only; default N = 10).",
            _bulk.relstring,
            param="doubles",
            defaults=(10,),
            aggregate="none",
            higher_is_better=False,
        ),
        _family(
            "recall",
            "Recall at k: relevant in the top k divided by all relevant judged.",
            _bulk.recall,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "infAP",
            "Inferred AP (Yilmaz and Aslam) for sampled judgements: documents not in the qrels are "
            "skipped, those with a negative grade count as pooled but unjudged.",
            _bulk.inferred_ap,
        ),
        _family(
            "gm_bpref",
            "Geometric mean of bpref (each floored at 1e-5; summary only).",
            _bulk.bpref,
            aggregate="geometric",
            per_query=False,
        ),
        _family(
            "Rprec_mult",
            "Precision at x times R documents, cut at (long)(x * R + 0.9).",
            _bulk.r_precision_multiple,
            param="multiple",
            defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        ),
        _family(
            "utility",
            "Set utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*nonrel_missed "
            "(parameters a,b,c,d, default 1,-1,0,0; the collection size is taken as 0).",
            _bulk.utility,
            param="doubles",
            defaults=(1.0, -1.0, 0.0, 0.0),
        ),
        _family(
            "11pt_avg",
            "Interpolated precision averaged over recall levels (default the 11 levels 0.0, 0.1, ..., 1.0).",
            _bulk.eleven_point_average,
            param="doubles",
            defaults=_RECALL_LEVELS,
        ),
        _family(
            "binG",
            "Binary G: over R, the sum at each relevant retrieved of 1 / log2(2 + non-relevant ranked above).",
            _bulk.binary_g,
        ),
        _family(
            "G",
            f"Normalised gain: gain / log2(2 + ideal cost - gain so far), over the ideal gain; {_GAIN_NOTE}.",
            _bulk.g,
            param="pairs",
        ),
        _family(
            "dcg",
            f"Discounted cumulative gain, not normalised; {_GAIN_NOTE}.",
            _bulk.dcg,
            param="pairs",
        ),
        _family(
            "ideal_dcg",
            f"The DCG of the ideal ranking of every judged document; {_GAIN_NOTE}.",
            _bulk.ideal_dcg,
            param="pairs",
        ),
        _family(
            "ndcg",
            "Normalised DCG over the whole ranking: gain = grade, discount "
            "log2(rank + 1), ideal from every judged grade > 0; level=gain parameters override gains.",
            _bulk.ndcg,
            param="pairs",
        ),
        _family(
            "ndcg_rel",
            f"nDCG averaged over the relevant documents (unretrieved ones at the final nDCG); {_GAIN_NOTE}.",
            _bulk.ndcg_rel,
            param="pairs",
        ),
        _family(
            "Rndcg",
            f"nDCG averaged at the ranks where the ideal gain changes; {_GAIN_NOTE}.",
            _bulk.r_ndcg,
            param="pairs",
        ),
        _family(
            "ndcg_cut",
            "Normalised DCG at k (the ideal ranking is cut at k too).",
            _bulk.ndcg,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "map_cut",
            "Average precision at k, divided by all relevant judged.",
            _bulk.average_precision,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "relative_P",
            "Relative precision at k: relevant in the top k over min(k, R).",
            _bulk.relative_precision,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "success",
            "1 if a relevant document is in the top k, else 0 (hit rate).",
            _bulk.success,
            param="cutoff",
            defaults=(1, 5, 10),
        ),
        _family("set_P", "Set precision: relevant retrieved over retrieved.", _bulk.set_precision),
        _family(
            "set_relative_P",
            "Relative set precision: relevant retrieved over min(retrieved, R).",
            _bulk.set_relative_precision,
        ),
        _family("set_recall", "Set recall: relevant retrieved over R.", _bulk.set_recall),
        _family("set_map", "Unranked set MAP: relevant retrieved squared over (retrieved * R).", _bulk.set_map),
        _family(
            "set_F",
            "Set F measure (x + 1) P R / (x P + R) on the retrieved set (parameter x, default 1).",
            _bulk.set_f,
            param="doubles",
            defaults=(1.0,),
        ),
        _family(
            "num_nonrel_judged_ret",
            "Number of judged non-relevant documents retrieved.",
            _bulk.num_nonrel_judged_ret,
            aggregate="sum",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "rbp",
            "Rank-biased precision (Moffat and Zobel) (1 - p) sum gain_i p^i, p = 0.9 unless p=X; "
            "gains are scaled to [0, 1] per query when one lies outside.",
            _bulk.rank_biased_precision,
            param="pairs",
        ),
        _family(
            "rbp_resid",
            "RBP's residual: how much RBP could rise if every unjudged retrieved document and every "
            "document past the ranking were relevant, p^n + (1 - p) sum over unjudged p^i (0 when all are judged).",
            _bulk.rbp_residual,
            param="pairs",
            higher_is_better=False,
        ),
        _family(
            "unj",
            "Share of the top k not judged (when fewer than k were retrieved, the rest count as judged).",
            _bulk.unjudged,
            param="cutoff",
            defaults=(5, 10, 20),
            higher_is_better=False,
        ),
        _family(
            "judged",
            "ef (ir_measures' Judged@k): share of the top k that is judged, over min(k, retrieved).",
            _bulk.judged,
            param="cutoff",
            defaults=(10,),
            trec=False,
        ),
        _family(
            "ERR",
            "ef (gdeval's ERR@k): expected reciprocal rank with stop probability (2^g - 1) / 16 for grades 0-4.",
            _bulk.err,
            param="cutoff",
            defaults=(20,),
            trec=False,
        ),
        _family(
            "ndcg_exp",
            "ef (gdeval's nDCG, ir_measures' dcg='exp-log2'): nDCG with gain 2^grade - 1, optionally cut at k.",
            _bulk.ndcg_exp,
            param="optional_cutoff",
            trec=False,
        ),
    )
}
"""Every measure family ef computes, in trec_eval's output order, keyed by trec_eval's name."""

# ef's names: "<alias>" alone and "<alias>@<k>".
_PLAIN_ALIASES = {"mrr": "recip_rank", "ndcg": "ndcg", "map": "map", "ndcg_exp": "ndcg_exp"}
_AT_ALIASES = {
    "ndcg": "ndcg_cut",
    "ndcg_cut": "ndcg_cut",
    "recall": "recall",
    "precision": "P",
    "P": "P",
    "mrr": "recip_rank",
    "recip_rank": "recip_rank",
    "map": "map_cut",
    "map_cut": "map_cut",
    "hit_rate": "success",
    "success": "success",
    "iprec_at_recall": "iprec_at_recall",
    "judged": "judged",
    "err": "ERR",
    "ndcg_exp": "ndcg_exp",
    "relative_P": "relative_P",
    "unj": "unj",
}

# ir_measures' names: (family without a cutoff, family with one).
_IRM: dict[str, tuple[str | None, str | None]] = {
    "P": (None, "P"),
    "R": (None, "recall"),
    "nDCG": ("ndcg", "ndcg_cut"),
    "AP": ("map", "map_cut"),
    "RR": ("recip_rank", "recip_rank"),
    "Success": (None, "success"),
    "Judged": (None, "judged"),
    "ERR": (None, "ERR"),
    "Rprec": ("Rprec", None),
    "Bpref": ("bpref", None),
    "infAP": ("infAP", None),
    "NumQ": ("num_q", None),
    "NumRet": ("num_ret", None),
    "NumRel": ("num_rel", None),
    "SetP": ("set_P", None),
    "SetR": ("set_recall", None),
    "IPrec": (None, "iprec_at_recall"),
    "RBP": ("rbp", None),
}
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
_IRM_RBP_P = "0.8"  # ir_measures' default persistence (trec_eval's is 0.9)

_OFFICIAL = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
_NICKNAMES = {
    "official": _OFFICIAL,
    # trec_eval's all_trec list (ideal_dcg and dcg are not in it, as in trec_eval).
    "all_trec": (
        *_OFFICIAL,
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ),
    "set": (
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ),
}
NICKNAMES_WITH_RUNID = frozenset({"official", "all_trec", "set"})
"""The ``-m`` nicknames whose trec_eval list starts with ``runid``."""

# trec_eval 10.0 measures that need other input formats (preference or jg qrels): an error naming them.
_UNSUPPORTED = frozenset(
    {
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
        "prefs_avgjg_Rnonrel",
        "prefs_simp_ret",
        "prefs_pair_ret",
        "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret",
        "prefs_simp_imp",
        "prefs_pair_imp",
        "prefs_avgjg_imp",
        "map_avgjg",
        "P_avgjg",
        "Rprec_mult_avgjg",
        "yaap",
        "all_prefs",
        "prefs",
        "qrels_jg",
    }
)

# C's atol / atof read the longest number at the start of the text and ignore the rest.
_ATOL = re.compile(r"[ \t\n\v\f\r]*[+-]?\d+")
_ATOF = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[ \t\n\v\f\r]*[+-]?0[xX]")
_LEVEL = re.compile(r"[+-]?\d+")  # trec_eval's valid_int: a gain level


def _atol(name: str, text: str) -> int:
    match = _ATOL.match(text)
    if match is None:
        raise _unknown(name, f"cutoff {text!r} is not a number")
    return int(match.group())


def _atof(name: str, text: str) -> float:
    match = _ATOF.match(text)
    if match is None or _HEX.match(text):
        # trec_eval's atof would read this as 0 (or as hex): refused rather than guessed.
        raise _unknown(name, f"parameter {text!r} is not a number")
    value = float(match.group())
    if value != value or value in (float("inf"), float("-inf")):
        raise _unknown(name, f"parameter {text!r} is not a finite number")
    return value


def _doubles(name: str, family: str, text: str) -> tuple[float, ...]:
    values = tuple(_atof(name, t) for t in text.split(","))
    if family == "utility" and len(values) != 4:
        raise _unknown(name, f"utility takes 4 numbers a,b,c,d (got {len(values)})")
    if family == "relstring" and not 0 <= values[0] <= 100_000:
        raise _unknown(name, f"relstring's length must be in [0, 100000] (got {text})")
    return values


def _pairs(name: str, family: str, text: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in text.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise _unknown(name, f"parameters must be name=value pairs (got {item!r})")
        if key == "p" and family in ("rbp", "rbp_resid"):
            p = _atof(name, value)
            if not 0.0 < p < 1.0:
                raise _unknown(name, f"RBP's persistence p must be in (0, 1) (got {value})")
            out.append((key, p))
        elif _LEVEL.fullmatch(key):
            if int(key) < 0:
                # trec_eval would give documents missing from the qrels (level -1) this gain.
                raise _unknown(name, f"a gain level must be >= 0 (got {key})")
            out.append((key, _atof(name, value)))
        else:
            expected = "p=X or level=gain" if family in ("rbp", "rbp_resid") else "level=gain"
            raise _unknown(name, f"{family} takes {expected} pairs (got {item!r})")
    return tuple(out)


@dataclass(frozen=True, order=True)
class Measure:
    """One measure with its parameter, e.g. ``P_5``; ``str()`` gives the canonical name.

    ``param`` is a cutoff, recall level or multiple of R; ``text`` is trec_eval's parameter text
    for the families that keep it in their name (``utility_2,-1,0,0``, ``ndcg_1=3,2=9``); ``rel``
    is a relevance level for this measure alone (ir_measures' ``P(rel=2)@5``). Equality and
    hashing follow these fields, so every spelling of a measure gives an equal measure.

    >>> parse_measure("ndcg@10") == parse_measure("ndcg_cut_10") == parse_measure("nDCG@10")
    True
    >>> str(parse_measure("precision@5")), str(parse_measure("iprec_at_recall_0.5"))
    ('P_5', 'iprec_at_recall_0.50')
    >>> str(parse_measure("P(rel=2)@5")), str(parse_measure("utility_2,-1,0,0"))
    ('P(rel=2)@5', 'utility_2,-1,0,0')
    """

    family: str
    param: int | float | None = None
    text: str | None = None
    rel: int | float | None = None

    def __str__(self) -> str:
        if self.rel is not None:
            args = [f"rel={self.rel:g}"]
            if self.family == "rbp":
                args.insert(0, f"p={self.persistence:g}")
            cut = "" if self.param is None else f"@{self.param}"
            return f"{_REL_NAMES[self.family]}({','.join(args)}){cut}"
        if self.text is not None:
            return f"{self.family}_{self.text}"
        if self.param is None:
            return self.family
        if self.spec.param in ("recall", "multiple"):
            # trec_eval's "%s_%3.2f" into a buffer of len(name) + 10 bytes.
            return f"{self.family}_{self.param:3.2f}"[: len(self.family) + 9]
        return f"{self.family}_{self.param}"

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

    def evaluate(self, table: _bulk.HitTable) -> npt.NDArray[Any]:
        """The per-query values of this measure over ``table`` (at its own relevance level, if any)."""
        return self.spec.kernel(table if self.rel is None else table.at_level(self.rel), self)


def valid_forms() -> str:
    """A one-paragraph list of the valid measure names, for error messages and ``--help``.

    >>> valid_forms().splitlines()[0]
    'valid measures: ef names ndcg@K, ndcg, recall@K, precision@K, mrr, mrr@K, map, map@K, hit_rate@K;'
    """
    trec = []
    for family in MEASURES.values():
        if family.param == "cutoff":
            trec.append(f"{family.name}_K")
        elif family.param == "recall":
            trec.append(f"{family.name}_X (X in [0, 1])")
        elif family.param == "multiple":
            trec.append(f"{family.name}_X")
        elif family.param == "optional_cutoff":
            trec.append(f"{family.name}, {family.name}_K")
        elif family.param == "doubles":
            trec.append(f"{family.name}, {family.name}_X,Y")
        elif family.param == "pairs":
            trec.append(f"{family.name}, {family.name}_L=G,...")
        else:
            trec.append(family.name)
    return (
        "valid measures: ef names ndcg@K, ndcg, recall@K, precision@K, mrr, mrr@K, map, map@K, "
        "hit_rate@K;\n"
        "judged@K, err@K, ndcg_exp, ndcg_exp@K; ir_measures names nDCG@K, P@K, R@K, AP, RR, Judged@K, ERR@K, "
        "nDCG(dcg='exp-log2')@K, RBP(p=X), P(rel=N)@K, R(rel=N)@K ...;\ntrec_eval names "
        + ", ".join(trec)
        + " (K a positive integer)"
    )


def _unknown(name: str, why: str | None = None) -> ValueError:
    if why is None:
        root = name.split("@")[0].split(".")[0].split("(")[0]
        why = (
            f"trec_eval measure {root!r} is not computed by ef (it needs preference or jg qrels)"
            if root in _UNSUPPORTED
            else "unknown measure"
        )
    return ValueError(f"measure {name!r}: {why}; {valid_forms()}")


def _parse_param(name: str, family: str, text: str, *, trec: bool = False) -> int | float:
    """One cutoff, recall level or multiple: ef's strict reading, or trec_eval's (``trec=True``)."""
    kind = MEASURES[family].param
    if kind in ("recall", "multiple"):
        if trec:
            value = _atof(name, text)
        else:
            try:
                value = float(text)
            except ValueError:
                raise _unknown(
                    name, f"{'recall level' if kind == 'recall' else 'multiple'} {text!r} is not a number"
                ) from None
        if kind == "multiple":
            if not value == value or abs(value) == float("inf"):
                raise _unknown(name, f"multiple {text!r} is not a finite number")
            return value
        if not 0.0 <= value <= 1.0:
            raise _unknown(name, f"recall level must be in [0, 1] (got {text})")
        if float(f"{value:.2f}") != value:  # the name keeps 2 decimals: 0.501 would print as 0.50
            raise _unknown(name, f"recall level must have at most 2 decimals (got {text})")
        return value
    if trec:
        # trec_eval reads -m cutoffs with atol: the leading integer (23.4 -> 23, 1e1 -> 1).
        cutoff = _atol(name, text)
    elif text.isdigit() and text.isascii():
        cutoff = int(text)
    else:
        raise _unknown(name, f"cutoff must be a positive integer (got {text!r})")
    if cutoff < 1:
        raise _unknown(name, f"cutoff must be a positive integer (got {text!r})")
    return cutoff


def _with_text(name: str, family: str, text: str) -> Measure:
    """A ``"doubles"`` or ``"pairs"`` measure, its parameter text checked now."""
    measure = Measure(family, text=text)
    if MEASURES[family].param == "doubles":
        _doubles(name, family, text)
    else:
        _pairs(name, family, text)
    return measure


_IRM_FORM = re.compile(r"([A-Za-z]+)(?:\(([^()]*)\))?(?:@(.+))?")


def _parse_irm(name: str) -> Measure | None:
    """ir_measures' spelling: ``Name``, ``Name@k``, ``Name(arg=value,...)@k``; None if not one."""
    match = _IRM_FORM.fullmatch(name)
    if match is None or match.group(1) not in _IRM:
        return None
    irm, arg_text, cutoff = match.groups()
    if arg_text is None and cutoff is None and irm in MEASURES:
        return None  # "P", "Rprec", "infAP", "ERR" alone are trec_eval-style family names
    plain, cut = _IRM[irm]
    args: dict[str, str] = {}
    if arg_text:
        for item in arg_text.split(","):
            key, eq, value = item.strip().partition("=")
            if not eq:
                raise _unknown(name, f"ir_measures arguments must be name=value (got {item!r})")
            args[key.strip()] = value.strip().strip("'\"")
    family = cut if cutoff is not None else plain
    if family is None:
        raise _unknown(name, f"{irm} needs a cutoff, e.g. '{irm}@10'")
    dcg = args.pop("dcg", None)
    if dcg is not None:
        if irm != "nDCG" or dcg not in ("log2", "exp-log2"):
            raise _unknown(name, f"dcg={dcg!r}: only nDCG takes dcg, 'log2' or 'exp-log2'")
        if dcg == "exp-log2":
            family = "ndcg_exp"
    param = None if cutoff is None else _parse_param(name, family, cutoff)
    text = None
    if irm == "RBP":
        p = args.pop("p", _IRM_RBP_P)
        text = f"p={p}"
        _pairs(name, "rbp", text)
    rel: int | float | None = None
    if "rel" in args:
        level = args.pop("rel")
        if family not in _REL_NAMES:
            raise _unknown(name, f"{irm} does not take rel=")
        try:
            rel = int(level)
        except ValueError:
            raise _unknown(name, f"rel must be an integer (got {level!r})") from None
        if rel < 1:
            raise _unknown(name, f"rel must be an integer >= 1 (got {level!r})")
    if args:
        raise _unknown(name, f"{irm} does not take {', '.join(sorted(args))}")
    if rel is None and irm == "RBP":
        return Measure("rbp", text=text)
    return Measure(family, param, text, rel)


def parse_measure(name: str) -> Measure:
    """Parse one measure name, in ef's, trec_eval's or ir_measures' spelling.

    Parameters
    ----------
    name
        ``"ndcg@10"``, ``"ndcg_cut_10"``, ``"nDCG@10"``, ``"mrr"``, ``"P_5"``, ``"P(rel=2)@5"``,
        ``"iprec_at_recall_0.50"``, ``"utility_2,-1,0,0"``, ``"judged@10"``, ``"ERR@20"`` …

    Returns
    -------
    Measure
        The measure; ``str()`` of it is its canonical name.

    Raises
    ------
    ValueError
        For an unknown name, a family that needs a parameter given none (``"P"``), or a bad
        parameter; the message lists the valid forms.

    Examples
    --------
    >>> parse_measure("mrr@10")
    Measure(family='recip_rank', param=10, text=None, rel=None)
    >>> str(parse_measure("hit_rate@10")), str(parse_measure("map@100")), str(parse_measure("ERR@20"))
    ('success_10', 'map_cut_100', 'ERR_20')
    >>> parse_measure("P")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: measure 'P': needs a parameter, e.g. 'P_10'; valid measures: ...
    """
    if not isinstance(name, str):
        raise TypeError(f"a measure name must be a str (got {type(name).__name__})")
    irm = _parse_irm(name)
    if irm is not None:
        return irm
    if "@" in name:
        alias, _, text = name.partition("@")
        family = _AT_ALIASES.get(alias)
        if family is None:
            raise _unknown(name)
        return Measure(family, _parse_param(name, family, text))
    family_name = _PLAIN_ALIASES.get(name, name)
    if family_name in MEASURES:
        kind = MEASURES[family_name].param
        if kind in ("cutoff", "recall", "multiple"):
            example = {"recall": "0.50", "multiple": "1.00"}.get(kind, "10")
            raise _unknown(name, f"needs a parameter, e.g. '{family_name}_{example}'")
        return Measure(family_name)
    for root in _roots(name):
        kind = MEASURES[root].param
        text = name[len(root) + 1 :]
        if kind in ("doubles", "pairs"):
            return _with_text(name, root, text)
        if kind != "none":
            return Measure(root, _parse_param(name, root, text))
    raise _unknown(name)


def _roots(name: str) -> list[str]:
    """The families ``name`` can be ``<family>_<parameters>`` of, longest first."""
    return sorted(
        (f for f in MEASURES if name.startswith(f + "_") and len(name) > len(f) + 1),
        key=len,
        reverse=True,
    )[:1]


def expand_measure_specs(specs: Sequence[str]) -> list[Measure]:
    """Expand trec_eval ``-m`` arguments into measures, in trec_eval's order, each once.

    Each spec is a nickname (``official``, ``set``, ``all_trec``), a family alone (its trec_eval
    default parameters), ``family.params`` or any name :func:`parse_measure` reads. As trec_eval:

    - the first ``family.params`` of a family gives its parameters; later ones are ignored
      (``-m P.5 -m P.10`` prints only ``P_5``), and a family named alone or by a nickname uses
      them too;
    - cutoffs are read with C's ``atol``: the leading integer (``P.1e1`` is ``P_1``,
      ``ndcg_cut.23.4`` is ``ndcg_cut_23``); other numbers with ``atof``;
    - parameters of a family that takes none are ignored (``-m recip_rank.10`` is the full
      ``recip_rank``, not MRR@10; write ``mrr@10`` or ``recip_rank_10`` for that);
    - the measures print in trec_eval's measure order, parameters sorted.

    >>> [str(m) for m in expand_measure_specs(["P.5,10,3", "recall.1e1", "recip_rank.10"])]
    ['recip_rank', 'P_3', 'P_5', 'P_10', 'recall_1']
    """
    marked: list[str] = []
    extra: list[Measure] = []
    params: dict[str, tuple[str, str]] = {}
    for spec in specs:
        name, dot, text = spec.partition(".")
        if name in _NICKNAMES:
            marked.extend(_NICKNAMES[name])
            continue
        if name in MEASURES:
            if dot:
                if not text:
                    raise _unknown(spec, "no parameters after the '.'")
                params.setdefault(name, (spec, text))
            marked.append(name)
            continue
        if name == "runid":
            continue
        extra.append(parse_measure(spec))
    out: dict[Measure, None] = {}
    for name in dict.fromkeys(marked):
        for measure in _expand_family(name, params.get(name)):
            out[measure] = None
    for measure in extra:
        out[measure] = None
    order = {name: i for i, name in enumerate(MEASURES)}

    def key(m: Measure) -> tuple[int, int, float, float]:
        rel = -1.0 if m.rel is None else float(m.rel)
        return order[m.family], 0 if m.param is None else 1, -1.0 if m.param is None else float(m.param), rel

    return sorted(out, key=key)


def _expand_family(name: str, given: tuple[str, str] | None) -> list[Measure]:
    family = MEASURES[name]
    kind = family.param
    if given is None:
        if kind in ("none", "optional_cutoff", "doubles", "pairs"):
            return [Measure(name)]
        return [Measure(name, p) for p in family.defaults]
    spec, text = given
    if kind in ("none", "optional_cutoff"):
        return [Measure(name)]  # trec_eval ignores parameters of a measure that takes none
    if kind in ("doubles", "pairs"):
        return [_with_text(spec, name, text)]
    values = [_parse_param(spec, name, t, trec=True) for t in text.split(",")]
    if len(set(values)) != len(values):
        raise _unknown(spec, "a parameter is given twice")
    return [Measure(name, v) for v in sorted(values)]


def expand_measure_spec(spec: str) -> list[Measure]:
    """Expand one trec_eval ``-m`` argument into measures (see :func:`expand_measure_specs`).

    >>> [str(m) for m in expand_measure_spec("P.5,10,3")]
    ['P_3', 'P_5', 'P_10']
    >>> [str(m) for m in expand_measure_spec("success")]
    ['success_1', 'success_5', 'success_10']
    >>> [str(m) for m in expand_measure_spec("iprec_at_recall..25,.5")]
    ['iprec_at_recall_0.25', 'iprec_at_recall_0.50']
    >>> [str(m) for m in expand_measure_spec("ndcg.1=3,2=9,4=4.5")]
    ['ndcg_1=3,2=9,4=4.5']
    """
    return expand_measure_specs([spec])
