"""`inferqa build` and `inferqa label`: a benchmark from hint sources, and its LLM labels.

Build lives in the label layer because a build may label its passages (`--label`,
`--parametric`) before the benchmark is committed; `construct.build_benchmark` does the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ..data import AUTO
from ..errors import InputError
from ..llm.base import LLM
from ..parameters import (BACKEND, BUILD_SPLIT, CACHE, DEMO_BUILD, LABEL_MATCH, LABEL_MODE, LABELERS, LEAK_JUDGE, LEAK_LLM_FLAG,
                          LEAK_POLICY, LEAK_THRESHOLD_FLAG, LLM_URLS, NUM_ACTORS, OVERWRITE, PARAMETRIC, RAY_ADDRESS,
                          SEED, STOP_AT_FIRST_CORRECT, TOP_K, USE_CACHE)
from ..registry import Option
from ..stage import Opt, stage

if TYPE_CHECKING:
    from .hook import Labelling

Labelers = Annotated["list[str] | None", LABELERS]
LabelMode = Annotated[str, LABEL_MODE]
Parametric = Annotated[bool, PARAMETRIC]


def _resolved_by_build(option: Option) -> Option:
    """OPTION not given (None): the build takes its declared default, or the demo's alone."""
    return replace(option, default=None, nullable=False)


@dataclass(frozen=True)
class BuildResult:
    meta: dict  # the benchmark's meta.json
    top_k: int
    demo_only: bool  # --demo without SOURCE files
    shipped_labels: bool  # labelled with the labels shipped with the demo

    def summary(self) -> str:
        """What was built, after the benchmark's path: counts, leaks dropped, splits."""
        c = self.meta["counts"]
        return (f"{c['questions']:,} questions, {c['passages']:,} passages ({c['leak_hints_dropped']} leaking hints "
                f"dropped, {c['leak_questions_dropped']} questions dropped for leaks, "
                f"{c['questions_skipped_few_hints']} with fewer than {self.top_k} hints skipped); "
                + ", ".join(f"{k} {v:,}" for k, v in self.meta["splits"].items()))

    def labels_line(self) -> str | None:
        """Where the demo benchmark's labels came from (None for any other build)."""
        if not self.demo_only:
            return None
        if self.shipped_labels:
            return "labels: SmolLM2's, shipped with the demo (the benchmark `inferqa demo` runs on)"
        return ("labels: 1 for every passage of its question (the shipped SmolLM2 labels fit the demo's own build "
                f"only: --top-k {DEMO_BUILD['top_k']}, string leak judge, no --label)")


