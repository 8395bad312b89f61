"""Writing a benchmark: the files a build writes, replaced together as one transaction.

`BenchmarkWrite` stages the new files (in a folder inside the benchmark, or beside it when
the benchmark is new) and commits them at once. Into an existing benchmark, a writer holds an
exclusive flock on its lock file (`LOCK`) from start to end (so writers take turns); it first
finishes a commit a killed writer left (its journal is there: `roll_forward`). A commit
writes a journal naming every change atomically, then removes what it drops, renames the
staged files into place with meta.json last, then deletes the journal.

Reading never writes and takes no lock (a read-only folder reads fine): `read_committed`
opens every file of `BUILD_FILES` as last committed and the reader reads those open files
(`io.PinnedPath`) for as long as it reads. Where a journal is pending (a live or a killed
writer) the committed set is the one it names: the staged file where it is not renamed yet,
and the reader reads that, replaying nothing. It tells a set opened while a commit began or
ended, and opens it again: the journal is not the same one (or is gone, or came) after the
opening, or, with no journal at either end, meta.json is no longer the file it opened (every
commit replaces meta.json, last). Only the files of `BUILD_FILES` are ever replaced or
removed: what else the folder holds (indexes, runs, notes) is not the build's. At commit,
meta.json gets the label counts of the qrels and the benchmark's content hash (`content_hash`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from ..io import (PinnedPath, _running, missing_file, pin_file, read_json, sha256_file, sweep_stale, temp_beside,
                  write_json)
from .qrels import iter_qrels

# Every file a build (and label, annotate) writes; nothing else in a benchmark is theirs.
BUILD_FILES = ("questions.jsonl", "corpus.jsonl", "qrels.tsv", "labels.jsonl", "parametric.jsonl",
               "splits.json", "meta.json")
# What the content hash covers: the questions, their judgements and the splits (the corpus is
# derived from the questions; meta.json records when and how, not what).
HASHED_FILES = ("questions.jsonl", "qrels.tsv", "splits.json")
JOURNAL = ".inferqa-commit.json"
LOCK = ".inferqa-write.lock"  # flocked by the writer, while it writes
_STAGED = re.compile(r"\.inferqa-staged-(\d+)-[0-9a-f]{8}")
# A test-only hook: the process kills itself (SIGKILL) at the Nth step of a commit.
KILL_AT_ENV = "INFERQA_TEST_KILL_AT_COMMIT_STEP"


def content_hash(directory: str | os.PathLike, staged: str | os.PathLike | None = None) -> str:
    """sha256 over the names and sha256s of `HASHED_FILES` in `directory` (a missing one counts
    as empty); a file in the `staged` folder stands for the directory's own."""
    h = hashlib.sha256()
    for name in HASHED_FILES:
        path = Path(staged) / name if staged is not None and (Path(staged) / name).exists() else Path(directory) / name
        h.update(f"{name}\0{sha256_file(path) if path.exists() else ''}\n".encode())
    return h.hexdigest()


def label_counts(qrels_file: str | os.PathLike) -> dict[str, int]:
    """label -> how many judgements of the qrels file carry it (keys as strings, sorted)."""
    return dict(sorted(Counter(str(label) for _, _, label in iter_qrels(qrels_file)).items()))


def read_committed(directory: str | os.PathLike) -> dict[str, PinnedPath]:
    """name -> the file of `BUILD_FILES` as last committed in `directory`, pinned (missing
    ones pinned as missing); nothing is written (see the module's notes)."""
    directory = Path(directory)
    for attempt in range(400):
        files = _try_committed(directory)
        if files is not None:
            return files
        time.sleep(min(0.0005 * 2 ** attempt, 0.02))  # a commit takes milliseconds
    raise InputError("a writer kept changing the benchmark while it was being read; try again", file=directory)


