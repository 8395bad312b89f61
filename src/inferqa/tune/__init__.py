"""Tuning a stage's free parameters on a dev split: `diversify` chooses the adaptive
diversification margin (`tune_margin`, the stage `tune-diversify` in Python's words), `union`
union_freq's alpha/beta by reader EM (`tune_union`)."""

from .diversify import MarginTuning
from .stage import tune_margin
from .union import UnionTuning, tune_union

__all__ = ["tune_margin", "MarginTuning", "tune_union", "UnionTuning"]
