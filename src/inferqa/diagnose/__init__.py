"""Diagnostics of a retriever on a benchmark's hint structure.

The stages are `inferqa.diagnose.stage`'s functions; `monotonicity` and `window` call them
with the benchmark (and the retriever) by position:

- `monotonicity`: evidence monotonicity (EMVR), how often adding one hint to a passage lowers
  its score (`inferqa diagnose monotonicity`, docs/diagnose.md).
- `window`: how many distinct questions and hint sets a run's top k passages hold, and the
  best a reranker could reach over k passages or k distinct questions (`inferqa diagnose
  window`, docs/diagnose.md#window).
"""

from __future__ import annotations

from .monotonicity import MonotonicityReport, Rate, hint_additions
from .window import WindowReport
# last: the functions `monotonicity` and `window`, not the submodules of those names
from .stage import diagnose_monotonicity, diagnose_window, monotonicity, window

__all__ = ["MonotonicityReport", "Rate", "hint_additions", "monotonicity", "WindowReport", "window",
           "diagnose_monotonicity", "diagnose_window"]
