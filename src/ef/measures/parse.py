"""Measure names: ef's, trec_eval's and ir_measures' spellings, trec_eval's ``-m`` syntax, and :func:`resolve`.

Three spellings are accepted for every ranking measure, in Python and on the command line alike:

==========================  =========================  ====================================
ef                          trec_eval                  ir_measures
==========================  =========================  ====================================
``ndcg@10``, ``ndcg``       ``ndcg_cut_10``, ``ndcg``  ``nDCG@10``, ``nDCG``
``recall@100``              ``recall_100``             ``R@100``
``precision@5``             ``P_5``, ``P.5``           ``P@5``
``mrr``, ``mrr@10``         ``recip_rank``             ``RR``, ``RR@10``
``map``, ``map@100``        ``map``, ``map_cut_100``   ``AP``, ``AP@100``
``hit_rate@10``             ``success_10``             ``Success@10``
``judged@10``               ``judged_10``              ``Judged@10``
``err@20``                  ``ERR_20``                 ``ERR@20``
``ndcg_exp@10``             ``ndcg_exp_10``            ``nDCG(dcg='exp-log2')@10``
==========================  =========================  ====================================

plus every other trec_eval name (``bpref``, ``utility_1,-1,0,0``, ``ndcg_1=3,2=9``, ``rbp_p=0.8`` …),
ir_measures' per-measure relevance levels (``P(rel=2)@5``, ``R(rel=2)@100``, ``AP(rel=2)``,
``RBP(p=0.8,rel=1)`` …), fastrag's definitions (``precision_window@5``, ``ndcg_binary@5``) and the
RAG measures (``exact_match`` …). :func:`parse_measure` reads one name; :func:`resolve` reads a
caller's list, with trec_eval's ``-m`` syntax (``P.5,10``, a family alone for its default
parameters, ``official``, ``set`` and ``all_trec``), and keeps the name each measure was asked by.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from ef.measures._names import AT_ALIASES as _AT_ALIASES
from ef.measures._names import IRM_FAMILIES as _IRM
from ef.measures._names import MTEB_ALIASES as _MTEB
from ef.measures._names import PLAIN_ALIASES as _PLAIN_ALIASES
from ef.measures.params import atof, atol, doubles, pairs, unknown
from ef.measures.registry import _REL_NAMES, MEASURES, Measure, _at, _irm_forms, spellings

__all__ = [
    "NICKNAMES",
    "NICKNAMES_WITH_RUNID",
    "cutoff_metric",
    "expand_measure_spec",
    "expand_measure_specs",
    "near_names",
    "parse_measure",
    "resolve",
    "spellings",
    "valid_forms",
]

_MTEB_FORM = re.compile(r"(ndcg|map|recall|precision|mrr)_at_([0-9]+)")
# ranx's relevance level suffix: map@100-l2 is AP@100 with grades >= 2 relevant.
_RANX_LEVEL = re.compile(r"(.+)-l([0-9]+)")
# Peers' measures that need qrels ef does not read, refused by name.
_OTHER_QRELS = {
    "alpha_nDCG": "ir_measures' alpha_nDCG needs diversity qrels (a subtopic per judgement), which ef does not read",
    "NRBP": "ir_measures' NRBP needs diversity qrels (a subtopic per judgement), which ef does not read",
    "SDCG": "ir_measures' SDCG (cwl_eval's scaled DCG, with max_rel=) is not computed by ef; the nearest are "
    "nDCG@k and ndcg_exp@k",
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
NICKNAMES = {
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



def _build(name: str, family: str, param: int | float | None = None, text: str | None = None,
           rel: int | None = None) -> Measure:
    """``Measure(...)``, its construction errors reworded as errors about the name `name`."""
    try:
        return Measure(family, param, text, rel)
    except (TypeError, ValueError) as error:
        why = str(error).partition(": ")[2] if str(error).startswith("Measure(") else str(error)
        raise unknown(name, why) from None


def _parse_param(name: str, family: str, text: str, *, trec: bool = False) -> int | float:
    """One cutoff, recall level or multiple: ef's strict reading, or trec_eval's (``trec=True``)."""
    kind = MEASURES[family].param
    if kind in ("recall", "multiple"):
        if trec:
            value = atof(name, text)
        else:
            try:
                value = float(text)
            except ValueError:
                raise unknown(
                    name, f"{'recall level' if kind == 'recall' else 'multiple'} {text!r} is not a number"
                ) from None
        if kind == "multiple":
            if not value == value or abs(value) == float("inf"):
                raise unknown(name, f"multiple {text!r} is not a finite number")
            return value
        if not 0.0 <= value <= 1.0:
            raise unknown(name, f"recall level must be in [0, 1] (got {text})")
        if float(f"{value:.2f}") != value:  # the name keeps 2 decimals: 0.501 would print as 0.50
            raise unknown(name, f"recall level must have at most 2 decimals (got {text})")
        return value
    if trec:
        # trec_eval reads -m cutoffs with atol: the leading integer (23.4 -> 23, 1e1 -> 1).
        cutoff = atol(name, text)
    elif text.isdigit() and text.isascii():
        cutoff = int(text)
    else:
        raise unknown(name, f"cutoff must be a positive integer (got {text!r})")
    if cutoff < 1:
        raise unknown(name, f"cutoff must be a positive integer (got {text!r})")
    return cutoff


def _with_text(name: str, family: str, text: str) -> Measure:
    """A ``"doubles"`` or ``"pairs"`` measure, its parameter text checked now."""
    (doubles if MEASURES[family].param == "doubles" else pairs)(name, family, text)
    return _build(name, family, text=text)


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
    if arg_text and "{" in arg_text:  # nDCG(gains={0:0,1:5}): a dict, which the split below would cut apart
        raise unknown(name, f"{irm} does not take {arg_text.partition('=')[0].strip()}")
    if arg_text:
        for item in arg_text.split(","):
            key, eq, value = item.strip().partition("=")
            if not eq:
                raise unknown(name, f"ir_measures arguments must be name=value (got {item!r})")
            args[key.strip()] = value.strip().strip("'\"")
    family = cut if cutoff is not None else plain
    if family is None and cutoff is not None:
        how = "a set measure scores everything retrieved; max_docs, trec_eval's -M, cuts the ranking"
        raise unknown(name, f"{irm} takes no cutoff ({how}): write '{irm}'" if irm.startswith("Set")
                      else f"{irm} takes no cutoff: write '{irm}'")
    if family is None:
        # IPrec's cutoff is a recall level (ir_measures' recall=), not a rank.
        example = f"'{irm}@0.5'" if irm == "IPrec" else f"'{irm}@10'"
        raise unknown(name, f"{irm} needs a cutoff, e.g. {example}")
    dcg = args.pop("dcg", None)
    if dcg is not None:
        if irm != "nDCG" or dcg not in ("log2", "exp-log2"):
            raise unknown(name, f"dcg={dcg!r}: only nDCG takes dcg, 'log2' or 'exp-log2'")
        if dcg == "exp-log2":
            family = "ndcg_exp"
    judged_only = args.pop("judged_only", None)
    if judged_only is not None:
        if irm != "nDCG":
            raise unknown(name, f"{irm} does not take judged_only")
        if judged_only not in ("True", "False") or (judged_only == "True" and dcg == "exp-log2"):
            raise unknown(name, f"judged_only={judged_only!r}: ef reads judged_only=True for nDCG (log2) only")
        if judged_only == "True":
            family = "ndcg_judged"
    param = None if cutoff is None else _parse_param(name, family, cutoff)
    text = None
    beta = args.pop("beta", None)
    if beta is not None:
        if irm != "SetF":
            raise unknown(name, f"{irm} does not take beta")
        try:
            number = float(beta)
        except ValueError:
            raise unknown(name, f"beta must be a number (got {beta!r})") from None
        if number != 1.0:  # trec_eval's set_F parameter is ir_measures' beta
            text = beta
            doubles(name, "set_F", text)
    if irm == "RBP":
        p = args.pop("p", _IRM_RBP_P)
        text = f"p={p}"
        pairs(name, "rbp", text)
    rel: int | None = None
    if "rel" in args:
        level = args.pop("rel")
        if family not in _REL_NAMES:
            raise unknown(name, f"{irm} does not take rel=")
        try:
            rel = int(level)
        except ValueError:
            raise unknown(name, f"rel must be an integer (got {level!r})") from None
        if rel < 1:
            raise unknown(name, f"rel must be an integer >= 1 (got {level!r})")
    if args:
        raise unknown(name, f"{irm} does not take {', '.join(sorted(args))}")
    if rel is None and irm == "RBP":
        return _build(name, "rbp", text=text)
    return _build(name, family, param, text, rel)


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
        For an unknown name (the message suggests the near names), a family that needs a
        parameter given none (``"P"``), or a bad parameter.

    Examples
    --------
    >>> parse_measure("mrr@10")
    Measure(family='recip_rank', param=10, text=None, rel=None)
    >>> str(parse_measure("hit_rate@10")), str(parse_measure("map@100")), str(parse_measure("ERR@20"))
    ('success_10', 'map_cut_100', 'ERR_20')
    >>> parse_measure("P")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: measure 'P': needs a parameter, e.g. 'P_10' (every spelling: ef.measures.valid_forms(), ...)
    """
    if not isinstance(name, str):
        raise TypeError(f"a measure name must be a str (got {type(name).__name__})")
    root = re.split(r"[@(]", name, maxsplit=1)[0]
    if root in _OTHER_QRELS:
        raise unknown(name, _OTHER_QRELS[root])
    mteb = _MTEB_FORM.fullmatch(name)
    if mteb:
        return _build(name, _MTEB[mteb.group(1)], _parse_param(name, _MTEB[mteb.group(1)], mteb.group(2)))
    ranx_level = _RANX_LEVEL.fullmatch(name)
    if ranx_level:
        base = parse_measure(ranx_level.group(1))
        if base.family not in _REL_NAMES or base.rel is not None:
            raise unknown(name, f"ranx's -l{ranx_level.group(2)} is a relevance level, which {str(base)!r} does "
                          f"not take (those that do: {', '.join(sorted(_REL_NAMES))})")
        return _build(name, base.family, base.param, base.text, int(ranx_level.group(2)))
    irm = _parse_irm(name)
    if irm is not None:
        return irm
    if "@" in name:
        alias, _, text = name.partition("@")
        family = _AT_ALIASES.get(alias)
        if family is None and alias in MEASURES and MEASURES[alias].param in ("cutoff", "optional_cutoff"):
            family = alias  # a measure of register_measure (or any family with a cutoff): name@K
        if family is None:
            raise unknown(name, near=near_names(name))
        return _build(name, family, _parse_param(name, family, text))
    family_name = _PLAIN_ALIASES.get(name, name)
    if family_name in MEASURES:
        kind = MEASURES[family_name].param
        if kind in ("cutoff", "recall", "multiple"):
            example = {"recall": "0.50", "multiple": "1.00"}.get(kind, "10")
            raise unknown(name, f"needs a parameter, e.g. '{family_name}_{example}'")
        return Measure(family_name)
    for root in _roots(name):
        kind = MEASURES[root].param
        text = name[len(root) + 1 :]
        if kind in ("doubles", "pairs"):
            return _with_text(name, root, text)
        if kind != "none":
            return _build(name, root, _parse_param(name, root, text))
    raise unknown(name, near=near_names(name))


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
    return [measure for _, measure in _expand_trec(specs)]


