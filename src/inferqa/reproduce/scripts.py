"""Every table the authors' `results/**/*.py` scripts print, as data: which files each row
reads, the first column's header, the columns, the rows in the scripts' order.

A table is named by its script's path under results/ without `.py`; a script that prints
several tables adds `:<what it prints above each>` (`retriever/retriever_rag:un_1`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..errors import InputError
from ..evaluation.stored_metrics import PAPER_LABEL_ROWS
from ..defaults import MIN_LABEL
from . import compute
from .release import BASELINE, CORPUS, INDEX, Release

RETRIEVERS = ("bm25", "dpr", "colbert", "contriever", "bge")
FT_RETRIEVERS = ("dpr", "colbert")
RERANKERS = (
    "lit5dist-LiT5-Distill-base-v2", "lit5dist-LiT5-Distill-large-v2", "lit5dist-LiT5-Distill-xl-v2",
    "monot5-monot5-3b-msmarco-10k", "monot5-monot5-base-msmarco-10k", "monot5-monot5-large-msmarco-10k",
    "rankgpt-Llama-3.1-8B-Instruct", "rankgpt-Qwen2.5-7B", "rankt5-rankt5-3b", "rankt5-rankt5-base",
    "rankt5-rankt5-large", "upr-gpt2-large", "upr-t0-3b", "upr-t5-large", "upr-t5-small",
)
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
UNIONS = ("un_1", "uf_1", "un_3", "uf_3", "un_5", "uf_5")  # union_norm / union_freq of the top 1, 3, 5
FT_RETRIEVER_POSITIVES = ("1", "5", "10", "50", "100", "200")
FT_RERANKER_POSITIVES = ("1", "5", "10", "50", "100")
CORPORA = {"msmarco": "msmarco", "wiki": "wiki"}  # script suffix -> folder under baselines_*

_K = (1, 5, 10, 20, 50, 100)
RANKING = (*(f"hit@{k}" for k in _K), *(f"recall@{k}" for k in _K), *(f"precision@{k}" for k in _K),
           "mrr@50", "mrr@100", "map@50", "map@100", *(f"ndcg@{k}" for k in _K))
SHORT = (*(f"hit@{k}" for k in _K), *(f"precision@{k}" for k in _K), "mrr@50", "mrr@100")
EM = tuple(f"EM of {m}" for m in READERS)
HINTS = tuple(f"hints@{m}-{h}" for m in READERS for h in compute.HINT_COUNTS)


@dataclass
class Grid:
    """One printed table: `header` is its first column's name, rows are (first cell, values)."""

    table: str
    header: str
    columns: tuple[str, ...]
    rows: list[tuple[str, list]] = field(default_factory=list)
    kinds: tuple[str, ...] | None = None  # per value column: score (a fraction) or count


def _ranking(rel: Release, table: str, header: str, rows, key: str, columns=RANKING,
             min_label: int = MIN_LABEL.default) -> Grid:
    grid = Grid(table, header, tuple(columns))
    index = rel.index()
    for label, path in rows:
        if index is None:  # nothing to judge the run by: only note whether it is there
            rel.find(path)
            continue
        ranked = rel.ranking(path, key)
        if ranked is not None:
            grid.rows.append((label, compute.ranking_row(index, ranked, columns, rel.find(path), min_label)))
    return grid


def _ems(rel: Release, table: str, header: str, rows) -> list[Grid]:
    """The EM table of each union strategy in turn, named `<table><union>`."""
    grids = [Grid(table + u, header, EM) for u in UNIONS]
    for grid, method in zip(grids, UNIONS):
        for label, path in rows:
            got = rel.reader(path)
            if got is not None:
                grid.rows.append((label, compute.em_row(*got, READERS, method)))
    return grids


def _baseline(rel: Release, table: str, header: str, rows, key: str) -> Grid:
    grid = Grid(table, header, SHORT)
    baseline = rel.baseline()
    for label, path in rows:
        ranked = rel.ranking(path, key)
        if baseline is not None and ranked is not None:
            grid.rows.append((label, compute.baseline_row(baseline, ranked, SHORT, rel.find(path), key)))
    return grid


def _rag(rel: Release) -> Iterator[Grid]:
    main = Grid("rag/rag", "relevant docs", (*(f"Accuracy of {m}" for m in READERS), *EM))
    counts = Grid("rag/rag:passages", "relevant docs", ("count", "from", "share"), kinds=("count", "count", "score"))
    index = rel.index()
    if index is not None:
        file = str(rel.find(INDEX))
        everything = sum(len(q.contexts) for q in index)
        stored = [compute.judged(index, m, file) for m in READERS]
        for label, labels in PAPER_LABEL_ROWS.items():
            acc = [j.accuracy(m, labels) for j, m in zip(stored, READERS)]
            em = [j.optimal_em(m, lambda lab: lab in labels) for j, m in zip(stored, READERS)]
            main.rows.append((label, [round(share, 4) for share in [a for a, _ in acc] + em]))
            n = acc[-1][1]
            counts.rows.append((label, [n, everything, round(n / everything, 4) if everything else 0.0]))
    yield main
    yield counts


