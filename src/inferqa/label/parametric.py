"""The parametric test: can a model answer the question with no context at all?

Questions any model answers correctly are "parametric"; `split_by_parametric` puts them
in train and the others in dev and test, as the reference study does.
"""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING, Any, Sequence

from ..formats.bench_write import BenchmarkWrite
from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..io import write_json, write_jsonl
from ..reading.reader import Reader
from ..parameters import JUDGE_SAMPLES, JUDGE_TEMPERATURE, SEED
from .labelling import judge_for

if TYPE_CHECKING:
    from ..llm.base import LLM

NO_CONTEXT = ("(no hints)",)


def parametric_test(bench_dir: str | os.PathLike, models: Sequence["LLM"], *, judge: "LLM | None" = None,
                    judge_samples: int = JUDGE_SAMPLES.default,
                    judge_temperature: float = JUDGE_TEMPERATURE.default, meta: dict | None = None,
                    progress: bool = True) -> dict[str, bool]:
    """Ask every model every question without hints; write parametric.jsonl; qid -> parametric."""
    from ..progress import counter

    if not models:
        raise InputError("the parametric test needs at least one LLM", field="labeler")
    bench = Benchmark(bench_dir)
    qs = list(bench.questions.values())
    rows = {q.id: {"qid": q.id, "parametric": False, "answers": {}, "correct": {}} for q in qs}
    judged = judge_for(judge, judge_samples, judge_temperature)
    for llm in models:
        reader = Reader(llm)
        step = max(1, llm.parallel)
        with counter(len(qs), f"parametric test with {llm.identity}", "question", progress) as bar:
            for i in range(0, len(qs), step):
                chunk = qs[i:i + step]
                for q, out in zip(chunk, reader.read_batch([(q.text, NO_CONTEXT) for q in chunk])):
                    ok = judged.correct(q.text, out.answer, q.answers)
                    row = rows[q.id]
                    row["answers"][llm.identity] = out.answer
                    row["correct"][llm.identity] = ok
                    row["parametric"] = row["parametric"] or ok
                bar.update(len(chunk))
    record = {"models": [m.identity for m in models], "parametric": sum(r["parametric"] for r in rows.values()),
              "questions": len(rows)}
    target = meta if meta is not None else dict(bench.meta)
    target["parametric_test"] = record
    with BenchmarkWrite(bench_dir) as write:
        write_jsonl(write.path("parametric.jsonl"), rows.values())
        write.commit(target)
    return {qid: r["parametric"] for qid, r in rows.items()}


def split_by_parametric(parametric: dict[str, bool], dev_share: float = 1 / 3,
                        seed: int = SEED.default) -> dict[str, list[str]]:
    """Parametric questions → train; the others, shuffled with `seed`, → dev (`dev_share`) and test."""
    if not 0 <= dev_share <= 1:
        raise InputError("dev share must lie between 0 and 1", field="split")
    train = [q for q, p in parametric.items() if p]
    rest = [q for q, p in parametric.items() if not p]
    random.Random(seed).shuffle(rest)
    n_dev = round(len(rest) * dev_share)
    return {"train": train, "dev": rest[:n_dev], "test": rest[n_dev:]}


def apply_parametric_split(bench_dir: str | os.PathLike, parametric: dict[str, bool], *, dev_share: float = 1 / 3,
                           seed: int = SEED.default, meta: dict | None = None) -> dict[str, Any]:
    """Rewrite splits.json from the parametric test's outcome; record it in meta."""
    splits = split_by_parametric(parametric, dev_share, seed)
    target = meta if meta is not None else dict(Benchmark(bench_dir).meta)
    target["splits"] = {name: len(ids) for name, ids in splits.items()}
    target.setdefault("options", {})["split"] = f"parametric (dev share {dev_share:.3f}, seed {seed})"
    with BenchmarkWrite(bench_dir) as write:
        write_json(write.path("splits.json"), splits)
        write.commit(target)
    return splits
