"""Clue-level retrieval against full-passage retrieval on real hint data, one table.

Data (../shared/data, never copied into the repo), each built as a QUIT-style benchmark
(top 5 hints, drop-hint leakage filter, every ordering of every subset = 325 passages per
question) and queried with ALL its questions (split `all`), top 1,000:
- WikiHint test: all 100 questions (32,500 passages);
- TriviaHG validation: a seeded sample of --triviahg-questions (default 100) questions,
  since full-passage MiniLM encodes ~60 passages/s on this machine (10+ minutes per 32,500).

Rows: BM25; full-passage dense MiniLM; `clue` with each composition; diversified runs
(at most 1 passage per hint-group in the head, groups by hint set and by linked hint
family); RRF / weighted fusion; `colbert` when that
retriever exists. Columns: Hit@1/5/10/100, MRR, nDCG@10, texts encoded, encoding time,
index size. Indexes live in each benchmark's indexes/ folder, so a rerun reuses every
embedding (the encoding time shown is then the one recorded when the index was built) and
only searches again.

    nice python benchmarks/clue_retrieval.py                 # → runs/clue-retrieval/
    nice python benchmarks/clue_retrieval.py --prepare-only  # just build benchmarks + indexes
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from hint_data import REPO, WIKIHINT, TRIVIAHG  # noqa: E402  (benchmarks/ is the script's folder)
OUT = REPO / "runs" / "clue-retrieval"
K = 1000
METRICS = ("hit@1", "hit@5", "hit@10", "hit@100", "mrr", "ndcg@10")


def build(name: str, source: Path, out: Path, sample: int | None, seed: int = 13):
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import load_questions

    if (out / "meta.json").exists():
        return Benchmark(out)
    if not source.exists():
        sys.exit(f"{source} is absent (set INFERQA_SHARED to the folder holding data/)")
    questions = load_questions(source)
    if sample is not None and sample < len(questions):
        keep = sorted(random.Random(seed).sample(range(len(questions)), sample))
        questions = [questions[i] for i in keep]
    print(f"building {name}: {len(questions)} questions → {out}", flush=True)
    build_benchmark(questions, out, top_k=5, seed=seed)
    return Benchmark(out)


def benchmarks(args) -> dict:
    out = {}
    for key, label, source, n in (("wikihint", "WikiHint test", WIKIHINT, args.wikihint_questions),
                                  ("triviahg", "TriviaHG val", TRIVIAHG, args.triviahg_questions)):
        if args.only in (None, key):
            out[f"{label} ({n} q)"] = (key, build(key, source, args.out / f"{key}-{n}", n))
    return out


def indexed(bench, kind: str, index_dir: Path | None = None, **options):
    from inferqa.retrieve import get_retriever

    r = get_retriever(kind, **options)
    r.attach(bench, index_dir)
    if not r.is_indexed():
        print(f"  indexing {kind} {options} on {bench.path.name}", flush=True)
        r.index(bench, index_dir)
    return r


def index_facts(r) -> dict:
    """Texts encoded, encoding seconds and size of a built index (from its manifest)."""
    from inferqa.io import read_json

    m = read_json(r.index_dir / "retriever.json")
    size = sum(f.stat().st_size for f in r.index_dir.rglob("*") if f.is_file())
    if r.name == "bm25":
        return {"texts": 0, "enc_s": 0.0, "mb": size / 2**20, "dirs": [str(r.index_dir)]}
    texts = m.get("texts_encoded", m.get("texts", m.get("passages")))  # clue | colbert | dense
    secs = m.get("encode_seconds", m.get("build_seconds"))
    return {"texts": int(texts), "enc_s": float(secs), "mb": size / 2**20, "dirs": [str(r.index_dir)]}


def colbert_retriever(bench, model: str | None, trained_on_this_data: bool):
    """The `colbert` retriever (clue mode) when its model is there and was not trained on these questions."""
    if trained_on_this_data:
        return None, ("colbert row skipped on TriviaHG: benchmarks/finetune_triviahg.py --kind colbert trains on 70 % of TriviaHG "
                      "validation, which this sample overlaps; its own table is held out")
    try:
        from inferqa.retrieve import get_retriever

        r = get_retriever("colbert", mode="clue", **({"model": model} if model else {}))
    except Exception as exc:  # noqa: BLE001 - any reason means: no row, say why
        return None, f"colbert row skipped: {exc}"
    from inferqa.errors import InputError
    from inferqa.retrieve.colbert_model import resolve_colbert_ref

    try:
        model_dir = resolve_colbert_ref(r.options["model"])
    except InputError as exc:
        return None, f"colbert row skipped: {exc}"
    if not Path(model_dir).exists():
        return None, (f"colbert row skipped: no model at {model_dir} "
                      "(benchmarks/finetune_triviahg.py --kind colbert writes one)")
    return indexed(bench, "colbert", mode="clue", model=str(model_dir)), None


def evaluate_rows(bench, colbert_model: str | None, notes: list[str], key: str) -> list[dict]:
    from inferqa.evaluation import evaluate
    from inferqa.diversification import diversify
    from inferqa.retrieve import question_queries
    from inferqa.retrieve.fusion import fuse

    queries = question_queries(bench, bench.split_qids("all"))
    runs, facts = {}, {}

    def add(name, retriever, **search_options):
        for key, value in search_options.items():
            setattr(retriever, key, value)
        retriever.attach(retriever.bench, retriever.index_dir)  # compositions are chosen at load time
        t0 = time.perf_counter()
        runs[name] = retriever.search(queries, K)
        facts[name] = {**index_facts(retriever), "search_s": time.perf_counter() - t0}
        print(f"  {name}: searched in {facts[name]['search_s']:.1f} s", flush=True)

    add("bm25", indexed(bench, "bm25", show_progress=False))
    add("dense MiniLM (full passage)", indexed(bench, "dense", model="minilm", chunk_size=512))
    clue = indexed(bench, "clue", model="minilm")
    for compose in ("mean-embedding", "mean-score", "max"):
        add(f"clue {compose}", clue, compose=compose)
    for t in (0.02, 0.05, 0.1):
        add(f"clue lse τ={t}", clue, compose="lse", temperature=t)
    col, why = colbert_retriever(bench, colbert_model, trained_on_this_data=key == "triviahg")
    if col is not None:
        add("colbert trained (clue mode)", col)
    elif why not in notes:
        notes.append(why)
    for by in ("set", "linked"):
        for base in ("bm25", "dense MiniLM (full passage)", "clue mean-embedding", "clue mean-score",
                     "colbert trained (clue mode)"):
            if base not in runs:
                continue
            runs[f"{base} + diversify 1 by {by}"] = diversify(runs[base], bench, 1, by=by)
            facts[f"{base} + diversify 1 by {by}"] = facts[base]
    pairs = [("bm25", "dense MiniLM (full passage)"), ("bm25", "clue mean-score"),
             ("clue mean-embedding", "clue mean-score")]
    for a, b in pairs:
        shared = facts[a]["dirs"] == facts[b]["dirs"]  # two compositions of one clue index: count it once
        both = {key: facts[a][key] + (0 if shared else facts[b][key]) for key in ("texts", "enc_s", "mb")}
        runs[f"RRF({a}, {b})"] = fuse([runs[a], runs[b]], "rrf", depth=K)
        runs[f"weighted({a}, {b})"] = fuse([runs[a], runs[b]], "weighted", depth=K)
        facts[f"RRF({a}, {b})"] = facts[f"weighted({a}, {b})"] = both
    rows = []
    for name, run in runs.items():
        m = evaluate(run, bench.qrels, list(METRICS))
        rows.append({"retriever": name, **{k: 100 * float(v) for k, v in m.items()}, **facts[name]})
    return rows


def quit_size(path: Path, out: Path) -> dict:
    """Clue index and search at QUIT size (synthetic benchmark): texts encoded vs passages."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.retrieve import question_queries

    bench = Benchmark(path)
    r = indexed(bench, "clue", index_dir=out / "quit-size-clue-index", model="minilm")
    facts = index_facts(r)
    from inferqa.io import read_json

    m = read_json(r.index_dir / "retriever.json")
    queries = question_queries(bench, bench.split_qids("test"))
    t0 = time.perf_counter()
    run = r.search(queries, K)
    search_s = time.perf_counter() - t0
    return {"benchmark": str(path), "passages": m["passages"], "texts_encoded": m["texts_encoded"],
            "groups": m["groups"], "ratio": m["passages"] / m["texts_encoded"], "encode_s": facts["enc_s"],
            "build_s": m["build_seconds"], "index_mb": facts["mb"], "queries": len(run), "k": K,
            "search_s": search_s}


