"""Old private path of the progress bars of :mod:`ef.console`, kept while modules of ef not yet moved import it."""

from ef.console import Progress, progress, progress_silenced

__all__ = ["Progress", "progress", "progress_silenced"]
