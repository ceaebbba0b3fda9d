"""fastrag: benchmark retrievers and RAG pipelines with metric objects and an async harness.

- :mod:`fastrag.documents` — :class:`Chunk` (content-addressed id) and the chunker.
- :mod:`fastrag.benchmark` — samples, metrics, :func:`~fastrag.benchmark.run_benchmark`.
- :mod:`fastrag.adapters` — the ef adapters fastrag code uses, from :mod:`ef.retrieval` (where the
  one retriever protocol and hit type of ef and fastrag live: an ef index is a Retriever as it is).

>>> from fastrag import Chunk
>>> Chunk("doc-1", 0, "Hello").source_uri
'doc-1'
"""

from fastrag.documents import Chunk, chunk_id, chunk_pages, chunk_text

__all__ = ["Chunk", "chunk_id", "chunk_pages", "chunk_text"]
