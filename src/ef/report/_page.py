"""A report as data (sections of tables, figures and text) and its one-file HTML rendering."""

from __future__ import annotations

import functools
import hashlib
import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ef.io._atomic import atomic_writer
from ef.report import _deps

__all__ = ["Cell", "Figure", "Report", "Section", "Table", "Text", "cell", "notebook_html"]


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell: the text shown and, for a number, the exact value it stands for.

    ``value`` is written to the page as ``data-value`` (the JSON number), so a reader's script
    or a test can check the shown text against the report without parsing it back.
    """

    text: str
    value: float | None = None
    css: str = ""


def cell(value: object, *, css: str = "") -> Cell:
    """A cell for `value`: floats with 4 decimals (trec_eval's precision), ints as is, None as '-'."""
    if isinstance(value, Cell):
        return value
    if isinstance(value, bool) or value is None:
        return Cell("-" if value is None else str(value), css=css)
    if isinstance(value, int):
        return Cell(str(value), float(value), css=css or "num")
    if isinstance(value, float):
        return Cell(f"{value:.4f}", value, css=css or "num")
    return Cell(str(value), css=css)


@dataclass(frozen=True, slots=True)
class Table:
    """A table with an id (``<table id=…>``), headers and rows of cells."""

    id: str
    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""

    @classmethod
    def of(cls, id: str, headers: Sequence[str], rows: Sequence[Sequence[object]], caption: str = "") -> Table:
        """A table from plain values, each turned into a :class:`Cell` by :func:`cell`."""
        return cls(id, tuple(headers), tuple(tuple(cell(v) for v in row) for row in rows), caption)


@dataclass(frozen=True, slots=True)
class Figure:
    """A Vega-Lite chart: ``name`` is its id in the page and its file name as an image."""

    name: str
    title: str
    spec: Mapping[str, Any]
    caption: str = ""


@dataclass(frozen=True, slots=True)
class Text:
    """A paragraph of plain text (escaped when rendered); ``css`` sets its class."""

    text: str
    css: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and what follows it; ``side_by_side`` lays its blocks out in columns."""

    id: str
    title: str
    blocks: tuple[Table | Figure | Text | Section, ...]
    side_by_side: bool = False


@dataclass(frozen=True, slots=True)
class Report:
    """A rendered-to-be report: a title, facts about what was evaluated, and its sections.

    :meth:`to_html` writes it as one self-contained HTML file (the Vega JavaScript inlined, no
    request of any kind when opened); :meth:`save_figures` writes its charts as PNG or SVG.
    """

    kind: str
    title: str
    sections: tuple[Section, ...]
    facts: Mapping[str, str] = field(default_factory=dict)

    @property
    def figures(self) -> tuple[Figure, ...]:
        """Every figure of the report, in page order."""
        return tuple(_figures(self.sections))

    def html(self) -> str:
        """The whole page as a string."""
        return _render(self)

    def _repr_html_(self) -> str:
        """The page in a notebook: :meth:`html` in a sandboxed frame (see :func:`notebook_html`)."""
        return notebook_html(self.html())

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`html` to `path` atomically and return the path."""
        target = Path(path)
        with atomic_writer(target) as stream:
            stream.write(self.html().encode("utf-8"))
        return target

    def save_figures(self, directory: str | os.PathLike[str], format: str = "png", *, scale: float = 2.0) -> list[Path]:
        """Write every figure to `directory` as ``<kind>-<name>.<format>`` (``png`` or ``svg``).

        Rendered offline by vl-convert (no browser). `directory` is created if missing; each
        file is written atomically. Returns the paths written, in page order.
        """
        if format not in ("png", "svg"):
            raise ValueError(f"'format' must be 'png' or 'svg' (got {format!r})")
        vlc = _deps.vl_convert()
        folder = Path(directory)
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(f"{folder} exists and is not a directory")
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for figure in self.figures:
            # On the page the heading above a chart names it; an image stands alone, so it carries
            # the figure's title and, below it, the report's.
            spec = {**figure.spec, "title": {"text": figure.title, "subtitle": self.title, "anchor": "start"}}
            if format == "png":
                data: bytes = vlc.vegalite_to_png(spec, scale=scale, vl_version=_vl_version())
            else:
                data = vlc.vegalite_to_svg(spec, vl_version=_vl_version()).encode("utf-8")
            target = folder / f"{self.kind}-{figure.name}.{format}"
            with atomic_writer(target) as stream:
                stream.write(data)
            written.append(target)
        return written


def notebook_html(page: str, *, height: int = 720) -> str:
    """A whole HTML `page` as a fragment a notebook can show: one ``<iframe srcdoc=…>``.

    Jupyter, VS Code and Colab insert a ``_repr_html_`` fragment into their own page; a whole
    document with its ``<head>``, styles and scripts does not belong there. In a frame the page
    is exactly the file :meth:`Report.to_html` writes, its styles stay its own, and its scripts
    run in a sandbox (``allow-scripts``: no access to the notebook, no navigation, no forms).

    >>> notebook_html('<p title="a">x & y</p>', height=100)
    '<iframe sandbox="allow-scripts" style="width: 100%; height: 100px; border: 1px solid #d1d9e0" \
srcdoc="&lt;p title=&quot;a&quot;&gt;x &amp; y&lt;/p&gt;"></iframe>'
    """
    if isinstance(height, bool) or not isinstance(height, int) or height < 1:
        raise ValueError(f"'height' must be a positive integer of pixels (got {height!r})")
    style = f"width: 100%; height: {height}px; border: 1px solid #d1d9e0"
    return f'<iframe sandbox="allow-scripts" style="{style}" srcdoc="{html.escape(page, quote=True)}"></iframe>'


def _figures(blocks: Sequence[Table | Figure | Text | Section]) -> list[Figure]:
    out: list[Figure] = []
    for block in blocks:
        if isinstance(block, Figure):
            out.append(block)
        elif isinstance(block, Section):
            out.extend(_figures(block.blocks))
    return out


@functools.cache
def _vl_version() -> str | None:
    """The Vega-Lite version Altair writes specs for, as vl-convert names it (``"6.4"``)."""
    match = re.match(r"v?(\d+)\.(\d+)", str(getattr(_deps.altair(), "SCHEMA_VERSION", "")))
    if match is None:
        return None
    version = f"{match[1]}.{match[2]}"
    return version if version in _deps.vl_convert().get_vegalite_versions() else None


@functools.cache
def _javascript() -> str:
    """Vega, Vega-Lite and vega-embed as one script (about 0.9 MB).

    vl-convert takes about 2 s to bundle it, so it is kept in a file per installation of the
    plotting libraries (:func:`_bundle_path`) and built only when that file is missing or damaged.
    """
    vlc = _deps.vl_convert()
    vl_version = _vl_version()
    path = _bundle_path(getattr(vlc, "__version__", None), vl_version)
    bundle = _read_bundle(path) if path is not None else None
    if bundle is None:
        bundle = str(vlc.javascript_bundle(vl_version=vl_version))
        if path is not None:
            _write_bundle(path, bundle)
    # Inlined in <script>: "</script" inside it would end the element (in JS strings "<\/" is "</").
    return re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)


