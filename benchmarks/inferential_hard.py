"""The hard protocol of inferential retrieval: many distractors, a fine-tuned dense baseline.

One benchmark from two hint files (`inferqa.construct.build_benchmark` with per-source roles):
WikiHint test (100 questions, all queries) and TriviaHG validation split 0.7 / 0.1 / 0.2
(seed 13, as in `inferential_retrieval.py`): its 200 test questions are queries, its 100 dev
questions are the tuning queries, its 700 train questions only train (their own benchmark,
`triviahg-train`). `--corpus full` (the default) puts all 1,100 questions in the corpus
(357,500 passages; the train questions' passages are distractors, never queries);
`--corpus subset` keeps every query question plus the 100 dev questions (400 questions,
130,000 passages), the subset the first measurement used. The subset's questions come first
in the full corpus, so the full dense builds resume from the subset's finished embeddings.

Rows (all retrieve the 300 test questions from the corpus, top 1,000): BM25,
full-passage dense (bundled MiniLM, untrained), fine-tuned dense (`finetune_retriever`, on
the same 700 train questions, the same number of examples and steps as the clue encoder),
clue (untrained MiniLM), learned clue (`finetune_clue`), learned clue + adaptive (the
margin and the share of queries it diversifies tuned on the dev queries and written to
OUT/tuned-KEY.json before any test figure is computed), learned clue fused with BM25 (RRF), and
the learned clue with `compose=monotone` alone, + adaptive and + BM25 (its centre and scale:
the best dev MRR of `small.MONOTONE_GRID`; then its own adaptive margin; both added to
tuned.json before its first test figure), and, post hoc, the set-trained clue encoder
(`finetune_clue_sets` on fine-tuned dense's examples and steps) alone, + adaptive and +
BM25. p: paired randomisation test against fine-tuned dense, Holm-corrected over the rows
(`compare`), every row scored on its own queries. The
second table is WikiHint's 100 questions alone (32,500 passages): its dense runs search the
rows of the hard index's embeddings that are WikiHint's passages (same hints, same passage
texts), so no passage text is encoded twice. Then: what the corpus's other passages cost those
100 queries (the hard runs cut to them), and the evidence-monotonicity table (EMVR with a
bootstrap CI over questions, `inferqa.monotonicity`, on each source's test questions,
cached in OUT/emvr-KEY.json; -full for the full corpus, as tuned-KEY.json and the report).

    nice python benchmarks/inferential_hard.py --out /work/cache/inferential   # default runs/inferential-hard

Every stage is reused when its output exists, and printed so ("reused: NAME"); dense encoding
resumes chunk by chunk. Each cached artefact's name holds a key of the inputs that made it
(`cache_keys`): benchmarks their question cut (`-firstN`); models the digest of their training
questions, their options (seed, steps, ...) and base model (fine-tuned dense also the tokens it
encodes at); indexes their model's folder, under their benchmark; tuned-KEY.json and
emvr-KEY.json the hard benchmark, its dev and test questions and the models. Another cut, seed,
step count or option computes its own and never reads another's. The report is named by the
run (`-firstN`, `-stepsS`, `-tokensT` where given), so a quick check never overwrites the
protocol's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hint_data import REPO, WIKIHINT, TRIVIAHG  # noqa: E402
from cache_keys import key, model_dir, questions_digest  # noqa: E402
import inferential_retrieval as small  # noqa: E402  (the small protocol's helpers)

OUT = REPO / "runs" / "inferential-hard"
K = small.K


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--corpus", choices=("full", "subset"), default="full",
                    help="full (default): all 1,100 questions' 357,500 passages, TriviaHG's train questions as "
                         "distractors; subset: the 400 query and dev questions' 130,000. Each has its own benchmark, "
                         "tuned rules and outputs in OUT; the trained models are shared")
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--prepare-only", action="store_true", help="build, train and index, then stop")
    ap.add_argument("--index-only", action="store_true",
                    help="with --evaluate-only: build the BM25 and clue indexes (and the WikiHint dense ones from "
                         "the hard embeddings encoded so far), compute nothing")
    ap.add_argument("--evaluate-only", action="store_true",
                    help="train and index nothing: the tables from what is finished (another process may still be "
                         "encoding); a dense row whose index is unfinished is left out and named")
    ap.add_argument("--dense-max-length", type=int, default=256,
                    help="tokens per passage when the fine-tuned dense model encodes (the bundled MiniLM's own "
                         "limit, as for untrained dense); it trains at the clue encoder's 64, like every setting")
    ap.add_argument("--questions", type=int, help="the first N questions of each hint file (default: all): a quick "
                                                  "check of the pipeline, not the protocol")
    ap.add_argument("--max-steps", type=int, help="stop the clue encoder's training after N steps (default: one "
                                                  "epoch); fine-tuned dense takes as many")
    args = ap.parse_args()
    args.suffix = "" if args.corpus == "subset" else "-full"
    label = run_label(args.questions, args.max_steps) + ("" if args.dense_max_length == 256
                                                         else f"-tokens{args.dense_max_length}")
    args.report = args.out / f"inferential-hard{args.suffix}{label}"
    return args


def run_label(questions: int | None, max_steps: int | None) -> str:
    """A report's name suffix: the question cut and step cap where given (none for the protocol)."""
    return ("" if questions is None else f"-first{questions}") + ("" if max_steps is None else f"-steps{max_steps}")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


