"""Every file the library reads and writes goes through here.

Reading: `iter_lines`, `read_text`, `read_json`, `iter_jsonl` and `read_csv` turn a
missing file, a directory, bytes that are not UTF-8, an empty file and a malformed record
into an `InputError` naming the file and the line (record). Writing: `atomic_open` and
`atomic_dir` write a temp file or folder and rename it, so nothing half-written is left.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from .errors import InputError


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temp file beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temp directory beside `path`; it replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            if not overwrite:
                raise FileExistsError(path)
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


def check_file(path: str | os.PathLike) -> Path:
    """`path` as a Path, or an InputError if it is missing or not a regular file."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=path)
    if path.is_dir():
        raise InputError("expected a file, got a directory", file=path)
    return path


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file (a leading BOM is dropped).

    Lines are decoded one by one, so bytes that are not UTF-8 name their line."""
    path = check_file(path)
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"not UTF-8 text (byte {exc.start + 1} of the line: {exc.reason})",
                                 file=path, record=f"line {lineno}") from None
            yield lineno, (line.removeprefix("\ufeff") if lineno == 1 else line)


def read_text(path: str | os.PathLike, *, allow_empty: bool = False) -> str:
    """The whole UTF-8 text of `path`; an empty (or blank) file is an error unless allowed."""
    text = "".join(line for _, line in iter_lines(path))
    if not allow_empty and not text.strip():
        raise InputError("file is empty", file=path)
    return text


def read_json(path: str | os.PathLike) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=path) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=path) from None


def iter_jsonl(path: str | os.PathLike, *, allow_empty: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; a malformed line or a file with no
    line at all (unless `allow_empty`) raises InputError."""
    seen = False
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg}", file=path, record=f"line {lineno}") from None
        except RecursionError:
            raise InputError("JSON nested too deeply", file=path, record=f"line {lineno}") from None
        if not isinstance(obj, dict):
            raise InputError(f"expected a JSON object, got {type(obj).__name__}", file=path,
                             record=f"line {lineno}")
        seen = True
        yield lineno, obj
    if not seen and not allow_empty:
        raise InputError("file is empty (no JSON lines)", file=path)


def read_csv(path: str | os.PathLike, *,
             delimiter: str = ",") -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """(header, [(row number, {column: cell})]) of a CSV with a header row (row 1).

    A row with more cells than the header and malformed quoting are errors naming the row;
    rows with fewer cells get "" for the rest."""
    text = read_text(path)
    try:
        reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
        header = next(reader, [])
        rows = []
        for n, cells in enumerate(reader, 2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise InputError(f"{len(cells)} cells but {len(header)} header columns", file=path,
                                 record=f"row {n}")
            rows.append((n, {col: (cells[i] if i < len(cells) else "") for i, col in enumerate(header)}))
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=path) from None
    return header, rows


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> int:
    n = 0
    with atomic_open(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False))
            fh.write("\n")
            n += 1
    return n


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
