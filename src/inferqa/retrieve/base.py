"""The retriever interface: build an index for a benchmark, then search it with question texts.

An index lives in `BENCH/indexes/<name>-<hash of the options that shape it>/` unless a
directory is given: the one scheme of `inferqa index`, `inferqa retrieve`, `inferqa run` and
the benchmarks. `retriever.json` is written last, so a directory without it is an unfinished
build (a dense build resumes from it). It records the corpus.jsonl it was built from (size,
mtime, sha256): an index of a corpus rewritten since (an annotation round that dropped
questions) is not a finished index of this benchmark.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from .. import registry
from ..errors import InputError
from ..formats.coerce import as_benchmark, BenchLike
from ..io import json_hash, read_json, sha256_file, write_json
from ..formats import Run
from ..parameters import DEPTH, RETRIEVE_SPLIT

MANIFEST = "retriever.json"
CORPUS = "corpus.jsonl"


def corpus_stamp(bench: Benchmark) -> dict[str, Any]:
    st = (bench.path / CORPUS).stat()
    return {"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256_file(bench.path / CORPUS)}


def same_corpus(recorded: dict[str, Any] | None, bench: Benchmark) -> bool:
    """Whether the corpus is the one `recorded` describes (an index without a record predates
    it: trusted); the file is hashed only when its size matches and its mtime does not."""
    if recorded is None:
        return True
    try:
        st = (bench.path / CORPUS).stat()
    except OSError:
        return False
    if st.st_size != recorded.get("bytes"):
        return False
    return st.st_mtime_ns == recorded.get("mtime_ns") or sha256_file(bench.path / CORPUS) == recorded.get("sha256")


class Retriever(ABC):
    name: ClassVar[str] = "base"
    # Whether `index` can use an `inferqa.scale.Executor` other than local (else it refuses one).
    parallel_index: ClassVar[bool] = False
    executor: Any = None  # set by index(executor=...): where the build's batch jobs run

    def __init__(self, **options: Any):
        self.options = options
        self.bench: Benchmark | None = None
        self.index_dir: Path | None = None
        self._loaded = False

    # -- what subclasses implement ------------------------------------------------------
    def index_options(self) -> dict[str, Any]:
        """Options that change the index's content (hashed into its default directory)."""
        return dict(self.options)

    @abstractmethod
    def _build(self, bench: Benchmark, out_dir: Path) -> dict[str, Any]:
        """Write the index into `out_dir`; return facts for the manifest (counts, timings)."""

    @abstractmethod
    def _load(self, index_dir: Path) -> None:
        """Load (or memory-map) what `_build` wrote."""

    @abstractmethod
    def _search(self, qids: list[str], texts: list[str], k: int) -> Run:
        """Top-k passages per query, best first, deterministic tie order."""

    # -- shared plumbing ----------------------------------------------------------------
    def options_hash(self) -> str:
        return json_hash({"retriever": self.name, **self.index_options()})

    def default_index_dir(self, bench: Benchmark) -> Path:
        digest = self.options_hash()
        path = bench.path / "indexes" / f"{self.name}-{digest}"
        older = path.with_name(f"{self.name}-{digest[:10]}")  # 0.1 named it by 10 digits
        if not path.exists() and older.is_dir():
            try:
                older.rename(path)
            except OSError:  # a read-only benchmark: use it where it is
                return older
            print(f"inferqa: renamed index {older.name} to {path.name} (0.2 names indexes by 16 hex digits)",
                  file=sys.stderr)
        return path

    def attach(self, bench: BenchLike | None, index_dir: str | Path | None = None) -> "Retriever":
        """Point this retriever at a benchmark's index (default location) or at `index_dir`;
        `bench` is a `Benchmark` or its directory."""
        if index_dir is None and bench is None:
            raise ValueError("attach needs a benchmark or an index directory")
        bench = as_benchmark(bench) if bench is not None else None
        self.bench = bench
        self.index_dir = Path(index_dir) if index_dir is not None else self.default_index_dir(bench)
        self._loaded = False
        return self

    def index(self, bench: BenchLike, index_dir: str | Path | None = None, executor: Any = None) -> Path:
        """Build the index (or finish or reuse it) of `bench` (a `Benchmark` or its directory);
        `executor` (an `inferqa.scale.Executor`) runs the build's batch jobs elsewhere, for
        retrievers with `parallel_index`."""
        if executor is not None and not executor.is_local and not self.parallel_index:
            raise InputError(f"the {self.name} retriever builds its index here only (no --backend "
                             f"{executor.backend})", field="backend")
        bench = as_benchmark(bench)
        self.executor = executor
        self.attach(bench, index_dir)
        assert self.index_dir is not None
        created = [d for d in (self.index_dir, *self.index_dir.parents) if not d.exists()]
        self.index_dir.mkdir(parents=True, exist_ok=True)
        (self.index_dir / MANIFEST).unlink(missing_ok=True)  # a rebuild in progress is not a finished index
        try:
            facts = self._build(bench, self.index_dir)
        except InputError:  # a bad corpus leaves nothing behind it
            if created:
                shutil.rmtree(created[-1], ignore_errors=True)
            raise
        write_json(self.index_dir / MANIFEST, {"retriever": self.name, "options": self.index_options(),
                                               "benchmark": str(bench.path), "corpus": corpus_stamp(bench),
                                               **facts})
        return self.index_dir

    def ensure_index(self, bench: BenchLike, index_dir: str | Path | None = None) -> "Retriever":
        """Attach to the index of `bench` (default location or `index_dir`), building it if unfinished."""
        if not self.attach(bench, index_dir).is_indexed():
            self.index(self.bench or bench, index_dir)
        return self

    def is_indexed(self) -> bool:
        """A finished index, of this benchmark's corpus as it is now (when attached to one)."""
        if self.index_dir is None or not (self.index_dir / MANIFEST).exists():
            return False
        return self.bench is None or same_corpus(read_json(self.index_dir / MANIFEST).get("corpus"), self.bench)

    def load(self) -> None:
        if self._loaded:
            return
        if self.index_dir is None:
            raise InputError(f"{self.name} retriever has no index: call index() or attach() first")
        build = self.index_command()
        unfinished = InputError(f"no finished {self.name} index here; build it with `{build}`", file=self.index_dir)
        if not (self.index_dir / MANIFEST).exists():
            raise unfinished
        manifest = read_json(self.index_dir / MANIFEST)
        if self.bench is not None and not same_corpus(manifest.get("corpus"), self.bench):
            raise InputError(f"index was built from another {CORPUS} (the benchmark changed since); rebuild it "
                             f"with `{build}`", file=self.index_dir / MANIFEST)
        if manifest.get("retriever") != self.name:
            raise InputError(f"index was built by {manifest.get('retriever')!r}, not {self.name!r}",
                             file=self.index_dir / MANIFEST)
        built_with = json.loads(json.dumps(self.index_options(), default=str))
        if manifest.get("options") != built_with:
            raise InputError(f"index was built with options {manifest.get('options')}, not {built_with}; "
                             "rebuild it or pass the same options", file=self.index_dir / MANIFEST)
        if not self.is_indexed():  # options that share the directory but add files (dense's HNSW graph)
            raise unfinished
        self._load(self.index_dir)
        self._loaded = True

    def index_command(self) -> str:
        """The `inferqa index` command that builds this index where it is looked for: the
        options that differ from the retriever's declared defaults repeated (--model, the rest
        as --opt), and --index-dir when it is not the default one."""
        bench = self.bench.path if self.bench is not None else "BENCH_DIR"
        words = ["inferqa", "index", str(bench), "--retriever", self.name]
        try:
            declared = registry.options_of("retriever", self.name)
        except InputError:  # a retriever made without the registry: its options are all repeated
            declared = {}
        for key, value in self.options.items():
            default = declared[key].default if key in declared else object()
            if value == default or (value is None and default in ("", None)):
                continue
            text = "none" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
            words += ["--model", text] if key == "model" else ["--opt", f"{key}={text}"]
        if self.bench is not None and self.index_dir is not None and self.index_dir != self.default_index_dir(self.bench):
            words += ["--index-dir", str(self.index_dir)]
        return shlex.join(words)

    def score_passages(self, query: str, pids: Sequence[str]) -> np.ndarray:
        """The score `search` gives each of `pids` for `query` (float64, in the order given),
        read from the index without ranking the corpus; a pid not in the index is an
        InputError. Retrievers that cannot score given passages refuse it."""
        raise InputError(f"the {self.name} retriever cannot score given passages (no score_passages)",
                         field="retriever")

    def _index_positions(self, pids: Sequence[str], index_pids: np.ndarray) -> np.ndarray:
        """Each pid's row in `index_pids` (the loaded index's passage ids), looked up in a
        table built once per loaded index."""
        table = self.__dict__.get("_pid_rows")
        if table is None or table[0] is not index_pids:
            rows = {p: i for i, p in enumerate(np.asarray(index_pids).astype("U").tolist())}
            table = self._pid_rows = (index_pids, rows)
        try:
            return np.fromiter((table[1][p] for p in pids), dtype=np.int64, count=len(pids))
        except KeyError as exc:
            raise InputError(f"passage {exc.args[0]!r} is not in the {self.name} index", file=self.index_dir,
                             field="id") from None

    def search(self, queries: Mapping[str, str], k: int) -> Run:
        k = DEPTH.check(k, f"retriever {self.name!r}", text=False)
        self.load()
        qids = list(queries)
        run = self._search(qids, [queries[q] for q in qids], k) if qids else Run()
        run.tag = self.name
        # the benchmark it was made against, marked on the file however it is written (`Run.to_file`)
        run.bench_hash = (self.bench.meta or {}).get("content_hash") if self.bench is not None else None
        return run


    def retrieve(self, bench: BenchLike, split: str | None = RETRIEVE_SPLIT.default,
                 depth: int = DEPTH.default, index_dir: str | Path | None = None) -> Run:
        """The top `depth` passages for each question of `split` (None or "all": every
        question) from the index of `bench` (attached here unless already attached to it)."""
        b = as_benchmark(bench)
        if self.bench is None or self.bench.path != b.path or index_dir is not None:
            self.attach(b, index_dir)
        return self.search(question_queries(b, b.split_qids(split)), depth)


def question_queries(bench: Benchmark, qids: list[str] | None = None) -> dict[str, str]:
    """Query text per question id: the question itself (QUIT's setting)."""
    questions = bench.questions
    qids = list(questions) if qids is None else qids
    missing = [q for q in qids if q not in questions]
    if missing:
        raise InputError(f"unknown question id {missing[0]!r}", file=bench.path / "questions.jsonl")
    return {q: questions[q].text for q in qids}
