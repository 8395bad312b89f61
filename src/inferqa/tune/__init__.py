"""Tuning a stage's free parameters on a dev split: `diversify` chooses the adaptive
diversification margin (`tune_margin`), `union` union_freq's alpha/beta by reader EM
(`tune_union`)."""

from .diversify import MarginTuning, tune_margin
from .union import UnionTuning, tune_union

__all__ = ["tune_margin", "MarginTuning", "tune_union", "UnionTuning"]
