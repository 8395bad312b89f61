"""Turn question+hint data into a QUIT-style benchmark directory (`inferqa build`)."""

from .builder import build_benchmark, select_questions
from .leakage import LEAK_POLICIES, LeakJudge, StringLeakJudge, apply_leak_policy
from .passages import iter_orders, iter_passages, n_orders

__all__ = ["LEAK_POLICIES", "LeakJudge", "StringLeakJudge", "apply_leak_policy", "build_benchmark",
           "iter_orders", "iter_passages", "n_orders", "select_questions"]
