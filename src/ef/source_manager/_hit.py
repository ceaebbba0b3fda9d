"""Old private path of :class:`ef.retrieval.SearchHit`, kept while modules of ef not yet moved import it."""

from ef.retrieval import SearchHit

__all__ = ["SearchHit"]
