"""TREC run and qrels files: the public names of :mod:`ef.io.trec`, where they are implemented.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
>>> write_qrels(path, {"q1": {"d1": 2}})
>>> read_qrels(path)
{'q1': {'d1': 2}}
"""

from ef.io.trec import read_qrels, read_run, write_qrels, write_run

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]
