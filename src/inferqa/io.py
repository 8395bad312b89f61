"""Every file the library reads and writes goes through here.

Reading: every input is opened by `open_input` (`-` is stdin; only regular files, so a FIFO or a
device cannot hang a command; .zsd/.zst/.gz decompressed while streaming); its readers turn a
missing or special file, bytes that are not UTF-8, an empty file, a malformed or truncated record
and a corrupt stream into an `InputError` naming the file and the line (record). Writing:
`atomic_open` and `atomic_dir` write a temp file or folder and rename it, so nothing half-written is left.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import fcntl
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import stat
import sys
from pathlib import Path
from typing import IO, Any, BinaryIO, Iterable, Iterator

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
    except PermissionError as exc:  # an ancestor we may not search: stat itself fails
        raise InputError(f"cannot reach {exc.filename or path}: permission denied", file=path) from None
    return path


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


def _lock(path: str | os.PathLike, block: bool = True) -> int | None:
    """An fd of `path` holding its flock, or None when another process holds it (`block=False`)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, BlockingIOError):
            return None
        raise
    return fd


@contextlib.contextmanager
def flocked(path: str | os.PathLike) -> Iterator[None]:
    """An exclusive flock on the file or folder `path` while the block runs."""
    fd = _lock(path)
    try:
        yield
    finally:
        os.close(fd)


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
    with _write_errors(path):  # what os.access could not foresee (root on a root-squashed share)
        path.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(path)
        while True:
            tmp = _temp_name(path, "tmp")
            with contextlib.suppress(FileExistsError):
                if directory:
                    os.mkdir(tmp, 0o777)
                else:
                    os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
                break
    try:
        with _write_errors(path, _FULL), flocked(tmp):
            yield tmp
    finally:
        _remove(tmp)


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EROFS}  # write failures, whatever wrote


@contextlib.contextmanager
def _write_errors(path: Path, only: set[int] | None = None) -> Iterator[None]:
    """An OSError (of `only`'s kinds) as one line naming the output `path`."""
    try:
        yield
    except OSError as exc:
        if only is not None and exc.errno not in only:
            raise
        raise InputError(f"cannot write: {exc.strerror or exc}", file=path) from None


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temp file beside `path`; rename it onto `path` only if the block succeeds."""
    with temp_beside(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


WRITTEN = ".inferqa-written.json"  # in a folder written with own_files: the files the last write wrote


def refuse_existing_folder(path: str | os.PathLike, overwrite: bool) -> None:
    """An existing non-empty folder (or a file) at `path` is an InputError unless `overwrite`:
    called before any work, so a refused command has changed nothing."""
    path = Path(path)
    if not overwrite and path.exists() and not _empty_folder(path):
        raise InputError("already exists; give --overwrite to replace it", file=path)


def _empty_folder(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike, overwrite: bool = True, *, own_files: bool = False) -> Iterator[Path]:
    """Yield a temp directory beside `path`; it replaces `path` only if the block succeeds.
    `overwrite=False` refuses an existing non-empty `path` before the block runs. Without
    `own_files` the whole folder is replaced (a stage's cache). With `own_files` (a folder a user
    names, which may hold their files too) only the files the block wrote replace theirs, and
    those the previous such write recorded (WRITTEN) but this one did not write are removed."""
    path = Path(path)
    refuse_existing_folder(path, overwrite)
    with temp_beside(path, directory=True) as tmp:
        yield tmp
        if own_files:
            write_json(tmp / WRITTEN, sorted(str(f.relative_to(tmp)) for f in tmp.rglob("*") if not f.is_dir()))
        if not path.exists() or _empty_folder(path):
            os.replace(tmp, path)
        elif not overwrite:
            raise FileExistsError(path)
        elif own_files:
            _move_files_into(tmp, path)
        else:
            _swap_folder(tmp, path)


def _move_files_into(new: Path, path: Path) -> None:
    """The files of folder `new` renamed onto their places in `path`, then the files `path`'s
    old WRITTEN lists but `new` does not hold removed (with the folders that leaves empty)."""
    old_record = path / WRITTEN
    before = read_json(old_record) if old_record.is_file() else []
    written = set(read_json(new / WRITTEN))
    for name in sorted(written - {WRITTEN}) + [WRITTEN]:  # the record last: it vouches for the rest
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        os.replace(new / name, path / name)
    for name in before if isinstance(before, list) else []:
        stale = path / str(name)
        if str(name) in written or not stale.resolve().is_relative_to(path.resolve()) or not stale.is_file():
            continue
        stale.unlink()
        for folder in stale.parents:
            if folder == path or any(folder.iterdir()):
                break
            folder.rmdir()


def _swap_folder(new: Path, path: Path) -> None:
    """Folder `new` renamed onto `path`, the old folder moved aside first and removed after."""
    old = _temp_name(path, "old")
    os.replace(path, old)
    with flocked(old):
        try:
            os.replace(new, path)
        except BaseException:
            os.replace(old, path)
            raise
        shutil.rmtree(old, ignore_errors=True)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, ensure_ascii=False)
        fh.write("\n")


COMPRESSIONS = {".zsd": "zstd", ".zst": "zstd", ".gz": "gzip"}  # .zsd: the QUIT release's name for zstd
_MAGIC = {b"\x28\xb5\x2f\xfd": "zstd", b"\x1f\x8b": "gzip"}
STDIN = "-"
_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_file(path: str | os.PathLike) -> Path:
    """`path` as a Path (a `PinnedPath` stays pinned), or an InputError if it is missing or not a
    regular file. Special files are refused before they are opened: opening a FIFO blocks until
    a writer comes, and a device such as /dev/zero never ends."""
    path = path if isinstance(path, Path) else Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError("file not found", file=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    if stat.S_ISDIR(mode):
        raise InputError("expected a file, got a directory", file=path)
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise InputError(f"expected a regular file, got {kind}", file=path)
    return path


def inner_path(path: str | os.PathLike) -> Path:
    """The name of what a file holds: `train.json` for `train.json.zst`, `train` for the
    release's `train.zsd` (which holds train.json)."""
    path = Path(path)
    return path.with_suffix("") if path.suffix.lower() in COMPRESSIONS else path