_REUSED: set[str] = set()
_MADE: set[Path] = set()  # index folders this process built: opened again, they are not reused


def reused_index(r, what: str) -> None:
    """`reused` for the index `r` is attached to, unless this process built it."""
    if r.index_dir not in _MADE:
        reused(f"index {r.bench.path.name}/{r.index_dir.name} ({what})")


def reused(what: str) -> None:
    """Say, once per process, that the cached artefact `what` is read rather than computed."""
    if what not in _REUSED:
        _REUSED.add(what)
        log(f"reused: {what}")


# -- the question cut ---------------------------------------------------------------------------
TRIVIA_SPLIT = (0.7, 0.1, 0.2)  # TriviaHG's train / dev / test (seed 13, as in inferential_retrieval.py)
NEEDED = ("train", "dev", "test")  # train trains, dev tunes, test is scored: none may be empty


def split_sizes(questions: int) -> dict[str, int]:
    """How many of TriviaHG's first `questions` questions each split gets: the builder's own cut."""
    import warnings
    from types import SimpleNamespace

    from inferqa.construct.splits import make_splits

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty split: `split_problem` says so
        cut = make_splits([SimpleNamespace(id=str(i)) for i in range(max(questions, 0))], TRIVIA_SPLIT, 13)
    return {name: len(cut.get(name, ())) for name in NEEDED}


def split_problem(questions: int | None) -> str | None:
    """None when TriviaHG's cut of the first `questions` questions fills every split the protocol
    needs (always, without `--questions`), else the one line saying which split is empty and the
    smallest `--questions` from there up that fills them all."""
    if questions is None:
        return None
    sizes = split_sizes(questions)
    empty = [name for name in NEEDED if not sizes[name]]
    if not empty:
        return None
    fits = questions + 1
    while not all(split_sizes(fits).values()):
        fits += 1
    return (f"--questions {questions} leaves TriviaHG's {' and '.join(empty)} split empty (its "
            f"{'/'.join(map(str, TRIVIA_SPLIT))} cut: " + ", ".join(f"{n} {c}" for n, c in sizes.items())
            + f"); the smallest --questions from {questions} up that fills {', '.join(NEEDED)} is {fits}")


def require_splits(questions: int | None) -> None:
    """Exit (status 2) with `split_problem`'s line, before anything is built, trained or encoded."""
    problem = split_problem(questions)
    if problem:
        print(problem, file=sys.stderr, flush=True)
        sys.exit(2)


def legacy_notice(out: Path, names: tuple[str, ...]) -> None:
    """Name the artefacts an older version of the script cached under `out` without a key: never read."""
    for name in names:
        if (out / name).exists():
            log(f"not reused: {out / name} (cached without the key of its inputs)")


# -- data -------------------------------------------------------------------------------------
def benchmarks(out: Path, questions: int | None = None, corpus: str = "subset") -> dict:
    """The benchmarks of the protocol; `questions`: of the first N questions of each hint file;
    `corpus`: the hard benchmark's, full or the subset. Each is cached in a folder named by
    its question cut (`-firstN`); refuses a cut that leaves a split empty (`require_splits`)."""
    require_splits(questions)

    def sized(name: str, n: int | None) -> str:  # the cut's folder name, said when reused
        name = small.sized(name, n)
        if (out / name / "meta.json").exists():
            reused(f"benchmark {name}")
        return name

    wikihint_questions, trivia_questions = small.hint_file(WIKIHINT, questions), small.hint_file(TRIVIAHG, questions)
    trivia = same_questions(small.built(trivia_questions, out / sized("triviahg", questions), split=TRIVIA_SPLIT),
                            trivia_questions)
    train = small.built([trivia.questions[q] for q in trivia.split_qids("train")],
                        out / sized("triviahg-train", questions), split=(1.0, 0, 0))
    roles = ("test", "dev") + (("train",) if corpus == "full" else ())
    hard = hard_benchmark(out / sized("hard-1100" if corpus == "full" else "hard-400", questions),
                          wikihint_questions, trivia, roles)
    wikihint = same_questions(small.built(wikihint_questions, out / sized("wikihint-100", questions)),
                              wikihint_questions)
    subset = hard_benchmark(out / sized("hard-400", questions), wikihint_questions, trivia) if corpus == "full" \
        else None
    return {"trivia": trivia, "train": train, "hard": hard, "wikihint": wikihint, "subset": subset}


def same_questions(bench, questions: list):
    """`bench`, unless its cache holds questions the hint file's cut does not (the file changed
    since it was built): then exit with one line naming one."""
    other = sorted(set(bench.questions) - {q.id for q in questions})
    if other:
        sys.exit(f"{bench.path} holds {len(other)} question(s) the hint file's cut does not (e.g. {other[0]}): "
                 "built from another file; move it away to rebuild")
    return bench


def hard_benchmark(path: Path, wikihint: list, trivia, roles=("test", "dev")):
    """WikiHint (all test) + TriviaHG's questions of `roles`, in that order, split by source
    role: the subset's questions come first in the full corpus, so its passages do too."""
    from dataclasses import replace

    from inferqa.construct import build_benchmark
    from inferqa.formats.benchmark import Benchmark

    if not (path / "meta.json").exists():
        tagged = [replace(q, metadata={**q.metadata, "split": "test"}) for q in wikihint]
        for role in roles:
            tagged += [replace(trivia.questions[q], metadata={**trivia.questions[q].metadata, "split": role})
                       for q in trivia.split_qids(role)]
        log(f"building {path.name}: {len(tagged)} questions")
        build_benchmark(tagged, path, top_k=5, seed=13, split="source")
    return Benchmark(path)


