"""The LLM steps of `inferqa build`: labelling and the parametric test run as the builder's
post-build hook (inside the temp directory, before it replaces the output)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import InputError

DEFAULT_LABELER = "smollm2"


def dev_share_of(split: Any) -> float:
    """dev / (dev + test) of a train,dev,test split option; 1/3 otherwise."""
    from ..build.splits import parse_split
    spec = parse_split(split)
    if isinstance(spec, tuple) and len(spec) == 3 and spec[1] + spec[2] > 0:
        return spec[1] / (spec[1] + spec[2])
    return 1 / 3


def make_post_build(*, label: bool, labelers: Sequence[str], mode: str = "full", parametric: bool = False,
                    split_by: str | None = None, split: Any = None, seed: int = 13,
                    judge: str | None = None) -> Callable[[Path, dict], None] | None:
    """A post_build callback doing what the options ask, or None when they ask for nothing."""
    if split_by not in (None, "parametric"):
        raise InputError(f"--split-by {split_by!r}: only 'parametric' is known", field="split-by")
    if labelers and not label and not parametric and not split_by:
        raise InputError("--labeler is given but neither --label nor --parametric asks for labelling",
                         field="labeler")
    parametric = parametric or split_by == "parametric"
    if not label and not parametric:
        return None
    from .labelling import MODES
    if mode not in MODES:
        raise InputError(f"--label-mode must be one of {', '.join(MODES)}, not {mode!r}", field="label-mode")
    specs = list(labelers) or [DEFAULT_LABELER]

    def post_build(tmp: Path, meta: dict) -> None:
        from ..llm import load_llm
        from .labelling import label_benchmark
        from .parametric import apply_parametric_split, parametric_test

        llms = [load_llm(s) for s in specs]
        judge_llm = load_llm(judge) if judge else None
        try:
            if label:
                label_benchmark(tmp, llms, mode, judge=judge_llm, meta=meta)
            if parametric:
                flags = parametric_test(tmp, llms, judge=judge_llm, meta=meta)
                if split_by == "parametric":
                    apply_parametric_split(tmp, flags, dev_share=dev_share_of(split), seed=seed, meta=meta)
        finally:
            for m in llms + ([judge_llm] if judge_llm else []):
                m.close()
        meta.setdefault("options", {})["llm_steps"] = {"label": label, "labelers": specs, "label_mode": mode,
                                                      "parametric": parametric, "split_by": split_by,
                                                      "judge": judge}

    return post_build


def convergence_step(questions: list, spec: str | None) -> list:
    """Fill missing hint convergence with the LLM named by `spec` (None: leave as is)."""
    if not spec:
        return questions
    from ..llm import load_llm
    from .convergence import fill_convergence
    llm = load_llm(spec)
    try:
        return fill_convergence(questions, llm)
    finally:
        llm.close()
