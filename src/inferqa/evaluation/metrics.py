"""QUIT's ranking measures, vectorised over a (questions × depth) label matrix.

Measures are named as ir_measures names them, with their parameters (`inferqa.evaluation.measures`):
`nDCG@k`, `nDCG(gain=exp)@k`, `P(rel=2)@k`, `RR`, `AP@k`, `Success@k`, `Judged@k`, and the
spellings of ranx and trec_eval beside them; no name depends on letter case. Relevant means
label >= rel (default: the call's `min_label`, itself 1).

The definitions are a provider's. `inferqa` (the default):
- Success@k (hit@k, hit_rate@k): 1 if a relevant passage is in the top k, else 0 (a question
  without any relevant passage in the qrels included, as ir_measures and ranx count it).
  R@k (recall@k): relevant in the top k / all relevant (0 without relevant passages).
- Hits@k (ranx's hits@k): relevant passages in the top k, a count; P@k: that count / k.
- RR, RR@k (mrr, mrr@k): 1 / rank of the first relevant passage (0 if none).
- AP, AP@k (map, map@k): sum of precision at each relevant rank (within the top k) / all
  relevant, as trec_eval's map_cut (0 without relevant passages).
- nDCG@k: gain = the label (`gain=lin`, the default, as ir_measures, ranx's ndcg and trec_eval
  compute it) or 2^label - 1 (`gain=exp`, also `ndcg_exp@k` and ranx's `ndcg_burges@k`); labels
  below rel gain 0; discount 1/log2(rank + 1); ideal ranking from all judged labels of the
  question; 0 where no gain is possible. Without a cutoff, over the whole list.
- Rprec (r-precision): relevant in the top R / R, R = the question's relevant passages.
- Judged@k: passages in the top k that have a label (0 included) / passages ranked there.

The questions scored are the field's (ir_measures; trec_eval -c): every judged question (of the
split, if one is given); a question without a judgement is left out of every measure alike,
and a judged question the run lacks is an empty ranking (0). `questions="run"` scores only the
run's judged questions (trec_eval without -c). Every measure is a mean over all the questions
scored. The ranking is the run's list order.

`protocol="paper"` is the QUIT authors' rules (their results scripts): every measure is a plain
mean over the run's questions (a question without a relevant passage, or with an empty list,
counts 0 — Success and R included, except that with rel 2 or more they leave out the
questions without a passage of such a label, as the authors' label-threshold variants do);
P@k divides by max(1, min(k, passages retrieved)); nDCG gains 2^label - 1 by default
(`gain=lin`: the label) for every label, whatever rel; means are rounded to 4 decimals. A
passage listed twice for a question (the authors' metrics keep duplicates) counts at each of
its ranks in AP and nDCG, but once in Success, R and P, which count the relevant passages found
(a set); it takes up a rank either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..errors import InputError, warn
from ..defaults import MIN_LABEL
from ..formats import Benchmark, Qrels, Run, as_benchmark, as_qrels, as_run
from ..formats.oracles import check_min_label  # noqa: F401 - part of this module's API
from ..parameters import DEFAULT_METRICS, PROTOCOL, QUESTIONS_OPT
from .measures import Measure, metric_names, parse_measure
from .providers import Lists, provider

Metric = Measure  # the name this module exported before measures had parameters
parse_metric = parse_measure


def check_protocol(protocol: str) -> None:
    provider(protocol)


def resolve(metrics: Any, min_label: int = MIN_LABEL.default, protocol: str = PROTOCOL.default) -> list[Measure]:
    """The measures asked for, keyed as spelled; two spellings of one measure are computed once
    (both keys are kept), with a warning naming them (to the caller of the caller)."""
    parsed = [parse_measure(m) for m in metric_names(metrics)]
    if not parsed:
        raise InputError("give at least one metric", field="metrics")
    defaults = provider(protocol).defaults
    seen: dict[str, list[str]] = {}
    for m in parsed:
        seen.setdefault(m.canonical(min_label, defaults.get(m.family, {})), []).append(m.name)
    for canonical, names in seen.items():
        if len(names) > 1:
            warn(f"{', '.join(dict.fromkeys(names))} are one measure ({canonical}): computed once, "
                          "reported under each name")
    return parsed


def per_query_scores(run: Run, qrels: Qrels, metrics: Any = DEFAULT_METRICS,
                     min_label: int = MIN_LABEL.default,
                     protocol: str = PROTOCOL.default) -> tuple[list[str], dict[str, np.ndarray]]:
    """Question ids and, per metric name, a float array with NaN where the metric is undefined
    (only under `paper`: Success and R with rel >= 2 and no passage of such a label)."""
    source = provider(protocol)
    parsed = [parse_measure(m) for m in metric_names(metrics)]
    if not parsed:
        raise InputError("give at least one metric", field="metrics")
    if not qrels:
        raise InputError("qrels are empty", field="qrels")
    check_min_label(min_label)
    qids = list(run)
    longest = max((len(r) for r in run.values()), default=0)
    if any(m.k is None or dict(m.given).get("judged_only") for m in parsed):  # judged_only: past k too
        depth = longest
    else:
        depth = min(max(m.k for m in parsed), longest)
    lists = Lists(run, qrels, qids, max(depth, 1))
    out: dict[str, np.ndarray] = {}
    done: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in parsed:
            defaults = source.defaults.get(m.family, {})
            key = m.canonical(min_label, defaults)
            if key not in done:
                params = m.params(min_label, defaults)
                ranked = lists.judged if params.get("judged_only") else lists
                done[key] = source.measures[m.family](ranked, m, params).astype(float)
            out[m.name] = done[key]
    return qids, out


def scored_run(run: Run | str | os.PathLike, bench: Benchmark | None = None, split: str | None = None, *,
               min_label: int = MIN_LABEL.default, protocol: str = PROTOCOL.default, allow_partial: bool = False) -> Run:
    """The run as `evaluate` and `compare` score it: a `Run`, or a file read by `open_run`
    (`min_label` for `optimal`, `allow_partial` for a Rankify file of fewer questions than
    `split`, duplicate passages kept under the paper protocol), cut to `split`; under the
    paper protocol a question of `split` the run lacks is an empty ranking (the authors'
    files list every question, some empty)."""
    check_protocol(protocol)
    if split is not None and bench is None:
        raise InputError("split needs a benchmark (--bench DIR): its splits name the questions", field="split")
    paper = protocol == "paper"
    run = as_run(run, bench, split, min_label=min_label, allow_partial=allow_partial, allow_duplicates=paper)
    if paper and split is not None:
        run = run.only(bench.split_qids(split), fill=True)
    return run


class ScopeWarning(UserWarning):
    """Judged questions count 0 because the run lacks them (the command line prints it so)."""

    prefix = "inferqa: warning"


@dataclass
class Evaluation:
    """One run's evaluation: the means, each question's values (None: undefined there), and
    which questions were scored (`scored_questions`)."""

    name: str
    means: dict[str, float]
    per_query: dict[str, dict[str, float | None]]
    left_out: int  # the run's questions without a judgement: in no mean
    counted_zero: int  # judged questions the run lacks (or lists nothing for): an empty ranking
    undefined: dict[str, int] = field(default_factory=dict)  # per metric: scored questions it leaves out
    min_label: int = MIN_LABEL.default
    protocol: str = PROTOCOL.default
    inferred_split: str | None = None  # the split scored, taken from the run's questions (`run_split`)

    @property
    def scored(self) -> int:
        return len(self.per_query)

    def result(self, per_query: bool = False) -> dict:
        """What `evaluate` returns: the means, or with `per_query` {"mean": ..., "per_query": ...}."""
        return {"mean": self.means, "per_query": self.per_query} if per_query else self.means

    def summary(self) -> str:
        """'38 questions scored (hit@10 over 36: 2 without a relevant passage), 10 left out (not
        judged), 0 counted 0 (judged, not in the run)'."""
        over: dict[int, list[str]] = {}
        for name, n in self.undefined.items():
            if n:
                over.setdefault(n, []).append(name)
        detail = "; ".join(f"{', '.join(names)} over {self.scored - n}: {n} without a relevant passage"
                           for n, names in over.items())
        if self.inferred_split:
            split = f"split {self.inferred_split}, which holds every question of the run; --split all for all"
            detail = f"{split}; {detail}" if detail else split
        return (f"{self.scored} questions scored" + (f" ({detail})" if detail else "")
                + f", {self.left_out} left out (not judged), {self.counted_zero} counted 0 (judged, not in the run)")

    def to_dict(self, per_query: bool = False) -> dict:
        out = {"run": self.name, "questions": self.scored, "left_out": self.left_out,
               "counted_zero": self.counted_zero, "undefined": self.undefined, "min_label": self.min_label,
               "protocol": self.protocol, "metrics": self.means}
        return {**out, "per_query": self.per_query} if per_query else out


