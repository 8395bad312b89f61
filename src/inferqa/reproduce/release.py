"""The released `results/` tree of the QUIT authors, read as their table scripts read it.

Every file is named as the scripts open it (`retriever/bm25/retriever.json`) and found on
disk as the hub stores it (`retriever/bm25/retriever.zsd`; `.zst`, `.gz` and the plain name
are accepted too). A file that is not there is noted once in `absent` and the rows that
need it are left out. Every file is read through `inferqa.formats` (which opens it through
`inferqa.io`: compressed or not), so a file of the wrong shape is the same one-line
InputError naming file, record and field as anywhere else; here only the checks of what
the tables need are added. The last few parsed files are kept, since several tables read the same run (a
retriever's run of the release is 1,000 passages for each of 1,728 questions: not all
of them stay in memory).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..formats.answers import ReaderRecord, read_reader_output, retriever_record
from ..formats.corpus import iter_collection
from ..formats.rankify import iter_rankings, passage_id, read_question_array
from ..io import iter_jsonl

KEEP = 8  # parsed files kept (the index and the baseline labels always among them)
INDEX = "index/test/retriever.jsonl"
CORPUS = "index/corpus.jsonl"
BASELINE = "baselines/baseline.json"


def stored_name(rel: str) -> str:
    """The name the hub gives `rel`: its .json/.jsonl suffix replaced by .zsd."""
    return str(Path(rel).with_suffix(".zsd"))


@dataclass(frozen=True)
class Context:
    id: str
    label: int
    answers: dict[str, str]  # reader -> stored answer (`rag_answers`)


@dataclass(frozen=True)
class Question:
    answers: list[str]
    contexts: list[Context]

    def labels(self) -> dict[str, int]:
        return {c.id: c.label for c in self.contexts}


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
        return self._cached((INDEX,), _read_index)

    def ranking(self, rel: str, key: str) -> list[list[str]] | None:
        """The passage ids of `key` (`ctxs` or `reranked_ctxs`) of each question of a run file."""
        return self._cached((rel, key), lambda p: _read_ranking(p, key))

    def reader(self, rel: str) -> tuple[Path, list[ReaderRecord]] | None:
        return self._cached((rel, "reader"), lambda p: (p, _read_reader(p)))

    def word_counts(self, rel: str, depth: int | None = None) -> list[int] | None:
        """`len(text.split(" "))` of every passage of a run file (its `ctxs[:depth]`) or of
        the corpus (`contents`), as their statistics scripts count words."""
        path = self.find(rel)
        if path is None:
            return None
        if rel == CORPUS:
            return [len(text.split(" ")) for _, _, text in iter_collection(path)]
        counts = []
        for i, ctxs in iter_rankings(path, "ctxs"):
            for r, ctx in enumerate(ctxs[:depth]):
                text = ctx.get("text") if isinstance(ctx, dict) else None
                counts.append(_words(text, path, i, f"ctxs[{r}].text"))
        return counts

    def baseline(self) -> list[dict[str, int]] | None:
        """baselines/baseline.json: per question, the label of every comparison-corpus passage."""
        return self._cached((BASELINE,), _read_baseline)


def _words(text: Any, path: Path, record: object, field: str) -> int:
    if not isinstance(text, str):
        raise InputError("expected the passage text", file=path, record=record, field=field)
    return len(text.split(" "))


def _read_index(path: Path) -> list[Question]:
    out = []
    for lineno, obj in iter_jsonl(path):
        where = {"file": path, "record": f"line {lineno}"}
        rec = retriever_record(obj, **where)
        if rec.answers is None:
            raise InputError("expected a list of answer strings", field="answers", **where)
        for j, ctx in enumerate(rec.contexts):
            if ctx.label is None:
                raise InputError("expected an integer label, got null", field=f"contexts[{j}].label", **where)
        out.append(Question(rec.answers, [Context(c.id, c.label, c.reader_answers) for c in rec.contexts]))
    return out


def _read_ranking(path: Path, key: str) -> list[list[str]]:
    return [[passage_id(ctx, f"{key}[{r}]", path, i) for r, ctx in enumerate(ctxs)]
            for i, ctxs in iter_rankings(path, key)]


def _read_reader(path: Path) -> list[ReaderRecord]:
    out = read_reader_output(path)
    for i, rec in enumerate(out):
        if rec.qid is None:
            raise InputError("expected an object with a string id", file=path, record=i, field="id")
        if rec.answers is None:
            raise InputError("expected a list of answer strings", file=path, record=i, field="answers")
    return out


def stored_answer(path: Path, record: int, rec: ReaderRecord, model: str, method: str) -> str:
    """`predicted_answer[model][f"{id}_{method}"]` of one rag.json record, as stored."""
    field = f"predicted_answer.{model}"
    answers = rec.predicted.get(model)
    if not isinstance(answers, dict):
        raise InputError(f"no answers of reader {model}", file=path, record=record, field=field)
    key = f"{rec.qid}_{method}"
    answer = answers.get(key)
    if not isinstance(answer, str):
        raise InputError("no answer string" if answer is None else f"{answer!r} is not a string", file=path,
                         record=record, field=f"{field}.{key}")
    return answer


def _read_baseline(path: Path) -> list[dict[str, int]]:
    out = []
    for i, obj in enumerate(read_question_array(path)):
        ctxs = obj.get("ctxs") if isinstance(obj, dict) else None
        if not isinstance(ctxs, dict):
            raise InputError("expected an object passage id -> {label, ...}", file=path, record=i, field="ctxs")
        labels = {}
        for pid, ctx in ctxs.items():
            label = ctx.get("label") if isinstance(ctx, dict) else None
            if not isinstance(label, int) or isinstance(label, bool):
                raise InputError(f"label {label!r} is not an integer", file=path, record=i,
                                 field=f"ctxs.{pid}.label")
            labels[pid] = label
        out.append(labels)
    return out
