"""Old private path of :mod:`ef.validate`, kept while modules of ef not yet moved import it from here."""

from ef.validate import check_finite_number, check_id, check_positive_int, finite_float

__all__ = ["check_finite_number", "check_id", "check_positive_int", "finite_float"]