def fmt_table(label: str, rows: list[dict]) -> str:
    head = ("| retriever | Hit@1 | Hit@5 | Hit@10 | Hit@100 | MRR | nDCG@10 | texts encoded | encoding s | index MB |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [f"**{label}**", "", head]
    for r in rows:
        lines.append(f"| {r['retriever']} | " + " | ".join(f"{r[m]:.1f}" for m in METRICS)
                     + f" | {r['texts']:,} | {r['enc_s']:.0f} | {r['mb']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--wikihint-questions", type=int, default=100, help="seeded sample of WikiHint test (100: all)")
    p.add_argument("--triviahg-questions", type=int, default=100, help="seeded sample of TriviaHG validation")
    p.add_argument("--only", choices=("wikihint", "triviahg"), help="one data set only")
    p.add_argument("--prepare-only", action="store_true", help="build benchmarks and the dense/BM25 indexes only")
    p.add_argument("--colbert-model", help="colbert model folder (default: the colbert retriever's own)")
    p.add_argument("--quit-size", type=Path, help="a QUIT-size benchmark (benchmarks/make_synthetic.py): "
                   "clue index + test-split search there")
    args = p.parse_args()
    if args.quit_size is not None:
        res = quit_size(args.quit_size, args.out)
        with open(args.out / "quit-size.json", "w") as fh:
            json.dump(res, fh, indent=2)
        print(json.dumps(res, indent=2))
        return
    benches = benchmarks(args)
    for _, bench in benches.values():
        indexed(bench, "bm25", show_progress=False)
        indexed(bench, "dense", model="minilm", chunk_size=512)
    if args.prepare_only:
        return
    notes: list[str] = []
    tables, results = [], {}
    for label, (key, bench) in benches.items():
        print(f"{label}: {bench.path}", flush=True)
        rows = evaluate_rows(bench, args.colbert_model, notes, key)
        results[label] = rows
        tables.append(fmt_table(f"{label}, {len(bench.questions)} questions × 325 passages, all questions as "
                                f"queries, top {K}", rows))
    text = "\n\n".join(tables + [
        "Texts encoded / encoding s / index MB: of the index (fusion: both; diversify: its source's); "
        "encoding time as recorded when the index was built on this shared 2-core machine (reruns reuse "
        "every cached index). BM25 encodes nothing. Query encoding is not counted.", *notes])
    print(text)
    with open(args.out / "clue-retrieval.md", "w") as fh:
        fh.write(text + "\n")
    with open(args.out / "clue-retrieval.json", "w") as fh:
        json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
