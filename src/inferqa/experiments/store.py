"""Content-addressed stage outputs: `EXPERIMENT_DIR/stages/<stage>-<hash>/`.

A stage's hash covers everything its output depends on: its kind and options, the
benchmark fingerprint, the question ids, and the hashes of the stages it reads. A stage
folder is written in a temp folder and renamed into place only when the stage finished,
so its existence means "done": a rerun after a crash, or after adding one reranker to the
config, recomputes only what has no folder yet. Work that must survive a crash inside a
stage (a reranker's per-question checkpoint) lives in `stages/.partial/`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..io import atomic_dir, json_hash, write_json

INPUTS_FILE = "stage.json"


@dataclass(frozen=True)
class StageOutput:
    name: str
    hash: str
    path: Path
    reused: bool
    seconds: float


@dataclass
class StageStore:
    root: Path
    executed: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    @property
    def stages_dir(self) -> Path:
        return self.root / "stages"

    def partial_path(self, name: str, h: str, suffix: str = ".jsonl") -> Path:
        p = self.stages_dir / ".partial" / f"{name}-{h}{suffix}"
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def run(self, name: str, inputs: dict[str, Any], compute: Callable[[Path, str], None]) -> StageOutput:
        """Return the stage's folder, calling `compute(tmp_dir, hash)` only when it is missing."""
        h = json_hash(inputs)
        final = self.stages_dir / f"{name}-{h}"
        if (final / INPUTS_FILE).exists():
            self.reused.append(f"{name}-{h}")
            return StageOutput(name, h, final, True, 0.0)
        t0 = time.perf_counter()
        with atomic_dir(final) as tmp:
            compute(tmp, h)
            write_json(tmp / INPUTS_FILE, {"stage": name, "hash": h, "inputs": inputs})
        self.executed.append(f"{name}-{h}")
        return StageOutput(name, h, final, False, time.perf_counter() - t0)
