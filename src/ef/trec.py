"""TREC run and qrels files. SKELETON: being written (issue 3)."""