# -- models -----------------------------------------------------------------------------------
def clue_options(**over):
    from inferqa.experiments.finetune import FinetuneOptions

    base = dict(split="train", positives=5, negatives=5, negatives_from="clue", epochs=1, batch_size=32, lr=5e-5,
                max_length=64, seed=13)
    return FinetuneOptions(**{**base, **over})


def clue_dir(args, train) -> Path:
    """The clue encoder's folder under `args.out`: keyed by `train`'s questions and its options."""
    return model_dir(args.out, "clue", train, clue_options(max_steps=args.max_steps))


def follower_dirs(args, train, steps: int) -> tuple[Path, Path]:
    """Fine-tuned dense's and the set-trained clue encoder's folders: keyed by `train`'s
    questions and their options (the clue encoder's `steps`); dense's also by the tokens it
    encodes at (`encode_at` writes them into the folder)."""
    opts = clue_options(max_steps=steps)
    return (model_dir(args.out, "dense", train, opts, tokens=args.dense_max_length),
            model_dir(args.out, "clue-sets", train, opts))


def trained(args, train, sets: bool = True) -> tuple[dict, dict]:
    """(clue encoder's training.json, fine-tuned dense's), each trained in its keyed folder
    (`args.clue_dir`, `args.dense_dir`, set here) unless already: dense gets the clue encoder's
    questions, positives / negatives per question, negative source and optimiser steps; the
    set-trained clue encoder (`args.sets_dir`; trained only with `sets`) gets dense's options,
    so its examples, batches and steps too."""
    from inferqa.experiments.finetune import finetune_clue, finetune_clue_sets, finetune_retriever
    from inferqa.io import read_json

    args.clue_dir = clue_dir(args, train)
    if (args.clue_dir / "training.json").exists():
        reused(f"the clue encoder {args.clue_dir.name}")
    else:
        log("training the clue encoder")
        finetune_clue(train, args.clue_dir, model="minilm", options=clue_options(max_steps=args.max_steps))
    clue = read_json(args.clue_dir / "training.json")
    args.dense_dir, args.sets_dir = follower_dirs(args, train, clue["steps"])
    if (args.dense_dir / "training.json").exists():
        reused(f"fine-tuned dense {args.dense_dir.name}")
    else:
        log(f"fine-tuning dense: {clue['steps']} steps like the clue encoder")
        finetune_retriever(train, args.dense_dir, model="minilm", options=clue_options(max_steps=clue["steps"]))
    encode_at(args.dense_dir, args.dense_max_length)
    if sets and (args.sets_dir / "training.json").exists():
        reused(f"the set-trained clue encoder {args.sets_dir.name}")
    elif sets:
        log(f"training the clue encoder on hint sets: dense's examples and {clue['steps']} steps")
        finetune_clue_sets(train, args.sets_dir, model="minilm", options=clue_options(max_steps=clue["steps"]))
    return clue, read_json(args.dense_dir / "training.json")


def encode_at(model_dir: Path, tokens: int) -> None:
    """The saved model encodes up to `tokens` per text (training kept 64: it writes its
    training length into sentence_bert_config.json, which would cut passages at encoding)."""
    from inferqa.io import read_json, write_json

    config = model_dir / "sentence_bert_config.json"
    settings = read_json(config)
    if settings.get("max_seq_length") != tokens:
        write_json(config, {**settings, "max_seq_length": tokens})


def dense_index(bench, model: str):
    from inferqa.retrieve import get_retriever

    r = get_retriever("dense", model=model, chunk_size=512, show_progress=True)
    if r.attach(bench).is_indexed():
        reused_index(r, f"dense {Path(model).name}")
    else:
        log(f"encoding {bench.path.name} with dense {model}")
        _MADE.add(r.index(bench))
        log("encoded")
    return r


def seed_dense(bench, subset, model: str) -> None:
    """Start `bench`'s dense build from `subset`'s finished embeddings when `subset`'s corpus
    is the first rows of `bench`'s (same ids) and 8 of its rows, encoded again, agree: the
    build resumes after them."""
    import numpy as np

    from inferqa.formats.corpus import corpus_ids
    from inferqa.io import write_json
    from inferqa.retrieve import get_retriever

    r = get_retriever("dense", model=model, chunk_size=512, show_progress=False).attach(bench)
    got = small.dense_embeddings(get_retriever("dense", model=model, show_progress=False).attach(subset))
    d = r.index_dir
    if r.is_indexed() or got is None or (d / "progress.json").exists():
        return
    pids, emb, done = got
    ids = corpus_ids(bench)
    if done < len(pids) or len(ids) < len(pids) or not (ids[:len(pids)].astype("U") == pids).all():
        return
    spot = np.random.default_rng(0).choice(len(pids), size=min(8, len(pids)), replace=False)
    texts = [bench.passage_text(p) for p in ids[spot].astype("U").tolist()]
    gap = float(np.abs(r.encode(texts, r.options["passage_prefix"]) - emb[spot]).max())
    if gap > 1e-3:  # another text or model behind the same ids: encode everything instead
        log(f"{bench.path.name}: not seeded from {subset.path.name} (re-encoded rows differ by {gap:.2g})")
        return
    d.mkdir(parents=True, exist_ok=True)
    np.save(d / "pids.npy", ids)
    out = np.lib.format.open_memmap(d / "embeddings.partial.npy", mode="w+", dtype=np.float32,
                                    shape=(len(ids), emb.shape[1]))
    out[:len(pids)] = emb
    out.flush()
    del out
    write_json(d / "progress.json", {"n": len(ids), "dim": int(emb.shape[1]), "done": len(pids)})
    log(f"{bench.path.name}: dense {model} resumes after {subset.path.name}'s {len(pids):,} encoded passages")


