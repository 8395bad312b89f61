"""The one interface every reranker implements, and the run-in/run-out plumbing they share.

A reranker only has to score one question's candidates (`score`); `Reranker.rerank`
does the rest for every model family alike: take the top `depth` of each question's
ranked list, score them, sort (ties keep the incoming order), keep the passages below
`depth` in their order underneath, and write one resumable checkpoint line per question.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..benchmark import Benchmark
from ..errors import InputError
from ..progress import track
from ..records import Run

_BIG = 1e30

class Reranker(ABC):
    """Scores a question's candidate passages; higher is more relevant."""

    name: str = "base"

    @abstractmethod
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, higher is better. Listwise models return scores derived from
        their final order (the first passage gets the highest score)."""

    def config(self) -> dict[str, Any]:
        """What identifies this reranker's output (written into checkpoints)."""
        return {"reranker": self.name}

    def rank(self, query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `texts`, score), best first; ties keep the given order."""
        scores = self.score(query, list(texts)) if texts else []
        if len(scores) != len(texts):
            raise RuntimeError(f"{self.name}: {len(scores)} scores for {len(texts)} passages")
        if any(math.isnan(s) for s in scores):
            raise RuntimeError(f"{self.name}: the model returned a NaN score")
        scores = [min(max(float(s), -_BIG), _BIG) for s in scores]  # keep +-inf out of the run file
        return sorted(enumerate(scores), key=lambda t: -t[1])

    def rerank(self, run: Run, bench: Benchmark, depth: int = 100, qids: Iterable[str] | None = None, *,
               checkpoint: str | os.PathLike | None = None, progress: bool = False) -> Run:
        """Rerank the top `depth` passages of each question of `run` (all, or `qids`).

        The returned run holds the selected questions only, each with exactly the passages
        it had in `run`. Scores of the reranked head are the model's; the tail keeps its
        order and its score differences, shifted to sit below the head.
        With `checkpoint`, each finished question is appended there and a rerun with the
        same reranker and depth resumes where it stopped (delete the file when done).
        """
        if depth < 1:
            raise InputError(f"depth must be at least 1, got {depth}", field="depth")
        selected = list(run) if qids is None else list(dict.fromkeys(qids))
        for qid in selected:
            if qid not in run:
                raise InputError(f"question {qid} is not in the run", field="qid")
            if qid not in bench.questions:
                raise InputError(f"question {qid} of the run is not in the benchmark", file=bench.path,
                                 field="qid")
        header = {**self.config(), "depth": depth, "run": _digest(run, selected)} if checkpoint else {}
        done = _read_checkpoint(checkpoint, header, run) if checkpoint else {}
        out = Run(tag=f"{run.tag}+{self.name}")
        sink = _open_checkpoint(checkpoint, header, done) if checkpoint else None
        try:
            for qid in track(selected, f"rerank {self.name}", progress):
                ranked = done.get(qid)
                if ranked is None:
                    ranked = self._rerank_question(qid, run[qid], bench, depth)
                    if sink:
                        sink.write(json.dumps({"qid": qid, "ranked": ranked}) + "\n")
                        sink.flush()
                out[qid] = [(pid, float(score)) for pid, score in ranked]
        finally:
            if sink:
                sink.close()
        return out

    def _rerank_question(self, qid: str, ranked: list[tuple[str, float]], bench: Benchmark,
                         depth: int) -> list[tuple[str, float]]:
        head, tail = ranked[:depth], ranked[depth:]
        query = bench.questions[qid].text
        texts = []
        for pid, _ in head:
            try:
                texts.append(bench.passage_text(pid))
            except (KeyError, ValueError) as exc:
                raise InputError(f"passage {pid}: {exc}", record=qid, field="pid") from None
        order = self.rank(query, texts)
        new_head = [(head[i][0], float(s)) for i, s in order]
        if not tail:
            return new_head
        floor = min(s for _, s in new_head)
        shift = tail[0][1] - floor + 1.0
        return new_head + [(pid, float(s) - shift) for pid, s in tail]


def _digest(run: Run, qids: list[str]) -> str:
    """Identifies the input ranking, so a checkpoint is only reused for the same run."""
    h = hashlib.sha256()
    for qid in qids:
        h.update(qid.encode())
        for pid, _ in run[qid]:
            h.update(b" " + pid.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _read_checkpoint(path: str | os.PathLike, header: dict, run: Run) -> dict[str, list]:
    """Questions already reranked under the same config; a torn last line is ignored."""
    path = Path(path)
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        if not lines or json.loads(lines[0]) != {"config": header}:
            return {}  # another reranker or depth wrote it: start again
    except json.JSONDecodeError:
        return {}
    done: dict[str, list] = {}
    for line in lines[1:]:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break  # interrupted mid-write
        qid, ranked = row["qid"], [tuple(x) for x in row["ranked"]]
        # only trust it if it reranks exactly the passages this run has for the question
        if qid in run and sorted(p for p, _ in ranked) == sorted(p for p, _ in run[qid]):
            done[qid] = ranked
    return done


def _open_checkpoint(path: str | os.PathLike, header: dict, done: dict[str, list]):
    """Rewrite the checkpoint with what is kept (dropping any torn line), then append."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"config": header}) + "\n")
        for qid, ranked in done.items():
            fh.write(json.dumps({"qid": qid, "ranked": ranked}) + "\n")
    os.replace(tmp, path)
    return open(path, "a", encoding="utf-8")
