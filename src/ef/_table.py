"""Old private path of the tables of :mod:`ef.console`, kept while modules of ef not yet moved import it."""

from ef.console import format_table, format_value

__all__ = ["format_table", "format_value"]
