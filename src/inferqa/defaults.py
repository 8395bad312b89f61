"""Defaults shared by several stages, each declared once as a registry Option that every
signature, flag and schema reads."""

from __future__ import annotations

from .registry import Option

# Relevant = label >= min_label: for every metric, the oracles and fine-tuning's positives.
MIN_LABEL = Option("min_label", int, 1, "lowest label counted as relevant", min=1)
