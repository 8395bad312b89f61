"""`inferqa index`, `retrieve`, `oracle` and `fuse`: TREC run files from a benchmark.

`index` and `retrieve` take the same retriever options (the same options find the same index).
The shortcut flags (--model, --k1, ...) are the retrievers' own options, each declared by the
retriever plugins that take it (their help and default: `inferqa plugins retriever NAME`);
one the chosen retriever does not take is an error, as with --opt.
"""

from __future__ import annotations

from ..parameters import (BENCH, DEPTH, DIVERSIFY, GROUPING, MARGIN, PER_GROUP, RETRIEVER, RETRIEVER_OPTIONS, SHARE, SHORTCUTS, RETRIEVE_SPLIT as SPLIT, _TUNED)  # noqa: F401 - re-exported until the stage moves
from ..defaults import MIN_LABEL, NUM_ACTORS, ORACLE_SEED

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage



INDEX = Stage(
    "index", "Build (or resume, or reuse) a retriever's index of the benchmark's corpus.",
    entry="inferqa.retrieve.stage:index_stage",
    options=(BENCH, *RETRIEVER_OPTIONS,
             Option("backend", str, "local", "dense: local, or ray: passages encoded on a pool of Ray actors "
                    "(docs/scaling.md)"),
             Option("ray_address", str, None, "Ray cluster: auto, ray://HEAD:10001"),
             replace(NUM_ACTORS, help=f"{NUM_ACTORS.help}; dense: encoder actors")))

RETRIEVE = Stage(
    "retrieve", "Retrieve the top k passages for each question of a split (needs `inferqa index` first).",
    entry="inferqa.retrieve.stage:retrieve_stage",
    options=(BENCH,
             Option("out", Path, REQUIRED, "TREC run file to write (qid Q0 pid rank score tag)",
                    flags=("--out", "-o")),
             SPLIT, DEPTH, *RETRIEVER_OPTIONS, *DIVERSIFY))

ORACLE = Stage(
    "oracle", "Write an oracle run: the upper bounds of retrieval and reranking.",
    entry="inferqa.retrieve.stage:oracle_stage",
    options=(BENCH,
             Option("kind", str, REQUIRED, "retriever, reranker (needs --run) or optimal: `inferqa plugins oracle` "
                    "says what each writes"),
             Option("out", Path, REQUIRED, "TREC run file to write", flags=("--out", "-o")),
             Option("run", Path, None, "run to rerank (--kind reranker)"),
             replace(SPLIT, help="questions: train | dev | test | all (retriever, optimal)"),
             ORACLE_SEED,
             replace(MIN_LABEL, help=f"{MIN_LABEL.help}; at most the largest label")))

FUSE = Stage(
    "fuse", "Fuse runs: reciprocal rank, inverse square rank, CombSUM, CombMNZ, CombMAX or a weighted sum.",
    entry="inferqa.retrieve.stage:fuse_stage",
    options=(Option("runs", list, REQUIRED, "two or more TREC runs of the same questions (in Python also Run "
                    "objects)", positional=True,
                    metavar="RUN...", item=Path),
             Option("allow_partial", bool, False, "fuse runs over different questions (each question from the runs "
                    "that have it); refused by default"),
             Option("out", Path, REQUIRED, "fused TREC run to write", flags=("--out", "-o")),
             Option("bench", (Path, object), None, "benchmark directory (in Python also a Benchmark): the runs' "
                    "question and passage ids are checked against it", flags=("--bench",)),
             Option("split", str, None, "fuse only the questions of this split (needs --bench)"),
             Option("method", str, "rrf", "fusion method (`inferqa plugins fusion`: what each computes)"),
             Option("weights", list, None, "comma-separated weight ≥ 0 per run (default 1 each)", item=str),
             Option("rrf_k", float, None, "rrf: constant k in w / (k + rank)"),
             Option("norm", str, None, "per-question score normalisation of each run"),
             replace(DEPTH, help=f"{DEPTH.help}; of the fused run")))
