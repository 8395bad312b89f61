"""Stage packages that are also their stage's function: `inferqa.evaluate(run, qrels)` calls
`inferqa.evaluation.evaluate`, and `inferqa.evaluation.per_query_scores` stays where it is.

A function of the same name as a subpackage cannot live in `inferqa` itself: importing the
subpackage (any `from inferqa.evaluation import ...`) rebinds the name to the module.
"""

from __future__ import annotations

import inspect
import sys
import types
from typing import Callable


def make_callable(module_name: str, func: Callable) -> None:
    """Calling the module `module_name` calls `func` (same signature for help and inspect)."""

    class StageModule(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return func(*args, **kwargs)

    module = sys.modules[module_name]
    module.__class__ = StageModule
    module.__signature__ = inspect.signature(func)
