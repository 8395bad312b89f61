"""A benchmark directory as ir_datasets datasets (`pip install ir_datasets`), for ir_measures,
PyTerrier and any tool that loads datasets by name.

    import inferqa.irds, ir_datasets
    inferqa.irds.register("bench", "demo")   # -> ["inferqa/demo", "inferqa/demo/train", ...]
    ds = ir_datasets.load("inferqa/demo/test")

`inferqa/<name>` holds every question, `inferqa/<name>/<split>` one split's. Each has the whole
corpus as docs (`GenericDoc(doc_id, text)`: retrieval is over every question's passages, as in
inferqa), the split's questions as queries (`GenericQuery(query_id, text)`) and their judgements as
qrels (`TrecQrel`), as `inferqa.formats.split_files` (`export qrels|topics`) gives them;
`docs_store()` looks passages up by id without reading the corpus. ir_datasets has no plugin entry
point, so a process registers the benchmarks it uses.
"""

from __future__ import annotations

from typing import Iterator

from .errors import InputError
from .formats import iter_corpus
from .formats.coerce import as_benchmark, BenchLike
from .formats.split_files import split_qrels, split_topics

PREFIX = "inferqa"
LABELS = {0: "another question's passage, or judged not relevant", 1: "a passage of the question (its hints)",
          2: "a passage of the question that a labeller answered correctly from"}


def _ir_datasets():
    try:
        import ir_datasets
    except ImportError:
        raise InputError("ir_datasets is not installed (pip install ir_datasets)") from None
    return ir_datasets


def dataset(bench: BenchLike, split: str | None = None, name: str | None = None):
    """The `ir_datasets` dataset of `bench` (docs, and the queries and qrels of `split`)."""
    irds = _ir_datasets()
    from ir_datasets.formats import BaseDocs, BaseQrels, BaseQueries, GenericDoc, GenericQuery, TrecQrel
    from ir_datasets.indices import Docstore

    b = as_benchmark(bench)
    b.split_qids(split)  # an unknown split fails here, not on first use
    namespace = f"{PREFIX}/{name or b.path.name}"

    class Store(Docstore):
        def __init__(self):
            super().__init__(GenericDoc, "doc_id")

        def get_many_iter(self, doc_ids) -> Iterator:
            for pid in doc_ids:
                try:
                    yield GenericDoc(pid, b.passage_text(pid))
                except (KeyError, ValueError):
                    continue  # not a passage of this benchmark: ir_datasets leaves it out

    class Docs(BaseDocs):
        def docs_iter(self):
            return (GenericDoc(p.id, p.text) for p in iter_corpus(b))

        def docs_count(self):
            return (b.meta.get("counts") or {}).get("passages")

        def docs_store(self, field="doc_id"):
            return Store()

        def docs_namespace(self):
            return namespace

        def docs_lang(self):
            return "en"

    class Queries(BaseQueries):
        def queries_iter(self):
            return (GenericQuery(q, text) for q, text in split_topics(b, split).items())

        def queries_namespace(self):
            return namespace

        def queries_lang(self):
            return "en"

    class Qrels(BaseQrels):
        def qrels_iter(self):
            return (TrecQrel(q, pid, label, "0") for q, docs in split_qrels(b, split).items()
                    for pid, label in docs.items())

        def qrels_defs(self):
            return dict(LABELS)

    ds = irds.Dataset(Docs(), Queries(), Qrels())
    ds.inferqa_path = b.path  # which directory a registered name points at
    return ds


def register(bench: BenchLike, name: str | None = None) -> list[str]:
    """Register `inferqa/<name>` and `inferqa/<name>/<split>` for every split of `bench`
    (name: the directory's name) with ir_datasets; returns the names. Registering the same
    directory again is a no-op; another directory under a taken name is an error."""
    irds = _ir_datasets()
    b = as_benchmark(bench)
    name = name or b.path.name
    if not name or "/" in name:
        raise InputError(f"dataset name {name!r} must be one non-empty path segment", field="name")
    wanted = {f"{PREFIX}/{name}": None, **{f"{PREFIX}/{name}/{s}": s for s in b.splits if s != "all"}}
    for full in wanted:
        if full in irds.registry._registered:
            there = getattr(irds.registry._registered[full], "inferqa_path", None)
            if there is None or there.resolve() != b.path.resolve():
                raise InputError(f"ir_datasets name {full!r} is taken (by {there or 'another dataset'})",
                                 file=b.path, field="name")
    for full, split in wanted.items():
        if full not in irds.registry._registered:
            irds.registry.register(full, dataset(b, split, name))
    return list(wanted)