@stage("build", output="self-checked folder")  # `bench_write.refuse_existing`
def build(sources: Annotated["list[Path] | None", Opt("source files: WikiHint/TriviaHG/QUIT JSON, JSONL or CSV",
                                                      metavar="SOURCE")] = None, *,
          out: Annotated[Path, Opt("benchmark directory to write (its build files replaced together)",
                                   flags=("--out", "-o"))],
          overwrite: Annotated[bool, replace(OVERWRITE, help="replace an existing benchmark's files (what else its "
                                             "folder holds, such as indexes and runs, stays)")] = False,
          fmt: Annotated[str, Opt("source format: auto | wikihint | triviahg | quit | jsonl | csv (applies to every "
                                  "SOURCE)", flags=("--format", "-f"))] = AUTO,
          demo: Annotated[bool, Opt("the demo benchmark `inferqa demo` runs on: the 48 embedded questions, 3 hints "
                                    "each (15 passages), split 6,4,38, SmolLM2's shipped labels. With SOURCE files: "
                                    "add the demo questions to them (default options)")] = False,
          top_k: Annotated["int | None", _resolved_by_build(TOP_K)] = None,
          leak_policy: Annotated[str, LEAK_POLICY] = LEAK_POLICY.default,
          leak_judge: Annotated[str, replace(LEAK_JUDGE, help="string (word-boundary rule) | embedding (best hint-span "
                                             "cosine to the answer) | llm (asks --leak-llm); the string rule always "
                                             "runs first")] = LEAK_JUDGE.default,
          leak_threshold: Annotated[float, LEAK_THRESHOLD_FLAG] = LEAK_THRESHOLD_FLAG.default,
          leak_llm: Annotated["str | LLM", LEAK_LLM_FLAG] = LEAK_LLM_FLAG.default,
          split: Annotated["str | None", _resolved_by_build(BUILD_SPLIT)] = None,
          seed: Annotated["int | None", _resolved_by_build(SEED)] = None,
          strict: Annotated[bool, Opt("fail on a question with fewer than --top-k usable hints instead of skipping "
                                      "it")] = False,
          label: Annotated[bool, Opt("label passages with LLMs: 2 if a labeller answers correctly from the passage, "
                                     "else 1; answers kept in labels.jsonl")] = False,
          labeler: Labelers = None,
          label_mode: LabelMode = LABEL_MODE.default,
          stop_at_first_correct: Annotated[bool, STOP_AT_FIRST_CORRECT] = False,
          label_match: Annotated[str, LABEL_MATCH] = LABEL_MATCH.default,
          parametric: Parametric = False,
          split_by: Annotated["str | None", Opt("parametric: parametric questions to train, the rest to dev/test (in "
                                                "--split's dev:test ratio)")] = None,
          convergence: Annotated["str | None", Opt("LLM spec that computes hint convergence for sources without it "
                                                   "(before hints are ranked)")] = None) -> BuildResult:
    """Build a QUIT-style benchmark: leakage filter, top-k hints, every ordering of every subset as a passage."""
    from ..construct import build_benchmark
    from ..construct.leak_judges import leak_judge_of
    from ..data import demo_path, load_sources
    from ..data.shipped_demo import demo_build_options
    from ..formats.bench_write import refuse_existing
    from ..io import check_output
    from .hook import convergence_step, make_post_build

    refuse_existing(check_output(out, kind="dir"), overwrite)
    paths = [Path(p) for p in sources or []]
    demo_only = demo and not paths
    if demo:
        paths.insert(0, demo_path())
    if not paths:
        raise InputError("give SOURCE files or --demo")
    top_k, split, seed = (value if value is not None else DEMO_BUILD[option.name] if demo_only else option.default
                          for value, option in ((top_k, TOP_K), (split, BUILD_SPLIT), (seed, SEED)))
    questions = load_sources(paths, fmt)
    post_build = make_post_build(label=label, labelers=labeler or [], mode=label_mode, parametric=parametric,
                                 split_by=split_by, split=split, seed=seed, stop_at_first_correct=stop_at_first_correct)
    # the shipped labels are keyed by question and hint order: they fit the demo's own hints only
    shipped = (demo_only and post_build is None and not convergence and leak_judge == LEAK_JUDGE.default
               and top_k == DEMO_BUILD["top_k"])
    if shipped:
        post_build = demo_build_options()["post_build"]
    questions = convergence_step(questions, convergence)
    meta = build_benchmark(questions, out, top_k=top_k, leak_policy=leak_policy,
                           leak_judge=leak_judge_of(leak_judge, leak_threshold, leak_llm), split=split, seed=seed,
                           strict=strict, post_build=post_build, show_progress=True, label_match=label_match,
                           sources=[{"path": str(p), "format": fmt} for p in paths], overwrite=overwrite)
    return BuildResult(meta, top_k, demo_only, bool(shipped))


@stage("label")
def label(bench: Annotated[Path, Opt("benchmark directory to label in place (qrels.tsv, labels.jsonl, meta.json)",
                                     metavar="BENCH")], *,
          labeler: Labelers = None,
          label_mode: LabelMode = LABEL_MODE.default,
          parametric: Parametric = False,
          split_by: Annotated["str | None", Opt("parametric: rewrite splits.json from the test")] = None,
          judge: Annotated["str | None", Opt("LLM judge of answer correctness; none: exact match")] = None,
          stop_at_first_correct: Annotated[bool, replace(STOP_AT_FIRST_CORRECT, help="ask the labellers in turn and "
                                                         "stop at the first that is right (same labels; skipped "
                                                         "labellers recorded as not asked); default: ask every "
                                                         "labeller")] = False,
          cache: Annotated["Path | None", CACHE] = None,
          use_cache: Annotated[bool, USE_CACHE] = True,
          backend: Annotated[str, BACKEND] = BACKEND.default,
          ray_address: Annotated["str | None", RAY_ADDRESS] = None,
          num_actors: Annotated[int, NUM_ACTORS] = NUM_ACTORS.default,
          llm_url: Annotated["list[str] | None", LLM_URLS] = None) -> Labelling:
    """Label an existing benchmark with LLMs, as `inferqa build --label` does while building.

    Labels the benchmark in place; returns the labelling record and the passages per label."""
    from ..formats.benchmark import Benchmark
    from ..io import check_output
    from ..scale.llm import llm_opener
    from .hook import Labelling, relabel

    check_output(bench / "labels.jsonl")
    open_llm = llm_opener(cache, not use_cache, backend, ray_address, num_actors, llm_url)
    record = relabel(bench, labeler or [], open_llm, mode=label_mode, parametric=parametric, split_by=split_by,
                     judge=judge, stop_at_first_correct=stop_at_first_correct)
    return Labelling(record, Benchmark(bench).meta.get("labels", {}))
