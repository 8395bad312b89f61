"""`inferqa build`'s entry point: sources → a benchmark, with the LLM steps the options ask for.

It lives in the label layer because a build may label its passages (`--label`, `--parametric`)
before the benchmark is committed; `construct.build_benchmark` does the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError


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
        from ..parameters import DEMO_BUILD

        if not self.demo_only:
            return None
        if self.shipped_labels:
            return "labels: SmolLM2's, shipped with the demo (the benchmark `inferqa demo` runs on)"
        return ("labels: 1 for every passage of its question (the shipped SmolLM2 labels fit the demo's own build "
                f"only: --top-k {DEMO_BUILD['top_k']}, string leak judge, no --label)")


def build_stage(settings: Any) -> BuildResult:
    """`inferqa build` (`inferqa.stages.build.BUILD`): an option left None takes the declared
    default, or the demo's (`DEMO_BUILD`) when building the demo alone."""
    from ..construct import build_benchmark
    from ..construct.leak_judges import leak_judge_of
    from ..data import demo_path, load_sources
    from ..data.shipped_demo import demo_build_options
    from ..formats.bench_write import refuse_existing
    from ..io import check_output
    from ..parameters import DEMO_BUILD
    from .hook import convergence_step, make_post_build

    s = settings
    refuse_existing(check_output(s.out, kind="dir"), s.overwrite)
    paths = [Path(p) for p in s.sources or []]
    demo_only = s.demo and not paths
    if s.demo:
        paths.insert(0, demo_path())
    if not paths:
        raise InputError("give SOURCE files or --demo")
    top_k, split, seed = (_resolved(s, name, demo_only, DEMO_BUILD) for name in ("top_k", "split", "seed"))
    questions = load_sources(paths, s.fmt)
    post_build = make_post_build(label=s.label, labelers=s.labeler or [], mode=s.label_mode, parametric=s.parametric,
                                 split_by=s.split_by, split=split, seed=seed,
                                 stop_at_first_correct=s.stop_at_first_correct)
    # the shipped labels are keyed by question and hint order: they fit the demo's own hints only
    shipped = (demo_only and post_build is None and not s.convergence and s.leak_judge == "string"
               and top_k == DEMO_BUILD["top_k"])
    if shipped:
        post_build = demo_build_options()["post_build"]
    questions = convergence_step(questions, s.convergence)
    meta = build_benchmark(questions, s.out, top_k=top_k, leak_policy=s.leak_policy, leak_judge=leak_judge_of(s),
                           split=split, seed=seed, strict=s.strict, post_build=post_build,
                           sources=[{"path": str(p), "format": s.fmt} for p in paths], show_progress=True,
                           label_match=s.label_match, overwrite=s.overwrite)
    return BuildResult(meta, top_k, demo_only, bool(shipped))


def _resolved(settings: Any, name: str, demo_only: bool, demo: dict) -> Any:
    """The option's value; not given: the demo's alone, else the shared declaration's default."""
    from ..stages import build as declared

    value = settings[name]
    if value is not None:
        return value
    return demo[name] if demo_only else getattr(declared, name.upper()).default
