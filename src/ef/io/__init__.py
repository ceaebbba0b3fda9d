"""ef's one I/O layer: every file the distribution reads or writes goes through here.

- ``ef.io._atomic`` (private) writes files atomically.
- :mod:`ef.io.trec` reads and writes TREC runs and qrels (and BEIR qrels TSVs).
- :mod:`ef.io.numbers` reads a field's number as trec_eval does (C's ``strtod``), and
  :mod:`ef.io.ranked` holds a run as arrays in trec_eval's order (what ``ef.fusion.fuse`` returns).
- :mod:`ef.io.jsonl` reads JSON Lines, ``ef.io._source`` (private) opens paths, ``-`` and gzip alike.
- :mod:`ef.io.frames` reads runs and qrels from pandas or polars DataFrames and builds the long
  per-query frames of every report (``to_pandas()`` / ``to_polars()``).
- :mod:`ef.io.mteb` reads and writes MTEB's result files.
"""
