"""`inferqa export`: the QUIT authors' file formats, or a split's TREC qrels and topics, written
from an inferqa benchmark (the targets are plugins of kind `export`)."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL)  # noqa: F401 - re-exported until the stage moves

from pathlib import Path

from .. import registry
from . import REQUIRED, Option, Stage

EXPORT = Stage(
    "export", "Write the QUIT authors' file formats, or a split's TREC qrels and topics, from an inferqa benchmark.",
    entry="inferqa.exports:export_stage",
    options=(
        Option("kind", str, REQUIRED, "; ".join(f"{p.name}: {p.help}" for p in registry.plugins("export"))
               + " (`inferqa plugins export NAME`: its options)", positional=True, metavar="KIND"),
        Option("bench", Path, REQUIRED, "benchmark directory", flags=("--bench",)),
        Option("out", Path, REQUIRED, "file to write (atomically)", flags=("--out", "-o")),
        Option("run", Path, None, "run to convert (rankify)"),
        Option("split", str, None, "split, in dataset order (rankify, retriever-jsonl); qrels, topics: the split's "
               "questions (default: all)"),
        Option("with_text", bool, True, "rankify: write the passages' texts (--no-text: leave them out)",
               flags=("--no-text",)),
        Option("reranked", bool, False, "rankify: RUN is a reranker's output: write it as `reranked_ctxs` too, as "
               "the authors' reranker files hold it (implied by --first-stage, and by a Rankify RUN that has "
               "reranked_ctxs)"),
        Option("first_stage", Path, None, "rankify: the run RUN reranked, written as `ctxs` (default: RUN itself)"),
        ALLOW_PARTIAL,
        Option("options", dict, None, "another option of the target (repeatable; `inferqa plugins export NAME` "
               "lists them)", flags=("--opt",), metavar="KEY=VALUE"),
    ))