def _expand_trec(specs: Sequence[str]) -> list[tuple[str, Measure]]:
    """:func:`expand_measure_specs`, each measure with the spec that asked for it (see :func:`resolve`)."""
    marked: dict[str, None] = {}
    extra: list[tuple[str, Measure]] = []
    params: dict[str, tuple[str, str]] = {}
    for spec in specs:
        name, dot, text = spec.partition(".")
        if name in NICKNAMES:
            marked.update(dict.fromkeys(NICKNAMES[name]))
            continue
        if name in MEASURES:
            if dot:
                if not text:
                    raise unknown(spec, "no parameters after the '.'")
                params.setdefault(name, (spec, text))
            marked[name] = None
            continue
        if name == "runid":
            continue
        extra.append((spec, parse_measure(spec)))
    out: dict[Measure, str] = {}
    for name in marked:
        for measure in _expand_family(name, params.get(name)):
            out.setdefault(measure, str(measure))  # -m syntax is a list of measures: each by its own name
    for spec, measure in extra:
        out.setdefault(measure, spec)
    return [(out[measure], measure) for measure in sorted(out)]


def _expand_one(spec: str) -> list[tuple[str, Measure]]:
    """One name of a Python caller's list: a nickname, a family alone, ``family.params`` or a name."""
    name, dot, _ = spec.partition(".")
    if name in NICKNAMES:
        # relstring is a string per query (ef trec-eval -q prints it): a nickname gives the numbers.
        return [(label, m) for label, m in _expand_trec([spec]) if m.spec.aggregate != "none"]
    if name in MEASURES and (dot or MEASURES[name].param in ("cutoff", "recall", "multiple")):
        return _expand_trec([spec])
    return [(spec, parse_measure(spec))]


