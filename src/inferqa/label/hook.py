"""The LLM steps of `inferqa build`: labelling and the parametric test run as the builder's
post-build hook (inside the temp directory, before it replaces the output)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..errors import InputError
from ..formats.benchmark import Benchmark
from ..parameters import LABEL_MODE, LABELER, SEED

if TYPE_CHECKING:
    from ..llm.base import LLM

def dev_share_of(split: Any) -> float:
    """dev / (dev + test) of a train,dev,test split option; 1/3 otherwise."""
    from ..construct.splits import parse_split
    spec = parse_split(split)
    if isinstance(spec, tuple) and len(spec) == 3 and spec[1] + spec[2] > 0:
        return spec[1] / (spec[1] + spec[2])
    return 1 / 3


def make_post_build(*, label: bool, labelers: Sequence[str], mode: str = LABEL_MODE.default, parametric: bool = False,
                    split_by: str | None = None, split: Any = None, seed: int = SEED.default,
                    judge: str | None = None, stop_at_first_correct: bool = False) -> Callable[[Path, dict], None] | None:
    """A post_build callback doing what the options ask, or None when they ask for nothing."""
    check_split_by(split_by)
    if stop_at_first_correct and not label:
        raise InputError("--stop-at-first-correct needs --label", field="stop-at-first-correct")
    if labelers and not label and not parametric and not split_by:
        raise InputError("--labeler is given but neither --label nor --parametric asks for labelling",
                         field="labeler")
    parametric = parametric or split_by == "parametric"
    if not label and not parametric:
        return None
    check_label_mode(mode)
    specs = list(labelers) or [LABELER.default]

    def post_build(tmp: Path, meta: dict) -> None:
        from ..llm import load_llm

        with opened_llms(load_llm, specs, judge) as (llms, judge_llm):
            llm_steps(tmp, llms, label=label, mode=mode, parametric=parametric, split_by=split_by,
                      dev_share=dev_share_of(split), seed=seed, judge=judge_llm, meta=meta,
                      stop_at_first_correct=stop_at_first_correct)
        steps = {"label": label, "labelers": specs, "label_mode": mode, "parametric": parametric,
                 "split_by": split_by, "judge": judge}
        if stop_at_first_correct:
            steps["labellers_stop_at_first_correct"] = True
        meta.setdefault("options", {})["llm_steps"] = steps

    return post_build


@contextmanager
def opened_llms(open_llm: Callable[[str], "LLM"], specs: Sequence[str],
                judge: str | None) -> Iterator[tuple[list["LLM"], "LLM | None"]]:
    """(labelling LLMs, judge LLM or None), each opened by `open_llm`; every one opened is
    closed on the way out, also when a later one fails to open."""
    opened: list = []
    try:
        for spec in specs:
            opened.append(open_llm(spec))
        judge_llm = open_llm(judge) if judge else None
        if judge_llm is not None:
            opened.append(judge_llm)
        yield opened[:len(specs)], judge_llm
    finally:
        for m in opened:
            m.close()


def check_label_mode(mode: str) -> None:
    from .labelling import MODES

    if mode not in MODES:
        raise InputError(f"--label-mode must be one of {', '.join(MODES)}, not {mode!r}", field="label-mode")


def check_split_by(split_by: str | None) -> None:
    if split_by not in (None, "parametric"):
        raise InputError(f"--split-by {split_by!r}: only 'parametric' is known", field="split-by")


def llm_steps(bench_dir: str | os.PathLike, llms: Sequence["LLM"], *, label: bool = True, mode: str = LABEL_MODE.default,
              parametric: bool = False, split_by: str | None = None, dev_share: float | None = None,
              seed: int | None = None, judge: "LLM | None" = None, meta: dict | None = None,
              stop_at_first_correct: bool = False) -> dict | None:
    """Label `bench_dir` with `llms`, then (if asked) the parametric test and the parametric
    split. `dev_share` and `seed` default to the build's own options in its meta.json.
    Returns the labelling record (None when only the parametric test ran)."""
    from .labelling import label_benchmark
    from .parametric import apply_parametric_split, parametric_test

    check_split_by(split_by)
    record = label_benchmark(bench_dir, llms, mode, judge=judge, meta=meta,
                             stop_at_first_correct=stop_at_first_correct) if label else None
    if parametric or split_by:
        flags = parametric_test(bench_dir, llms, judge=judge, meta=meta)
        if split_by:
            if dev_share is None or seed is None:
                opts = Benchmark(bench_dir).meta.get("options", {})
                dev_share = dev_share_of(opts.get("split")) if dev_share is None else dev_share
                seed = opts.get("seed", 13) if seed is None else seed
            apply_parametric_split(bench_dir, flags, dev_share=dev_share, seed=seed, meta=meta)
    return record


def relabel(bench_dir: str | os.PathLike, labelers: Sequence[str], open_llm: Callable[[str], "LLM"], *,
            mode: str = LABEL_MODE.default, parametric: bool = False, split_by: str | None = None,
            judge: str | None = None, stop_at_first_correct: bool = False) -> dict:
    """`inferqa label`: label an existing benchmark in place with the LLMs named by `labelers`
    (default smollm2), each opened by `open_llm` (here, or on Ray). Options are checked
    before any model loads. Returns the labelling record."""
    Benchmark(bench_dir)
    check_split_by(split_by)
    check_label_mode(mode)
    with opened_llms(open_llm, list(labelers) or [LABELER.default], judge) as (llms, judge_llm):
        return llm_steps(bench_dir, llms, mode=mode, parametric=parametric, split_by=split_by, judge=judge_llm,
                         stop_at_first_correct=stop_at_first_correct)


@dataclass(frozen=True)
class Labelling:
    record: dict  # the labelling record (`relabel`'s)
    labels: dict  # passages per label, from the benchmark's meta.json once labelled

    def line(self, mode: str) -> str:
        return (f"{self.record['passages_labelled']:,} passages labelled ({self.record['passages_asked']:,} asked, "
                f"mode {mode}); labels " + ", ".join(f"{k}: {v:,}" for k, v in self.labels.items()))


def convergence_step(questions: list, spec: str | None) -> list:
    """Fill missing hint convergence with the LLM named by `spec` (None: leave as is)."""
    if not spec:
        return questions
    from ..llm import load_llm
    from .convergence import fill_convergence
    with load_llm(spec) as llm:
        return fill_convergence(questions, llm)