def scored_questions(run: Run, qrels: Qrels, scope: Sequence[str] | None = None,
                     questions: str = QUESTIONS_OPT.default) -> tuple[list[str], int, list[str]]:
    """The questions scored under the field's rule (ir_measures; trec_eval -c): every judged
    question of `scope` (None: of the qrels), the run's first in its order; a question
    without a judgement is left out of every measure. `questions="run"`: only the run's
    judged questions (trec_eval without -c). Returns (the questions, how many of the run's
    are left out, the judged ones the run lacks: each an empty ranking, so 0)."""
    inside = None if scope is None else set(scope)
    answered = [q for q in run if q in qrels and (inside is None or q in inside)]
    wanted = qrels if scope is None else [q for q in scope if q in qrels]
    lacking = [] if questions == "run" else [q for q in wanted if q not in run]
    return answered + lacking, len(run) - len(answered), lacking


def named_runs(runs: Any) -> list[tuple[str, Any]]:
    """(name, run) of each run: a mapping's keys, else a NAME=PATH's name, a file's stem, a
    Run's tag, or run1, run2, ... (a name taken twice: the path, or NAME#i)."""
    if isinstance(runs, Mapping):
        return [(str(k), v) for k, v in runs.items()]
    out, seen, given = [], set(), set()
    for i, run in enumerate(runs):
        name, run, explicit = _name_of(run, i)
        if explicit:
            if name in given:
                raise InputError(f"run name {name!r} is given twice; give each run its own NAME=PATH", field="runs")
            given.add(name)
        if name in seen:
            name = str(run) if isinstance(run, (str, os.PathLike)) else f"{name}#{i + 1}"
        seen.add(name)
        out.append((name, run))
    return out


