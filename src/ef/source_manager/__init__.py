"""Ingest a corpus and search it. SKELETON: being written (issue 4)."""

from ef.source_manager._hit import SearchHit

__all__ = ["SearchHit"]
