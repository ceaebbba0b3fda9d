"""TREC run and qrels files: the public names. Runs are read by the run engine
(:mod:`ef.evaluation._hits`), qrels read and both written by :mod:`ef.io.trec`.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
>>> write_qrels(path, {"q1": {"d1": 2}})
>>> read_qrels(path)
{'q1': {'d1': 2}}
"""

from ef.evaluation._hits import read_run
from ef.io.trec import read_qrels, write_qrels, write_run

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]
