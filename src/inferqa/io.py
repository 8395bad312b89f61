"""Every file the library reads and writes goes through here.

Reading: `iter_lines`, `read_text`, `read_json`, `iter_jsonl` and `read_csv` turn a
missing file, a directory, bytes that are not UTF-8, an empty file and a malformed record
into an `InputError` naming the file and the line (record). Writing: `atomic_open` and
`atomic_dir` write a temp file or folder and rename it, so nothing half-written is left.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from .errors import InputError


# -- writing ---------------------------------------------------------------------------------
# Temp siblings are named `.NAME.inferqa-PID-TOKEN.tmp` (`.old` for a folder being replaced) and
# locked with flock while in use, so a later writer of NAME can tell one left by a killed process.
_TEMP = re.compile(r"(\d+)-[0-9a-f]{8}\.(tmp|old)")


def check_output(path: str | os.PathLike, *, kind: str = "file") -> Path:
    """`path` as a Path if a file (`kind="file"`) or folder (`kind="dir"`) can be written there,
    else an InputError naming it: an existing directory where a file goes (or a file where a
    folder goes), a special file, a file in its parent chain, or a folder that is not writable.
    Commands call it on every output before any model loads or work starts."""
    if kind not in ("file", "dir"):
        raise ValueError(f"kind must be 'file' or 'dir', not {kind!r}")
    path = Path(path)
    try:
        _check_output(path, kind)
    except PermissionError as exc:  # an ancestor we may not search: stat itself fails
        raise InputError(f"cannot reach {exc.filename or path}: permission denied", file=path) from None
    return path


def _check_output(path: Path, kind: str) -> None:
    if path.is_dir() if kind == "file" else path.exists() and not path.is_dir():
        raise InputError(f"is a {'directory' if kind == 'file' else 'file'}; the output must be "
                         f"a {'file' if kind == 'file' else 'folder'} path", file=path)
    if kind == "file" and path.exists() and not path.is_file():
        raise InputError("is a special file (device, FIFO or socket); the output must be a regular file path",
                         file=path)
    if kind == "dir" and path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise InputError("folder is not writable", file=path)
    for folder in path.absolute().parents:
        if folder.is_dir():
            if not os.access(folder, os.W_OK | os.X_OK):
                raise InputError(f"folder {folder} is not writable", file=path)
            break
        if folder.exists() or folder.is_symlink():
            kind_of = "a file" if folder.exists() else "a broken link"
            raise InputError(f"{folder} is {kind_of}, not a folder", file=path)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    with contextlib.suppress(OSError, IndexError):  # a killed child not yet reaped is a zombie: gone
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    return True


def _lock(path: Path, block: bool = True) -> int | None:
    """An fd of `path` holding its flock, or None when another process holds it (`block=False`)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def sweep_stale(path: str | os.PathLike) -> list[Path]:
    """Remove the temp files and folders of `path` left by processes that no longer run (their
    pid is gone and their lock is free), with a one-line notice each on stderr; return them."""
    path = Path(path)
    prefix = f".{path.name}.inferqa-"
    removed = []
    try:
        entries = [e.name for e in os.scandir(path.parent) if e.name.startswith(prefix)]
    except OSError:
        return removed
    for name in entries:
        m = _TEMP.fullmatch(name[len(prefix):])
        if not m or _running(int(m[1])):
            continue
        stale = path.parent / name
        try:
            fd = _lock(stale, block=False)
        except OSError:
            continue  # gone already (another sweeper) or unreadable: leave it
        if fd is None:
            continue
        try:
            if m[2] == "old" and not path.exists():  # killed mid-swap: the old output goes back
                os.replace(stale, path)
                done = f"restored {path} from {stale}"
            else:
                done = f"removed {stale}"
                _remove(stale)
        finally:
            os.close(fd)
        print(f"inferqa: {done}, a temporary left by process {m[1]}, which no longer runs", file=sys.stderr)
        removed.append(stale)
    return removed


def _temp_name(path: Path, suffix: str) -> Path:
    return path.with_name(f".{path.name}.inferqa-{os.getpid()}-{secrets.token_hex(4)}.{suffix}")


@contextlib.contextmanager
def temp_beside(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """A new, locked temp file (or folder) beside `path`, created with the mode open() or mkdir()
    would give (the umask's). Rename it onto `path` inside the block; whatever is not renamed
    when the block ends, by success or error, is removed. Stale temps of `path` are swept first."""
    path = check_output(path, kind="dir" if directory else "file")
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(path)
    while True:
        tmp = _temp_name(path, "tmp")
        try:
            if directory:
                os.mkdir(tmp, 0o777)
            else:
                os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
            break
        except FileExistsError:
            continue
    fd = None
    try:
        fd = _lock(tmp)
        yield tmp
    finally:
        if fd is not None:
            os.close(fd)
        _remove(tmp)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temp file beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    with temp_beside(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temp directory beside `path`; it replaces `path` only if the block succeeds."""
    path = Path(path)
    with temp_beside(path, directory=True) as tmp:
        yield tmp
        if not path.exists():
            os.replace(tmp, path)
            return
        if not overwrite:
            raise FileExistsError(path)
        old = _temp_name(path, "old")
        os.replace(path, old)
        fd = _lock(old)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.replace(old, path)
            raise
        else:
            shutil.rmtree(old, ignore_errors=True)
        finally:
            os.close(fd)


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
