"""`inferqa export` targets, plugins of kind `export`: a function (benchmark, output path,
split or None, its declared options) -> how many questions (or, declared `counts="passages"`,
passages) it wrote. A target writes through `io.atomic_open` (or a writer built on it), so
a failed export leaves no half-written file; `needs_split=True` makes the split required.
"""

from __future__ import annotations

import os
from typing import Any

from . import registry
from .errors import InputError
from .formats import RANKIFY, open_run
from .formats.coerce import as_benchmark, BenchLike
from .registry import Option, plugin
from .formats.authors_files import write_pyserini_collection, write_retriever_jsonl
from .formats.split_files import write_qrels, write_topics


def export(target: str, bench: BenchLike, out: str | os.PathLike, split: str | None = None, **options: Any) -> int:
    """Write export TARGET of `bench` at `out`; returns the questions (or passages) written."""
    chosen = registry.get("export", target)
    if chosen.meta.get("needs_split") and split is None:
        raise InputError(f"export {target} needs --split (files are in the split's dataset order)", field="split")
    return chosen.create(**options)(as_benchmark(bench), out, split)


@plugin("export", "rankify",
        Option("run", str, None, "run to convert: a file of any run format, or optimal"),
        Option("first_stage", str, None, "the run RUN reranked, written as ctxs (default: RUN itself)"),
        Option("with_text", bool, True, "write the passages' texts"),
        Option("reranked", bool, False, "RUN is a reranker's output: written as reranked_ctxs too (implied by "
               "first_stage and by a Rankify RUN that has reranked_ctxs)"),
        Option("allow_partial", bool, False, "accept a Rankify run of fewer questions than the split"),
        help="a run as Rankify JSON, in the split's dataset order", needs_split=True)
def rankify(bench, out, split, *, run, first_stage, with_text, reranked, allow_partial) -> int:
    if run is None:
        raise InputError("export rankify needs --run RUN", field="run")
    # passages listed twice are kept: the authors' files may hold them
    ranked = open_run(run, bench, split, allow_partial=allow_partial, allow_duplicates=True)
    first = None if first_stage is None else open_run(first_stage, bench, split, allow_partial=allow_partial,
                                                      allow_duplicates=True)
    ranked.to_file(out, RANKIFY, bench=bench, split=split, with_text=with_text, reranked=reranked or ranked.reranked,
                   first_stage=first, titles=ranked.titles, first_stage_titles=first and first.titles)
    return len(bench.split_qids(split))


@plugin("export", "retriever-jsonl", needs_split=True,
        help="the authors' retriever.jsonl: each question's own passages with labels and stored reader answers")
def retriever_jsonl(bench, out, split) -> int:
    return write_retriever_jsonl(bench, split, out)


@plugin("export", "pyserini", counts="passages", help="the corpus as a Pyserini JSONL collection: id, contents, title")
def pyserini(bench, out, split) -> int:
    return write_pyserini_collection(bench, out)


@plugin("export", "qrels", help="TREC qrels of the split (default: every question)")
def qrels(bench, out, split) -> int:
    return write_qrels(bench, split, out)


@plugin("export", "topics", help="qid<TAB>question per question of the split (default: every question)")
def topics(bench, out, split) -> int:
    return write_topics(bench, split, out)


# the stage's options that are options of a target (`inferqa plugins export NAME`), with their flags
TARGET_FLAGS = {"run": "--run", "first_stage": "--first-stage", "with_text": "--no-text", "reranked": "--reranked",
                "allow_partial": "--allow-partial"}


def export_stage(settings: Any) -> int:
    """`inferqa export` (declared in `inferqa.stages.export`): the target's options checked before
    the output is checked or the benchmark read; returns what `export` returns."""
    from .formats.benchmark import Benchmark
    from .io import check_output

    target = registry.get("export", settings.kind)
    given = {name: settings[name] for name in TARGET_FLAGS
             if settings[name] != settings.stage.default(name)}  # a flag only moves off the default
    options = {k: str(v) if isinstance(v, os.PathLike) else v for k, v in given.items()}
    for name in options:
        if name not in target.options:
            raise InputError(f"{TARGET_FLAGS[name]} does not apply to export {settings.kind}",
                             field=TARGET_FLAGS[name][2:])
    options.update(settings.options or {})
    target.settings(options)
    check_output(settings.out)
    return export(settings.kind, Benchmark(settings.bench), settings.out, settings.split, **options)
