"""Peers' names of ef's measure families: ef's own aliases, BEIR's, MTEB's, ranx's and ir_measures'.

Plain tables, read by the registry (each family lists its spellings) and by the parser (which
reads them); kept apart from both so that neither imports the other.
"""

__all__ = ["AT_ALIASES", "IRM_FAMILIES", "MTEB_ALIASES", "PLAIN_ALIASES"]

# ef's names: "<alias>" alone and "<alias>@<k>".
PLAIN_ALIASES = {
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "map": "map",
    "ndcg_exp": "ndcg_exp",
    # BEIR's and MTEB's capitals
    "NDCG": "ndcg",
    "MAP": "map",
    "MRR": "recip_rank",
    # ranx's names without a cutoff
    "r-precision": "Rprec",
    "ndcg_burges": "ndcg_exp",
    "dcg_burges": "dcg_exp",
    "f1": "set_F",
}
AT_ALIASES = {
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
    "precision_window": "precision_window",
    "ndcg_binary": "ndcg_binary",
    # BEIR's and MTEB's capitals (EvaluateRetrieval's NDCG@k, MAP@k, Recall@k, P@k, MRR@k)
    "NDCG": "ndcg_cut",
    "MAP": "map_cut",
    "MRR": "recip_rank",
    "Recall": "recall",
    # ranx's names (the others are ef's above)
    "hits": "hits",
    "f1": "f1_cut",
    "dcg": "dcg_cut",
    "dcg_burges": "dcg_exp",
    "ndcg_burges": "ndcg_exp",
    "f1_cut": "f1_cut",
    "dcg_cut": "dcg_cut",
    "dcg_exp": "dcg_exp",
    "ndcg_judged": "ndcg_judged",
}
# MTEB's result keys: ndcg_at_10, map_at_100 ...
MTEB_ALIASES = {"ndcg": "ndcg_cut", "map": "map_cut", "recall": "recall", "precision": "P", "mrr": "recip_rank"}
# ir_measures' names: (family without a cutoff, family with one).
IRM_FAMILIES: dict[str, tuple[str | None, str | None]] = {
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
    "SetF": ("set_F", None),
    "SetAP": ("set_map", None),
    "NumRelRet": ("num_rel_ret", None),
    "IPrec": (None, "iprec_at_recall"),
    "RBP": ("rbp", None),
}
