"""The datasets ef knows by name, and the files their publishers serve, with published checksums.

Every md5 below is copied from a public table, never computed here: BEIR's "Available Datasets"
table (beir-cellar/beir, README.md) for the BEIR zips, and ir_datasets' ``etc/downloads.json``
(ir-datasets/ir-datasets @ dc0f8ce) for the same zips (the two tables agree) and for the MS MARCO
passage files; sizes are that file's ``size_hint``. Where no table gives a checksum (the four
BEIR sets that are not public, the Hugging Face parquet files, ir_datasets' own extracted copies)
there is none here, and such files are read as *not verified*, never as verified.

Relevance levels: 1 (grade > 0 is relevant) for BEIR and MS MARCO dev; 2 for TREC DL, whose
official binary measures are ``RR(rel=2)`` and ``AP(rel=2)`` (ir_datasets' ``official_measures``).
ArguAna and Quora hold queries that are themselves documents of the corpus, under the same id
(BEIR's ``ignore_identical_ids``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["ALIASES", "CQADUPSTACK_FORUMS", "KNOWN", "Download", "KnownDataset", "Part", "resolve_name"]

_BEIR_URL = "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/{}.zip"
_MSMARCO_URL = "https://msmarco.z22.web.core.windows.net/msmarcoranking/{}"
# ir_datasets sends this header to the MS MARCO host (its download_args): the blob service's
# API version, which range requests depend on.
_MS_HEADERS = (("X-Ms-Version", "2019-12-12"),)


@dataclass(frozen=True, slots=True)
class Download:
    """One file as its publisher serves it."""

    url: str
    md5: str
    size: int | None
    cache_path: str
    """Where ``ef datasets fetch`` puts it, relative to ef's cache folder."""
    irds_path: str | None = None
    """Where ir_datasets keeps it, relative to ``$IR_DATASETS_HOME`` (beside ``downloads/<md5>``)."""
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def filename(self) -> str:
        return self.cache_path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Part:
    """Where one of an MS MARCO set's three files (corpus, queries, qrels) comes from."""

    role: str
    """``corpus``, ``queries`` or ``qrels``."""
    download: Download
    member: str | None
    """The member of the tar archive `download`; ``None``: the file itself (gzip read as such)."""
    irds_plain: str | None
    """ir_datasets' own extracted copy, relative to ``$IR_DATASETS_HOME`` (no published checksum)."""


@dataclass(frozen=True, slots=True)
class KnownDataset:
    """A dataset ef knows by name."""

    name: str
    family: str
    """``beir`` (one zip of a BEIR folder) or ``msmarco-passage`` (TSV files, TREC qrels)."""
    splits: tuple[str, ...]
    relevance_level: int
    query_ids_are_doc_ids: bool
    archive: Download | None = None
    """BEIR: the zip; ``None`` when the set is not publicly downloadable."""
    zip_root: str = ""
    """BEIR: the folder inside the zip that holds ``corpus.jsonl``."""
    irds_dir: str | None = None
    """BEIR: ir_datasets' folder for the zip, relative to ``$IR_DATASETS_HOME``."""
    hf_repo: str | None = None
    """BEIR: the Hugging Face dataset (``BeIR/<name>``; its qrels in ``<hf_repo>-qrels``)."""
    parts: tuple[Part, ...] = ()
    """MS MARCO: where the corpus, the queries and the qrels come from."""
    note: str = ""

    @property
    def default_split(self) -> str:
        return "test" if "test" in self.splits else self.splits[0]

    @property
    def downloads(self) -> tuple[Download, ...]:
        """The files ``ef datasets fetch`` gets, each once."""
        if self.archive is not None:
            return (self.archive,)
        unique: dict[str, Download] = {}
        for part in self.parts:
            unique.setdefault(part.download.md5, part.download)
        return tuple(unique.values())


