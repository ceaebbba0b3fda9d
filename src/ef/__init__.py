"""ef: retrieval and RAG evaluation — trec_eval's numbers, fast, offline.

The public API lives in sub-modules: :mod:`ef.evaluation` (metrics, reports, BEIR files),
:mod:`ef.source_manager` (ingest and search a corpus), :mod:`ef.compare` (paired significance
tests between systems), :mod:`ef.segments` and :mod:`ef.trec` (TREC run and qrels files).
Importing ``ef`` is cheap: nothing heavy loads until used.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
