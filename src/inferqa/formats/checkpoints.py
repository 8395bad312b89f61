"""Resumable checkpoints of per-question rankings (a rerank's `--checkpoint` file).

One format: a first line `{"config": header}`, then one `{"qid": ..., "ranked": [[pid, score], ...]}`
line per finished question, appended as each question finishes. A file written under another
header is not reused; a torn last line (a run killed mid-write) ends the read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any, Callable

from ..io import atomic_open

Ranked = list[tuple[str, float]]


class RankingCheckpoint:
    """The checkpoint at `path` for work described by `header` (a JSON-able dict)."""

    def __init__(self, path: str | os.PathLike, header: dict[str, Any]):
        self.path = Path(path)
        self.header = header
        self._sink: IO[str] | None = None

    def read(self, accept: Callable[[str, Ranked], bool] | None = None) -> dict[str, Ranked]:
        """qid -> ranking of every question finished under the same header that `accept`s
        (qid, ranking), in file order ({} without a file or under another header); reading
        stops at the first torn line."""
        if not self.path.exists():
            return {}
        done: dict[str, Ranked] = {}
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            try:
                if json.loads(fh.readline() or "null") != {"config": json.loads(json.dumps(self.header))}:
                    return {}  # another configuration wrote it: start again
                for line in fh:
                    row = json.loads(line)
                    qid, ranked = row["qid"], [tuple(x) for x in row["ranked"]]
                    if accept is None or accept(qid, ranked):
                        done[qid] = ranked
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                pass  # interrupted mid-write: keep what was read before it
        return done

    def start(self, kept: dict[str, Ranked]) -> None:
        """Rewrite the file with the header and `kept` (dropping any torn line), then keep it open to `append`."""
        with atomic_open(self.path) as fh:
            fh.write(json.dumps({"config": self.header}) + "\n")
            fh.writelines(_line(q, r) for q, r in kept.items())
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


def _line(qid: str, ranked: Ranked) -> str:
    return json.dumps({"qid": qid, "ranked": ranked}) + "\n"
