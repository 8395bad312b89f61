"""Fine-tuning on a benchmark split (docs/finetune.md): a bi-encoder retriever, a ColBERT (saved in PyLate's
layout), the clue encoder (on hints or on hint sets) and a cross-encoder reranker. Plain torch loops over
sentence-transformers' own losses, seeded, with a progress bar; each writes `training_log.jsonl` (one line
per step) and `training.json` (options, counts, timings) beside the model, atomically, in a folder that
loads with `--model PATH` wherever a model is taken.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass, field, make_dataclass, replace
from pathlib import Path
from typing import Annotated, Callable, Iterator, Sequence

from ..formats import open_run
from ..formats.benchmark import Benchmark
from ..formats.oracles import check_min_label
from ..defaults import DEFAULT_ENCODER
from ..errors import InputError
from ..hints import window_groups
from ..io import atomic_dir, check_output, refuse_existing_folder, write_json
from ..records import parse_passage_id, question_of
from ..models import TRAINING_INFO, check_device, load_sentence_transformer, quiet_loading
from ..registry import plugin
from ..parameters import FINETUNER_OPTIONS as OPTIONS, OVERWRITE
from ..progress import counter
from ..stage import Opt, stage

LOG_FILE = "training_log.jsonl"
INFO_FILE = TRAINING_INFO

# One field per option every fine-tuner declares (`@plugin("fine-tuner", NAME, *OPTIONS)`), with its default.
FinetuneOptions = make_dataclass(
    "FinetuneOptions",
    [(o.name, o.types[0] | None if o.allows_none else o.types[0], field(default=o.default)) for o in OPTIONS],
    frozen=True, namespace={"__module__": __name__,
                            "__doc__": "Every fine-tuner's options (OPTIONS) in one value, for Python callers."})


def _options(options: "FinetuneOptions | None", settings: dict) -> "FinetuneOptions":
    """A trainer's options: `options` from a Python caller, or the settings the registry bound and checked; not both."""
    if options is None:
        return FinetuneOptions(**settings)
    if settings:
        raise TypeError(f"give options= or the options one by one, not both ({', '.join(settings)})")
    return options


@dataclass(frozen=True)
class Example:
    qid: str
    query: str
    positive: str
    negative: str | None = None


def _check(opts: FinetuneOptions) -> None:
    for opt in OPTIONS:
        opt.check(getattr(opts, opt.name), "finetune")


def _questions(bench: Benchmark, opts: FinetuneOptions, least: int = 1) -> list[str]:
    qids = bench.split_qids(opts.split)
    if opts.max_questions:
        qids = qids[:opts.max_questions]
    if not qids:
        raise InputError(f"split {opts.split!r} has no questions", file=bench.path, field="split")
    if len(qids) < least:
        raise InputError(f"split {opts.split!r} has {len(qids)} question(s) to train on; in-batch negatives are "
                         f"other questions' texts, so at least {least} are needed", file=bench.path, field="split")
    return qids


def _negative_pool(bench: Benchmark, qids: list[str], opts: FinetuneOptions) -> dict[str, list[str]]:
    """Per question, passages of *other* questions, best-ranked first (or shuffled)."""
    if opts.negatives == 0:
        return {q: [] for q in qids}
    if opts.negatives_from == "random":
        rng = random.Random(opts.seed)
        pool = {}
        for qid in qids:
            others = [o for o in bench.questions if o != qid] or list(bench.questions)
            passages = (list(bench.qrels.get(rng.choice(others), {})) for _ in range(opts.negatives))
            pool[qid] = [rng.choice(rel) for rel in passages if rel]
        return pool
    # The question's own passages (up to 325) come first; search deep enough to get past them.
    run = _source_run(bench, qids, opts, 4 * opts.negatives)
    return {qid: [pid for pid, _ in run.get(qid, []) if pid not in bench.qrels.get(qid, {})
                  and not pid.startswith(f"{qid}_")] for qid in qids}