def inner_suffix(path: str | os.PathLike) -> str:
    return inner_path(path).suffix.lower()


def first_byte(path: str | os.PathLike) -> bytes:
    """The first non-blank byte of what a file holds (decompressed), b"" for a blank file.
    Stdin is peeked at, not consumed."""
    with open_input(path) as fh:
        head = fh.peek(4096).lstrip() if hasattr(fh, "peek") else b""
        while not head:
            chunk = fh.read(1 << 16)
            if not chunk:
                return b""
            head = chunk.lstrip()
    return head[:1]


def content_suffix(path: str | os.PathLike) -> str:
    """`inner_suffix`, or for a compressed file without an inner name (`train.zsd`) `.json`
    when its content opens a JSON array and `.jsonl` otherwise."""
    suffix = inner_suffix(path)
    if suffix or Path(path).suffix.lower() not in COMPRESSIONS:
        return suffix
    return ".json" if first_byte(path) == b"[" else ".jsonl"


class _Pin:
    """An open file descriptor (None: the file was not there), closed with the last path holding it."""

    def __init__(self, fd: int | None):
        self.fd, self._close = fd, os.close  # os.close kept: at exit the module may be gone first

    def __del__(self) -> None:
        if self.fd is not None:
            self._close(self.fd)


class _PinnedReader(io.RawIOBase):
    """Reads a pinned file from its start, with an offset of its own (`os.pread`)."""

    def __init__(self, pin: _Pin):
        self.pin, self.pos = pin, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        data = os.pread(self.pin.fd, len(buf), self.pos)
        buf[:len(data)] = data
        self.pos += len(data)
        return len(data)


class PinnedPath(type(Path())):  # type: ignore[misc]
    """A path that reads the file which was at it when `pin_file` opened it, whatever has been
    renamed onto the name or removed since (a benchmark's files as committed when it was opened:
    `formats.benchmark`). It names the file as a path does (errors, `str`); reading it
    (`open` for reading, `read_text`, `stat`, `exists`, every reader of this module) reads the
    pinned file. Paths derived from it (`parent`, `/`) and copies (pickle) are plain paths."""

    pinned: _Pin | None = None

    def _pin(self) -> _Pin:
        if self.pinned.fd is None:
            raise FileNotFoundError(errno.ENOENT, "not there when it was pinned", str(self))
        return self.pinned

    def stat(self, *, follow_symlinks: bool = True) -> os.stat_result:
        if self.pinned is None:
            return super().stat(follow_symlinks=follow_symlinks)
        return os.fstat(self._pin().fd)

    def open(self, mode: str = "r", buffering: int = -1, encoding: str | None = None,  # type: ignore[override]
             errors: str | None = None, newline: str | None = None) -> IO:
        if self.pinned is None or mode not in ("r", "rb", "rt"):
            return super().open(mode, buffering, encoding, errors, newline)
        raw = io.BufferedReader(_PinnedReader(self._pin()))
        return raw if mode == "rb" else io.TextIOWrapper(raw, io.text_encoding(encoding), errors, newline)


