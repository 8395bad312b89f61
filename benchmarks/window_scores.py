"""`rerank_window.py`'s score cache and windows: `Scores` (each pair's score and seconds, kept on
disk), the windows reranked over it as `inferqa rerank` does, and what is read from them on dev
before any test figure (the dev checks, the scores cached for later, the dev grid that
registration chooses from, the adaptive margins, fine-tuned dense's comparison registration)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from cache_keys import key
from window_protocol import (CANDIDATES, METRICS, ROUND_CALLS, ROUND_WINDOWS, SUMMARY, WEIGHTS, WINDOWS, load_run,
                             log, mean4, scored)

from inferqa.io import write_json
from inferqa.models import quiet_loading

LABEL = {"upr": "UPR", "llm-pointwise": "LLM yes/no"}  # a judge's name in the tables; RERANKERS' is "CE"


class Scores:
    """The reranker's score of each (question, passage) pair, computed once and kept in
    OUT/scores/<name>.jsonl with the measured seconds of each pair (a batch's time shared
    evenly by its pairs), so every window reads the same scores and is charged its own pairs.
    `model_dir`: a cross-encoder folder (named by it); or `judge`: (name, a library reranker), with
    `recipe` (its plugin and options, for `inferqa rerank` in `speed`)."""

    def __init__(self, model_dir: Path | None, folder: Path, bench, judge: tuple | None = None,
                 recipe: tuple | None = None):
        self.model_dir, self.bench, self.recipe = model_dir, bench, recipe
        self.name, self.judge = (model_dir.name, None) if judge is None else judge
        self.label = "CE" if judge is None else LABEL[self.judge.name]
        self.path = folder / f"{self.name}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.score, self.seconds, self._ce = {}, {}, None
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    q, p, s, t = json.loads(line)
                except ValueError:  # a torn last line of a killed run
                    continue
                self.score[q, p], self.seconds[q, p] = s, t

    computing = 0.0  # seconds spent in the model by this process

    def mean_seconds(self) -> float:
        """The mean measured seconds of one pair: a cell is charged its pairs at this rate (a
        pair's own batch depends on which cell asked first)."""
        return sum(self.seconds.values()) / max(len(self.seconds), 1)

    def charge(self, pairs: list) -> float:
        """A cell's model seconds: a judge's own pairs as measured (each timed alone, so a long
        representative costs what it costs); a cross-encoder's at `mean_seconds`."""
        if self.judge is None:
            return len(pairs) * self.mean_seconds()
        return sum(self.seconds[pair] for pair in pairs)

    def _predict(self, query: str, texts: list[str]) -> list[float]:
        if self.judge is not None:
            return self.judge.score(query, texts)
        if self._ce is None:
            from sentence_transformers import CrossEncoder

            with quiet_loading():
                self._ce = CrossEncoder(str(self.model_dir), device="cpu")
        return self._ce.predict([(query, t) for t in texts], batch_size=64, show_progress_bar=False)

    def get(self, qid: str, pids: list[str]) -> list[float]:
        missing = list(dict.fromkeys(p for p in pids if (qid, p) not in self.score))
        # a judge scores one prompt at a time, so each pair is timed alone; a cross-encoder batches
        for batch in ([[p] for p in missing] if self.judge is not None else [missing] if missing else []):
            t0 = time.perf_counter()
            got = self._predict(self.bench.questions[qid].text, [self.bench.passage_text(p) for p in batch])
            spent = time.perf_counter() - t0
            self.computing += spent
            each = spent / len(batch)
            with open(self.path, "a", encoding="utf-8") as f:
                for p, s in zip(batch, got):
                    self.score[qid, p], self.seconds[qid, p] = float(s), each
                    f.write(json.dumps([qid, p, float(s), each]) + "\n")
        return [self.score[qid, p] for p in pids]


def window_reranker(scores: Scores, first, weight: float):
    """A `Reranker` over the cached scores: `weight` × the cross-encoder's score + (1 − weight)
    × the first stage's, each min-max normalised over the window; counts the pairs it scores."""
    from inferqa.reranking.base import Reranker

    class Interpolated(Reranker):
        name = "cross-encoder"

        def __init__(self):
            self.pairs: list[tuple[str, str]] = []

        def score(self, query, texts):  # never reached: scored by passage id
            raise AssertionError

        def score_passages(self, bench, qid, pids):
            self.pairs += [(qid, p) for p in pids]
            ce = scores.get(qid, list(pids))
            if weight >= 1.0:
                return ce
            fs = [first[qid][p] for p in pids]
            return [weight * a + (1 - weight) * b for a, b in zip(_unit(ce), _unit(fs))]

    return Interpolated()


def _unit(xs: list[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    return [0.0 if hi == lo else (x - lo) / (hi - lo) for x in xs]


def windowed(run, bench, scores: Scores, window: str, calls: int, weight: float) -> tuple:
    """(run reranked over the window, seconds, pairs scored): the library's own
    `Reranker.rerank_question`, as `inferqa rerank --window W --representative R` runs it (`window`:
    a key of WINDOWS). Seconds: the measured time of everything but the model, plus `Scores.charge`.
    An all-hints representative enters the interpolation at its question's first-stage score."""
    from inferqa.hints import all_hints_passage
    from inferqa.records import question_of
    from inferqa.reranking.run import window_key

    kind, representative = WINDOWS[window]
    group = window_key(bench, kind)
    first = {q: dict(run[q]) for q in run}
    if representative == "all-hints":
        for q in run:
            tops: dict = {}
            for p, s in run[q]:
                tops.setdefault(question_of(p), s)
            first[q].update({all_hints_passage(bench, c): s for c, s in tops.items()})
    rr = window_reranker(scores, first, weight)
    t0, computing = time.perf_counter(), scores.computing
    out = run.derive({q: rr.rerank_question(q, run[q], bench, calls, group, representative) for q in run},
                     tag=f"{run.tag}+ce")
    overhead = time.perf_counter() - t0 - (scores.computing - computing)
    if len(rr.pairs) < calls * len(run) and window != "plain":  # as `inferqa rerank` warns
        log(f"note: {window} window of {calls} made {len(rr.pairs) / len(run):.1f} calls per query: the first "
            f"stage is too shallow to fill it")
    return out, overhead + scores.charge(rr.pairs), len(rr.pairs)


def own_and_other(run, bench):
    """Per question of `run`: (question, its own full-hint-set passage, the full-hint-set passage
    of the first other question in `run`): as many hints each, so the count tells nothing."""
    from inferqa.experiments.finetune import representatives
    from inferqa.hints import all_hints_passage
    from inferqa.records import question_of

    for q in run:
        other = question_of(representatives(run[q], q, 1)[0])
        yield q, all_hints_passage(bench, q), all_hints_passage(bench, other)


def own_versus_other(scores: Scores, run, bench) -> float:
    """Share of the run's questions whose own passage the cross-encoder scores above the other
    question's (`own_and_other`)."""
    wins = 0
    for q, own, other in own_and_other(run, bench):
        a, b = scores.get(q, [own, other])
        wins += a > b
    return 100 * wins / len(run)


def dev_checks(args, bench, scores: Scores, stages: dict) -> dict:
    """Before any window figure: own-versus-other accuracy, and Hit@1 over a distinct window of
    10 against the first stage's own order, on each first stage's dev run (round 3: Hit@1 over
    each of its distinct windows, for its candidate first stages only)."""
    windows = [w for w in ROUND_WINDOWS[args.round] if w != "plain"]
    inputs = {} if args.round < 3 else {"windows": windows, "candidates": CANDIDATES[args.round]}
    path = args.out / f"dev-checks-{key(model=scores.name, runs=sorted(r['dev'].name for r in stages.values()), **inputs)}.json"
    if path.exists():
        log(f"reused: {path.name}")
        return json.loads(path.read_text())
    out = {}
    for name, runs in stages.items():
        run = load_run(runs["dev"], bench)
        alone = scored(run, bench)
        out[name] = {"own_vs_other": own_versus_other(scores, run, bench), "first_stage_hit@1": alone["hit@1"]}
        if args.round < 3 or name in CANDIDATES[args.round]:
            for w in windows:
                hit = scored(windowed(run, bench, scores, w, 10, 1.0)[0], bench)["hit@1"]
                out[name]["distinct10_hit@1" if w == "question" else f"distinct10_{w}_hit@1"] = hit
        log(f"dev {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in out[name].items()))
    write_json(path, out)
    return out


def bi_encoder_checks(args, bench, model: Path, stages: dict) -> dict:
    """The same own-versus-other pairs scored by fine-tuned dense's cosine: how well the first
    stage itself tells the two full hint sets apart (the reranker's 90 % target read beside it)."""
    path = args.out / f"dev-checks-bi-encoder-{key(model=model.name, runs=sorted(r['dev'].name for r in stages.values()))}.json"
    if path.exists():
        log(f"reused: {path.name}")
        return json.loads(path.read_text())
    from inferqa.models import load_sentence_transformer

    st, out = load_sentence_transformer(str(model), "cpu"), {}
    for name, runs in stages.items():
        run, wins = load_run(runs["dev"], bench), 0
        for q, own, other in own_and_other(run, bench):
            v = st.encode([bench.questions[q].text, bench.passage_text(own), bench.passage_text(other)],
                          normalize_embeddings=True)
            wins += float(v[0] @ v[1]) > float(v[0] @ v[2])
        out[name] = 100 * wins / len(run)
        log(f"dev {name}: fine-tuned dense's own-vs-other {out[name]:.1f} %")
    write_json(path, out)
    return out


def fill_scores(bench, scores: Scores, stages: dict, split: str, calls: int, all_hints: bool = False) -> None:
    """The model's scores of `split`'s window candidates (plain and distinct, `calls` each; with
    `all_hints`, also each window question's all-hints passage) into the cache, and nothing else:
    no figure is computed from them here."""
    from inferqa.hints import all_hints_passage, hint_group_key, window_groups
    from inferqa.records import question_of

    group = hint_group_key(bench, "question")
    for name, runs in stages.items():
        run = load_run(runs[split], bench)
        for q in run:
            ranked = run[q]
            reps = [ranked[idx[0]][0] for idx in window_groups(ranked, calls, group)]
            whole = [all_hints_passage(bench, question_of(p)) for p in reps] if all_hints else []
            scores.get(q, list(dict.fromkeys([p for p, _ in ranked[:calls]] + reps + whole)))
        log(f"scores cached: {name} {split}, {calls} calls per window")


# -- phase 3: every choice on dev, written before any test figure ---------------------------------
def dev_grid(args, bench, scores: Scores, stages: dict) -> list[dict]:
    rows = []
    for name, runs in stages.items():
        run = load_run(runs["dev"], bench)
        for window in ROUND_WINDOWS[args.round]:
            for calls in ROUND_CALLS[args.round][0]:
                for weight in WEIGHTS:
                    out, _, pairs = windowed(run, bench, scores, window, calls, weight)
                    rows.append({"first_stage": name, "window": window, "calls": calls, "weight": weight,
                                 "calls_made": pairs / len(run), **scored(out, bench)})
        log(f"dev grid: {name} done")
    return rows


def adaptive_margins(bench, stages: dict) -> dict:
    """Per learned first stage (clue, dense): the adaptive diversification margin (linked
    families, one passage each in the head, only queries whose top family leads by less) with
    the best dev MRR over `tune_margin`'s grid of shares of the dev queries."""
    from inferqa.tune import tune_margin

    out = {}
    for name in ("clue", "dense"):
        if name in stages:
            grid = tune_margin(load_run(stages[name]["dev"], bench), bench, split="dev", per_group=1, by="linked",
                               metric="mrr", measures=list(SUMMARY))
            out[name] = grid.rows[0].margin
    return out


def register_comparison(args, bench, scores: Scores, stages: dict, reg: dict) -> dict:
    """Fine-tuned dense's dev choices (its weight per window and N, its adaptive margin), by
    `register`'s rule, written to OUT/registration-dense.json once, before its test figures;
    returned merged into `reg`."""
    path = args.out / "registration-dense.json"
    if path.exists():
        log(f"reused: {path.name} sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}")
        extra = json.loads(path.read_text())
    else:
        dense = {"dense": stages["dense"]}
        tuned = {}
        for r in dev_grid(args, bench, scores, dense):
            k = f"{r['first_stage']}|{r['window']}|{r['calls']}"
            if k not in tuned or mean4(r) > mean4(tuned[k]) + 1e-9:
                tuned[k] = r
        extra = {"written_at": time.strftime("%Y-%m-%d %H:%M:%S"), "weights": {k: r["weight"] for k, r in tuned.items()},
                 "adaptive_margins": adaptive_margins(bench, dense),
                 "dev": {k: {m: r[m] for m in METRICS} for k, r in tuned.items()}}
        write_json(path, extra)
        log(f"registered fine-tuned dense's dev choices: {path} sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}")
    return {**reg, "weights": {**reg["weights"], **extra["weights"]},
            "adaptive_margins": {**reg["adaptive_margins"], **extra["adaptive_margins"]}}