def _source_run(bench: Benchmark, qids: list[str], opts: FinetuneOptions, beyond_own: int):
    """`negatives_from`'s ranking of `qids`: a TREC run file, or a retriever's top (every own
    passage of a question, plus `beyond_own`)."""
    source = opts.negatives_from
    if Path(source).is_file():
        return open_run(source, bench, opts.split)  # ids checked: an unknown passage is one line, not a KeyError
    if source in ("bm25", "dense", "clue"):
        from ..retrieve import get_retriever, question_queries
        retriever = get_retriever(source).ensure_index(bench)
        per_q = max(len(bench.qrels.get(q, {})) for q in qids)
        return retriever.search(question_queries(bench, qids), per_q + beyond_own)
    raise InputError(f"negatives_from must be bm25, dense, clue, random or a TREC run file, got {source!r}",
                     field="negatives_from")


def _positives(bench: Benchmark, qid: str, opts: FinetuneOptions, rng: random.Random) -> list[str]:
    labels = bench.qrels.get(qid, {})
    pids = [p for p, lab in labels.items() if lab >= opts.min_label]
    rng.shuffle(pids)
    pids.sort(key=lambda p: -labels[p])  # stable: label 2 before label 1, random within a label
    return pids[:opts.positives]


def example_passages(bench: Benchmark, opts: FinetuneOptions, least: int = 1) -> list[Example]:
    """n positives per question, each paired with one hard negative when there are any, as
    passage ids; `least`: the fewest questions the trainer can learn from."""
    _check(opts)
    check_min_label(opts.min_label, bench.qrels)
    qids = _questions(bench, opts, least)
    rng = random.Random(opts.seed)
    negatives = _negative_pool(bench, qids, opts)
    examples = []
    for qid in qids:
        query, negs = bench.questions[qid].text, negatives[qid][:opts.negatives]
        examples += [Example(qid, query, pid, negs[i % len(negs)] if negs else None)
                     for i, pid in enumerate(_positives(bench, qid, opts, rng))]
    if not examples:
        raise InputError(f"no passage with label >= {opts.min_label} in split {opts.split!r}; nothing to train on",
                         file=bench.path, field="min_label")
    return examples


def build_examples(bench: Benchmark, opts: FinetuneOptions, least: int = 1) -> list[Example]:
    """`example_passages` with the passages' texts."""
    return [replace(e, positive=bench.passage_text(e.positive),
                    negative=bench.passage_text(e.negative) if e.negative else None)
            for e in example_passages(bench, opts, least)]


@dataclass(frozen=True)
class HintSetExample:
    qid: str
    query: str
    positive: tuple[str, ...]
    negative: tuple[str, ...] | None = None


def build_hint_set_examples(bench: Benchmark, opts: FinetuneOptions, least: int = 2) -> list[HintSetExample]:
    """`example_passages` (the retriever fine-tuner's examples) with each passage as its hints."""
    return [HintSetExample(e.qid, e.query, tuple(bench.hints_of(e.positive)),
                           tuple(bench.hints_of(e.negative)) if e.negative else None)
            for e in example_passages(bench, opts, least)]


def question_hints(bench: Benchmark, qid: str) -> list[str]:
    """The hint texts of a question that its passages hold (a leak-dropped hint is kept in the
    record but held by no passage), in the record's order."""
    q = bench.questions[qid]
    dropped = set(q.metadata.get("dropped_hints") or ())
    return [h.text for i, h in enumerate(q.hints) if i not in dropped]


def build_clue_examples(bench: Benchmark, opts: FinetuneOptions, least: int = 2) -> list[Example]:
    """(question, one of its own hints) for up to `positives` hints per question, each with a hard negative: a
    hint of other questions' passages `negatives_from` ranks first (up to `negatives` distinct, none its own)."""
    _check(opts)
    qids = _questions(bench, opts, least)
    pool = _negative_pool(bench, qids, opts)
    examples = []
    for qid in qids:
        own = question_hints(bench, qid)
        mine = set(own)
        ranked = (h for pid in pool[qid] for h in bench.hints_of(pid) if h not in mine)
        negs = list(dict.fromkeys(ranked))[:opts.negatives]
        examples += [Example(qid, bench.questions[qid].text, hint, negs[i % len(negs)] if negs else None)
                     for i, hint in enumerate(own[:opts.positives])]
    if not examples:
        raise InputError(f"no question of split {opts.split!r} has a hint; nothing to train on",
                         file=bench.path, field="hints")
    return examples