def _identity(path: Path | int) -> tuple[int, int] | None:
    try:
        st = os.fstat(path) if isinstance(path, int) else path.stat()  # a PinnedPath: its pinned file
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def _try_committed(directory: Path) -> dict[str, PinnedPath] | None:
    """The committed files, or None when a commit began or ended while they were opened."""
    journal = directory / JOURNAL
    try:
        fh = open(journal, "rb")  # held open while looking, so its inode is not another's
    except FileNotFoundError:
        fh = None
    with fh or contextlib.nullcontext():
        plan = None if fh is None else _plan(fh.read(), journal)
        # meta.json first: a commit that ran while the others were opened has replaced it since
        files = {"meta.json": _committed(directory, "meta.json", plan)}
        meta = _identity(files["meta.json"])  # unpinned (there but unreadable): its name's inode
        files.update((name, _committed(directory, name, plan)) for name in BUILD_FILES if name != "meta.json")
        if fh is None:
            return files if _identity(journal) is None and _identity(directory / "meta.json") == meta else None
        return files if _identity(journal) == _identity(fh.fileno()) else None


def _plan(text: bytes, journal: Path) -> dict:
    try:
        plan = json.loads(text)
        if {target for _, target in plan["replace"]} | set(plan["remove"]) <= set(BUILD_FILES):
            return plan
    except (ValueError, KeyError, TypeError):
        pass
    raise InputError("a pending commit's journal is not one a benchmark write wrote", file=journal)


def _committed(directory: Path, name: str, plan: dict | None) -> PinnedPath:
    """`name` pinned as the commit of `plan` (None: none pending) leaves it."""
    if plan is not None:
        source = {target: source for source, target in plan["replace"]}.get(name)
        if source is not None:
            staged = pin_file(directory / name, directory / source)  # the new file, if still staged
            if staged.pinned is None or staged.pinned.fd is not None:
                return staged
        elif name in plan["remove"]:
            return missing_file(directory / name)
    return pin_file(directory / name)


def roll_forward(directory: str | os.PathLike) -> bool:
    """Finish a commit a killed process left half done (its journal is there); True if one was.
    Only a writer does, holding the lock (`BenchmarkWrite`); a reader reads the commit as it is."""
    directory = Path(directory)
    journal = directory / JOURNAL
    if not journal.is_file():
        return False
    try:
        _replay(directory, journal)
    except OSError as exc:
        raise InputError(f"a write killed mid-way cannot be finished here: {exc.strerror or exc}",
                         file=journal) from None
    return True


def _replay(directory: Path, journal: Path) -> None:
    plan = read_json(journal)
    for name in plan["remove"]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / name)
    # meta.json last: a reader that saw no journal tells a commit by it (see the module's notes)
    for source, name in sorted(plan["replace"], key=lambda pair: pair[1] == "meta.json"):
        if (directory / source).exists():
            os.replace(directory / source, directory / name)
            _kill_point()
    os.unlink(journal)
    _kill_point()
    if plan.get("staged"):
        shutil.rmtree(directory / plan["staged"], ignore_errors=True)


def _sweep_staged(directory: Path) -> None:
    """Remove the staging folders and journal temp files of writers that no longer run (and wrote no journal)."""
    sweep_stale(directory / JOURNAL)
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            m = _STAGED.fullmatch(entry.name)
            if m and not _running(int(m[1])):
                shutil.rmtree(entry.path, ignore_errors=True)
                print(f"inferqa: removed {entry.path}, the staging folder of a write by process {m[1]}, which no "
                      "longer runs", file=sys.stderr)


def existing_benchmark(directory: Path) -> bool:
    return directory.is_dir() and (directory / "meta.json").exists()


def what_would_be_lost(directory: Path) -> str:
    """'2 indexes, 1 run, 1 other file': what a benchmark folder holds besides `BUILD_FILES`."""
    indexes = [p for p in (directory / "indexes").glob("*") if p.is_dir()] if (directory / "indexes").is_dir() else []
    others = [p for p in directory.rglob("*") if p.is_file()
              and not any(part.startswith(".") for part in p.relative_to(directory).parts)
              and p.relative_to(directory).parts[0] not in (*BUILD_FILES, "indexes")]
    runs = [p for p in others if p.suffix in (".trec", ".run", ".tsv") and p.name != "qrels.tsv"]
    parts = [(len(indexes), "index", "indexes"), (len(runs), "run", "runs"),
             (len(others) - len(runs), "other file", "other files")]
    said = [f"{n} {one if n == 1 else many}" for n, one, many in parts if n]
    return ", ".join(said) or "only the files a build writes"


