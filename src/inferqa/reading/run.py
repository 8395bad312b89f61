"""Reading a whole run: contexts from the top-k passages, answers, scores, ANSWERS.jsonl rows."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ..errors import InputError
from ..registry import Option
from ..progress import counter
from ..parameters import READ_K, READ_KS, READ_STRATEGIES, TUNE_ALPHA
from ..evaluation.exact_match import NO_ANSWER, score_row
from ..scale.llm import llm_opener
from .context import strategies as context_strategies
from .evidence import evidence_sets, vote
from .reader import Reader, ReaderOutput, reading_order

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark
    from ..llm.base import LLM
    from ..formats import Run


def _each(opt: Option, values: Sequence[Any], wording: str, field: str) -> list[Any]:
    try:
        return [opt.check(v, field) for v in values]
    except InputError:
        raise InputError(f"{wording} ({opt.accepts()})", field=field) from None


def check_read_options(strategies: Sequence[str], ks: Sequence[int], alphas: Sequence[float] = (),
                       **context_options: Any) -> None:
    """Known strategies and their options, ks and grid alphas as READ_K and TUNE_ALPHA declare
    them: checked before any model loads."""
    if not strategies:
        raise InputError("give at least one strategy", field="strategy")
    context_strategies(strategies, context_options)
    _each(READ_K, ks or [None], "k values must be positive integers", "k")
    _each(TUNE_ALPHA, alphas, "alpha values must lie in [0, 1] (beta = 1 - alpha)", "alphas")


def read_with_llm(bench: "Benchmark | str | os.PathLike", run: "Run | str | os.PathLike", llm: "LLM | str",
                  strategies: Sequence[str] = READ_STRATEGIES.default, ks: Sequence[int] = READ_KS.default, *,
                  qids: Iterable[str] | None = None, progress: bool = True, reader: Reader | None = None,
                  **context_options: Any) -> list[dict[str, Any]]:
    """One row per (question, strategy, k): prediction, golds, em, f1, contains, passage ids.

    `bench` and `run` are objects or paths; `llm` is an LLM or a spec (`smollm2`, an HF id,
    ...), then opened with the LLM cache and closed when done. `context_options` go to the
    context strategies that declare them (alpha, beta: union_freq).

    Identical prompts (e.g. k=1 under every strategy) are asked once. Interrupted runs
    resume from the LLM cache: a restart repeats no backend call.
    """
    from ..formats.coerce import as_benchmark, as_run

    bench = as_benchmark(bench)
    run = as_run(run, bench)
    if isinstance(llm, str):
        from ..llm import load_llm

        check_read_options(strategies, ks, **context_options)  # before the model loads
        with load_llm(llm) as opened:
            return read_with_llm(bench, run, opened, strategies, ks, qids=qids, progress=progress, reader=reader,
                                 **context_options)
    merges = context_strategies(strategies, context_options)
    ks = _each(READ_K, ks or [None], "k values must be positive integers", "k")
    reader = reader or Reader(llm)
    wanted = list(qids) if qids is not None else list(run)
    plan, prompts = _plan(bench, run, wanted, strategies, ks, merges)
    outputs = _ask(reader, list(prompts), max(1, llm.parallel), progress)
    return [_answered(p, outputs, bench, llm.identity) for p in plan]


def _plan(bench: "Benchmark", run: "Run", wanted: list[str], strategies: Sequence[str], ks: list[int],
          merges: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[tuple[str, tuple[str, ...]], int]]:
    """(one row per question, strategy and k with the index of its prompt — or, for a voting
    strategy, of one prompt per hint-group of the top k — , the distinct prompts numbered)."""
    from .. import registry

    voting = {n for n in merges if registry.get("context", n).meta.get("votes")}
    plan: list[dict[str, Any]] = []
    prompts: dict[tuple[str, tuple[str, ...]], int] = {}
    for qid in wanted:
        q = bench.questions.get(qid)
        if q is None:
            raise InputError(f"run question {qid!r} is not in the benchmark", file=bench.path, record=qid)
        scored = run.get(qid, [])
        ranked = [pid for pid, _ in scored]
        for name in strategies:
            for k in ks:
                pids = ranked[:k]
                if name in voting:  # answers voted on in _answered
                    sets = evidence_sets(bench, scored[:k])
                    ids = [prompts.setdefault((q.text, tuple(merges[name]([e.hints]))), len(prompts)) for e in sets]
                    plan.append({"qid": qid, "strategy": name, "k": k, "pids": pids, "_prompts": ids, "_sets": sets})
                    continue
                lines = tuple(merges[name]([bench.hints_of(p) for p in pids]))
                key = (q.text, lines)
                prompts.setdefault(key, len(prompts))
                plan.append({"qid": qid, "strategy": name, "k": k, "pids": pids, "_prompt": prompts[key]})
    return plan, prompts


def _ask(reader: Reader, items: list[tuple[str, tuple[str, ...]]], step: int, progress: bool) -> list[ReaderOutput]:
    """The reader's output for each (question, context lines), sent `step` at a time in trie
    order and returned in the items' order."""
    order = reading_order(items)
    outputs: list[ReaderOutput] = [ReaderOutput("", NO_ANSWER)] * len(items)
    with counter(len(items), "reading", "prompt", progress) as bar:
        for i in range(0, len(order), step):
            chunk = order[i:i + step]
            for j, out in zip(chunk, reader.read_batch([(items[j][0], list(items[j][1])) for j in chunk])):
                outputs[j] = out
            bar.update(len(chunk))
    return outputs


