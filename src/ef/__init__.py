"""ef: retrieval and RAG evaluation — trec_eval's numbers, fast, offline.

The public API lives in sub-modules: :mod:`ef.evaluation` (metrics, reports, BEIR files),
:mod:`ef.source_manager` (ingest and search a corpus), :mod:`ef.compare` (paired significance
tests between systems), :mod:`ef.measures` (the one registry of measures), :mod:`ef.io` (every
reader and writer: TREC, BEIR, JSONL, DataFrames), :mod:`ef.retrieval` (the retriever protocol
and hit type ef and fastrag share), :mod:`ef.segments` (chunking), :mod:`ef.report` (HTML
reports), :mod:`ef.tables` (the plain-text tables reports print). Plumbing no caller needs
(argument checks, progress bars, the atomic writer's machinery behind ``ef.io.atomic_writer``)
is private.
Importing ``ef`` is cheap: nothing heavy loads until used.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