def prepare(args) -> dict:
    import torch

    torch.set_num_threads(args.threads)
    benches = benchmarks(args.out, args.questions, args.corpus)
    if benches["subset"] is not None:
        seed_dense(benches["hard"], benches["subset"], "minilm")
    dense_index(benches["hard"], "minilm")
    clue, dense = trained(args, benches["train"])
    if benches["subset"] is not None:
        seed_dense(benches["hard"], benches["subset"], str(args.dense_dir))
    dense_index(benches["hard"], str(args.dense_dir))
    return {**benches, "clue_training": clue, "dense_training": dense}


# -- runs ---------------------------------------------------------------------------------------
METRICS = ("hit@1", "hit@10", "hit@100", "mrr", "ndcg_exp@10")
LABELS = ("Hit@1", "Hit@10", "Hit@100", "MRR", "nDCG@10")
SUMMARY = ("hit@1", "hit@10", "mrr", "ndcg_exp@10")  # the four of the `inferential:` line and the targets
BM25, DENSE, FT_DENSE, CLUE, LEARNED, ADAPTIVE, FUSED = (
    "BM25", "full-passage dense", "fine-tuned dense", "clue", "learned clue", "learned clue + adaptive",
    "learned clue + BM25 (RRF)")
MONOTONE, MONOTONE_ADAPTIVE, MONOTONE_FUSED = (
    "learned clue, monotone", "learned clue, monotone + adaptive", "learned clue, monotone + BM25 (RRF)")
SETS, SETS_ADAPTIVE, SETS_FUSED = (
    "set-trained clue", "set-trained clue + adaptive", "set-trained clue + BM25 (RRF)")
BASELINES = (BM25, DENSE, FT_DENSE)
# Added after the other rows' test figures were seen: shown and tested, never the best row.
POST_HOC = (SETS, SETS_ADAPTIVE, SETS_FUSED)


class Searcher:
    """One retriever's index on one benchmark, searched per split; facts from its retriever.json."""

    def __init__(self, bench, name: str, **options):
        from inferqa.io import read_json
        from inferqa.retrieve import get_retriever

        self.bench = bench
        self.r = get_retriever(name, show_progress=False, **options)
        if self.r.attach(bench).is_indexed():
            reused_index(self.r, f"{name} {Path(options['model']).name}" if "model" in options else name)
        else:
            log(f"indexing {name} {options} on {bench.path.name}")
            _MADE.add(self.r.index(bench))
        m = read_json(self.r.index_dir / "retriever.json")
        texts = None if name == "bm25" else m.get("texts_encoded", m.get("passages"))
        self.facts = {"texts": texts, "index_s": float(m["build_seconds"])}

    def search(self, qids: list[str]) -> tuple:
        from inferqa.retrieve import question_queries

        t0 = time.perf_counter()
        run = self.r.search(question_queries(self.bench, qids), K)
        return run, {**self.facts, "search_s": time.perf_counter() - t0}


def subset_dense(hard, bench, model: str, rate_from: Searcher) -> Searcher | None:
    """`bench`'s dense index cut from the hard index's embeddings (`small.cut_dense`), so no
    passage is encoded again. Index seconds: `rate_from`'s (a finished hard dense index), pro
    rata of passages, marked as such. None: the rows are not there yet."""
    from inferqa.retrieve import get_retriever

    r = get_retriever("dense", model=model, chunk_size=512, show_progress=False).attach(bench)
    cut_before = r.is_indexed()
    if not small.cut_dense(hard, bench, model):
        return None
    if not cut_before:
        _MADE.add(r.index_dir)
    s = Searcher(bench, "dense", model=model, chunk_size=512)
    s.facts = {"texts": s.facts["texts"], "derived": True,
               "index_s": rate_from.facts["index_s"] * s.facts["texts"] / rate_from.facts["texts"]}
    return s


def ready_dense(bench, model: str) -> Searcher | None:
    """The finished dense index of `bench` (never built here: another process may be encoding it)."""
    from inferqa.retrieve import get_retriever

    r = get_retriever("dense", model=model, chunk_size=512, show_progress=False)
    return Searcher(bench, "dense", model=model, chunk_size=512) if r.attach(bench).is_indexed() else None


def monotone_available() -> bool:
    from inferqa.retrieve.clue import COMPOSITIONS

    return "monotone" in COMPOSITIONS