def _answered(p: dict[str, Any], outputs: list[ReaderOutput], bench: "Benchmark", identity: Any) -> dict[str, Any]:
    """Planned row `p` with its answer (a voting strategy's: the weighted vote's winner) scored."""
    if "_prompts" in p:
        read, sets = [outputs[i] for i in p.pop("_prompts")], p.pop("_sets")
        p["votes"] = [{"answer": o.answer, "weight": e.weight, "pids": list(e.pids)} for o, e in zip(read, sets)]
        winner = vote([o.answer for o in read], [e.weight for e in sets])
        out = read[winner if winner is not None else 0] if read else ReaderOutput("", NO_ANSWER)
    else:
        out = outputs[p.pop("_prompt")]
    golds = bench.questions[p["qid"]].answers
    return {**p, "prediction": out.answer, "raw": out.raw, "golds": golds, **score_row(out.answer, golds),
            "llm": identity}


def summarize(rows: Iterable[dict[str, Any]], metrics: Sequence[str] = ("em", "f1", "contains")) -> list[dict[str, Any]]:
    """Mean of each metric per (strategy, k), in first-seen order."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["strategy"], int(r["k"])), []).append(r)
    out = []
    for (strategy, k), rs in groups.items():
        row = {"strategy": strategy, "k": k, "n": len(rs)}
        for m in metrics:
            vals = [float(r[m]) for r in rs if r.get(m) is not None]
            row[m] = sum(vals) / len(vals) if vals else None
        out.append(row)
    return out


def open_run_and_llm(bench: "str | os.PathLike", run: "str | os.PathLike", split: str | None, allow_partial: bool,
                     llm: str, check_options: Callable[[], None], *, cache: Any, use_cache: bool,
                     **backend: Any) -> tuple["Benchmark", "Run", Any]:
    """The benchmark and the run (of `split`), `check_options()` run, then the LLM opened with its
    call cache and `backend` (backend, ray_address, num_actors, llm_urls: `scale.llm.llm_opener`)."""
    from ..formats import open_run
    from ..formats.benchmark import Benchmark

    opened = Benchmark(bench)
    ranked = open_run(run, opened, split, allow_partial=allow_partial)
    check_options()
    return opened, ranked, llm_opener(cache, not use_cache, **backend)(llm)
