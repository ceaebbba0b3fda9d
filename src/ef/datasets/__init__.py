"""Datasets by name, from what is already on disk, checked against published checksums.

``load("beir/scifact")`` finds a dataset in the ir_datasets cache, the Hugging Face hub cache or
ef's own cache (in that order; see :func:`load`), verifies it and returns the BEIR triple with the
dataset's facts; ``fetch`` (``ef datasets fetch NAME``) is the only thing that goes online.
``demo_dataset()`` is the small BEIR folder that ships inside ef. See ``docs/datasets.md``.
"""

from __future__ import annotations

from ef.datasets._demo import demo_dataset
from ef.datasets._fetch import fetch
from ef.datasets._load import Dataset, DatasetFacts, load, where_present
from ef.datasets._places import ChecksumError, DatasetNotFoundError, ef_root, hf_hub, irds_home
from ef.datasets._registry import KNOWN, KnownDataset, resolve_name

__all__ = [
    "KNOWN",
    "ChecksumError",
    "Dataset",
    "DatasetFacts",
    "DatasetNotFoundError",
    "KnownDataset",
    "demo_dataset",
    "ef_root",
    "fetch",
    "hf_hub",
    "irds_home",
    "load",
    "resolve_name",
    "where_present",
]
