"""Adapters that make other retrieval back ends fastrag Retrievers: re-exported from :mod:`ef.retrieval`.

Every adapter between ef and fastrag lives in one module, :mod:`ef.retrieval`, with the one
retriever protocol and hit type. An ef ``SearchableCorpus`` or ``SourceManager`` is a Retriever
itself and runs in :func:`~fastrag.benchmark.run_benchmark` as it is; :class:`CorpusRetriever`
(an index whose hits come back as :class:`~fastrag.documents.Chunk`\\ s, ``source_uri`` = the
segment's source document id and ``chunk_index`` = the segment's index) stays for code that uses it.

>>> from ef.segments import Segment
>>> from ef.source_manager import SearchHit
>>> hit_to_chunk(SearchHit(Segment("doc-1", 2, "Hello", 10, 15), score=3.5, rank=1)).chunk_index
2
"""

from ef.retrieval import CorpusRetriever, SearchableCorpusLike, as_chunk, hit_to_chunk

__all__ = ["CorpusRetriever", "SearchableCorpusLike", "as_chunk", "hit_to_chunk"]
