"""The one measure registry: every measure ef computes, by every spelling it accepts.

(Interface skeleton: the registry moves here from ``ef.evaluation._measures``; callers outside
this package import measure names only from ``ef.measures``.)
"""

from ef.evaluation._measures import MEASURES, Measure, MeasureFamily, expand_measure_specs, parse_measure, valid_forms

__all__ = ["MEASURES", "Measure", "MeasureFamily", "expand_measure_specs", "parse_measure", "valid_forms"]
