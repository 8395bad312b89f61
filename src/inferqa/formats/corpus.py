"""The one corpus reader: a benchmark's corpus.jsonl (`{"id", "text", "qid"}` per line), read
strictly by every retriever and export, whether it streams the passages (`iter_corpus`) or
takes only their ids in one fast pass (`corpus_ids`). A last line cut mid-record is an
error naming its line in both."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..errors import InputError
from ..io import iter_jsonl, open_input
from ..records import Passage, parse_passage_id

if TYPE_CHECKING:
    from .benchmark import Benchmark

CORPUS = "corpus.jsonl"
_ID = re.compile(rb'"id"\s*:\s*"([^"\\]*)"')
_CHUNK = 1 << 26


def corpus_path(source: "Benchmark | str | os.PathLike") -> Path:
    path = Path(source) if isinstance(source, (str, os.PathLike)) else source.file(CORPUS)
    if not path.exists() and path.name == CORPUS:
        raise InputError(f"{CORPUS} is missing", file=path.parent)
    return path


def iter_corpus(source: "Benchmark | str | os.PathLike") -> Iterator[Passage]:
    """The passages of a benchmark (or of a corpus.jsonl file), streamed in file order."""
    f = corpus_path(source)
    for lineno, obj in iter_jsonl(f):
        where = {"file": f, "record": f"line {lineno}"}
        pid, text = obj.get("id"), obj.get("text")
        if not isinstance(pid, str):
            raise InputError("missing field" if pid is None else f"expected a string, got {type(pid).__name__}",
                             field="id", **where)
        if not isinstance(text, str):
            raise InputError("missing field" if text is None else f"expected a string, got {type(text).__name__}",
                             field="text", **where)
        try:
            qid, order = parse_passage_id(pid)
        except ValueError as exc:
            raise InputError(str(exc), field="id", **where) from None
        yield Passage(id=pid, qid=str(obj.get("qid", qid)), order=order, text=text)


def iter_collection(path: str | os.PathLike) -> Iterator[tuple[int, str, str]]:
    """(line number, id, contents) of a Pyserini JSONL collection (`{"id", "contents",
    "title"}` per line: what `export pyserini` writes and the QUIT release's corpus.jsonl)."""
    for lineno, obj in iter_jsonl(path):
        where = {"file": path, "record": f"line {lineno}"}
        for name in ("id", "contents"):
            value = obj.get(name)
            if not isinstance(value, str):
                raise InputError("missing field" if value is None else
                                 f"expected a string, got {type(value).__name__}", field=name, **where)
        yield lineno, obj["id"], obj["contents"]


def corpus_ids(source: "Benchmark | str | os.PathLike") -> np.ndarray:
    """All passage ids of corpus.jsonl, in file order, as an `S` array.

    A regex pass over large blocks (one match per line expected); a block where that does
    not hold is parsed line by line with json. The last line, which a cut file ends inside,
    is parsed in full."""
    path = corpus_path(source)
    parts: list[np.ndarray] = []
    carry = b""  # the unfinished last line of the previous block
    lines = 0
    with open_input(path) as fh:
        while block := fh.read(_CHUNK):
            first = block.find(b"\n") + 1
            if first == 0:
                carry += block
                continue
            parts.append(_ids_of_block(memoryview(carry + block[:first]), path, lines + 1))
            cut = block.rfind(b"\n") + 1
            with memoryview(block)[first:cut] as view:
                if len(view):
                    parts.append(_ids_of_block(view, path, lines + 2))
            lines += block.count(b"\n", 0, cut)
            carry = block[cut:]
    if carry.strip():
        try:
            json.loads(carry)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"truncated: the last record ends mid-way ({getattr(exc, 'msg', exc)})", file=path,
                             record=f"line {lines + 1}") from None
        parts.append(_ids_of_block(memoryview(carry + b"\n"), path, lines + 1))
    parts = [p for p in parts if len(p)]
    if not parts:
        raise InputError(f"{path.name} holds no passages", file=path)
    return np.concatenate(parts)


def _ids_of_block(block: memoryview, path: Path, first_line: int) -> np.ndarray:
    """The ids of a block of whole lines (the first is line `first_line` of the file). The
    regex pass is trusted where each line holds one id and ends its JSON object; else the
    lines are parsed, and a cut or malformed record is an error naming its line."""
    found = _ID.findall(block)
    data = bytes(block)
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    closed = data.count(b"}\n") + data.rstrip(b"\n").endswith(b"}") * (not data.endswith(b"\n"))
    if len(found) != lines or closed != lines:
        found = []
        for i, line in enumerate(data.split(b"\n")):
            if not line.strip():
                continue
            where = {"file": path, "record": f"line {first_line + i}"}
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise InputError(f"malformed or cut JSON record ({getattr(exc, 'msg', exc)})", **where) from None
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                raise InputError("corpus line without a passage id", field="id", **where)
            found.append(obj["id"].encode())
    return np.array(found, dtype=f"S{max(map(len, found))}") if found else np.array([], dtype="S1")


# -- writing ---------------------------------------------------------------------------------
import contextlib  # noqa: E402  (the writer's own imports, kept beside it)
from typing import Any, Iterable, Sequence  # noqa: E402

from ..io import atomic_open  # noqa: E402


class CorpusWriter:
    """Lines of a corpus.jsonl being written (see `corpus_writer`), passage by passage or a
    question's passages at once."""

    def __init__(self, fh: Any):
        self._fh = fh
        self.count = 0

    def write(self, passage: Passage) -> None:
        self._fh.write(json.dumps(passage.to_dict(), ensure_ascii=False) + "\n")
        self.count += 1

    def write_question(self, qid: str, hints: Sequence[str],
                       orders: Iterable[tuple[tuple[int, ...], str]]) -> Iterator[tuple[tuple[int, ...], str]]:
        """Write the passage of each (hint order, id suffix) of `orders` of question `qid`, whose
        hint texts are `hints`, yielding (order, passage id) as each is written. The same bytes as
        `write(Passage)` (text: the hints joined by one space, stripped), built from each hint's
        JSON escape computed once (escaping commutes with joining)."""
        from .benchmark import HINT_SEPARATOR  # the benchmark's passage rule

        escaped = [json.dumps(t, ensure_ascii=False)[1:-1] for t in hints]
        # A verbatim release hint may start or end with whitespace, which the passage's strip removes
        # (escaped text cannot be stripped: "\n" is two characters there).
        padded = any(t != t.strip() for t in hints)
        qid_json = json.dumps(qid, ensure_ascii=False)
        sep = json.dumps(HINT_SEPARATOR)[1:-1]
        for order, suffix in orders:
            pid = qid + suffix
            if padded:
                text = json.dumps(HINT_SEPARATOR.join(hints[i] for i in order).strip(), ensure_ascii=False)[1:-1]
            else:
                text = sep.join([escaped[i] for i in order])
            self._fh.write(f'{{"id": {json.dumps(pid, ensure_ascii=False)}, "text": "{text}", "qid": {qid_json}}}\n')
            self.count += 1
            yield order, pid


@contextlib.contextmanager
def corpus_writer(path: str | os.PathLike) -> Iterator[CorpusWriter]:
    """A `CorpusWriter` of a corpus.jsonl at `path`, which it replaces only when the block succeeds."""
    with atomic_open(path) as fh:
        yield CorpusWriter(fh)


def write_corpus(path: str | os.PathLike, passages: Iterable[Passage]) -> int:
    """`passages` as a corpus.jsonl at `path` (replaced atomically); returns the passages written."""
    with corpus_writer(path) as out:
        for p in passages:
            out.write(p)
    return out.count