def distinct_question_batches(examples: Sequence[Example], batch_size: int, rng: random.Random) -> list[list[Example]]:
    """Shuffled batches in which no question appears twice (its positives would be false in-batch negatives)."""
    queues: dict[str, list[Example]] = {}
    for ex in examples:
        queues.setdefault(ex.qid, []).append(ex)
    for q in queues.values():
        rng.shuffle(q)
    batches: list[list[Example]] = []
    while queues:  # one round takes one example of every question that has one left
        order = list(queues)
        rng.shuffle(order)
        chunks = [[queues[q].pop() for q in order[i:i + batch_size]] for i in range(0, len(order), batch_size)]
        if len(chunks) > 1 and len(chunks[-1]) == 1:  # a lone example has no in-batch negatives
            lone = chunks.pop()
            chunks[-1] += lone
        batches += chunks
        queues = {q: v for q, v in queues.items() if v}
    rng.shuffle(batches)
    return batches


def _train(model, loss_fn, batches_per_epoch: Iterator, total: int, opts: FinetuneOptions, log_path: Path,
           desc: str) -> list[float]:
    import torch

    optimizer = torch.optim.AdamW(model.parameters(), lr=opts.lr)
    warmup = max(1, int(total * opts.warmup_ratio))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min((step + 1) / warmup, max(0.0, (total - step) / max(1, total - warmup))))
    model.train()
    losses = []
    t0 = time.perf_counter()
    with open(log_path, "w", encoding="utf-8") as log, counter(total, desc, "step", True) as bar:
        for epoch, batch in batches_per_epoch:
            if len(losses) >= total:
                break
            loss = loss_fn(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(float(loss.item()))
            log.write(json.dumps({"step": len(losses), "epoch": epoch, "loss": round(losses[-1], 6),
                                  "lr": scheduler.get_last_lr()[0], "examples": len(batch),
                                  "seconds": round(time.perf_counter() - t0, 3)}) + "\n")
            log.flush()
            bar.set_postfix(loss=f"{losses[-1]:.4f}")
            bar.update(1)
    model.eval()
    return losses


def _epochs(examples: list[Example], opts: FinetuneOptions, rng: random.Random, pairs: bool = False):
    batches = _plain_batches if pairs else distinct_question_batches
    for epoch in range(opts.epochs):
        yield from ((epoch, batch) for batch in batches(examples, opts.batch_size, rng))


def _plain_batches(items: list, batch_size: int, rng: random.Random) -> list[list]:
    items = list(items)
    rng.shuffle(items)
    return [items[i:i + batch_size] for i in range(0, len(items), batch_size)]


def _steps(n_batches: int, opts: FinetuneOptions) -> int:
    total = n_batches * opts.epochs
    return min(total, opts.max_steps) if opts.max_steps else total


@dataclass(frozen=True)
class _Out:  # a trainer's output folder, and whether its files may replace those of an existing one
    folder: str | os.PathLike
    overwrite: bool


def _setup(out: _Out, bench: str | os.PathLike | Benchmark, model: str, options: FinetuneOptions, start: str,
           resolve=None, examples: Callable = build_examples, least: int = 1
           ) -> tuple[Benchmark, str, list[Example], random.Random]:
    """What every trainer does first, before the model libraries are imported, in this order: the output
    folder, the starting weights' kind (`start`, as `models.check_model_kind` takes it), the benchmark,
    the weights resolved, the examples (`least`: the fewest questions it can learn from), the seeds."""
    from ..models import check_model_kind, resolve_embedding_model

    refuse_existing_folder(out.folder, out.overwrite)
    check_model_kind(model, start)
    bench = bench if isinstance(bench, Benchmark) else Benchmark(bench)
    weights = (resolve or resolve_embedding_model)(model)
    found = examples(bench, options, least)
    import numpy as np  # the model libraries: after the checks above
    import torch

    random.seed(options.seed)
    np.random.seed(options.seed)
    torch.manual_seed(options.seed)
    return bench, weights, found, random.Random(options.seed)


def _in_batch_steps(examples: list[Example], opts: FinetuneOptions) -> int:
    return _steps(len(distinct_question_batches(examples, opts.batch_size, random.Random(opts.seed))), opts)


@plugin("fine-tuner", "retriever", *OPTIONS,
        help="bi-encoder for the `dense` retriever: in-batch negatives plus n positives and n hard negatives "
             "per question", suggest_for=("dense", "dpr", "bi-encoder"))
def finetune_retriever(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *,
                       model: str = DEFAULT_ENCODER, options: FinetuneOptions | None = None,
                       device: str | None = None, overwrite: bool = False, **settings: object) -> Path:
    """Train a bi-encoder; return the folder (a SentenceTransformer model plus the training log)."""
    return _bi_encoder("retriever", bench, _Out(out_dir, overwrite), model, _options(options, settings), device,
                       build_examples)


@plugin("fine-tuner", "clue", *OPTIONS, help="clue encoder for the `clue` retriever: question vs its own hints, "
        "in-batch negatives plus other questions' hints as hard negatives")
def finetune_clue(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *, model: str = DEFAULT_ENCODER,
                  options: FinetuneOptions | None = None, device: str | None = None, overwrite: bool = False,
                  **settings: object) -> Path:
    """Train the `clue` retriever's encoder (`build_clue_examples`, the bi-encoder's loss); the
    folder loads with `clue` model=PATH and its index stays one vector per distinct hint."""
    return _bi_encoder("clue", bench, _Out(out_dir, overwrite), model, _options(options, settings), device,
                       build_clue_examples)


@plugin("fine-tuner", "clue-sets", *OPTIONS, help="clue encoder trained on hint sets: the retriever fine-tuner's "
        "(question, passage) examples, each passage scored as the clue retriever's mean-embedding does")
def finetune_clue_sets(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *,
                       model: str = DEFAULT_ENCODER, options: FinetuneOptions | None = None,
                       device: str | None = None, overwrite: bool = False, **settings: object) -> Path:
    """Train the `clue` retriever's encoder on `finetune_retriever`'s examples, batches and steps,
    each passage encoded as the clue index sees it (`hint_set_scores`); `training.json` says "hint sets"."""
    return _bi_encoder("clue", bench, _Out(out_dir, overwrite), model, _options(options, settings), device,
                       build_hint_set_examples, hint_sets=True)


def hint_set_scores(st, queries: list[str], sets: Sequence[Sequence[str]]):
    """(queries × sets) cosines with each set's vector as the clue retriever's mean-embedding builds it: the
    normalised sum of the normalised hint vectors (each distinct hint encoded once), differentiable."""
    import torch

    def encode(texts: list[str]):
        return torch.nn.functional.normalize(st(_features(st, texts))["sentence_embedding"], dim=-1)

    hints = list(dict.fromkeys(h for s in sets for h in s))
    member = torch.tensor([[float(h in s) for h in hints] for s in sets], device=st.device)
    passages = torch.nn.functional.normalize(member @ encode(hints), dim=-1)
    return encode(queries) @ passages.T


def _columns(batch: list[Example]) -> list[list]:
    """The batch's queries, positives and, when every example has one, hard negatives."""
    columns = [[e.query for e in batch], [e.positive for e in batch]]
    if all(e.negative for e in batch):
        columns.append([e.negative for e in batch])
    return columns


def _bi_encoder(kind: str, bench: str | os.PathLike | Benchmark, out: "_Out", model: str,
                options: FinetuneOptions, device: str | None, examples_of: Callable, hint_sets: bool = False) -> Path:
    """MultipleNegativesRankingLoss over batches of distinct questions: (query, positive[, negative]);
    with `hint_sets`, its scale and cross-entropy over `hint_set_scores`."""
    bench, weights, examples, rng = _setup(out, bench, model, options, "bi-encoder", examples=examples_of, least=2)
    import torch
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    st = load_sentence_transformer(weights, device or "cpu")
    st.max_seq_length = options.max_length
    mnrl = MultipleNegativesRankingLoss(st)

    def loss_fn(batch: list[Example]):
        queries, *passages = _columns(batch)
        if not hint_sets:
            return mnrl([_features(st, column) for column in (queries, *passages)], None)
        scores = mnrl.scale * hint_set_scores(st, queries, [s for column in passages for s in column])
        return torch.nn.functional.cross_entropy(scores, torch.arange(len(batch), device=scores.device))

    return _fit(kind, out, model, bench, options, examples, _epochs(examples, options, rng),
                _in_batch_steps(examples, options), lambda tmp: (st, loss_fn, lambda: st.save(str(tmp))),
                objective="hint sets" if hint_sets else None)


@dataclass(frozen=True)
class RerankExample:
    """A question, one of its passages, and the other questions' representatives a window shows beside it."""

    qid: str
    query: str
    positive: str
    negatives: tuple[str, ...]

    @property
    def negative(self) -> str | None:  # the field the trainers' shared bookkeeping counts
        return self.negatives[0] if self.negatives else None


# How far past a question's own passages the reranker looks for representatives: a QUIT top 100 holds ~2 questions.
REPRESENTATIVE_DEPTH = 2000


def representatives(ranked: Sequence[tuple[str, float]] | Sequence[str], exclude: str, n: int) -> list[str]:
    """The first passage of each of the first `n` questions of `ranked` other than `exclude`:
    what a distinct window (`inferqa rerank --window question`) shows a reranker."""
    pairs = [(item, 0.0) if isinstance(item, str) else item for item in ranked]
    firsts = [pairs[members[0]][0] for members in window_groups(pairs, n + 1, lambda pid: question_of(pid) or pid)]
    return [pid for pid in firsts if (question_of(pid) or pid) != exclude][:n]


def hint_count(pid: str) -> int:
    """How many hints passage `pid` holds (the length of its order)."""
    return len(parse_passage_id(pid)[1])


def same_size_passage(bench: Benchmark, qid: str, size: int, rng: random.Random) -> str | None:
    """A random passage of question `qid` holding `size` hints (the nearest size it has), so
    that a negative never differs from its positive by the number of hints alone."""
    gaps = {p: abs(hint_count(p) - size) for p in sorted(bench.qrels.get(qid, {}))}
    nearest = min(gaps.values(), default=None)
    return rng.choice([p for p, gap in gaps.items() if gap == nearest]) if gaps else None


def build_rerank_examples(bench: Benchmark, opts: FinetuneOptions, least: int = 2) -> list[RerankExample]:
    """Per question, up to `positives` own passages in `negatives_from`'s order, each grouped with a passage
    of each of the `negatives` other questions a distinct window shows beside it (`representatives`; for
    `random`, random ones), as many hints as the positive (`same_size_passage`): only the question tells."""
    _check(opts)
    if opts.negatives == 0:
        raise InputError("no negatives: a reranker needs --negatives > 0", field="negatives")
    check_min_label(opts.min_label, bench.qrels)
    qids = _questions(bench, opts, least)
    rng = random.Random(opts.seed)
    run = None if opts.negatives_from == "random" else _source_run(bench, qids, opts, REPRESENTATIVE_DEPTH)
    examples = []
    for qid in qids:
        if run is None:
            others = [o for o in bench.questions if o != qid]
            rivals = rng.sample(others, min(opts.negatives, len(others)))
            own = []
        else:
            ranked = run.get(qid, [])
            rivals = [question_of(p) for p in representatives(ranked, qid, opts.negatives)]
            own = [p for p, _ in ranked if bench.qrels.get(qid, {}).get(p, 0) >= opts.min_label][:opts.positives]
        own += [p for p in _positives(bench, qid, opts, rng) if p not in own][:opts.positives - len(own)]
        for pid in own:
            negs = tuple(n for n in (same_size_passage(bench, o, hint_count(pid), rng) for o in rivals) if n)
            if negs:
                examples.append(RerankExample(qid, bench.questions[qid].text, pid, negs))
    if not examples:
        raise InputError(f"no passage with label >= {opts.min_label} and another question's passage in split "
                         f"{opts.split!r}; nothing to train on", file=bench.path, field="min_label")
    return examples


def group_batches(examples: list[RerankExample], opts: FinetuneOptions, rng: random.Random) -> tuple[Iterator, int]:
    """A reranker fine-tuner's batches and their number: `batch_size` (question, passage) pairs a step,
    so batch_size // (1 + negatives) groups, at least one."""
    groups = max(1, opts.batch_size // (1 + opts.negatives))
    total = _steps(len(_plain_batches(examples, groups, random.Random(0))), opts)
    return _epochs(examples, replace(opts, batch_size=groups), rng, pairs=True), total


def with_passage_texts(examples: list[RerankExample], bench: Benchmark) -> list[RerankExample]:
    """The examples with each passage id replaced by its text, looked up once before training."""
    return [replace(e, positive=bench.passage_text(e.positive), negatives=tuple(map(bench.passage_text, e.negatives)))
            for e in examples]


def group_pairs(batch: list[RerankExample]) -> list[tuple[str, str]]:
    """(question, passage) per scored pair, group by group, own passage first: the order
    `group_softmax_loss` reads the scores in."""
    return [(e.query, t) for e in batch for t in (e.positive, *e.negatives)]


def group_softmax_loss(scores, batch: Sequence[RerankExample]):
    """Cross-entropy of each group's softmax, its own passage the target: `scores` holds each example's
    positive then its negatives, example after example (a reranker fine-tuner's loss)."""
    import torch

    groups = list(scores.split([1 + len(e.negatives) for e in batch]))
    grid = torch.nn.utils.rnn.pad_sequence(groups, batch_first=True, padding_value=float("-inf"))
    return torch.nn.functional.cross_entropy(grid, torch.zeros(len(batch), dtype=torch.long, device=grid.device))


@plugin("fine-tuner", "reranker", *OPTIONS,
        help="cross-encoder for distinct windows: each own passage against other questions' representatives "
             "(`--negatives-from`'s first passage of each other question), softmax cross-entropy over the group")
def finetune_reranker(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *, model: str = DEFAULT_ENCODER,
                      options: FinetuneOptions | None = None, device: str | None = None, overwrite: bool = False,
                      **settings: object) -> Path:
    """Train a cross-encoder from any encoder's weights to tell a question's own passage from the other
    questions' representatives (`build_rerank_examples`), softmax cross-entropy over each group. A step
    scores `batch_size` (question, passage) pairs: batch_size // (1 + negatives) groups, at least one."""
    options = _options(options, settings)
    out = _Out(out_dir, overwrite)
    bench, weights, examples, rng = _setup(out, bench, model, options, "encoder", examples=build_rerank_examples)
    examples = with_passage_texts(examples, bench)
    from sentence_transformers import CrossEncoder

    with quiet_loading():
        ce = CrossEncoder(weights, num_labels=1, max_length=options.max_length, device=device or "cpu")

    def loss_fn(batch: list[RerankExample]):
        return group_softmax_loss(ce(_features(ce, group_pairs(batch)))["scores"].view(-1), batch)

    return _fit("reranker", out, model, bench, options, examples, *group_batches(examples, options, rng),
                lambda tmp: (ce, loss_fn, lambda: ce.save(str(tmp))),
                objective="softmax over own passage and other questions' representatives")


@plugin("fine-tuner", "colbert", *OPTIONS, help="late interaction (ColBERT), the retriever's examples")
def finetune_colbert(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *, model: str = DEFAULT_ENCODER,
                     options: FinetuneOptions | None = None, device: str | None = None, dim: int = 128,
                     overwrite: bool = False, **settings: object) -> Path:
    """Train a ColBERT (late-interaction) model: from a bi-encoder's weights with a new
    projection to `dim`, or further from a ColBERT folder; MaxSim scores, in-batch + hard negatives."""
    options = _options(options, settings)
    from ..retrieve.colbert_model import (init_colbert, is_colbert_folder, load_colbert, resolve_colbert_start,
                                          write_colbert)

    out = _Out(out_dir, overwrite)
    bench, start, examples, rng = _setup(out, bench, model, options, "colbert-start", resolve_colbert_start, least=2)
    from sentence_transformers.multi_vector_encoder.losses import MultiVectorMultipleNegativesRankingLoss

    def make(tmp: Path):  # a new projection is initialised in the output folder, then removed
        begin = start if is_colbert_folder(start) else \
            init_colbert(start, tmp / "init", dim=dim, document_length=options.max_length, seed=options.seed)
        mve = load_colbert(begin, device)
        loss = MultiVectorMultipleNegativesRankingLoss(mve)

        def loss_fn(batch: list[Example]):
            tasks = ("query", "document", "document")
            return loss([_features(mve, texts, prompt=mve.prompts.get(task), task=task)
                         for texts, task in zip(_columns(batch), tasks)])

        def save() -> None:
            write_colbert(mve, tmp)
            shutil.rmtree(tmp / "init", ignore_errors=True)

        return mve, loss_fn, save

    return _fit("colbert", out, model, bench, options, examples, _epochs(examples, options, rng),
                _in_batch_steps(examples, options), make)


def _fit(kind: str, out: _Out, model: str, bench: Benchmark, opts: FinetuneOptions,
         examples: list, batches: Iterator, total: int, make: Callable, objective: str | None = None) -> Path:
    """Every trainer's tail: in a folder whose files go to `out` once complete, `make(folder)` gives
    (model, loss function, save); the model trains, saves itself, and writes the log and training.json."""
    t0 = time.perf_counter()
    with atomic_dir(out.folder, out.overwrite, own_files=True) as tmp:
        trained, loss_fn, save = make(tmp)
        losses = _train(trained, loss_fn, batches, total, opts, tmp / LOG_FILE, f"fine-tune {kind}")
        save()
        qids = sorted({e.qid for e in examples})
        write_json(tmp / INFO_FILE, {
            "kind": kind, **({"objective": objective} if objective else {}), "base_model": model,
            "benchmark": str(bench.path), "options": asdict(opts), "sources": bench.meta.get("sources") or [],
            "questions": len(qids),
            # which questions it saw, checkable against any evaluation set without listing them
            "questions_sha256": hashlib.sha256("\n".join(qids).encode()).hexdigest(),
            "examples": len(examples), "with_negative": sum(1 for e in examples if e.negative), "steps": len(losses),
            "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
            "seconds": round(time.perf_counter() - t0, 2),
        })
    return Path(out.folder)


def _features(model, texts: list, **preprocess) -> dict:
    """`model.preprocess(texts, ...)`, its tensors on the model's device."""
    features = model.preprocess(texts, **preprocess)
    return {k: (v.to(model.device) if hasattr(v, "to") else v) for k, v in features.items()}


_FINETUNER = {o.name: o for o in OPTIONS}  # OPTIONS by name, for the stage's signature


@stage("finetune", output="self-checked folder")  # `io.refuse_existing_folder` decides about an existing one
def finetune(kind: Annotated[str, Opt("retriever, colbert, clue, clue-sets, reranker or upr: `inferqa plugins fine-tuner` "
                                      "says what each trains", metavar="KIND")], *,
             bench: Annotated[Path, Opt("benchmark directory", flags=("--bench",))],
             out: Annotated[Path, Opt("folder for the trained model (usable as --model PATH)", flags=("--out", "-o"))],
             overwrite: Annotated[bool, replace(OVERWRITE, help="replace the files a fine-tune writes in an existing "
                                                "--out folder (its other files stay)")] = OVERWRITE.default,
             model: Annotated["str | None", Opt("initial weights: an HF id, a folder, or minilm (the default; "
                                                "upr: smollm2, the default)")] = None,
             split: Annotated[str, _FINETUNER["split"]] = _FINETUNER["split"].default,
             positives: Annotated[int, _FINETUNER["positives"]] = _FINETUNER["positives"].default,
             negatives: Annotated[int, _FINETUNER["negatives"]] = _FINETUNER["negatives"].default,
             negatives_from: Annotated[str, _FINETUNER["negatives_from"]] = _FINETUNER["negatives_from"].default,
             min_label: Annotated[int, _FINETUNER["min_label"]] = _FINETUNER["min_label"].default,
             epochs: Annotated[int, _FINETUNER["epochs"]] = _FINETUNER["epochs"].default,
             batch_size: Annotated[int, _FINETUNER["batch_size"]] = _FINETUNER["batch_size"].default,
             lr: Annotated[float, _FINETUNER["lr"]] = _FINETUNER["lr"].default,
             warmup_ratio: Annotated[float, _FINETUNER["warmup_ratio"]] = _FINETUNER["warmup_ratio"].default,
             max_length: Annotated[int, _FINETUNER["max_length"]] = _FINETUNER["max_length"].default,
             max_questions: Annotated["int | None", _FINETUNER["max_questions"]] = _FINETUNER["max_questions"].default,
             max_steps: Annotated["int | None", _FINETUNER["max_steps"]] = _FINETUNER["max_steps"].default,
             seed: Annotated[int, _FINETUNER["seed"]] = _FINETUNER["seed"].default,
             device: Annotated["str | None", Opt("torch device to train on (default: cpu)", validate=check_device)] = None
             ) -> Path:
    """Fine-tune a bi-encoder retriever, a ColBERT, a clue encoder (on hints or on hint sets), a
    cross-encoder reranker or a causal LM for the upr reranker on a benchmark split."""
    given = locals()  # the parameters: nothing else is bound yet
    from .. import registry

    refuse_existing_folder(check_output(out, kind="dir"), overwrite)
    # the fine-tuner checks the model and the benchmark before any model library is imported
    trainer = registry.create("fine-tuner", kind, **{name: given[name] for name in _FINETUNER})
    return trainer(bench, out, overwrite=overwrite, device=device, **({} if model is None else {"model": model}))