def _hints(rel: Release) -> Iterator[Grid]:
    oracle = Grid("hint-contribution/rag", "reranker", HINTS)
    index = rel.index()
    if index is not None:
        file = str(rel.find(INDEX))
        oracle.rows.append(("Oracle", [s for m in READERS
                                       for s in compute.shares(compute.oracle_right(index, m, file))]))
    yield oracle
    for table, header, name, folder, run_name, key in (
            ("hint-contribution/retriever_rag", "retriever", "bge", "retriever", "retriever.json", "ctxs"),
            ("hint-contribution/reranker_rag", "reranker", "upr-gpt2-large", "reranker", "reranker.json",
             "reranked_ctxs")):
        grid = Grid(table, header, HINTS)
        got = rel.reader(f"{folder}/{name}/rag.json")
        run_path = f"{folder}/{name}/{run_name}"
        ranked = rel.ranking(run_path, key)
        if got is not None and ranked is not None:
            rag_file, records = got
            grid.rows.append((name, [s for m in READERS for s in compute.shares(
                compute.top1_right(rag_file, records, rel.find(run_path), ranked, key, m))]))
        yield grid


def _label_statistics(rel: Release) -> Grid:
    """statistics/analyse_labels.py: label-2 passages among the five retrievers' runs, of the
    100 per question and retriever the script divides by."""
    grid = Grid("statistics/analyse_labels", "corpus", ("count", "from", "share"), kinds=("count", "count", "score"))
    index, baseline = rel.index(), rel.baseline()
    own = None if index is None else [q.labels() for q in index]
    sources = (("Our dataset", "retriever/{r}/retriever.json", own, INDEX),
               ("Wikipedia", "baselines_retriever/wiki/{r}/retriever.json", baseline, BASELINE),
               ("MSMARCO", "baselines_retriever/msmarco/{r}/retriever.json", baseline, BASELINE))
    for label, pattern, judged, against in sources:
        if judged is None:
            continue
        count = runs = 0
        for r in RETRIEVERS:
            path = pattern.format(r=r)
            ranked = rel.ranking(path, "ctxs")
            if ranked is None:
                continue
            file = rel.find(path)
            runs += 1
            compute.check_positions(ranked, len(judged), file, against)
            for i, ids in enumerate(ranked):
                for j, pid in enumerate(ids):
                    if against == BASELINE and pid not in judged[i]:
                        raise InputError(f"passage {pid} has no label in {BASELINE}", file=file, record=i,
                                         field=f"ctxs[{j}].id")
                    count += judged[i].get(pid) == 2
        if runs:
            of = len(judged) * 100 * runs
            grid.rows.append((label, [count, of, round(count / of, 3)]))
    return grid


def _lengths(rel: Release) -> Iterator[Grid]:
    """Mean words per passage (`split(" ")`): statistics_table.py over the top 100 of each
    retriever's run and every passage of the comparison corpora's runs, corpus_comparison.py
    over the corpus (its MS MARCO and Wikipedia rows need those corpora themselves)."""
    runs = Grid("statistics/statistics_table", "corpus", ("average length",), kinds=("count",))
    for label, pattern, depth in (("our_dataset", "retriever/{r}/retriever.json", 100),
                                  ("msmarco", "baselines_retriever/msmarco/{r}/retriever.json", None),
                                  ("wiki", "baselines_retriever/wiki/{r}/retriever.json", None)):
        counts = [n for r in RETRIEVERS for n in (rel.word_counts(pattern.format(r=r), depth) or [])]
        if counts:
            runs.rows.append((label, [round(sum(counts) / len(counts), 4)]))
    yield runs
    corpus = Grid("statistics/corpus_comparison", "corpus", ("average length",), kinds=("count",))
    counts = rel.word_counts(CORPUS)
    if counts:
        corpus.rows.append(("our_dataset", [round(sum(counts) / len(counts), 4)]))
    yield corpus


Spec = Callable[[], "Grid | list[Grid]"]


def _specs(rel: Release) -> Iterator[Spec]:
    """Each script's table as a thunk, in the order the scripts would print them."""
    yield from _pretrained_specs(rel)
    yield from _finetuned_specs(rel)
    yield lambda: list(_rag(rel))
    yield lambda: list(_hints(rel))
    yield lambda: _label_statistics(rel)
    yield lambda: list(_lengths(rel))
    yield from _baseline_specs(rel)