def cutoff_metric(name: str) -> bool:
    """Whether ``f"{name}@{k}"`` reads as a per-query measure of a ranking: a metric name that
    ``evaluate_retrieval`` (and ``ef eval --metrics``) takes beside the spec's five.

    >>> [cutoff_metric(n) for n in ("ndcg", "hit_rate", "err", "judged", "P(rel=2)", "num_ret", "bleu")]
    [True, True, True, True, True, False, False]
    """
    if not isinstance(name, str) or not name or "@" in name:
        return False
    try:
        measure = parse_measure(f"{name}@10")
    except ValueError:
        return False
    spec = measure.spec
    return spec.origin in ("trec_eval", "ef") and spec.kind in ("score", "loss") and not spec.summary_only


def resolve(names: Sequence[str], *, trec_eval: bool = False, rankings: bool = True) -> list[tuple[str, Measure]]:
    """Turn a caller's measure names into ``(name as given, Measure)`` pairs: the one reader of names.

    :func:`~ef.evaluation.evaluate_run`, ``ef trec-eval``, ``evaluate_retrieval`` and fastrag all
    read names here, so a name means one thing everywhere. Each name is any spelling
    :func:`parse_measure` reads (``ndcg@10``, ``ndcg_cut_10``, ``nDCG@10``, ``P(rel=2)@5`` …), a
    nickname (``official``, ``set``, ``all_trec``), a family alone for trec_eval's default
    parameters (``P`` is ``P_5`` … ``P_1000``) or trec_eval's ``family.params`` (``P.5,10``,
    ``ndcg_cut.10``), read as trec_eval reads it (see :func:`expand_measure_specs`). A measure
    name is paired with itself, so reports key by the name the caller gave (``nDCG@10``); each
    measure of a ``-m`` form (a nickname, a family alone, ``family.params``) with its canonical
    name (``P.5,10`` gives ``P_5`` and ``P_10``), as trec_eval prints them.

    Parameters
    ----------
    names
        The measure names, in order.
    trec_eval
        ``False`` (Python callers): each name on its own, in the order given; a report name given
        twice is an error. ``True`` (``ef trec-eval -m``): trec_eval's reading of its ``-m``
        list: each measure once, in trec_eval's output order, a family's parameters from its
        first ``family.params`` (``-m P.5 -m P.10`` is only ``P_5``).
    rankings
        ``True`` refuses the RAG measures (``exact_match`` …), which score samples, not rankings.

    Returns
    -------
    list of (str, Measure)

    Raises
    ------
    TypeError
        If `names` is a single str, or holds something that is not a str.
    ValueError
        For an unknown or malformed name (the message lists the valid forms), a name that stands
        for no measure, a report name given twice, or a RAG measure when `rankings` is true.

    Examples
    --------
    >>> [(name, str(m)) for name, m in resolve(["nDCG@10", "P.5,10", "mrr@10"])]
    [('nDCG@10', 'ndcg_cut_10'), ('P_5', 'P_5'), ('P_10', 'P_10'), ('mrr@10', 'recip_rank_10')]
    >>> [name for name, _ in resolve(["official"])][:4]
    ['num_q', 'num_ret', 'num_rel', 'num_rel_ret']
    >>> [(name, str(m)) for name, m in resolve(["P.5", "P.10", "ndcg@10"], trec_eval=True)]
    [('P_5', 'P_5'), ('ndcg@10', 'ndcg_cut_10')]
    """
    given: object = names
    if isinstance(given, str) or not isinstance(given, Sequence):
        raise TypeError(f"'measures' must be a sequence of measure names, not a single {type(given).__name__} "
                        f"(got {given!r})")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"'measures' must hold measure names as str (got {name!r})")
    if trec_eval:
        pairs_ = _expand_trec(names)
    else:
        pairs_ = [pair for name in names for pair in _expand_one(name)]
        seen: set[str] = set()
        for label, _ in pairs_:
            if label in seen:
                raise ValueError(f"'measures' lists {label!r} twice")
            seen.add(label)
    if rankings:
        for label, measure in pairs_:
            if not measure.spec.scores_rankings:
                raise unknown(label, "a RAG measure scores samples (evaluate_rag, ef rag), not a ranking")
    return pairs_