# name: (md5, size, splits); None for the sets BEIR does not distribute.
_BEIR: dict[str, tuple[str | None, int | None, tuple[str, ...]]] = {
    "msmarco": ("444067daf65d982533ea17ebd59501e4", 1082258632, ("train", "dev", "test")),
    "trec-covid": ("ce62140cb23feb9becf6270d0d1fe6d1", 73876720, ("test",)),
    "nfcorpus": ("a89dba18a62ef92f7d323ec890a0d38d", 2448432, ("train", "dev", "test")),
    "bioasq": (None, None, ("train", "test")),
    "nq": ("d4d3d2e48787a744b6f6e691ff534307", 498307926, ("test",)),
    "hotpotqa": ("f412724f78b0d91183a0e86805e16114", 654025350, ("train", "dev", "test")),
    "fiqa": ("17918ed23cd04fb15047f73e6c3bd9d9", 17948027, ("train", "dev", "test")),
    "signal1m": (None, None, ("test",)),
    "trec-news": (None, None, ("test",)),
    "robust04": (None, None, ("test",)),
    "arguana": ("8ad3e3c2a5867cdced806d6503f29b99", 3773617, ("test",)),
    "webis-touche2020": ("46f650ba5a527fc69e0a6521c5a23563", 227132363, ("test",)),
    "quora": ("18fb154900ba42a600f84b839c173167", 15853968, ("dev", "test")),
    "dbpedia-entity": ("c2a39eb420a3164af735795df012ac2c", 639285131, ("dev", "test")),
    "scidocs": ("38121350fc3a4d2f48850f6aff52e4a9", 142471588, ("test",)),
    "fever": ("5a818580227bfb4b35bb6fa46d9b6c03", 1236988269, ("train", "dev", "test")),
    "climate-fever": ("8b66f0a9126c521bae2bde127b4dc99d", 1228666652, ("test",)),
    "scifact": ("5f7d1de60b170fc8027bb7898e2efca1", 2816079, ("train", "test")),
}
_CQADUPSTACK = ("4e41456d7df8ee7760a7f866133bda78", 5343728040)
CQADUPSTACK_FORUMS = (
    "android", "english", "gaming", "gis", "mathematica", "physics", "programmers", "stats", "tex", "unix",
    "webmasters", "wordpress",
)
_IDENTICAL_IDS = frozenset({"arguana", "quora"})
_NOT_PUBLIC = "not distributed by BEIR: build it with BEIR's instructions, then pass its folder or put it in ef's cache"


def _beir() -> list[KnownDataset]:
    known = []
    for name, (md5, size, splits) in _BEIR.items():
        # BEIR's webis-touche2020.zip is ir_datasets' beir/webis-touche2020/v2 (its v1 is another file).
        irds = "webis-touche2020/v2" if name == "webis-touche2020" else name
        archive = None if md5 is None else Download(
            _BEIR_URL.format(name), md5, size, f"beir/{name}.zip", f"beir/{irds}/source.zip"
        )
        known.append(KnownDataset(
            f"beir/{name}", "beir", splits, 1, name in _IDENTICAL_IDS, archive, name,
            None if md5 is None else f"beir/{irds}", None if md5 is None else f"BeIR/{name}",
            note="" if md5 is not None else _NOT_PUBLIC,
        ))
    cqa = Download(
        _BEIR_URL.format("cqadupstack"), *_CQADUPSTACK, "beir/cqadupstack.zip", "beir/cqadupstack/source.zip"
    )
    for forum in CQADUPSTACK_FORUMS:
        known.append(KnownDataset(
            f"beir/cqadupstack/{forum}", "beir", ("test",), 1, False, cqa, f"cqadupstack/{forum}",
            "beir/cqadupstack", None, note="one forum of BEIR's cqadupstack.zip (BEIR reports the mean of the 12)",
        ))
    return known