def searchers(bench, args, hard=None, hard_found: dict | None = None, tuned: dict | None = None) -> dict:
    """Every retriever of the table on `bench`; its dense rows cut from `hard`'s dense indexes
    when given. A dense row whose index is not finished is left out (the caller says so)."""
    out = {BM25: Searcher(bench, "bm25")}
    for name, model in ((DENSE, "minilm"), (FT_DENSE, str(args.dense_dir))):
        found = subset_dense(hard, bench, model, hard_found[DENSE]) if hard else ready_dense(bench, model)
        if found is not None:
            out[name] = found
    out[CLUE] = Searcher(bench, "clue", model="minilm")
    out[LEARNED] = Searcher(bench, "clue", model=str(args.clue_dir))
    if monotone_available():
        out[MONOTONE] = monotone_searcher(bench, str(args.clue_dir), tuned)
    if (args.sets_dir / "training.json").exists():
        out[SETS] = Searcher(bench, "clue", model=str(args.sets_dir))
    return out


def scores(run, bench) -> dict:
    return small.scores(run, bench, METRICS)


# -- tuning on dev, before any test figure --------------------------------------------------------
def tune_on_dev(hard, found: dict, path: Path) -> dict:
    """The adaptive rule per learned scorer: `inferential_retrieval`'s maximin margin (the
    largest smallest gain over the stronger dense per metric, on the dev queries), written
    to `path` (OUT/tuned-KEY.json; tuned-full-KEY.json for the full corpus; `results_key`)."""
    from inferqa.tune import tune_margin

    from inferqa.io import read_json, write_json

    dev = hard.split_qids("dev")
    if path.exists():  # a scorer's rule is fixed once, before its first test figure: never re-tuned
        reused(path.name)
        tuned = read_json(path)
        ref = {m: max(d[m] for d in tuned["dense_dev"].values()) for m in SUMMARY}
    else:
        dense_dev = {name: scores(found[name].search(dev)[0], hard) for name in (DENSE, FT_DENSE) if name in found}
        ref = {m: max(d[m] for d in dense_dev.values()) for m in SUMMARY}
        tuned = {"dev_questions": len(dev), "reference": f"per metric the stronger of {' and '.join(dense_dev)} "
                 "on dev", "dense_dev": dense_dev}
    if MONOTONE in found and MONOTONE not in tuned:
        mono = small.tune_monotone(hard, str(found[MONOTONE].r.options["model"]), dev)
        tuned["monotone_options"], tuned["monotone_grid"] = mono["options"], mono["grid"]
        found[MONOTONE] = monotone_searcher(hard, found[MONOTONE].r.options["model"], tuned)
        log(f"monotone composition tuned on dev: {mono['options']}")
    for name in (LEARNED, MONOTONE, SETS):
        if name not in found or name in tuned:
            continue
        run = found[name].search(dev)[0]
        grid = tune_margin(run, hard, split="dev", shares=small.SHARES, per_group=1, by="linked", metric="mrr",
                           measures=list(SUMMARY))

        def gains(row):
            return [100 * row.scores[m] - ref[m] for m in SUMMARY]

        best = max(grid.rows, key=lambda r: (round(min(gains(r)), 6), round(sum(gains(r)), 6)))
        tuned[name] = {"margin": best.margin, "share": best.share, "min_gain": min(gains(best)),
                       "dev_scores": {m: 100 * v for m, v in best.scores.items()},
                       "undiversified_dev": scores(run, hard), "tuned_at": time.strftime("%Y-%m-%d %H:%M:%S")}
        log(f"tuned on dev ({name}): margin {small.fmt_margin(best.margin)}, diversifies "
            f"{100 * best.share:.0f} % of dev queries, smallest gain over the stronger dense {min(gains(best)):+.1f}")
    write_json(path, tuned)
    return tuned


def monotone_searcher(bench, model: str, tuned: dict | None) -> Searcher:
    """The learned clue scorer with `compose=monotone`, at the dev-tuned centre and scale."""
    return Searcher(bench, "clue", model=model, compose="monotone", **(tuned or {}).get("monotone_options", {}))


# -- tables -----------------------------------------------------------------------------------------
def runs_on(bench, found: dict, qids: list[str], tuned: dict) -> dict:
    """name -> (run, facts) of every row on `qids`; adaptive rows use the dev-tuned margins."""
    from inferqa.retrieve.fusion import fuse

    runs = {name: s.search(qids) for name, s in found.items()}
    for adaptive, source in ((ADAPTIVE, LEARNED), (MONOTONE_ADAPTIVE, MONOTONE), (SETS_ADAPTIVE, SETS)):
        if source in runs and source in tuned:
            run, facts = runs[source]
            t0 = time.perf_counter()
            div = small.adaptive(run, bench, tuned[source]["margin"])
            runs[adaptive] = (div, {**facts, "search_s": facts["search_s"] + time.perf_counter() - t0,
                                    "diversified": small.diversified(run, bench, tuned[source]["margin"])})
    for fused, source in ((FUSED, LEARNED), (MONOTONE_FUSED, MONOTONE), (SETS_FUSED, SETS)):
        if source in runs:
            (clue_run, cf), (bm25, bf) = runs[source], runs[BM25]
            t0 = time.perf_counter()
            run = fuse([clue_run, bm25], "rrf", depth=K)
            runs[fused] = (run, {"texts": cf["texts"], "index_s": cf["index_s"] + bf["index_s"],
                                 "search_s": cf["search_s"] + bf["search_s"] + time.perf_counter() - t0})
    order = [FT_DENSE if FT_DENSE in runs else DENSE, BM25, DENSE, FT_DENSE, CLUE, LEARNED, ADAPTIVE, FUSED,
             MONOTONE, MONOTONE_ADAPTIVE, MONOTONE_FUSED, SETS, SETS_ADAPTIVE, SETS_FUSED]
    return {name: runs[name] for name in dict.fromkeys(order) if name in runs}  # the first: compare's baseline


