"""Evaluation speed at QUIT's test size: 1,728 questions × 1,000 retrieved passages, the
paper's default metrics (hit@{1,5,10,50,100}, recall@{5,10,50}, mrr, ndcg@{10,100}).

Qrels have QUIT's shape: 325 judged passages per question (label 1, or 2 for about 12%);
runs mix the question's own passages with other questions' (label 0). Compared with
ir_measures (its pytrec_eval provider) and pytrec_eval directly where installed; values are
checked to agree before anything is timed. Best of --repeat runs each.

    python benchmarks/eval_speed.py
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time

from inferqa.evaluation import DEFAULT_METRICS, evaluate
from inferqa.formats import Qrels, Run


def make_case(n_q: int, depth: int, seed: int = 0) -> tuple[Run, Qrels]:
    rng = random.Random(seed)
    qrels, run = Qrels(), Run()
    for i in range(n_q):
        q = f"q{i}"
        own = [f"{q}_{j:03d}" for j in range(325)]
        qrels[q] = {p: (2 if rng.random() < 0.12 else 1) for p in own}
        pool = rng.sample(own, rng.randint(0, 60)) + [f"q{rng.randrange(n_q)}x_{j}" for j in range(depth)]
        rng.shuffle(pool)
        ranked = list(dict.fromkeys(pool))[:depth]
        run[q] = [(p, float(depth - r)) for r, p in enumerate(ranked)]
    return run, qrels


def best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=1728)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from requirements import require

    require("eval_speed.py", ("ir_measures", "pytrec_eval"), "the comparison sides")
    run, qrels = make_case(args.questions, args.depth)
    rows = []
    t_ours, ours = best_of(lambda: evaluate(run, qrels, DEFAULT_METRICS), args.repeat)
    rows.append(("inferqa.evaluate (numpy)", t_ours))

    try:
        import ir_measures
        from ir_measures import RR, R, Success, nDCG
    except ImportError:
        print("ir_measures not installed: pip install ir_measures")
        ir_measures = None
    if ir_measures is not None:
        gains = {0: 0, 1: 1, 2: 3}
        measures = {f"hit@{k}": Success @ k for k in (1, 5, 10, 50, 100)}
        measures |= {f"recall@{k}": R @ k for k in (5, 10, 50)}
        measures |= {"mrr": RR, "ndcg@10": nDCG(gains=gains) @ 10, "ndcg@100": nDCG(gains=gains) @ 100}
        run_d = {q: {p: s for p, s in r} for q, r in run.items()}
        t_ir, theirs = best_of(lambda: ir_measures.calc_aggregate(list(measures.values()), qrels, run_d),
                               args.repeat)
        for name, m in measures.items():
            assert abs(theirs[m] - ours[name]) < 1e-9, (name, theirs[m], ours[name])
        rows.append(("ir_measures", t_ir))
    try:
        import pytrec_eval
    except ImportError:
        pytrec_eval = None
    if pytrec_eval is not None:
        run_d = {q: {p: s for p, s in r} for q, r in run.items()}
        names = {"success_1,5,10,50,100", "recall_5,10,50", "recip_rank", "ndcg_cut_10,100"}

        def trec():  # ndcg here uses the labels as gains, not 2^label - 1: timing only
            ev = pytrec_eval.RelevanceEvaluator(qrels, names)
            return ev.evaluate(run_d)

        rows.append(("pytrec_eval (direct, timing only)", best_of(trec, args.repeat)[0]))

    print(f"{args.questions} questions × {args.depth} passages, {len(DEFAULT_METRICS)} metrics, best of {args.repeat}")
    print("| evaluator | seconds | vs inferqa |")
    print("|---|---|---|")
    for name, t in rows:
        print(f"| {name} | {t:.3f} | {t / t_ours:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
