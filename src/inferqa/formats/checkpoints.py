"""Resumable checkpoints of per-question rankings (a rerank's `--checkpoint` file): run format
`checkpoint`, read by `Run.from_file` like any run.

A first line `{"config": header}`, then one `{"qid": ..., "ranked": [[pid, score], ...]}` line
appended per finished question. A file written under another header is not reused; a torn last
line (a run killed mid-write) ends the read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable

from ..errors import InputError
from ..io import atomic_open, iter_jsonl
from ..registry import plugin
from .runs import Findings, Run, RunFormat, checked_score

if TYPE_CHECKING:
    from .benchmark import Benchmark

CHECKPOINT = "checkpoint"
Ranked = list[tuple[str, float]]


def _line(qid: str, ranked: Ranked) -> str:
    return json.dumps({"qid": qid, "ranked": ranked}) + "\n"


@plugin("run-format", CHECKPOINT, help="a rerank's checkpoint: a header line, then one JSON line per question")
class CheckpointRun(RunFormat):
    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False,
             header: dict[str, Any] | None = None) -> tuple[Run, list[dict[str, Any]]]:
        """The rankings in file order (a question written twice: its last ranking); an empty run when
        `header` is given and the file was written under another (or holds no whole header line)."""
        run = Run(tag=Path(str(path)).stem)
        lines = iter_jsonl(path, allow_empty=True, stop_at_torn_end=True)
        first = next(lines, (1, None))[1]
        if first is None or (header is not None and first != {"config": json.loads(json.dumps(header))}):
            return run, []  # another configuration wrote it (or none yet): start again
        if "config" not in first:
            raise InputError("expected the checkpoint's header {\"config\": ...}", file=path, record="line 1",
                             field="config")
        for lineno, row in lines:
            where = {"file": path, "record": f"line {lineno}"}
            qid, ranked = row.get("qid"), row.get("ranked")
            if not isinstance(qid, str):
                raise InputError(f"expected a string, got {type(qid).__name__}", field="qid", **where)
            if not isinstance(ranked, list):
                raise InputError(f"expected a list of [passage id, score], got {type(ranked).__name__}",
                                 field="ranked", **where)
            out, seen = [], set()
            for r, pair in enumerate(ranked):
                f = f"ranked[{r}]"
                if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
                    raise InputError(f"expected [passage id, score], got {pair!r}", field=f, **where)
                if pair[0] in seen and not allow_duplicates:
                    findings.add("duplicate_ids", f"{qid} rank {r + 1}: {pair[0]}", InputError(
                        f"duplicate passage {pair[0]}", field=f, **where))
                seen.add(pair[0])
                out.append((pair[0], checked_score(pair[1], field=f"{f}[1]", **where)))
            run[qid] = out
        return run, []

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None,
              header: dict[str, Any] | None = None, **context: Any) -> None:
        """The header line (`header`, default {}), then one line per question, atomically."""
        with atomic_open(path) as fh:
            fh.write(json.dumps({"config": header or {}}) + "\n")
            fh.writelines(_line(q, r) for q, r in run.items())


class RankingCheckpoint:
    """The checkpoint at `path` for work described by `header` (a JSON-able dict)."""

    def __init__(self, path: str | os.PathLike, header: dict[str, Any]):
        self.path = Path(path)
        self.header = header
        self._sink: IO[str] | None = None

    def read(self, accept: Callable[[str, Ranked], bool] | None = None) -> dict[str, Ranked]:
        """qid -> ranking of every question finished under the same header that `accept`s
        (qid, ranking), in file order ({} without a file or under another header)."""
        if not self.path.exists():
            return {}
        # a passage twice is kept as the reranker wrote it: `accept` judges a ranking against its input
        run = Run.from_file(self.path, CHECKPOINT, header=self.header, allow_duplicates=True)
        return {qid: ranked for qid, ranked in run.items() if accept is None or accept(qid, ranked)}

    def start(self, kept: dict[str, Ranked]) -> None:
        """Rewrite the file with the header and `kept` (dropping any torn line), then keep it open to `append`."""
        Run(kept).to_file(self.path, CHECKPOINT, header=self.header)
        self._sink = open(self.path, "a", encoding="utf-8")

    @property
    def started(self) -> bool:
        return self._sink is not None

    def append(self, qid: str, ranked: Ranked) -> None:
        """One finished question, flushed at once (`start` first)."""
        assert self._sink is not None, "start() the checkpoint before appending"
        self._sink.write(_line(qid, ranked))
        self._sink.flush()

    def close(self) -> None:
        if self._sink is not None:
            self._sink.close()
            self._sink = None