def table(bench, runs: dict) -> list[dict]:
    from inferqa.evaluation import compare

    cmp = compare({name: run for name, (run, _) in runs.items()}, bench, list(METRICS), questions="run")
    rows = []
    for row in cmp.rows:
        rows.append({"method": row["run"], **{m: 100 * row["metrics"][m]["mean"] for m in METRICS},
                     "p": {m: row["metrics"][m].get("p_corrected") for m in METRICS},
                     "p_uncorrected": {m: row["metrics"][m].get("p") for m in METRICS},
                     **runs[row["run"]][1]})
    return rows


def fmt_table(title: str, rows: list[dict], post_hoc: tuple = POST_HOC) -> str:
    lines = [f"**{title}**", "",
             "| method | " + " | ".join(LABELS) + " | texts encoded | index s | retrieval s | "
             f"p vs {rows[0]['method']} (" + " / ".join(LABELS) + ") |",
             "|---|" + "---:|" * (len(LABELS) + 3) + "---|"]
    for r in rows:
        name = r["method"] + (f" ({r['diversified']} q diversified)" if r.get("diversified") is not None else "") \
            + (" (post hoc)" if r["method"] in post_hoc else "")
        ps = "–" if r is rows[0] else " / ".join(small.fmt_p(r["p"][m]) for m in METRICS)
        texts = "– (no encoder)" if r["texts"] is None else f"{r['texts']:,}"
        index_s = f"{r['index_s']:,.1f}" + (" (pro rata, reused rows)" if r.get("derived") else "")
        lines.append(f"| {name} | " + " | ".join(f"{r[m]:.1f}" for m in METRICS)
                     + f" | {texts} | {index_s} | {r['search_s']:,.1f} | {ps} |")
    return "\n".join(lines)


def stronger_dense(rows: list[dict]) -> dict:
    dense = [r for r in rows if r["method"] in (DENSE, FT_DENSE)]
    return {m: max(r[m] for r in dense) for m in METRICS} | {"texts": dense[0]["texts"]}


def best_row(rows: list[dict]) -> dict:
    """Among the pre-registered clue rows (not the baselines): the one dominating the stronger
    dense with the largest mean gain, else the largest smallest gain (the four SUMMARY metrics)."""
    d = stronger_dense(rows)
    fair = [r for r in rows if r["method"] not in BASELINES + POST_HOC]
    gains = {r["method"]: [r[m] - d[m] for m in SUMMARY] for r in fair}
    dominating = [r for r in fair if min(gains[r["method"]]) >= -1e-9]
    if dominating:
        return max(dominating, key=lambda r: sum(gains[r["method"]]))
    return max(fair, key=lambda r: (min(gains[r["method"]]), sum(gains[r["method"]])))


def summary(rows: list[dict], head: str, best: dict | None = None, role: str = "best") -> str:
    """The `inferential:` line: `best` (default `best_row`) against the stronger dense per metric."""
    d, best = stronger_dense(rows), best or best_row(rows)
    parts = [f"{label} {best[m]:.1f} vs {d[m]:.1f}" for label, m in zip(LABELS, METRICS) if m in SUMMARY]
    dominates = all(best[m] >= d[m] - 1e-9 for m in SUMMARY)
    return (f"{head}: {role} {best['method']}, " + ", ".join(parts)
            + f", encoded {d['texts'] / best['texts']:.0f}× fewer, dominates {'yes' if dominates else 'no'}")


def significance(rows: list[dict], best: dict | None = None) -> str:
    best = best or best_row(rows)
    sig = [label for label, m in zip(LABELS, METRICS) if m in SUMMARY and best["p"][m] is not None
           and best["p"][m] < 0.05 and best[m] > rows[0][m]]
    return (f"{best['method']} vs {rows[0]['method']}, Holm-corrected p (" + " / ".join(LABELS) + "): "
            + " / ".join(small.fmt_p(best["p"][m]) for m in METRICS)
            + f"; better with p < 0.05 on {len(sig)} of the 4 summary metrics"
            + (f" ({', '.join(sig)})" if sig else ""))


def monotone_rule(tuned: dict) -> str:
    rule = tuned.get(MONOTONE)
    if rule is None:
        return "rows shown, no adaptive rule tuned"
    return (f"`compose=monotone` (noisy-OR; centre {tuned['monotone_options']['monotone_center']}, scale "
            f"{tuned['monotone_options']['monotone_scale']}: the best dev MRR of a 5 × 3 grid); its adaptive "
            f"margin tuned on the same dev queries at "
            f"{rule['tuned_at']}, before any monotone test figure (after the other rows' test figures were seen): "
            f"{small.fmt_margin(rule['margin'])} ({100 * rule['share']:.0f} % of dev queries)")


