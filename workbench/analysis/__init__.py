"""Calibration analysis over sweep frames: the grant band and its invariants, survival of tokens-to-finish,
and where the governors fire. Every function takes DataFrames (the sweep's columns) and returns frozen
results with ``.to_frame()`` and a notebook ``_repr_html_``."""

from workbench.analysis.band import Binding, GrantBand, effects, grant_band
from workbench.analysis.calibration import Calibration, ConstantRow, calibrate
from workbench.analysis.fires import fire_points, fire_summary, stop_mix
from workbench.analysis.frames import annotate, run_facts
from workbench.analysis.invariants import Invariant, seed_invariants
from workbench.analysis.survival import Coverage, Survival, survival, tokens_to_finish

__all__ = ["Binding", "Calibration", "ConstantRow", "Coverage", "GrantBand", "Invariant",
           "Survival", "annotate", "calibrate", "effects", "fire_points", "fire_summary",
           "grant_band", "run_facts", "seed_invariants", "stop_mix", "survival",
           "tokens_to_finish"]  # fmt: skip