def _bundle_path(vlc_version: object, vl_version: str | None) -> Path | None:
    """Where the bundle of these versions is kept: ``$EF_HOME/report``, else ``$XDG_CACHE_HOME/ef/report``,
    else ``~/.cache/ef/report``; ``None`` when vl-convert names no version (nothing to key it by)."""
    if not isinstance(vlc_version, str) or not re.fullmatch(r"[0-9A-Za-z.+_-]+", vlc_version):
        return None
    if os.environ.get("EF_HOME"):
        folder = Path(os.environ["EF_HOME"]) / "report"
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        folder = (Path(xdg) if xdg else Path.home() / ".cache") / "ef" / "report"
    return folder / f"vega-{vlc_version}-vl{vl_version or 'default'}.js"


_BUNDLE_HEAD = "// ef vega bundle sha256="


def _read_bundle(path: Path) -> str | None:
    """The kept bundle, or ``None`` when it is missing, unreadable or not what was written (checksum)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    if head.decode("ascii", "replace") != _BUNDLE_HEAD + hashlib.sha256(body).hexdigest():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _write_bundle(path: Path, bundle: str) -> None:
    """Keep the bundle, atomically; a folder that cannot be written only means it is built again next time."""
    body = bundle.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path) as stream:
            stream.write((_BUNDLE_HEAD + hashlib.sha256(body).hexdigest() + "\n").encode("ascii") + body)
    except OSError:
        pass  # a read-only home or a full disk: the page is still written, with the bundle just built


def _json_for_script(data: object) -> str:
    # Inside <script>, "</script>" or "<!--" in a string would end or confuse the element.
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


_CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg-alt: #f6f8fa; --good: #1a7f37; --bad: #cf222e; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       margin: 0 auto; padding: 1.5rem 2rem 4rem; max-width: 1200px; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: 1.25rem; margin: 2.2rem 0 .6rem; padding-bottom: .2rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.02rem; margin: 1.4rem 0 .4rem; }
h4 { font-size: .95rem; margin: .8rem 0 .3rem; }
nav { margin: .6rem 0 1rem; } nav a { margin-right: 1rem; color: #0969da; text-decoration: none; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem; margin: .4rem 0;
           color: var(--muted); }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid var(--line); padding: .25rem .6rem; text-align: left; vertical-align: top; }
th { background: var(--bg-alt); font-weight: 600; }
td.num, th.num { text-align: right; }
td.snippet { color: var(--muted); max-width: 46ch; font-size: .9em; }
td.rel { color: var(--good); font-weight: 600; } td.nonrel { color: var(--bad); } td.unjudged { color: var(--muted); }
td.win { color: var(--good); } td.loss { color: var(--bad); }
caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: .88em; padding-top: .2rem; }
.figure { margin: .6rem 0 1.2rem; } .figure .caption { color: var(--muted); font-size: .88em; }
.figure .error { color: var(--bad); }
.side { display: flex; flex-wrap: wrap; gap: 1.5rem; } .side > section { flex: 1 1 420px; min-width: 0; }
p.query { font-style: italic; margin: .2rem 0 .4rem; }
p.note { color: var(--muted); }
.vega-embed { max-width: 100%; }
"""

