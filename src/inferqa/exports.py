"""`inferqa export` (the stage `export`) and its targets, plugins of kind `export`: a function
(benchmark, output path, split or None, its declared options) -> how many questions (or,
declared `counts="passages"`, passages) it wrote. A target writes through `io.atomic_open` (or
a writer built on it), so a failed export leaves no half-written file; `needs_split=True`
makes the split required.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from . import registry
from .errors import InputError
from .formats import RANKIFY, as_benchmark, open_run
from .parameters import ALLOW_PARTIAL, OVERWRITE
from .registry import Option, plugin
from .formats.authors_files import write_pyserini_collection, write_retriever_jsonl
from .formats.split_files import write_qrels, write_topics
from .stage import Opt, stage

if TYPE_CHECKING:
    from .formats import Benchmark


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


@stage("export")
def export(kind: Annotated[str, Opt("; ".join(f"{p.name}: {p.help}" for p in registry.plugins("export"))
                                    + " (`inferqa plugins export NAME`: its options)", metavar="KIND")], *,
           bench: Annotated["Path | Benchmark", Opt("benchmark directory (in Python also a Benchmark)",
                                                    flags=("--bench",))],
           out: Annotated[Path, Opt("file to write (atomically)", flags=("--out", "-o"))],
           run: Annotated["Path | None", Opt("run to convert (rankify)")] = None,
           split: Annotated["str | None", Opt("split, in dataset order (rankify, retriever-jsonl); qrels, topics: "
                                              "the split's questions (default: all)")] = None,
           with_text: Annotated[bool, Opt("rankify: write the passages' texts (--no-text: leave them out)",
                                          flags=("--no-text",))] = True,
           reranked: Annotated[bool, Opt("rankify: RUN is a reranker's output: write it as `reranked_ctxs` too, "
                                         "as the authors' reranker files hold it (implied by --first-stage, and by "
                                         "a Rankify RUN that has reranked_ctxs)")] = False,
           first_stage: Annotated["Path | None", Opt("rankify: the run RUN reranked, written as `ctxs` (default: "
                                                     "RUN itself)")] = None,
           allow_partial: Annotated[bool, ALLOW_PARTIAL] = ALLOW_PARTIAL.default,
           options: Annotated["dict | None", Opt("another option of the target (repeatable; `inferqa plugins "
                                                 "export NAME` lists them)", flags=("--opt",),
                                                 metavar="KEY=VALUE")] = None,
           overwrite: Annotated[bool, OVERWRITE] = False) -> int:
    """Write the QUIT authors' file formats, or a split's TREC qrels and topics, from an inferqa benchmark.

    Returns the questions (or, for a target that counts passages, the passages) written."""
    from .io import check_output

    target = registry.get("export", kind)
    given = dict(run=run, first_stage=first_stage, with_text=with_text, reranked=reranked, allow_partial=allow_partial)
    # a flag given (off its default) that the target does not take is refused
    moved = {name: str(v) if isinstance(v, Path) else v for name, v in given.items()
             if v != export.stage.default(name)}
    for name in moved:
        if name not in target.options:
            raise InputError(f"{TARGET_FLAGS[name]} does not apply to export {kind}", field=TARGET_FLAGS[name][2:])
    target_options = target.settings({**moved, **(options or {})})  # checked before the output or the benchmark
    check_output(out)
    if target.meta.get("needs_split") and split is None:
        raise InputError(f"export {kind} needs --split (files are in the split's dataset order)", field="split")
    return target.create(**target_options)(as_benchmark(bench), out, split)