def _msmarco() -> list[KnownDataset]:
    bundle = Download(
        _MSMARCO_URL.format("collectionandqueries.tar.gz"), "31644046b18952c1386cd4564ba2ae69", 1057717952,
        "msmarco-passage/collectionandqueries.tar.gz", "msmarco-passage/collectionandqueries.tar.gz", _MS_HEADERS,
    )
    corpus = Part("corpus", bundle, "collection.tsv", "msmarco-passage/collection.tsv")
    dev_small = KnownDataset(
        "msmarco-passage/dev/small", "msmarco-passage", ("dev",), 1, False,
        parts=(
            corpus,
            Part("queries", bundle, "queries.dev.small.tsv", "msmarco-passage/dev/small/queries.tsv"),
            Part("qrels", bundle, "qrels.dev.small.tsv", "msmarco-passage/dev/small/qrels"),
        ),
        note="MS MARCO passage dev, the 6,980 queries of queries.dev.small.tsv",
    )
    years = []
    for year, (q_md5, q_size, q_irds), (r_md5, r_size) in (
        ("2019", ("eda71eccbe4d251af83150abe065368c", 4276, None), ("2f4be390198da108f6845c822e5ada14", 187092)),
        ("2020", ("00a406fb0d14ed3752d70d1e4eb98600", 4131, "msmarco-passage/trec-dl-2020/queries.tsv.gz"),
         ("0355ccee7509ac0463e8278186cdd8d1", 218617)),
    ):
        queries = Download(
            _MSMARCO_URL.format(f"msmarco-test{year}-queries.tsv.gz"), q_md5, q_size,
            f"msmarco-passage/msmarco-test{year}-queries.tsv.gz", q_irds,
        )
        qrels = Download(
            f"https://trec.nist.gov/data/deep/{year}qrels-pass.txt", r_md5, r_size,
            f"msmarco-passage/{year}qrels-pass.txt", f"msmarco-passage/trec-dl-{year}/qrels",
        )
        years.append(KnownDataset(
            f"trec-dl-{year}", "msmarco-passage", ("test",), 2, False,
            parts=(
                corpus,
                Part("queries", queries, None, f"msmarco-passage/trec-dl-{year}/queries.tsv"),
                Part("qrels", qrels, None, None),
            ),
            note=f"TREC {year} Deep Learning track, passage task (MS MARCO passage corpus, graded 0-3)",
        ))
    return [dev_small, *years]


_KNOWN: dict[str, KnownDataset] = {known.name: known for known in (*_beir(), *_msmarco())}

KNOWN: Mapping[str, KnownDataset] = MappingProxyType(_KNOWN)
"""Every dataset ef knows, by its name: a read-only view (``KNOWN["x"] = ...`` is a TypeError),
since :func:`resolve_name`, :func:`~ef.datasets.load` and ``fetch`` all read it: a user's change
would make ef verify a dataset against a checksum it never published."""


def _aliases() -> dict[str, tuple[str, str | None]]:
    """ir_datasets' ids that are not a name, or a BEIR name and a split -> (name, split or None)."""
    aliases: dict[str, tuple[str, str | None]] = {"beir/webis-touche2020/v2": ("beir/webis-touche2020", None)}
    for year in ("2019", "2020"):
        for suffix in ("", "/judged"):
            aliases[f"msmarco-passage/trec-dl-{year}{suffix}"] = (f"trec-dl-{year}", None)
    return aliases


ALIASES: Mapping[str, tuple[str, str | None]] = MappingProxyType(_aliases())
"""ir_datasets' ids ef also reads -> (name, split or None); read-only, as :data:`KNOWN`."""


def resolve_name(name: str) -> tuple[KnownDataset, str | None] | None:
    """The known dataset `name` (or an alias of it) stands for, and the split an alias names.

    >>> known, split = resolve_name("beir/scifact/train")
    >>> known.name, split
    ('beir/scifact', 'train')
    >>> resolve_name("msmarco-passage/trec-dl-2019/judged")[0].name
    'trec-dl-2019'
    >>> resolve_name("nope") is None
    True
    """
    if not isinstance(name, str):  # None would fail inside, on .rpartition
        raise TypeError(f"'name' must be a str (got {type(name).__name__})")
    if name in KNOWN:
        return KNOWN[name], None
    if name in ALIASES:
        canonical, split = ALIASES[name]
        return KNOWN[canonical], split
    head, _, split = name.rpartition("/")  # ir_datasets' beir/<name>/<split>
    known = KNOWN.get(head)
    if known is not None and known.family == "beir" and split in known.splits:
        return known, split
    return None
