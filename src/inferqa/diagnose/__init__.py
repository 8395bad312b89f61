"""Diagnostics of a retriever on a benchmark's hint structure.

- `monotonicity`: evidence monotonicity (EMVR), how often adding one hint to a passage lowers
  its score (`inferqa diagnose monotonicity`, docs/diagnose.md).
"""

from __future__ import annotations

from .monotonicity import MonotonicityReport, Rate, hint_additions, monotonicity

__all__ = ["MonotonicityReport", "Rate", "hint_additions", "monotonicity"]
