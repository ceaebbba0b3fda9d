"""ef's one I/O layer: every file the distribution reads or writes goes through here.

- :func:`atomic_writer` writes a file atomically (a temporary file beside it, renamed over it when
  complete): every ef writer uses it, and so can a caller's own. The rest of ``ef.io._atomic``
  (several files at once, folders, clean-up of a killed writer's leftovers) is private.
- :mod:`ef.io.trec` reads and writes TREC runs and qrels (and BEIR qrels TSVs).
- :mod:`ef.io.numbers` reads a field's number as trec_eval does (C's ``strtod``), and
  :mod:`ef.io.ranked` holds a run as arrays in trec_eval's order (what ``ef.fusion.fuse`` returns).
- :mod:`ef.io.jsonl` reads JSON Lines, ``ef.io._source`` (private) opens paths, ``-`` and gzip alike.
- :mod:`ef.io.frames` reads runs and qrels from pandas or polars DataFrames and builds the long
  per-query frames of every report (``to_pandas()`` / ``to_polars()``).
- :mod:`ef.io.mteb` reads and writes MTEB's result files.
- :mod:`ef.io.deepeval` reads DeepEval's saved datasets and test cases as RAG samples.

>>> import os, tempfile
>>> from ef.io import atomic_writer
>>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
>>> with atomic_writer(path) as stream:  # binary: write bytes
...     _ = stream.write(b"done\\n")
>>> open(path).read(), os.listdir(os.path.dirname(path))  # the file, and no temporary beside it
('done\\n', ['notes.txt'])
"""

from typing import TYPE_CHECKING

from ef._lazy import lazy_names

if TYPE_CHECKING:
    from ef.io._atomic import atomic_writer

__all__ = ["atomic_writer"]

# Imported on first use: `import ef.io.trec` (every reader) loads no writer machinery.
__getattr__, __dir__ = lazy_names(globals(), __name__, {"atomic_writer": "ef.io._atomic"})
