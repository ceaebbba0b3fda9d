"""Plain-text tables, as every ef report prints them and as the ``ef`` command line prints its own.

:func:`format_table` aligns rows under their headers: the first column (the first `left` columns)
left-aligned, the others right-aligned, floats with trec_eval's 4 decimals, ``None`` as ``-``. ``str(report)`` of
:mod:`ef.evaluation`'s reports and fastrag's benchmark results are drawn by it, so a caller's own
table lines up with theirs.

>>> from ef.tables import format_table
>>> print(format_table(["system", "ndcg@10", "note"], [["bm25", 0.6791, None], ["dense", 0.6451, "top-100"]],
...                    title="SciFact"))
SciFact
system  ndcg@10     note
------  -------  -------
bm25     0.6791        -
dense    0.6451  top-100
"""

from ef._console import format_table

__all__ = ["format_table"]
