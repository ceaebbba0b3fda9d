"""The optional plotting libraries, imported on first use with an install hint."""

from __future__ import annotations

from types import ModuleType

__all__ = ["altair", "require_report_extra", "vl_convert"]

_HINT = "the HTML report needs the 'report' extra: pip install 'ef-eval[report]'"


def altair() -> ModuleType:
    """The ``altair`` module; ``ImportError`` with the install command when it is missing."""
    try:
        import altair as alt
    except ImportError as error:
        raise ImportError(f"{_HINT} (altair is missing: {error})") from error
    return alt


def vl_convert() -> ModuleType:
    """The ``vl_convert`` module (the Vega JavaScript bundle and static export)."""
    try:
        import vl_convert as vlc
    except ImportError as error:
        raise ImportError(f"{_HINT} (vl-convert-python is missing: {error})") from error
    return vlc


def require_report_extra() -> None:
    """``ImportError`` with the install command unless both plotting libraries import: check before any work."""
    altair()
    vl_convert()