def note(clue: dict, dense: dict | None, tuned: dict) -> str:
    mono = ("monotone composition: " + (monotone_rule(tuned) if monotone_available() else
            "not available on this branch (no `compose=monotone` in inferqa.retrieve.clue); rows omitted"))
    ft = ("fine-tuned dense not trained yet" if dense is None else
          f"fine-tuned dense {dense['examples']} examples, {dense['steps']} steps, {dense['seconds']:.0f} s "
          f"(both {dense['options']['max_length']} tokens per text in training, lr {dense['options']['lr']}, batch "
          f"{dense['options']['batch_size']}, negatives from {dense['options']['negatives_from']}; dense encodes "
          "passages up to MiniLM's 256 tokens, trained or not)")
    return (f"Training (TriviaHG train, {clue['questions']} questions): clue encoder {clue['examples']} examples, "
            f"{clue['steps']} steps, {clue['seconds']:.0f} s; {ft}. Adaptive margin "
            f"tuned on the {tuned['dev_questions']} dev queries against the hard corpus: "
            f"{small.fmt_margin(tuned[LEARNED]['margin'])} ({100 * tuned[LEARNED]['share']:.0f} % of dev queries). "
            f"{mono}. texts encoded / index s: of the index as recorded when built on this shared 2-core machine "
            "(query encoding not counted); retrieval s: the table's queries, top 1,000, query encoding included. "
            "nDCG@10 = ndcg_exp@10. p: paired randomisation test vs the table's first row, Holm-corrected over "
            "the rows, "
            "per metric.")


def corpus_of(bench):
    from inferqa.formats.corpus import corpus_ids

    return corpus_ids(bench)


def distractor_cost(hard_runs: dict, small_rows: list[dict], hard, qids: list[str]) -> str:
    """The same 100 WikiHint queries against their own 32,500 passages (the small table) and
    against the hard corpus's (the hard runs cut to them): what the distractors cost."""
    few, many = 325 * len(qids), len(corpus_of(hard))
    lines = [f"**What more distractors cost: the {len(qids)} WikiHint queries, {few:,} → {many:,} passages**", "",
             "| method | " + " | ".join(f"{label} {few / 1000:g}k → {many / 1000:g}k"
                                     for label, m in zip(LABELS, METRICS) if m in SUMMARY)
             + " |", "|---|" + "---:|" * len(SUMMARY)]
    for row in small_rows:
        if row["method"] not in hard_runs:
            continue
        big = scores(hard_runs[row["method"]][0].only(qids), hard)
        lines.append(f"| {row['method']} | " + " | ".join(
            f"{row[m]:.1f} → {big[m]:.1f} ({big[m] - row[m]:+.1f})" for m in SUMMARY) + " |")
    return "\n".join(lines)


# -- evidence monotonicity ----------------------------------------------------------------------------
EMVR_ROWS = (BM25, DENSE, FT_DENSE, CLUE, LEARNED, MONOTONE, SETS)


def source_splits(hard, wikihint):
    """The hard benchmark with its test queries split by source too: `wikihint-test` and
    `triviahg-test` (in memory; the benchmark's splits.json is left as it is)."""
    from inferqa.formats.benchmark import Benchmark

    view = Benchmark(hard.path)
    test, ours = hard.split_qids("test"), set(wikihint.questions)
    view.splits = {**hard.splits, "wikihint-test": [q for q in test if q in ours],
                   "triviahg-test": [q for q in test if q not in ours]}
    return view


def emvr_rows(hard, wikihint, found: dict, cache: Path) -> dict:
    """split -> retriever row -> `inferqa.monotonicity`'s report (as a dict), cached in
    `cache` (OUT/emvr-KEY.json; `results_key`): every retriever's index is the hard table's one
    (BM25's statistics are the hard corpus's), scored on each source's test questions."""
    from inferqa import monotonicity
    from inferqa.io import read_json, write_json

    if cache.exists():
        reused(cache.name)
    got = read_json(cache) if cache.exists() else {}
    view = source_splits(hard, wikihint)
    for split in ("wikihint-test", "triviahg-test"):
        for name in EMVR_ROWS:
            if name in found and name not in got.setdefault(split, {}):
                t0 = time.perf_counter()
                report = monotonicity(view, found[name].r, split=split, resamples=1000)  # as measured
                got[split][name] = {**report.to_dict(), "seconds": time.perf_counter() - t0}
                log(f"EMVR {split} {name}: {100 * report.emvr:.1f} %")
                write_json(cache, got)
    return got


def fmt_emvr(got: dict) -> str:
    from inferqa.tabular import MISSING

    def cell(r: dict | None) -> str:
        if r is None:
            return MISSING
        low, high = r["ci"]
        return f"{100 * r['emvr']:.1f} [{100 * low:.1f}, {100 * high:.1f}]"

    splits = list(got)
    names = [n for n in EMVR_ROWS if any(n in got[s] for s in splits)]
    counts = ", ".join(f"{s}: {next(iter(got[s].values()))['additions']:,} additions" for s in splits if got[s])
    lines = ["**Evidence monotonicity: EMVR % [95 % CI, bootstrap over questions] (lower is better)**", "",
             "| retriever | " + " | ".join(splits) + " |", "|---|" + "---:|" * len(splits)]
    lines += [f"| {n} | " + " | ".join(cell(got[s].get(n)) for s in splits) + " |" for n in names]
    return "\n".join(lines + ["", f"{counts}; a set's score is the mean over its orderings, ties are not "
                                   "violations (`inferqa.monotonicity`, 1,000 resamples, seed 0). For scale: the "
                                   "published study's best retriever on QUIT test, BGE, 30.2 %."])