def _expand_family(name: str, given: tuple[str, str] | None) -> list[Measure]:
    family = MEASURES[name]
    kind = family.param
    if given is None:
        if kind in ("none", "optional_cutoff", "doubles", "pairs"):
            return [Measure(name)]
        return [Measure(name, p) for p in family.defaults]  # the defaults are valid by construction
    spec, text = given
    if kind in ("none", "optional_cutoff"):
        return [Measure(name)]  # trec_eval ignores parameters of a measure that takes none
    if kind in ("doubles", "pairs"):
        return [_with_text(spec, name, text)]
    values = [_parse_param(spec, name, t, trec=True) for t in text.split(",")]
    if len(set(values)) != len(values):
        raise unknown(spec, "a parameter is given twice")
    return [_build(spec, name, v) for v in sorted(values)]


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


def _trec_form(name: str) -> str:
    kind = MEASURES[name].param
    return {
        "cutoff": f"{name}_K",
        "recall": f"{name}_X (X in [0, 1])",
        "multiple": f"{name}_X",
        "optional_cutoff": f"{name}, {name}_K",
        "doubles": f"{name}, {name}_X,Y",
        "pairs": f"{name}, {name}_{'p=X,' if name in ('rbp', 'rbp_resid') else ''}L=G,...",
    }.get(kind, name)


