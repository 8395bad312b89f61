"""No command replaces a file it did not write.

`Stage.run` calls `guard` on a stage's output (its `out` option) before any work, and `record`
after the stage succeeded: the one road of every command and of the Python API's
`Stage.run(out=...)`, and the one place that knows the command and its --overwrite
(`io.check_output`, below the formats, knows neither, nor what a benchmark owns). A command is
its stage's entry point (`inferqa export` and `inferqa annotate export` share a stage name). What
the experiment runner writes in its own folders, and `inferqa run` without --out (runs/<name>),
is its store, not an output checked here.

- A path a benchmark owns (`owning_benchmark`: a file a build writes, its commit journal or
  writers' lock, anything under its indexes/) is refused, with or without --overwrite: only
  build, label and annotate import write those, through `formats.bench_write`.
- An existing output that is not this command's own earlier output (a file, or a folder that is
  not empty: "file" and "folder" outputs) is refused unless `overwrite`. Build's benchmark,
  finetune's model folder and download's new folder apply their own rules before any work
  ("self-checked folder" outputs: `refuse_existing`, `refuse_existing_folder`), and an LLM call
  cache ("store") is added to, never replaced: for those only the first rule is checked here.

How a command's own earlier output is recognised: a ledger per output folder (`LEDGER`, beside
the outputs) maps a file or folder name to the command that wrote it and the sha256 of the bytes
it wrote, rewritten atomically (under a lock on the folder) after each write. A file is the
command's own only while its bytes still hash to what the ledger recorded for that command; a
folder, while the ledger names it for that command (its contents are not hashed: an experiment
folder or a model is large, and what a user adds to it is not replaced). Why a ledger beside the
outputs: a mark inside the file fits few formats (a TREC tag column, not Markdown, CSV or HTML);
extended attributes are dropped by copies and missing on some file systems; one central ledger
(in ~/.cache) forgets a folder that is moved, copied or shared, and grows without end. A missing,
unreadable or stale ledger only ever makes a file foreign: the safe side (--overwrite).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import check_output, flocked, sha256_file, write_json
from .bench_write import BUILD_FILES, JOURNAL, LOCK, existing_benchmark

LEDGER = ".inferqa-outputs.json"
KINDS = ("file", "folder", "self-checked folder", "store")
# What a benchmark folder owns besides BUILD_FILES: its indexes, a commit's journal, the writers' lock.
OWNED = (*BUILD_FILES, "indexes", JOURNAL, LOCK)
# A demo folder written before the ledger existed is still the demo's own, told by its bytes: the
# results file and a config.yaml that is one of the shipped configs, so `make demo` over an older
# runs/demo needs no --overwrite.
DEMO = "inferqa.experiments.runner:demo_stage"
SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "experiments" / "configs"


def _older_demo(path: Path) -> bool:
    if not (path / "results.json").is_file() or not (path / "config.yaml").is_file():
        return False
    written = (path / "config.yaml").read_bytes()
    return any(written == shipped.read_bytes() for shipped in SHIPPED_CONFIGS.glob("*.yaml"))


def _absolute(path: Path) -> Path:
    """`path` with its folder resolved (links, ..), its own name kept: a link at `path` is what
    a write replaces, not what it points to."""
    return path.absolute().parent.resolve() / path.name


def owning_benchmark(path: str | os.PathLike) -> Path | None:
    """The benchmark folder that owns `path` (one of `OWNED` in it, or under one), else None."""
    path = _absolute(Path(path))
    for folder in path.parents:
        if existing_benchmark(folder) and path.relative_to(folder).parts[0] in OWNED:
            return folder
    return None


def guard(path: str | os.PathLike, *, command: str, overwrite: bool, kind: str = "file") -> Path:
    """`path` if `command` may write its output there, else an InputError naming it (see the
    module's rules); `kind` is one of `KINDS`."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    path = Path(path)
    bench = owning_benchmark(path)
    if bench is not None:
        what = "folder" if path.is_dir() or ("folder" in kind and not path.exists()) else "file"
        raise InputError(f"the benchmark {bench} owns this {what}; write the output elsewhere", file=path)
    check_output(path, kind="dir" if "folder" in kind else "file")
    if path.name == LEDGER:
        raise InputError("is inferqa's ledger of the outputs in its folder; choose another name", file=path)
    if kind in ("file", "folder") and not overwrite and _occupied(path) and not is_own(path, command):
        raise InputError("already exists and this command did not write it; give --overwrite to replace it", file=path)
    return path


def _occupied(path: Path) -> bool:
    return path.is_file() or (path.is_dir() and any(path.iterdir()))


def is_own(path: str | os.PathLike, command: str) -> bool:
    """Whether the ledger of `path`'s folder says `command` wrote it, with these very bytes (a file)."""
    path = Path(path)
    entry = _read(path.parent).get(path.name)
    if not isinstance(entry, dict) or entry.get("command") != command:
        return command == DEMO and _older_demo(path)
    if path.is_dir():
        return entry.get("sha256") is None
    with contextlib.suppress(OSError):
        return entry.get("sha256") == sha256_file(path)
    return False


def stamp(path: str | os.PathLike) -> tuple[int, int, int] | None:
    """What tells a rewritten `path` from the one there now (None: nothing there)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def record(path: str | os.PathLike, *, command: str, kind: str = "file",
           before: tuple[int, int, int] | None = None) -> None:
    """Note in the ledger of `path`'s folder that `command` wrote `path` (a file that is there
    and changed since `stamp` gave `before`, or a folder). Best effort: an output written
    whose ledger cannot be is only foreign to the next run."""
    path = Path(path)
    if kind not in ("file", "folder") or not (path.is_dir() if kind == "folder" else path.is_file()):
        return
    if kind == "file" and before is not None and stamp(path) == before:
        return  # not rewritten: what is there is not this command's
    with contextlib.suppress(OSError, InputError):
        entry = {"command": command, "sha256": sha256_file(path) if kind == "file" else None}
        with flocked(path.parent):  # so two commands writing there at once both get recorded
            ledger = {name: e for name, e in _read(path.parent).items() if (path.parent / name).exists()}
            ledger[path.name] = entry
            write_json(path.parent / LEDGER, dict(sorted(ledger.items())))


def _read(folder: Path) -> dict[str, Any]:
    """The ledger of `folder` ({} when it is missing or unreadable: every file there foreign)."""
    try:
        ledger = json.loads((folder / LEDGER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return ledger if isinstance(ledger, dict) else {}