def _pretrained_specs(rel: Release) -> Iterator[Spec]:
    """retriever/, reranker/ and retriever_reranker/: the pre-trained models' scripts."""
    R, X = RETRIEVERS, RERANKERS
    yield lambda: _ranking(rel, "retriever/retriever", "retriever",
                           [(r, f"retriever/{r}/retriever.json") for r in R], "ctxs")
    yield lambda: _ems(rel, "retriever/retriever_rag:", "retriever", [(r, f"retriever/{r}/rag.json") for r in R])
    yield lambda: _ranking(rel, "reranker/reranker", "reranker",
                           [(x, f"reranker/{x}/reranker.json") for x in X], "reranked_ctxs",
                           (*RANKING, "ndcg@326"))
    yield lambda: _ems(rel, "reranker/reranker_rag:", "rerank", [(x, f"reranker/{x}/rag.json") for x in X])
    for r in R:
        yield lambda r=r: _ranking(rel, f"retriever_reranker/retriever_reranker:{r}", "reranker",
                                   [(x, f"retriever_reranker/{r}/{x}/reranker.json") for x in X], "reranked_ctxs")
    for r in R:
        yield lambda r=r: _ems(rel, f"retriever_reranker/retriever_reranker_rag:{r}-", "reranker",
                               [(x, f"retriever_reranker/{r}/{x}/rag.json") for x in X])


def _finetuned_specs(rel: Release) -> Iterator[Spec]:
    """The scripts of the fine-tuned retrievers and rerankers, alone and combined."""
    R, X = RETRIEVERS, RERANKERS
    for r in ("colbert", "dpr"):  # the script's own order
        yield lambda r=r: _ranking(rel, f"ft_retriever/retriever:{r}", "retriever",
                                   [(p, f"ft_retriever/{r}/{p}_positive/retriever.json")
                                    for p in FT_RETRIEVER_POSITIVES], "ctxs")
    yield lambda: _ems(rel, "ft_retriever/retriever_rag:", "retriever",
                       [(r, f"ft_retriever/{r}/100_positive/rag.json") for r in FT_RETRIEVERS])
    yield lambda: _ranking(rel, "ft_reranker/reranker", "reranker",
                           [(p, f"ft_reranker/{p}_positive/reranker.json") for p in FT_RERANKER_POSITIVES],
                           "reranked_ctxs")
    yield lambda: _ems(rel, "ft_reranker/reranker_rag:", "rerank",
                       [(p, f"ft_reranker/{p}_positive/rag.json") for p in FT_RERANKER_POSITIVES])
    for r in FT_RETRIEVERS:
        yield lambda r=r: _ranking(rel, f"ft_retriever_reranker/retriever_reranker:{r}", "reranker",
                                   [(x, f"ft_retriever_reranker/{r}/{x}/reranker.json") for x in X], "reranked_ctxs")
    for r in FT_RETRIEVERS:
        yield lambda r=r: _ems(rel, f"ft_retriever_reranker/retriever_reranker_rag:{r}-", "reranker",
                               [(x, f"ft_retriever_reranker/{r}/{x}/rag.json") for x in X])
    # These two scripts read `ctxs`: the fine-tuned reranker's order was written there.
    yield lambda: _ranking(rel, "retriever_ft_reranker/retriever_reranker", "retriever",
                           [(r, f"retriever_ft_reranker/{r}/retriever.json") for r in R], "ctxs")
    yield lambda: _ems(rel, "retriever_ft_reranker/retriever_reranker_rag:", "retriever",
                       [(r, f"retriever_ft_reranker/{r}/rag.json") for r in R])
    yield lambda: _ranking(rel, "ft_retriever_ft_reranker/retriever_reranker", "retriever",
                           [(r, f"ft_retriever_ft_reranker/{r}/reranker.json") for r in FT_RETRIEVERS], "ctxs")
    yield lambda: _ems(rel, "ft_retriever_ft_reranker/retriever_reranker_rag:", "retriever",
                       [(r, f"ft_retriever_ft_reranker/{r}/rag.json") for r in FT_RETRIEVERS])


def _baseline_specs(rel: Release) -> Iterator[Spec]:
    """baselines_retriever/ and baselines_reranker/: the other corpora and the latent-IR row."""
    R, X = RETRIEVERS, RERANKERS
    for suffix, folder in CORPORA.items():
        yield lambda s=suffix, f=folder: _baseline(rel, f"baselines_retriever/retriever-{s}", "retriever",
                                                   [(r, f"baselines_retriever/{f}/{r}/retriever.json") for r in R],
                                                   "ctxs")
    yield lambda: _ranking(rel, "baselines_retriever/retriever-latentIR", "retriever",
                           [(r, f"retriever/{r}/retriever.json") for r in R], "ctxs", SHORT, min_label=2)
    for suffix, folder in CORPORA.items():
        for r in R:
            yield lambda s=suffix, f=folder, r=r: _baseline(
                rel, f"baselines_reranker/retriever_reranker_{s}:{r}", "reranker",
                [(x, f"baselines_reranker/{f}/{r}/{x}/reranker.json") for x in X], "reranked_ctxs")


def tables(rel: Release) -> Iterator[Grid]:
    """Every table with at least one row, in the order the scripts would print them."""
    for make in _specs(rel):
        made = make()
        for grid in made if isinstance(made, list) else [made]:
            if grid.rows:
                yield grid