def valid_forms() -> str:
    """Every spelling :func:`parse_measure` and :func:`resolve` take, for error messages and ``--help``.

    Generated from the parser's own tables, so it lists exactly what is accepted (K a cutoff, X a
    number or a recall level in [0, 1], N a relevance level).

    >>> valid_forms().splitlines()[0]  # doctest: +ELLIPSIS
    'valid measures: ef names ndcg@K, ndcg_cut@K, recall@K, precision@K, P@K, mrr@K, ...'
    """
    ef_names = [f"{alias}@{_at(family)}" for alias, family in _AT_ALIASES.items()]
    ef_names += [alias for alias in _PLAIN_ALIASES if alias not in MEASURES]  # the others are family names too
    irm_names = [form for irm in _IRM for form in _irm_forms(irm)]
    ranking = [name for name, family in MEASURES.items() if family.scores_rankings]
    rag = [name for name, family in MEASURES.items() if not family.scores_rankings]
    return (
        "valid measures: ef names " + ", ".join(ef_names) + ";\n"
        "ir_measures names " + ", ".join(irm_names) + ";\n"
        "trec_eval names " + ", ".join(_trec_form(name) for name in ranking) + " (K a positive integer);\n"
        "trec_eval -m forms FAMILY (its default parameters), FAMILY.P1,P2,... and the nicknames "
        + ", ".join(NICKNAMES) + ";\n"
        "RAG measures (evaluate_rag, not runs) " + ", ".join(rag)
    )


def near_names(name: str, *, n: int = 2) -> list[str]:
    """The measure names closest to `name`, a name no reader took: what a typo's message suggests.

    Every spelling of every family, its K (or X) written as the number in `name` (else 10, 0.5),
    compared with :func:`difflib.get_close_matches`.

    >>> near_names("ndgc@10"), near_names("recal_100"), near_names("zzzzzz")
    (['ndcg@10', 'dcg@10'], ['recall_100', 'recall@100'], [])
    """
    number = re.search(r"[0-9]+(?:\.[0-9]+)?", name)
    k = number.group(0) if number else "10"
    x = number.group(0) if number and "." in number.group(0) else "0.50"
    candidates: dict[str, None] = dict.fromkeys(NICKNAMES)
    candidates.update(dict.fromkeys(_PLAIN_ALIASES))
    for family in MEASURES:
        for form in spellings(family):
            if "..." in form or "L=G" in form or " " in form:
                continue
            form = re.sub(r"(?<=[@_.])K$", k, form)
            form = re.sub(r"(?<=[@_.])X$", x, form).replace("rel=N", "rel=2")
            candidates[form] = None
    return difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.75)
