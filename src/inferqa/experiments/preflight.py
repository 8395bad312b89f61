"""What `inferqa run` checks before it creates or computes anything.

`load_config` checks the file itself (keys, kinds, option names and values, metrics).
`check_experiment` then checks what the file points at, so that no stage runs, no model
loads and no experiment folder is made for a config that would fail later: the benchmark
folder and the split, every stage built with its options (which finds a missing model
folder; no constructor loads a model), every LLM spec (backend, options, model path) of
the readers and rerankers, and the paths of the experiment folder and the LLM cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..errors import InputError
from ..io import check_output
from .config import ExperimentConfig


def check_experiment(config: ExperimentConfig, out_dir: str | Path | None = None) -> None:
    """InputError naming the config file and field for the first thing that would fail."""
    def checked(field: str, check: Callable[[], Any]) -> Any:
        try:
            return check()
        except InputError as exc:
            where = f"{exc.file}: " if exc.file and exc.file != str(config.source) else ""
            raise InputError(where + exc.message, file=config.source, field=field) from None

    _benchmark(config, checked)
    from .. import registry
    from ..llm import check_spec

    for kind, field, specs in (("retriever", "retrievers", config.retrievers),
                               ("reranker", "rerankers", config.rerankers)):
        for i, spec in enumerate(specs):
            plugin = checked(f"{field}[{i}].kind", lambda: registry.get(kind, spec.kind))
            options = checked(f"{field}[{i}].options", lambda: plugin.settings(spec.options))
            if "llm" in options:  # an LLM stage: its spec is what can be wrong (the runner opens it)
                if isinstance(options["llm"], str):
                    checked(f"{field}[{i}].options.llm", lambda: check_spec(options["llm"]))
            else:  # built as the runner builds it: a missing model folder fails here
                checked(f"{field}[{i}].options", lambda: plugin.create(**spec.options))
    for i, reader in enumerate(config.readers):
        checked(f"readers[{i}].llm", lambda: check_spec(reader.llm))
    if config.llm_cache is not None:
        checked("llm_cache", lambda: check_output(config.llm_cache))
    if out_dir is not None:
        check_output(out_dir, kind="dir")


def _benchmark(config: ExperimentConfig, checked: Callable) -> None:
    spec = config.benchmark
    if spec.path is not None and (spec.path / "questions.jsonl").exists() or not spec.demo:
        from ..formats.benchmark import Benchmark

        bench = checked("benchmark.path", lambda: Benchmark(spec.path))
        qids = checked("split", lambda: bench.split_qids(config.split))
        if not qids:
            raise InputError(f"split {config.split!r} has no questions", file=config.source, field="split")
        return
    from ..construct.splits import SPLIT_NAMES
    from ..data.shipped_demo import DEMO_BUILD

    names = ("all", *SPLIT_NAMES[len(DEMO_BUILD["split"])])
    if config.split not in names:
        raise InputError(f"unknown split {config.split!r} of the demo benchmark (have: {', '.join(names)})",
                         file=config.source, field="split")