def _name_of(run: Any, i: int) -> tuple[str, Any, bool]:
    """(name, run, whether the name was given as NAME=PATH)."""
    if isinstance(run, str) and "=" in run and not Path(run).exists():  # NAME=PATH
        name, _, path = run.rpartition("=")
        if name:
            return name, Path(path), True
    if isinstance(run, (str, os.PathLike)):
        return Path(run).stem, run, False
    return getattr(run, "tag", None) or f"run{i + 1}", run, False


def checked_min_label(min_label: int, qrels: Qrels) -> int:
    """`min_label` checked; one above the default also against the qrels' largest label (qrels
    without a relevant passage are no error at the default: every hit@k is 0)."""
    return check_min_label(min_label, qrels if min_label != MIN_LABEL.default else None)


def qrels_and_bench(qrels: Any, bench: Any) -> tuple[Qrels, Benchmark | None]:
    """The qrels (given, else the benchmark's) and the benchmark the runs are checked against."""
    b = None if bench is None else as_benchmark(bench)
    if qrels is None:
        if b is None:
            raise InputError("give --qrels QRELS (or --bench DIR to use its qrels.tsv)", field="qrels")
        return b.qrels, b
    qrels, of_qrels = as_qrels(qrels)
    return qrels, b or of_qrels


def run_split(bench: Benchmark | None, runs: Sequence[Run], split: str | None, protocol: str) -> str | None:
    """The split scored: `split` as given; not given, under the default protocol with a benchmark,
    the one split that holds every benchmark question of the runs (a run `retrieve` made for
    the test split scores the test split, as `retrieve` retrieved it), else None (every
    question); "all" (or the paper protocol, which scores the run's questions) never infers."""
    if split is not None or bench is None or protocol == "paper":
        return split
    asked = {q for run in runs for q in run if q in bench.questions}
    holding = [name for name, ids in bench.splits.items() if asked and asked <= set(ids)]
    return holding[0] if len(holding) == 1 else None


def scope_of(bench: Benchmark | None, split: str | None) -> list[str] | None:
    if split is None:
        return None
    if bench is None:
        raise InputError("split needs a benchmark (--bench DIR): its splits name the questions", field="split")
    return bench.split_qids(split)


def score(name: str, run: Run, qrels: Qrels, measures: list[Measure], *, scope: Sequence[str] | None = None,
          split: str | None = None, min_label: int = MIN_LABEL.default, protocol: str = PROTOCOL.default,
          questions: str = QUESTIONS_OPT.default) -> Evaluation:
    """One read run (`scored_run`) evaluated: under the paper protocol over the run's questions
    (an empty list counting 0), else over `scored_questions`, with a warning when judged
    questions count 0 because the run lacks them."""
    if protocol == "paper":
        qids, left_out, lacking = list(run), 0, [q for q in run if not run[q]]
    else:
        qids, left_out, lacking = scored_questions(run, qrels, scope, questions)
        _warn_partial(name, run, qrels, qids, lacking, split)
    qids, scores = per_query_scores(run.only(qids, fill=True), qrels, measures, min_label, protocol)
    source = provider(protocol)
    means, undefined = {}, {}
    for metric, v in scores.items():
        defined = v[~np.isnan(v)]
        mean = float(defined.mean()) if defined.size else source.empty_mean
        means[metric] = round(mean, source.decimals) if source.decimals is not None and defined.size else mean
        undefined[metric] = int(v.size - defined.size)
    table = {qid: {m: (None if np.isnan(v[i]) else float(v[i])) for m, v in scores.items()}
             for i, qid in enumerate(qids)}
    return Evaluation(name, means, table, left_out, len(lacking), undefined, min_label, protocol)


def _warn_partial(name: str, run: Run, qrels: Qrels, qids: list[str], lacking: list[str], split: str | None) -> None:
    of = f" of split {split}" if split else ""
    if not qids:
        raise InputError(f"{name}: no judged question{of} to score (the run's {len(run)} questions and the "
                         f"qrels' {len(qrels)} share none)", field="qrels")
    if len(lacking) == len(qids):
        warn(ScopeWarning(f"the run's {len(run)} questions and the qrels' {len(qids)}{of} share none: "
                                   "every value is 0 or undefined"))
    elif lacking:
        warn(ScopeWarning(f"{name} lacks {len(lacking)} of the {len(qids)} judged questions{of} (e.g. "
                                   f"{lacking[0]}): each counts 0 (--questions run scores only the run's)"))
