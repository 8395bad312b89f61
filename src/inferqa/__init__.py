"""inferqa: a toolkit for Inferential Question Answering (QUIT-style benchmarks).

The stages, each taking paths or objects (docs/getting-started.md#the-same-in-python, docs/api.md):

    import inferqa
    inferqa.build_benchmark(inferqa.load_questions("hints.json"), "bench")
    bm25 = inferqa.get_retriever("bm25")
    bm25.index("bench")
    run = bm25.retrieve("bench", split="test", depth=100)
    inferqa.evaluate(run, "bench", ["nDCG@10", "RR"])
    inferqa.compare([run, "other.trec"], "bench", split="test")
    inferqa.fuse([run, "other.trec"], "rrf", bench="bench")   # also inferqa.diversify(run, "bench", 1)

Each checks what it is given as the command line checks a file (`formats.as_run`): a
malformed object, a NaN score or an id the benchmark lacks is an `InputError`.

`rerank`, `read` and `evaluate` are plain functions (`inferqa.reranking.rerank_run`,
`inferqa.reading.read_with_llm`, `inferqa.evaluation.evaluate`); their stages' packages are
`inferqa.reranking`, `inferqa.reading` and `inferqa.evaluation`. Names load on first use, so
`import inferqa` stays light; type checkers and IDEs read them from the imports below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .version import __version__

if TYPE_CHECKING:
    from .construct import build_benchmark
    from .data import load_questions
    from .diagnose import monotonicity, window
    from .evaluation import compare, evaluate
    from .formats import Benchmark, Qrels, Run, open_run
    from .llm import load_llm
    from .reading import read_with_llm as read
    from .reranking import get_reranker, rerank_run as rerank
    from .retrieve import get_retriever
    from .diversification import diversify
    from .retrieve.fusion import fuse

# exported name -> (module, attribute); the same as the TYPE_CHECKING imports above
_EXPORTS = {
    "build_benchmark": ("inferqa.construct", "build_benchmark"),
    "Benchmark": ("inferqa.formats", "Benchmark"),
    "load_questions": ("inferqa.data", "load_questions"),
    "get_retriever": ("inferqa.retrieve", "get_retriever"),
    "get_reranker": ("inferqa.reranking", "get_reranker"),
    "rerank": ("inferqa.reranking", "rerank_run"),
    "read": ("inferqa.reading", "read_with_llm"),
    "evaluate": ("inferqa.evaluation", "evaluate"),
    "compare": ("inferqa.evaluation", "compare"),
    "fuse": ("inferqa.retrieve.fusion", "fuse"),
    "diversify": ("inferqa.diversification", "diversify"),
    "Run": ("inferqa.formats", "Run"),
    "Qrels": ("inferqa.formats", "Qrels"),
    "load_llm": ("inferqa.llm", "load_llm"),
    "open_run": ("inferqa.formats", "open_run"),
    "monotonicity": ("inferqa.diagnose", "monotonicity"),
    "window": ("inferqa.diagnose", "window"),
}

# written out (not built from _EXPORTS) so that linters and type checkers read it
__all__ = ["__version__", "build_benchmark", "Benchmark", "load_questions", "get_retriever", "get_reranker", "rerank",
           "read", "evaluate", "compare", "fuse", "diversify", "Run", "Qrels", "load_llm", "open_run", "monotonicity",
           "window"]


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'inferqa' has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))

