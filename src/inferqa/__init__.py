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

`rerank`, `read` and `evaluate` are the stage packages themselves, callable as their
stage's function (`inferqa.reranking.rerank_run`, `inferqa.reading.read_with_llm`,
`inferqa.evaluation.evaluate`). Names load on first use, so `import inferqa` stays light.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# exported name -> (module, attribute; None: the module itself)
_EXPORTS = {
    "build_benchmark": ("inferqa.construct", "build_benchmark"),
    "Benchmark": ("inferqa.formats", "Benchmark"),
    "load_questions": ("inferqa.data", "load_questions"),
    "get_retriever": ("inferqa.retrieve", "get_retriever"),
    "get_reranker": ("inferqa.reranking", "get_reranker"),
    "rerank": ("inferqa.reranking", None),
    "read": ("inferqa.reading", None),
    "evaluate": ("inferqa.evaluation", None),
    "compare": ("inferqa.evaluation", "compare"),
    "fuse": ("inferqa.retrieve.fusion", "fuse"),
    "diversify": ("inferqa.retrieve.diversify", "diversify"),
    "Run": ("inferqa.formats", "Run"),
    "Qrels": ("inferqa.formats", "Qrels"),
    "load_llm": ("inferqa.llm", "load_llm"),
    "open_run": ("inferqa.formats", "open_run"),
    "monotonicity": ("inferqa.diagnose", "monotonicity"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'inferqa' has no attribute {name!r}") from None
    obj = importlib.import_module(module)
    return obj if attr is None else getattr(obj, attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
