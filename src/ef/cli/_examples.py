"""The examples each ``ef COMMAND --help`` ends with: command lines a new user can copy.

They name a few files (``qrels.txt``, ``bm25.trec``, ``dense.trec``, ``samples.jsonl``,
``baseline.json``, ``candidate.json``, ``eval.json``, ``compare.json``, ``sweep.toml``); the tests
make those files and run every line that needs no network or dataset download
(``tests/test_cli_probe2_help.py``), so an example cannot go stale.
"""

from __future__ import annotations

__all__ = ["EXAMPLES", "examples_text"]

# command -> (command line, what it does); a line reads standard input from `< FILE`.
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "eval": (
        ("ef eval", "BM25 on the bundled demo dataset"),
        ("ef eval -m ndcg@10,recall@100 --json eval.json -q", "two measures, the report saved as JSON"),
        ("ef eval beir/scifact --embedder st:all-MiniLM-L6-v2 --run-out dense.trec", "a dataset by name, dense"),
    ),
    "trec-eval": (
        ("ef trec-eval qrels.txt bm25.trec", "trec_eval's official measures, its output format"),
        ("ef trec-eval -q -m ndcg@10 -m P.5,10 qrels.txt bm25.trec", "per query too, chosen measures"),
        ("ef trec-eval -c -m map --json - qrels.txt - < bm25.trec", "the run from standard input, JSON out"),
    ),
    "rag": (
        ("ef rag samples.jsonl", "every lexical metric"),
        ("ef rag samples.jsonl --metrics token_f1,rouge_l --json -", "two metrics, as JSON"),
    ),
    "compare": (
        ("ef compare qrels.txt bm25.trec dense.trec", "paired t-test, Holm, the default measures"),
        ("ef compare qrels.txt bm25.trec dense.trec -m ndcg@10,map --baseline bm25 --format markdown",
         "against one baseline, as Markdown"),
        ("ef compare qrels.txt bm25.trec dense=- --format json -o compare.json < dense.trec",
         "a run from standard input, named dense"),
        ("ef compare beir/scifact bm25.trec dense.trec --html compare.html", "a dataset's qrels, a page with charts"),
    ),
    "gate": (
        ("ef gate --qrels qrels.txt bm25.trec dense.trec --margin 5%", "TREC runs, 5% of the baseline mean"),
        ("ef gate baseline.json candidate.json -m ndcg@10 --margin ndcg@10=0.01 --junit -",
         "saved results, an absolute margin, JUnit XML"),
    ),
    "report": (
        ("ef report eval.json --html eval.html", "a saved ef eval --json report as a page"),
        ("ef report compare.json --run bm25=bm25.trec --run dense=dense.trec --html compare.html",
         "a comparison, with the rankings of its largest losses"),
    ),
    "datasets": (
        ("ef datasets list", "what ef knows by name and what is on this machine"),
        ("ef datasets fetch beir/scifact", "download one (the only command that goes online)"),
    ),
    "fuse": (
        ("ef fuse bm25.trec dense.trec -o fused.trec", "reciprocal rank fusion (k = 60)"),
        ("ef fuse bm25.trec dense.trec --method wsum --norm min-max --weights 0.3,0.7 -o -",
         "weighted sum of normalised scores, to standard output"),
        ("ef fuse bm25.trec dense.trec --method wsum,rrf --tune qrels.txt --folds 2 -o fused.trec",
         "choose the method and its parameters held out"),
    ),
    "sweep": (
        ("ef sweep sweep.toml --json sweep.json", "every pipeline of the config's grid, saved as it goes"),
    ),
}


def examples_text(command: str) -> str:
    """The ``examples:`` block of ``ef COMMAND --help`` ("" for a command without examples).

    >>> print(examples_text("rag"), end="")
    examples:
      ef rag samples.jsonl
          every lexical metric
      ef rag samples.jsonl --metrics token_f1,rouge_l --json -
          two metrics, as JSON
    """
    lines = EXAMPLES.get(command, ())
    if not lines:
        return ""
    return "examples:\n" + "".join(f"  {line}\n      {note}\n" for line, note in lines)
