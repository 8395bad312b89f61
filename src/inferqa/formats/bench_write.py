"""Writing a benchmark: the files a build writes, replaced together as one transaction.

`BenchmarkWrite` stages the new files (in a folder inside the benchmark, or beside it when
the benchmark is new) and commits them at once. Into an existing benchmark, a journal
naming every rename is written atomically first, then the renames run, then the journal
goes: a process killed in between leaves the journal, and whoever opens the benchmark next
(`Benchmark`, or the next write) rolls it forward, so a reader sees the old files or the
new ones, never a mix. Only the files of `BUILD_FILES` are ever replaced or removed: what
else the folder holds (indexes, runs, notes) is not the build's. At commit, meta.json gets
the label counts of the qrels and the benchmark's content hash (`content_hash`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
from collections import Counter
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from ..io import _running, iter_lines, read_json, sha256_file, sweep_stale, temp_beside, write_json

# Every file a build (and label, annotate) writes; nothing else in a benchmark is theirs.
BUILD_FILES = ("questions.jsonl", "corpus.jsonl", "qrels.tsv", "labels.jsonl", "parametric.jsonl",
               "splits.json", "meta.json")
# What the content hash covers: the questions, their judgements and the splits (the corpus is
# derived from the questions; meta.json records when and how, not what).
HASHED_FILES = ("questions.jsonl", "qrels.tsv", "splits.json")
JOURNAL = ".inferqa-commit.json"
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
    counts: Counter = Counter()
    for _, line in iter_lines(qrels_file):
        cols = line.split()
        if len(cols) == 4:
            counts[cols[3]] += 1
    return dict(sorted(counts.items()))


def roll_forward(directory: str | os.PathLike) -> bool:
    """Finish a commit a killed process left half done (its journal is there); True if one was."""
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
    for source, name in plan["replace"]:
        if (directory / source).exists():
            os.replace(directory / source, directory / name)
            _kill_point()
    for name in plan["remove"]:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(directory / name)
    os.unlink(journal)
    _kill_point()
    if plan.get("staged"):
        shutil.rmtree(directory / plan["staged"], ignore_errors=True)


def _sweep_staged(directory: Path) -> None:
    """Remove the staging folders of writers that no longer run (and wrote no journal), and
    their journal's temp file."""
    sweep_stale(directory / JOURNAL)
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            m = _STAGED.fullmatch(entry.name)
            if m and not _running(int(m[1])):
                shutil.rmtree(entry.path, ignore_errors=True)


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
        self._stack = contextlib.ExitStack()
        self.names: list[str] = []  # the files staged, in the order they were
        if self._fresh:
            self.folder = self._stack.enter_context(temp_beside(self.directory, directory=True))
        else:
            roll_forward(self.directory)
            _sweep_staged(self.directory)
            self.folder = self.directory / f".inferqa-staged-{os.getpid()}-{secrets.token_hex(4)}"
            self.folder.mkdir()
            self._stack.callback(shutil.rmtree, self.folder, True)

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


_steps = [0]


def _kill_point() -> None:
    """Count a step of a benchmark write; the test hook kills the process at the one it names."""
    _steps[0] += 1
    if os.environ.get(KILL_AT_ENV) == str(_steps[0]):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def benchmark_write(directory: str | os.PathLike, *, remove_unstaged: bool = False) -> Iterator[BenchmarkWrite]:
    with BenchmarkWrite(directory, remove_unstaged=remove_unstaged) as write:
        yield write