# Renders every figure with vega-embed (SVG, no action menu: its links would leave the page).
# window.efReady resolves when all are drawn; window.efViews holds each Vega view by name.
_BOOT = """
(function () {
  const specs = JSON.parse(document.getElementById("ef-figures").textContent);
  window.efViews = {};
  const jobs = Object.keys(specs).map(function (name) {
    const host = document.getElementById("figure-" + name);
    return vegaEmbed(host, specs[name], {renderer: "svg", actions: false})
      .then(function (result) { window.efViews[name] = result.view; })
      .catch(function (error) {
        host.textContent = "This figure could not be drawn: " + error;
        host.className = "error";
        console.error("figure " + name + ": " + error);
      });
  });
  window.efReady = Promise.all(jobs);
})();
"""


def _render(report: Report) -> str:
    specs = {figure.name: dict(figure.spec) for figure in report.figures}
    if len(specs) != len(report.figures):
        raise ValueError(f"report {report.title!r} has two figures with the same name")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # No request of any kind: nothing may load from outside the file, not even a favicon.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">",
        '<link rel="icon" href="data:,">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(report.title)}</title>",
        f"<style>{_CSS}</style>",
        f'</head><body data-report="{html.escape(report.kind)}">',
        f"<h1>{html.escape(report.title)}</h1>",
    ]
    if report.facts:
        out.append('<dl class="facts">')
        out.extend(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in report.facts.items())
        out.append("</dl>")
    out.append("<nav>" + "".join(f'<a href="#{s.id}">{html.escape(s.title)}</a>' for s in report.sections) + "</nav>")
    for section in report.sections:
        _section(section, 2, out)
    out.append(f'<script type="application/json" id="ef-figures">{_json_for_script(specs)}</script>')
    if specs:
        out.append(f"<script>{_javascript()}</script>")
        out.append(f"<script>{_BOOT}</script>")
    else:
        out.append("<script>window.efViews = {}; window.efReady = Promise.resolve([]);</script>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _section(section: Section, level: int, out: list[str]) -> None:
    out.append(f'<section id="{html.escape(section.id)}">')
    out.append(f"<h{level}>{html.escape(section.title)}</h{level}>")
    if section.side_by_side:
        out.append('<div class="side">')
    for block in section.blocks:
        if isinstance(block, Section):
            _section(block, min(level + 1, 4), out)
        elif isinstance(block, Table):
            _table(block, out)
        elif isinstance(block, Figure):
            out.append(f'<div class="figure"><h{min(level + 1, 4)}>{html.escape(block.title)}</h{min(level + 1, 4)}>')
            out.append(f'<div id="figure-{html.escape(block.name)}" data-figure="{html.escape(block.name)}"></div>')
            if block.caption:
                out.append(f'<div class="caption">{html.escape(block.caption)}</div>')
            out.append("</div>")
        else:
            css = f' class="{html.escape(block.css)}"' if block.css else ""
            out.append(f"<p{css}>{html.escape(block.text)}</p>")
    if section.side_by_side:
        out.append("</div>")
    out.append("</section>")


def _table(table: Table, out: list[str]) -> None:
    out.append(f'<table id="{html.escape(table.id)}">')
    if table.caption:
        out.append(f"<caption>{html.escape(table.caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in table.headers) + "</tr></thead><tbody>")
    for row in table.rows:
        cells = []
        for c in row:
            attrs = f' class="{html.escape(c.css)}"' if c.css else ""
            if c.value is not None:
                attrs += f' data-value="{c.value!r}"'
            cells.append(f"<td{attrs}>{html.escape(c.text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