def post_hoc_lines(rows: list[dict], tuned: dict) -> list[str]:
    """The post-hoc rows against fine-tuned dense, each with its p-values: reported, not picked."""
    rule = tuned.get(SETS)
    head = [] if rule is None else [
        f"Post hoc: the set-trained clue encoder (`finetune clue-sets`, fine-tuned dense's examples and steps) "
        f"was added after the rows above had been scored on test; its adaptive margin was tuned on dev at "
        f"{rule['tuned_at']}: {small.fmt_margin(rule['margin'])} ({100 * rule['share']:.0f} % of dev queries)."]
    return head + [significance(rows, r) for r in rows if r["method"] in POST_HOC]


def finished(args) -> dict:
    """`prepare`'s result without training or encoding anything: the clue encoder must exist."""
    from inferqa.io import read_json

    benches = benchmarks(args.out, args.questions, args.corpus)
    args.clue_dir = clue_dir(args, benches["train"])
    if not (args.clue_dir / "training.json").exists():
        sys.exit(f"{args.clue_dir} is not trained yet")
    reused(f"the clue encoder {args.clue_dir.name}")
    clue = read_json(args.clue_dir / "training.json")
    args.dense_dir, args.sets_dir = follower_dirs(args, benches["train"], clue["steps"])
    dense = args.dense_dir / "training.json"
    return {**benches, "clue_training": clue, "dense_training": read_json(dense) if dense.exists() else None}


def results_key(hard, models, **more) -> str:
    """The key of a cache of what `models` (their folders) give on `hard`'s dev and test
    questions (tuned rules, EMVR, runs): all of them, the tuning grids and `more`."""
    return key(bench=hard.path.name, dev=questions_digest(hard, "dev"), test=questions_digest(hard, "test"),
               models=[Path(m).name for m in models], shares=small.SHARES, monotone_grid=small.MONOTONE_GRID,
               **more)


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(REPO / "src"))
    require_splits(args.questions)  # before anything is built, trained or encoded
    args.out.mkdir(parents=True, exist_ok=True)
    legacy_notice(args.out, ("models/clue-triviahg", "models/dense-triviahg", "models/clue-sets-triviahg",
                             f"tuned{args.suffix}.json", f"emvr{args.suffix}.json"))
    prep = finished(args) if args.evaluate_only else prepare(args)
    k = results_key(prep["hard"], (args.clue_dir, args.dense_dir, args.sets_dir))
    args.tuned, args.emvr = (args.out / f"{name}{args.suffix}-{k}.json" for name in ("tuned", "emvr"))
    if args.prepare_only:
        return
    hard, wikihint = prep["hard"], prep["wikihint"]
    found = searchers(hard, args)
    if DENSE not in found:
        sys.exit("the untrained dense index of the hard corpus is not finished")
    if args.index_only:
        searchers(wikihint, args, hard, found)
        log("indexes built")
        return
    tuned = tune_on_dev(hard, found, args.tuned)  # written before any test query is searched
    if MONOTONE in found:
        found[MONOTONE] = monotone_searcher(hard, str(args.clue_dir), tuned)
    log("computing the test tables")
    hard_runs = runs_on(hard, found, hard.split_qids("test"), tuned)
    hard_rows = table(hard, hard_runs)
    small_found = searchers(wikihint, args, hard, found, tuned)
    small_rows = table(wikihint, runs_on(wikihint, small_found, list(wikihint.questions), tuned))
    emvr = emvr_rows(hard, wikihint, found, args.emvr)
    missing = [f"{name} on {where}: its index is not finished (rerun to add it)"
               for where, got in (("the hard corpus", found), ("WikiHint", small_found))
               for name in (DENSE, FT_DENSE) if name not in got]
    text = "\n\n".join([
        fmt_table(f"Hard protocol: {len(hard.split_qids('test'))} test questions "
                  f"({len(wikihint.questions)} WikiHint + {len(hard.split_qids('test')) - len(wikihint.questions)} "
                  "TriviaHG) "
                  f"against {len(hard.questions)} questions' {len(hard.questions) * 325:,} passages, top {K}",
                  hard_rows),
        fmt_table(f"Small corpus: WikiHint test, {len(wikihint.questions)} questions × 325 passages, top {K}",
                  small_rows),
        note(prep["clue_training"], prep["dense_training"], tuned) + "".join(f" Left out: {m}." for m in missing),
        significance(small_rows), summary(small_rows, "small WikiHint"),
        distractor_cost(hard_runs, small_rows, hard, list(wikihint.questions)),
        fmt_emvr(emvr),
        *post_hoc_lines(hard_rows, tuned),
        significance(hard_rows), summary(hard_rows, "inferential")])
    print(text)
    args.report.with_suffix(".md").write_text(text + "\n")
    args.report.with_suffix(".json").write_text(json.dumps(
        {"hard": hard_rows, "wikihint": small_rows, "emvr": emvr, "tuned": tuned, "clue_training": prep["clue_training"],
         "dense_training": prep["dense_training"]}, indent=2))


if __name__ == "__main__":
    main()
