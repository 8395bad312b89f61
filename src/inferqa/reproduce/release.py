"""The released `results/` tree of the QUIT authors, read as their table scripts read it.

Every file is named as the scripts open it (`retriever/bm25/retriever.json`) and found on disk as
the hub stores it (`retriever/bm25/retriever.zsd`; `.zst`, `.gz` and the plain name are accepted
too). A file that is not there is noted once in `absent` and the rows that need it are left out; a
name taken by something other than a regular file (a folder, a FIFO, a device) is an InputError
naming it. Every file is read through `inferqa.formats` (which opens it through `inferqa.io`:
compressed or not), so a file of the wrong shape is the same one-line InputError naming file, record
and field as anywhere else. The last few parsed files are kept, since several tables read the same
run (a retriever's run of the release is 1,000 passages for each of 1,728 questions: not all of them
stay in memory)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats import RANKIFY, Answers, ReaderRecord, RetrieverRecord, Run, read_baseline_labels, read_retriever_records
from ..formats.corpus import iter_collection
from ..io import check_file

KEEP = 8  # parsed files kept (the index and the baseline labels always among them)
INDEX = "index/test/retriever.jsonl"
CORPUS = "index/corpus.jsonl"
BASELINE = "baselines/baseline.json"


def stored_name(rel: str) -> str:
    """The name the hub gives `rel`: its .json/.jsonl suffix replaced by .zsd."""
    return str(Path(rel).with_suffix(".zsd"))


Question = RetrieverRecord  # a test question of the index: its answers and own passages


class Release:
    def __init__(self, root: str | Path):
        root = Path(root)
        if not root.exists():
            raise InputError("not found (expected the results/ folder of the QUIT release)", file=root)
        if not root.is_dir():
            raise InputError("expected the results/ folder of the QUIT release (a directory)", file=root)
        # `inferqa download quit --what results --out DIR` puts the tree under DIR/results.
        if (root / "results").is_dir() and not (root / "index").exists():
            root = root / "results"
        self.root = root
        self.absent: list[str] = []
        self._cache: OrderedDict[tuple, Any] = OrderedDict()

    def find(self, rel: str) -> Path | None:
        stem = self.root / Path(rel).with_suffix("")
        for path in (stem.with_suffix(".zsd"), stem.with_suffix(".zst"), self.root / rel,
                     Path(f"{self.root / rel}.zst"), Path(f"{self.root / rel}.gz"), stem.with_suffix(".gz")):
            if path.is_file():
                return path
            if path.exists():  # a folder, FIFO or device under a released name: refused, never skipped
                check_file(path)
        name = stored_name(rel)
        if name not in self.absent:
            self.absent.append(name)
        return None

    def _cached(self, key: tuple, load):
        if key in self._cache:
            self._cache.move_to_end(key)
        else:
            path = self.find(key[0])
            self._cache[key] = None if path is None else load(path)
            while len(self._cache) > KEEP:
                oldest = next(k for k in self._cache if k[0] not in (INDEX, BASELINE))
                del self._cache[oldest]
        return self._cache[key]

    def index(self) -> list[Question] | None:
        """index/test/retriever.jsonl: each test question's answers and own passages."""
        return self._cached((INDEX,), lambda p: read_retriever_records(p, complete=True))

    def ranking(self, rel: str, key: str) -> list[list[str]] | None:
        """The passage ids of `key` (`ctxs` or `reranked_ctxs`) of each question of a run file."""
        return self._cached((rel, key), lambda p: _read_ranking(p, key))

    def reader(self, rel: str) -> tuple[Path, list[ReaderRecord]] | None:
        """A reader output (rag.json) read as any answers file, with its records in file order."""
        return self._cached((rel, "reader"), lambda p: (p, Answers.from_file(p, complete=True).records))

    def word_counts(self, rel: str, depth: int | None = None) -> list[int] | None:
        """`len(text.split(" "))` of every passage of a run file (its `ctxs[:depth]`) or of
        the corpus (`contents`), as their statistics scripts count words."""
        path = self.find(rel)
        if path is None:
            return None
        if rel == CORPUS:
            return [len(text.split(" ")) for _, _, text in iter_collection(path)]
        run = _read_run(path, "ctxs", texts=True)
        return [_words(text, path, i, f"ctxs[{r}].text")
                for i, q in enumerate(run.info) for r, text in enumerate(q["texts"][:depth])]

    def baseline(self) -> list[dict[str, int]] | None:
        """baselines/baseline.json: per question, the label of every comparison-corpus passage."""
        return self._cached((BASELINE,), read_baseline_labels)


def _words(text: Any, path: Path, record: object, field: str) -> int:
    if not isinstance(text, str):
        raise InputError("expected the passage text", file=path, record=record, field=field)
    return len(text.split(" "))


def _read_run(path: Path, key: str, texts: bool = False) -> Run:
    """A run of the release, read by `Run.from_file` with every check of a Rankify run: its
    `key` list (`ctxs` even where `reranked_ctxs` is there too), question i named `str(i)`
    (matched to index/test/retriever.jsonl by position), a passage listed twice kept (their
    scripts count it twice)."""
    return Run.from_file(path, RANKIFY, ranking=key, by_position=True, allow_duplicates=True, texts=texts)


def _read_ranking(path: Path, key: str) -> list[list[str]]:
    run = _read_run(path, key)
    return [[pid for pid, _ in run[qid]] for qid in run.qids]
