"""`inferqa run`, `inferqa demo` and `inferqa explore`: experiment grids and the explorer page."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ..parameters import EXPLORER_DEPTH, OVERWRITE, PROGRESS
from ..stage import Opt, stage

if TYPE_CHECKING:
    from .runner import ExperimentRun

Progress = Annotated[bool, PROGRESS]
Overwrite = Annotated[bool, OVERWRITE]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@stage("run", output="folder")
def run(config: Annotated[Path, Opt("experiment YAML (docs/experiments.md)")], *,
        out: Annotated["Path | None", Opt("experiment folder (default: runs/<name>)", flags=("--out", "-o"))] = None,
        progress: Progress = PROGRESS.default, overwrite: Overwrite = False) -> ExperimentRun:
    """Run an experiment grid; stages already computed in the folder are reused."""
    from ..io import check_output
    from .config import load_config
    from .runner import run_experiment

    loaded = load_config(config)
    out_dir = check_output(out or Path("runs") / loaded.name, kind="dir")
    return run_experiment(loaded, out_dir, progress=progress, log=_stderr)


@stage("demo", output="folder")
def demo(*, out: Annotated[Path, Opt("experiment folder", flags=("--out", "-o"))] = Path("runs/demo"),
         config: Annotated[str, Opt("shipped config to run", choices=("demo", "ci"))] = "demo",
         progress: Progress = PROGRESS.default,
         compute: Annotated[bool, Opt("ask SmolLM2 again instead of starting from the answers shipped with the demo "
                                      "(several minutes more on 2 cores)")] = False,
         overwrite: Overwrite = False) -> ExperimentRun:
    """Run the shipped demo experiment on the demo benchmark and print its tables.

    experiments/configs/demo.yaml on the benchmark `inferqa build --demo` writes (48 questions, 15 passages
    each, SmolLM2's labels): bm25 and clue (clue-level MiniLM) retrieval, llm-pointwise SmolLM2 reranking of
    the top 5, SmolLM2 reading (union_norm, union_freq; k = 1, 3, 5) and the three oracles, on the 38 test
    questions; then the report and explorer paths."""
    from ..data.shipped_demo import seed_llm_cache
    from ..io import check_output
    from ..llm.cache import default_cache_path
    from .config import load_config, shipped_config
    from .runner import run_experiment

    loaded = load_config(shipped_config(config))
    out_dir = check_output(out, kind="dir")
    if not compute:
        added = seed_llm_cache(default_cache_path(loaded.llm_cache))
        if added:
            _stderr(f"  {added} shipped SmolLM2 answers copied into the LLM cache (--compute skips this)")
    return run_experiment(loaded, out_dir, progress=progress, log=_stderr)


@stage("explore")
def explore(runs: Annotated[list[str], Opt("runs (TREC, or Rankify JSON with --split), as PATH or NAME=PATH",
                                           metavar="RUN...")] = (), *,
            bench: Annotated[Path, Opt("benchmark folder")],
            answers: Annotated[list[str], Opt("reader ANSWERS.jsonl, as PATH or NAME=PATH; answers named like a "
                                              "run belong to that run")] = (),
            out: Annotated[Path, Opt("the page to write", flags=("--out", "-o"))] = Path("explorer.html"),
            split: Annotated["str | None", Opt("only the questions of this split")] = None,
            depth: Annotated[int, EXPLORER_DEPTH] = EXPLORER_DEPTH.default,
            allow_partial: Annotated[bool, Opt("accept a Rankify/DPR JSON run of fewer questions than --split (read "
                                               "as the split's first ones)")] = False,
            overwrite: Overwrite = False) -> Path:
    """Write explorer.html: one offline page to study runs and answers question by question."""
    from ..errors import InputError
    from ..formats import Answers, Benchmark, open_run
    from ..io import check_output
    from ..option_values import named_path
    from .explorer import explorer_data, write_explorer

    check_output(out)
    b = Benchmark(bench)
    loaded = []
    for item in runs:
        name, path = named_path(item)
        loaded.append((name, "run", open_run(path, b, split, allow_partial=allow_partial)))
    sets = []
    for item in answers:
        name, path = named_path(item)
        run_name = name if any(name == r[0] for r in loaded) else None
        sets.append((name, run_name, Answers.from_file(path, b, scored=True)))
    if not loaded and not sets:
        raise InputError("give at least one run or --answers file", field="runs")
    qids = b.split_qids(split) if split else None
    return write_explorer(explorer_data(b, loaded, sets, qids=qids, depth=depth), out)
