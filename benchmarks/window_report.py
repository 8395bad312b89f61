"""Phase 4 of `rerank_window.py` and its post hoc checks: the test table (each first stage
alone and under the reranker, paired tests), report.md and its `window:` line, the speed check of
`inferqa rerank`, and the `deeper`, `depth-cost` and `order` phases."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from inferential_retrieval import fmt_p
from window_protocol import (CANDIDATES, DEV_CALLS, K, LABELS, METRICS, ROUND_CALLS, SUMMARY, WINDOWS, load_run, log,
                             looks, round_file, scored, write_text_atomic)
from window_scores import Scores, windowed


# -- phase 4: the test table ---------------------------------------------------------------------
def paired(a, b, bench) -> dict:
    """Run `b` against run `a` on their questions: per metric the difference, its 95 % CI and
    the randomisation p; Holm over the four summary metrics (one family per comparison)."""
    import numpy as np

    from inferqa.evaluation import compare
    from inferqa.evaluation.significance import adjust_p

    cmp = compare({"a": a, "b": b}, bench, list(METRICS), questions="run")
    cells = cmp.rows[1]["metrics"]
    holm = adjust_p(np.array([cells[m]["p"] for m in SUMMARY]), "holm")
    return {m: {"diff": 100 * cells[m]["diff"], "ci": [100 * x for x in cells[m]["ci"]], "p": cells[m]["p"],
                "holm": float(holm[SUMMARY.index(m)]) if m in SUMMARY else None} for m in METRICS}


SHOWN = {"plain": "plain", "question": "distinct", "all-hints": "distinct (all hints)"}  # a window in the tables


def test_table(args, bench, scores: Scores, stages: dict, reg: dict) -> dict:
    """Each first stage alone and under the reranker over the round's windows (round 3: its
    candidate only, plain and the registered window), each compared as `paired` says."""
    primary = reg["primary"]
    dev_calls, test_calls = ROUND_CALLS[args.round]
    runs = {name: load_run(r["test"], bench) for name, r in stages.items()
            if args.round < 3 or name in CANDIDATES[args.round]}
    windows = ("plain", "question") if args.round < 3 else ("plain", primary["window"])
    rows, cells = [], {}
    for name, run in runs.items():
        rows.append({"row": f"{name} alone", "first_stage": name, "window": None, "calls": 0, "seconds": 0.0,
                     "run": run, **scored(run, bench)})
    for name, run in runs.items():
        for window in windows:
            for calls in (test_calls if name == primary["first_stage"] else dev_calls):
                weight = reg["weights"][f"{name}|{window}|{min(calls, max(dev_calls))}"]
                out, seconds, pairs = windowed(run, bench, scores, window, calls, weight)
                row = {"row": f"{name} + {scores.label}, {SHOWN[window]} {calls}",
                       "first_stage": name, "window": window, "calls": calls, "weight": weight, "pairs": pairs,
                       "seconds": seconds, "run": out, **scored(out, bench)}
                cells[name, window, calls] = row
                rows.append(row)
        log(f"test: {name} done")
    for row in rows:  # distinct against plain at equal calls; plain against the first stage alone
        if row["window"] not in (None, "plain"):
            row["vs"], row["p"] = "plain", paired(cells[row["first_stage"], "plain", row["calls"]]["run"], row["run"], bench)
        elif row["window"] == "plain":
            alone = next(r for r in rows if r["row"] == f"{row['first_stage']} alone")
            row["vs"], row["p"] = "alone", paired(alone["run"], row["run"], bench)
    return {"rows": rows, "cells": cells, "runs": runs}


def table_md(rows: list[dict], queries: int) -> str:
    lines = [f"| row | {' | '.join(LABELS)} | reranker calls | rerank s/query | vs | Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * (len(LABELS) + 2) + "---|---|"]
    for r in rows:
        ps = " / ".join(fmt_p(r["p"][m]["holm"]) for m in SUMMARY) if "p" in r else "–"
        calls = f"{r['pairs'] / queries:.1f}" if r.get("pairs") is not None else "0"
        lines.append(f"| {r['row']} | " + " | ".join(f"{r[m]:.1f}" for m in METRICS)
                     + f" | {calls} | {r['seconds'] / queries:.2f} | {r.get('vs', '–')} | {ps} |")
    return "\n".join(lines)


def last_line(primary: dict, d: dict, p: dict, model: str) -> str:
    distinct, plain = d["distinct"], d["plain"]
    dominates = all(distinct[m] > plain[m] for m in SUMMARY)
    return (f"window: {primary['first_stage']} + {model}, {primary['calls']} calls, distinct Hit@1 {distinct['hit@1']:.1f}, "
            f"Hit@10 {distinct['hit@10']:.1f}, MRR {distinct['mrr']:.1f}, nDCG@10 {distinct['ndcg_exp@10']:.1f} vs plain "
            f"{plain['hit@1']:.1f}, {plain['hit@10']:.1f}, {plain['mrr']:.1f}, {plain['ndcg_exp@10']:.1f}, Holm p "
            + " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY) + f", dominates {'yes' if dominates else 'no'}")


def retrieval_rows(bench, stages: dict, margins: dict, split: str) -> dict:
    """The retrieval comparison made symmetric: each learned first stage alone, fused with
    BM25 (RRF) and adaptively diversified (its dev margin)."""
    from inferqa.diversification import diversify
    from inferqa.retrieve.fusion import fuse

    runs = {name: load_run(r[split], bench) for name, r in stages.items()}
    rows = {}
    for name in ("dense", "clue"):
        if name in runs:
            rows[name] = runs[name]
            rows[f"{name} + BM25 (RRF)"] = fuse([runs[name], runs["bm25"]], "rrf", depth=K)
            rows[f"{name} + adaptive"] = diversify(runs[name], bench, 1, by="linked", margin=margins[name])
    rows["bm25"] = runs["bm25"]
    return rows


def report(args, benches: dict, scores: Scores, stages: dict, reg: dict) -> str:
    bench = benches["hard"]
    primary = reg["primary"]
    got = test_table(args, bench, scores, stages, reg)
    queries = len(bench.split_qids("test"))
    fs, n = primary["first_stage"], primary["calls"]
    distinct, plain = got["cells"][fs, primary["window"], n], got["cells"][fs, "plain", n]
    p = paired(plain["run"], distinct["run"], bench)
    reg_path = round_file(args, "preregistration.json")
    out = [f"# Rerank windows on the hard benchmark ({queries} test queries, {len(bench.questions):,} questions; "
           f"registered round {args.round}, first stages {args.depth:,} deep)", "",
           f"pre-registration: {reg_path} sha256 {hashlib.sha256(reg_path.read_bytes()).hexdigest()}", "",
           table_md(got["rows"], queries), "",
           "Primary (pre-registered): distinct vs plain at equal calls, difference [95 % CI] per metric:", ""]
    out += [f"- {label}: {p[m]['diff']:+.1f} [{p[m]['ci'][0]:+.1f}, {p[m]['ci'][1]:+.1f}], p {fmt_p(p[m]['p'])}"
            + (f", Holm {fmt_p(p[m]['holm'])}" if p[m]['holm'] is not None else "") for label, m in zip(LABELS, METRICS)]
    n_looks = looks(args.round)
    if n_looks > 1:
        out.append(f"- across the {n_looks} rounds (registered): better at Holm p × {n_looks} < 0.05 on "
                   f"{sum(1 for m in SUMMARY if p[m]['diff'] > 0 and n_looks * p[m]['holm'] < 0.05)} of 4")
    if "dense" in got["runs"]:
        out += ["", f"Against fine-tuned dense (the pre-registered pipeline, {fs} + {scores.label} "
                    f"{SHOWN[primary['window']]} {n}):"]
        for name, base in (("fine-tuned dense alone", got["runs"]["dense"]),
                           (f"fine-tuned dense + {scores.label} plain {n}",
                            got["cells"].get(("dense", "plain", n), {}).get("run"))):
            if base is None:
                continue
            q = paired(base, distinct["run"], bench)
            wins = sum(1 for m in SUMMARY if q[m]["holm"] < 0.05 and q[m]["diff"] > 0)
            across = sum(1 for m in SUMMARY if n_looks * q[m]["holm"] < 0.05 and q[m]["diff"] > 0)
            out.append(f"- vs {name}: " + ", ".join(f"{label} {q[m]['diff']:+.1f} (Holm {fmt_p(q[m]['holm'])})"
                       for label, m in zip(LABELS, METRICS) if m in SUMMARY) + f"; better at p < 0.05 on {wins} of 4"
                       + (f" ({across} of 4 at Holm p × {n_looks})" if n_looks > 1 else ""))
    if (fs, "plain", 100) in got["cells"] and (fs, primary["window"], 20) in got["cells"]:
        d20, p100 = got["cells"][fs, primary["window"], 20], got["cells"][fs, "plain", 100]
        out += ["", f"Cost: distinct 20 calls Hit@10 {d20['hit@10']:.1f} vs plain 100 calls {p100['hit@10']:.1f} "
                    f"({'reached' if d20['hit@10'] >= p100['hit@10'] else 'missed'})"]
    if "dense" in got["runs"] and args.round < 3:  # round 3's first stages are round 2's: its table stands
        rows = retrieval_rows(bench, stages, reg["adaptive_margins"], "test")
        base = rows["dense"]
        out += ["", "Retrieval alone, made symmetric (each row against fine-tuned dense; difference [95 % CI], "
                    "Holm over the four summary metrics):", "",
                f"| row | {' | '.join(LABELS)} | Δ vs dense: {' / '.join(LABELS[i] for i in (0, 1, 3, 4))} |",
                "|---|" + "---:|" * len(LABELS) + "---|"]
        for name, run in rows.items():
            sc = scored(run, bench)
            cell = "–"
            if name != "dense":
                q = paired(base, run, bench)
                cell = " / ".join(f"{q[m]['diff']:+.1f} [{q[m]['ci'][0]:+.1f}, {q[m]['ci'][1]:+.1f}] "
                                  f"p {fmt_p(q[m]['holm'])}" for m in SUMMARY)
            out.append(f"| {name} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {cell} |")
    fast = speed(args, benches["wikihint"], scores, primary["window"], **({} if args.round < 3 else {"calls": 10, "rounds": 1}))
    sq = fast["seconds_per_query"]
    out += ["", f"Speed (`inferqa rerank`, WikiHint's 100 queries, BM25's ranking of all 32,500 passages, "
                f"{fast['calls']} calls ({fast['calls_made']['plain']:,} plain, {fast['calls_made']['distinct']:,} "
                f"distinct), best of {len(fast['rounds']['plain'])} alternated rounds): plain "
                f"{sq['plain']:.3f} s/query, distinct {sq['distinct']:.3f} s/query "
                f"({100 * (sq['distinct'] / sq['plain'] - 1):+.1f} %)"]
    out += ["", last_line(primary, {"distinct": distinct, "plain": plain}, p, scores.label)]
    text = "\n".join(out) + "\n"
    write_text_atomic(round_file(args, "report.md"), text)
    return text


def speed(args, wikihint, scores: Scores, window: str = "question", calls: int = 20, rounds: int = 2) -> dict:
    """Seconds per query of `inferqa rerank` (the library's `rerank_run`, the reranker plugin of
    `scores`, no score cache) over BM25's ranking of all WikiHint passages (32,500), plain against
    the distinct `window` (of WINDOWS) at `calls` calls, alternated `rounds` times; the best round of each."""
    from inferqa.reranking.run import RerankCounts, rerank_run
    from inferqa.retrieve import get_retriever, question_queries

    # deep enough that every query's ranking holds `calls` distinct questions: equal calls
    r = get_retriever("bm25", show_progress=False).ensure_index(wikihint)
    run = r.search(question_queries(wikihint, list(wikihint.questions)), sum(map(len, wikihint.qrels.values())))
    plugin, options = (("cross-encoder", {"model": str(scores.model_dir), "max_length": 128}) if scores.judge is None
                       else scores.recipe)
    got: dict[str, list[float]] = {"plain": [], "distinct": []}
    made = {}
    for _ in range(rounds):
        for shown, (kind, representative) in (("plain", WINDOWS["plain"]), ("distinct", WINDOWS[window])):
            counts = RerankCounts()
            t0 = time.perf_counter()
            rerank_run(run, wikihint, plugin, options=options, depth=calls, window=kind,
                       representative=representative, counts=counts)
            got[shown].append((time.perf_counter() - t0) / len(run))
            made[shown] = counts.scored
    best = {w: min(v) for w, v in got.items()}
    log(f"speed on {wikihint.path.name}: plain {best['plain']:.3f} s/query, distinct {best['distinct']:.3f} s/query "
        f"({100 * (best['distinct'] / best['plain'] - 1):+.1f} %), {calls} calls")
    return {"calls": calls, "queries": len(run), "seconds_per_query": best, "rounds": got, "calls_made": made}


def deeper(args, benches: dict, scores: Scores, reg: dict, depth: int = 10_000) -> str:
    """Post hoc (added after the test table was seen): the primary's first stage retrieved
    `depth` deep, so a distinct window of N holds N questions (at 1,000 the learned clue's
    rankings hold 8.6 on average and its distinct windows made 7.8 to 8.6 calls), against the
    plain window at the same calls, with the registered weights; written to report-deeper.md."""
    from inferqa.retrieve import get_retriever, question_queries

    bench, primary = benches["hard"], reg["primary"]
    model = str(sorted((args.out / "models").glob("clue-*/training.json"))[0].parent)
    r = get_retriever(primary["first_stage"], show_progress=False,
                      **({"model": model} if primary["first_stage"] == "clue" else {})).attach(bench)
    run = r.search(question_queries(bench, bench.split_qids("test")), depth)
    lines = [f"Post hoc: {primary['first_stage']} retrieved {depth:,} deep (test queries), registered weights", "",
             f"| row | {' | '.join(LABELS)} | reranker calls | vs plain: Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * (len(LABELS) + 1) + "---|"]
    for calls in (10, 20, 50):
        w = {win: reg["weights"][f"{primary['first_stage']}|{win}|{min(calls, max(DEV_CALLS))}"]
             for win in ("plain", "question")}
        plain, _, plain_pairs = windowed(run, bench, scores, "plain", calls, w["plain"])
        distinct, _, pairs = windowed(run, bench, scores, "question", calls, w["question"])
        p = paired(plain, distinct, bench)
        for name, out, n, ps in ((f"plain {calls}", plain, plain_pairs, "–"),
                                 (f"distinct {calls}", distinct, pairs,
                                  " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY))):
            sc = scored(out, bench)
            lines.append(f"| {name} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {n / len(run):.1f} | {ps} |")
        log(f"deeper: {calls} calls done")
    text = "\n".join(lines) + "\n"
    write_text_atomic(args.out / "report-deeper.md", text)
    return text


def depth_cost(args, bench, clue: Path, rounds: int = 2) -> dict:
    """Seconds for the learned clue retriever's search of the test queries at 1,000 and 10,000
    passages (alternated, best of `rounds`), and how many questions a ranking then holds: the
    price of filling a distinct window by depth rather than ranking questions directly."""
    from inferqa.records import question_of
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("clue", show_progress=False, model=str(clue)).attach(bench)
    queries = question_queries(bench, bench.split_qids("test"))
    r.search(queries, 10)  # the encoder loaded and the index read once, outside the timing
    got: dict[int, list[float]] = {1000: [], 10_000: []}
    held = {}
    for _ in range(rounds):
        for depth in got:
            t0 = time.perf_counter()
            run = r.search(queries, depth)
            got[depth].append(time.perf_counter() - t0)
            held[depth] = sum(len({question_of(p) for p, _ in run[q]}) for q in run) / len(run)
    for depth, secs in got.items():
        log(f"clue {depth:,} deep: {min(secs):.2f} s for {len(queries)} queries ({1000 * min(secs) / len(queries):.1f} "
            f"ms/query), {held[depth]:.1f} questions per ranking")
    return {"seconds": {d: min(v) for d, v in got.items()}, "questions_per_ranking": held, "queries": len(queries)}


def representatives_first(args, bench, scores: Scores, stages: dict, reg: dict) -> str:
    """Post hoc (after the test table): the registered primary's plain and distinct windows, each
    then reordered with one passage per question ahead of the rest (`inferqa rerank ... --diversify 1
    --diversify-by question`): the order that trades nDCG for Hit@10, against the issue's grouped order."""
    from inferqa.diversification import diversify

    primary = reg["primary"]
    run = load_run(stages[primary["first_stage"]]["test"], bench)
    rows = []  # (label, run, the run it is compared with)
    for window, weight in (("plain", primary["plain_weight"]), (primary["window"], primary["weight"])):
        shown = SHOWN[window]
        out = windowed(run, bench, scores, window, primary["calls"], weight)[0]
        rows += [(shown, out, None), (f"{shown}, one per question first", diversify(out, bench, 1, by="question"), out)]
    name = f"{primary['first_stage']} + {scores.label}, {primary['calls']} calls"
    lines = [f"Post hoc: {name} (registered round {args.round}), then one passage per question first", "",
             f"| row | {' | '.join(LABELS)} | vs the row above it: Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * len(LABELS) + "---|"]
    for label, out, base in rows:
        ps = "–"
        if base is not None:
            p = paired(base, out, bench)
            ps = " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY)
        sc = scored(out, bench)
        lines.append(f"| {label} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {ps} |")
    text = "\n".join(lines) + "\n"
    write_text_atomic(round_file(args, "report-order.md"), text)
    return text
