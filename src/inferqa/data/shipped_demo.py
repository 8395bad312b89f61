"""What ships with the demo besides its questions: SmolLM2's labels and SmolLM2's answers.

- `demo_labels.jsonl`: one row per passage of the demo benchmark (built with `DEMO_BUILD`),
  `{"qid", "order", "label", "answers", "correct"}`, from `label_benchmark(..., mode="full")`
  with the bundled SmolLM2 (exact match). Rows are keyed by question and hint order, not by
  passage id, so they survive a change of the id format.
- `demo_llm_cache.jsonl`: the rows of the LLM call cache (key, identity, kind, value) that
  the demo experiment and its labelling filled; `inferqa demo` copies them into the user's
  cache before it runs, so its first run reads SmolLM2's answers instead of recomputing
  them (`inferqa demo --compute` skips that). Keys hash the model file's name and size and
  the full prompt, so they answer only the very same calls.

`scripts/demo_data.py` recomputes both files.
"""

from __future__ import annotations

import os
from contextlib import closing
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..formats.bench_write import BenchmarkWrite
from ..formats.labels import LABELS, Labels, read_order_labels, write_order_labels
from ..io import iter_jsonl, write_jsonl
from ..records import parse_passage_id
from ..formats import Qrels
from ..parameters import DEMO_BUILD

LABELS_FILE = "demo_labels.jsonl"
CACHE_FILE = "demo_llm_cache.jsonl"
LABELLING_NOTE = ("labels shipped with the demo (inferqa/data/demo/demo_labels.jsonl): SmolLM2-135M-Instruct "
                  "answered from every passage with the reader protocol, exact match; scripts/demo_data.py "
                  "recomputes them")


def _shipped(name: str) -> Path:
    return Path(str(resources.files("inferqa.data").joinpath("demo", name)))


def labels_path() -> Path:
    return _shipped(LABELS_FILE)


def demo_build_options() -> dict[str, Any]:
    """`build_benchmark` options of the demo benchmark (`inferqa demo`, `inferqa build --demo`):
    `DEMO_BUILD`, labelled with the shipped SmolLM2 labels where they ship."""
    return dict(DEMO_BUILD, post_build=apply_labels if labels_path().exists() else None)


def cache_rows_path() -> Path:
    return _shipped(CACHE_FILE)


def export_labels(bench_dir: str | os.PathLike, out: str | os.PathLike) -> int:
    """labels.jsonl of a labelled benchmark → the shipped, id-format-free rows; returns the count."""
    return write_order_labels(out, Labels.from_file(Path(bench_dir) / LABELS))


def apply_labels(bench_dir: str | os.PathLike, meta: dict, rows_file: str | os.PathLike | None = None) -> None:
    """Rewrite qrels.tsv and write labels.jsonl from the shipped rows (a `post_build` hook)."""
    bench_dir = Path(bench_dir)
    shipped = read_order_labels(Path(rows_file) if rows_file else labels_path())
    qrels = Qrels.from_file(bench_dir / "qrels.tsv")
    label_rows = Labels()
    for qid, labels in qrels.items():
        for pid in labels:
            q, order = parse_passage_id(pid)
            row = shipped.get((q, "".join(map(str, order))))
            if row is not None:
                labels[pid] = row.label
                label_rows.append(replace(row, pid=pid, qid=qid))
    identities = sorted({who for r in label_rows for who in r.answers})
    meta["labelling"] = {"labelers": identities, "mode": "full", "judge": "exact_match",
                         "passages_labelled": len(label_rows), "note": LABELLING_NOTE}
    meta["labelled_by"] = "llm"
    with BenchmarkWrite(bench_dir) as write:
        qrels.to_file(write.path("qrels.tsv"))
        label_rows.to_file(write.path(LABELS))
        write.commit(meta)


def seed_llm_cache(cache_path: str | os.PathLike, rows_file: str | os.PathLike | None = None) -> int:
    """Copy the shipped answers into the LLM cache at `cache_path` (existing rows win); rows added."""
    from ..llm.cache import LLMCache

    src = Path(rows_file) if rows_file else cache_rows_path()
    if not src.exists():
        return 0
    with closing(LLMCache(cache_path)) as cache:  # whatever the user's cache already holds is kept
        return cache.add_missing([(r["key"], r["identity"], r["kind"], r["value"]) for _, r in iter_jsonl(src)])


def export_llm_cache(cache_path: str | os.PathLike, out: str | os.PathLike) -> int:
    """Every row of an LLM cache file → the shipped JSONL (sorted by key, so diffs stay small)."""
    from ..llm.cache import LLMCache

    with closing(LLMCache(cache_path)) as cache:
        rows = [{"key": k, "identity": i, "kind": kind, "value": v} for k, i, kind, v in cache.rows()]
    write_jsonl(out, rows)
    return len(rows)