def refuse_existing(directory: Path, overwrite: bool) -> None:
    """An existing benchmark at `directory` is replaced only with `overwrite`; a non-empty
    folder that is not a benchmark never."""
    if not directory.exists():
        return
    if not directory.is_dir() or (any(directory.iterdir()) and not existing_benchmark(directory)):
        raise InputError("--out exists and is not a benchmark directory; choose another path", file=directory)
    if existing_benchmark(directory) and not overwrite:
        raise InputError(f"already holds a benchmark ({what_would_be_lost(directory)}); give --overwrite to "
                         "replace the files a build writes", file=directory)


class BenchmarkWrite:
    """Stage files of `BUILD_FILES` with `path(name)` (or a whole build in `folder`), then
    `commit(meta)`; nothing is replaced if the block fails. `remove_unstaged`: a rebuild's
    commit also removes the build files it did not write again (labels of an older build)."""

    def __init__(self, directory: str | os.PathLike, *, remove_unstaged: bool = False):
        self.directory = Path(directory)
        self.remove_unstaged = remove_unstaged
        self._fresh = not self.directory.exists()
        self.names: list[str] = []  # the files staged, in the order they were
        with contextlib.ExitStack() as stack:  # on an error here, what was entered is undone
            if self._fresh:
                self.folder = stack.enter_context(temp_beside(self.directory, directory=True))
            else:
                stack.enter_context(_locked(self.directory))
                roll_forward(self.directory)
                _sweep_staged(self.directory)
                self.folder = self.directory / f".inferqa-staged-{os.getpid()}-{secrets.token_hex(4)}"
                self.folder.mkdir()
                stack.callback(shutil.rmtree, self.folder, True)
            self._stack = stack.pop_all()

    def __enter__(self) -> "BenchmarkWrite":
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    def path(self, name: str) -> Path:
        """Where to write `name`'s new content (by any writer)."""
        if name not in BUILD_FILES:
            raise ValueError(f"{name} is not a file a benchmark write owns ({', '.join(BUILD_FILES)})")
        _kill_point()
        if name not in self.names:
            self.names.append(name)
        return self.folder / name

    def current(self, name: str) -> Path:
        """`name` as it will be after the commit: staged, else the benchmark's own."""
        staged = self.folder / name
        return staged if staged.exists() or self._fresh else self.directory / name

    def commit(self, meta: dict) -> None:
        """Put the label counts and content hash into `meta`, write it, and replace the files."""
        qrels = self.current("qrels.tsv")
        if qrels.exists():
            meta["labels"] = label_counts(qrels)
        meta["content_hash"] = content_hash(self.folder if self._fresh else self.directory, self.folder)
        write_json(self.path("meta.json"), meta)
        if self._fresh:
            os.replace(self.folder, self.directory)
            return
        staged = sorted(p.name for p in self.folder.iterdir() if p.name in BUILD_FILES)
        plan = {"staged": self.folder.name,
                "replace": [[f"{self.folder.name}/{name}", name] for name in staged],
                "remove": [n for n in BUILD_FILES if self.remove_unstaged and n not in staged]}
        _kill_point()
        write_json(self.directory / JOURNAL, plan)
        _kill_point()
        roll_forward(self.directory)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive flock on the benchmark's `LOCK` file while the block runs; the file goes
    after (a waiter that locked it meanwhile sees it gone, and locks the next one). Not the
    folder's flock: a build's post-build hook writes into its folder while `io` holds that."""
    lock = directory / LOCK
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _identity(lock) == _identity(fd):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


_steps = [0]


def _kill_point() -> None:
    """Count a step of a benchmark write; the test hook kills the process at the one it names."""
    _steps[0] += 1
    if os.environ.get(KILL_AT_ENV) == str(_steps[0]):
        os.kill(os.getpid(), signal.SIGKILL)