def pin_file(path: str | os.PathLike, source: str | os.PathLike | None = None) -> PinnedPath:
    """`path` pinned to the regular file at `source` (default: `path`) now: reading it later
    reads that file. Nothing there: pinned as missing (`exists()` is False). Anything else
    there (a folder, a FIFO, an unreadable file) is left unpinned, for its reader to report."""
    try:
        fd = os.open(path if source is None else source, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO: no wait
    except FileNotFoundError:
        return missing_file(path)
    except OSError:
        return PinnedPath(path)
    pinned, pin = PinnedPath(path), _Pin(fd)  # the pin closes fd once dropped (not a regular file)
    if stat.S_ISREG(os.fstat(fd).st_mode):
        pinned.pinned = pin
    return pinned


def missing_file(path: str | os.PathLike) -> PinnedPath:
    """`path` pinned as missing, whatever is there later."""
    pinned = PinnedPath(path)
    pinned.pinned = _Pin(None)
    return pinned


@contextlib.contextmanager
def open_input(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """The bytes of an input file, decompressed as they are read: `-` is stdin; a file is
    decompressed when its name ends in .zsd, .zst or .gz, or its first bytes are a zstd or
    gzip header; a `PinnedPath` reads its pinned file. A corrupt or cut stream is an
    InputError naming the file."""
    if str(path) == STDIN:
        stream, kind = _stdin()
        with _located(kind, "<stdin>") if kind else contextlib.nullcontext():
            yield stream
        return
    path = check_file(path)
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", file=path) from None
    with raw:
        kind = COMPRESSIONS.get(path.suffix.lower())
        sniffed = _sniff(raw)
        if kind is not None and sniffed != kind and raw.peek(1):
            raise InputError(f"not a {kind} stream (the name says {path.suffix}, the first bytes do not)", file=path)
        kind = kind or sniffed
        if kind is None:
            yield raw
            return
        with _located(kind, path):
            yield _decompressed(raw, kind)


def _sniff(raw: BinaryIO) -> str | None:
    """The compression whose header the stream's first bytes are (peeked at, not consumed)."""
    head = raw.peek(4)[:4]
    return next((k for magic, k in _MAGIC.items() if head.startswith(magic)), None)


_STDIN: list[tuple[Any, BinaryIO, str | None]] = []


def _stdin() -> tuple[BinaryIO, str | None]:
    """Stdin, decompressed when its first bytes are a zstd or gzip header: one stream per
    process, so what a reader peeks at to tell formats apart is still there for the next."""
    if not _STDIN or _STDIN[0][0] is not sys.stdin:
        raw = sys.stdin.buffer
        kind = _sniff(raw) if hasattr(raw, "peek") else None
        stream = _decompressed(raw, kind) if kind else raw
        _STDIN[:] = [(sys.stdin, stream, kind)]
    return _STDIN[0][1], _STDIN[0][2]


@contextlib.contextmanager
def _located(kind: str, name: Any) -> Iterator[None]:
    try:
        yield
    except _stream_errors() as exc:
        raise InputError(f"corrupt {kind} stream: {exc}", file=name) from None


def _decompressed(raw: BinaryIO, kind: str) -> BinaryIO:
    if kind == "gzip":
        import gzip

        return gzip.GzipFile(fileobj=raw, mode="rb")
    try:
        import zstandard
    except ImportError:  # a core dependency; only a broken install lacks it
        raise InputError("reading zstd files needs the zstandard package (pip install zstandard)") from None
    return io.BufferedReader(_ZstdReader(raw, zstandard.ZstdDecompressor()), buffer_size=1 << 16)


class _ZstdReader(io.RawIOBase):
    """Streaming zstd, frame after frame. Unlike zstandard's own stream reader it raises when
    the input ends inside a frame, so a file cut short is not read as a shorter one."""

    def __init__(self, raw: BinaryIO, dctx: Any):
        self._raw, self._dctx = raw, dctx
        self._frame: Any = None  # decompressobj of the frame being read
        self._out, self._pos, self._done = b"", 0, False

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        while self._pos >= len(self._out) and not self._done:
            chunk = self._raw.read(1 << 16)
            if not chunk:
                if self._frame is not None:
                    raise EOFError("the file ends inside a frame (cut short?)")
                self._done = True
            else:
                self._out, self._pos = self._feed(chunk), 0
        n = min(len(buf), len(self._out) - self._pos)
        buf[:n] = self._out[self._pos:self._pos + n]
        self._pos += n
        return n

    def _feed(self, data: bytes) -> bytes:
        out = []
        while data:
            if self._frame is None:
                self._frame = self._dctx.decompressobj()
            out.append(self._frame.decompress(data))
            data = b""
            if self._frame.eof:
                data, self._frame = self._frame.unused_data, None
        return b"".join(out)


def _stream_errors() -> tuple[type[BaseException], ...]:
    import gzip
    import zlib

    errors: list[type[BaseException]] = [gzip.BadGzipFile, zlib.error, EOFError]
    with contextlib.suppress(ImportError):
        import zstandard

        errors.append(zstandard.ZstdError)
    return tuple(errors)


def iter_lines(path: str | os.PathLike, *, stop_at_torn_end: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line of a UTF-8 file (a leading BOM is dropped), decoded one by
    one, so bytes that are not UTF-8 name their line (with `stop_at_torn_end`, a last line cut
    inside a character ends the file instead)."""
    with open_input(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                if stop_at_torn_end and not raw.endswith(b"\n"):
                    return
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
        why = ("truncated: the file ends before its last value closes" if exc.pos >= len(text.rstrip())
               else exc.msg)
        raise InputError(f"malformed JSON at line {exc.lineno} column {exc.colno}: {why}", file=path) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", file=path) from None


def read_yaml(path: str | os.PathLike) -> Any:
    """The YAML document in `path` (safe loader); a syntax error names its line and column."""
    import yaml

    try:
        return yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        raise InputError(f"malformed YAML{where}: {getattr(exc, 'problem', None) or exc}", file=path) from None


def first_jsonl_value(path: str | os.PathLike) -> Any:
    """The value on the first non-blank line of a JSON-lines file, None if there is none or it
    is not JSON (for sniffing a file's format: its reader reports the bad line)."""
    for _, line in iter_lines(path):
        if line.strip():
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def iter_jsonl(path: str | os.PathLike, *, allow_empty: bool = False,
               stop_at_torn_end: bool = False) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; a malformed line or a file with no
    line at all (unless `allow_empty`) raises InputError. `stop_at_torn_end`: a last line cut
    mid-record (a file appended to by a process that was killed) ends the file instead."""
    seen = False
    for lineno, line in iter_lines(path, stop_at_torn_end=stop_at_torn_end):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if not line.endswith("\n"):  # the last line, cut mid-record (a copy or download that stopped)
                if stop_at_torn_end:
                    break
                raise InputError(f"truncated: the last record ends mid-way ({exc.msg})", file=path,
                                 record=f"line {lineno}") from None
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
    """(header, [(row number, {column: cell})]) of a CSV with a header row (row 1). A row with more
    cells than the header and malformed quoting are errors naming the row; rows with fewer cells get
    "" for the rest, except a last row without its line end (a file cut short: "truncated")."""
    text = read_text(path)
    try:
        lines = text.splitlines(keepends=True)
        last = len(lines)  # the row number of the file's last line (rows count from 1, as lines)
        reader = csv.reader(lines, delimiter=delimiter)
        header = next(reader, [])
        rows = []
        for n, cells in enumerate(reader, 2):
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise InputError(f"{len(cells)} cells but {len(header)} header columns", file=path,
                                 record=f"row {n}")
            if len(cells) < len(header) and not text.endswith(("\n", "\r")) and n == last:
                raise InputError(f"truncated: the last row ends mid-way ({len(cells)} of {len(header)} cells)",
                                 file=path, record=f"row {n}")
            rows.append((n, {col: (cells[i] if i < len(cells) else "") for i, col in enumerate(header)}))
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=path) from None
    return header, rows


def write_jsonl(path: str | os.PathLike, rows: Iterable[dict]) -> int:
    n = 0
    with atomic_open(path) as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


HASH_DIGITS = 16


def json_hash(obj: Any) -> str:
    """The content hash of JSON-able inputs (options, stage inputs, cache keys): the first
    16 hex digits of the sha256 of their JSON, keys sorted (order does not matter), other
    values by their str."""
    blob = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:HASH_DIGITS]


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with path.open("rb") if isinstance(path, PinnedPath) else open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()
