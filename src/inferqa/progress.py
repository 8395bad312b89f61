"""Progress shown by every stage, on stderr: a tqdm bar (or rich's, for loops) in a terminal or a
notebook; elsewhere (a pipe, a log file, a batch job) a line per 10 % of the work, or per
minute when that is longer, never one per item, and nothing at all for work done within a
couple of seconds (a log needs no ten lines about a 0.1 s loop)."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Sequence, TextIO

LOG_STEP_PERCENT = 10  # a non-terminal gets a line each time the work passes a multiple of this
LOG_EVERY_SECONDS = 60.0  # ... or when this long has passed since the last line
LOG_QUIET_SECONDS = 2.0  # no line before the work has run this long
_clock = time.monotonic  # read at each LogLines, so that tests can stand in a clock


class LogLines:
    """A counter that writes lines instead of redrawing a bar: `desc: 40% (4/10 psg, 2.1 s)`.

    Quacks like the part of tqdm the stages use (`update`, `set_postfix`, `close`, `with`);
    a line each time the count passes a multiple of LOG_STEP_PERCENT of `total`, or after
    LOG_EVERY_SECONDS without one, and a last one at close if the count moved since; none
    at all while the work has run less than LOG_QUIET_SECONDS."""

    def __init__(self, total: int | None, desc: str, unit: str, stream: TextIO, initial: int = 0,
                 clock: Callable[[], float] | None = None, **_tqdm_options: Any):
        self.total, self.desc, self.unit, self.stream = total, desc, unit, stream
        self.clock = clock or _clock
        self.n = self.shown = initial
        self.start = self.last = self.clock()
        self.step = self._step(initial)
        self.postfix = ""
        self.lines = 0

    def _step(self, n: int) -> int:
        return n * 100 // (self.total * LOG_STEP_PERCENT) if self.total else 0

    def update(self, n: int = 1) -> None:
        self.n += n
        step = self._step(self.n)
        now = self.clock()
        if (step > self.step or now - self.last >= LOG_EVERY_SECONDS) and now - self.start >= LOG_QUIET_SECONDS:
            self.step = step
            self._write()

    def set_postfix(self, **values: Any) -> None:
        self.postfix = ", ".join(f"{k}={v}" for k, v in values.items())

    def _write(self) -> None:
        now = self.clock()
        count = f"{self.n}/{self.total}" if self.total is not None else f"{self.n}"
        share = f"{100 * self.n // self.total}% " if self.total else ""
        unit = f" {self.unit}" if self.unit else ""
        extra = f", {self.postfix}" if self.postfix else ""
        self.stream.write(f"{self.desc}: {share}({count}{unit}, {now - self.start:.1f} s{extra})\n")
        self.stream.flush()
        self.shown, self.last = self.n, now
        self.lines += 1

    def close(self) -> None:
        if self.n != self.shown and (self.lines or self.clock() - self.start >= LOG_QUIET_SECONDS):
            self._write()

    def __enter__(self) -> "LogLines":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# What silences other libraries' bars: huggingface_hub's (transformers' "Loading weights"
# follows it) and every tqdm bar's default (ours off a terminal are LogLines, not tqdm).
QUIET_BARS_ENV = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1"}


def quiet_other_bars(stream: TextIO | None = None) -> bool:
    """Off a terminal, silence the progress bars of the libraries we call (a bar redrawn with
    carriage returns is garbage in a log); ours keep their lines. A variable the user set
    stays as set. Call it before those libraries are imported (they read it then); returns
    whether they were silenced."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty and isatty():  # not _interactive: tqdm reads TQDM_* when imported, so not before
        return False
    for name, value in QUIET_BARS_ENV.items():
        os.environ.setdefault(name, value)
    return True


def _interactive(stream: TextIO) -> bool:
    """A terminal, or a notebook (whose widgets tqdm.auto draws though its stderr is no tty)."""
    from tqdm.auto import tqdm

    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) or any(c.__module__ == "tqdm.notebook" for c in tqdm.__mro__)


LABEL_WIDTH = 36  # a bar's label, so that label, bar and counts fit one 80-column line


def label(desc: str, width: int = LABEL_WIDTH) -> str:
    """`desc` cut in its middle to `width` characters ("labelling with llama-cpp:/…/smollm2.gguf")."""
    if len(desc) <= width:
        return desc
    head = (width - 1) // 2
    return desc[:head] + "…" + desc[len(desc) - (width - 1 - head):]


def counter(total: int | None, desc: str, unit: str, enabled: bool, stream: TextIO | None = None,
            **options: Any):
    """A counter to `update(n)` by hand (batched LLM or encoder calls): a tqdm bar where
    `stream` (default stderr) is interactive, else LogLines. A finished bar stays on screen
    and shows its final count (a removed one leaves the last line drawn, often 0 %)."""
    from tqdm.auto import tqdm

    stream, desc = sys.stderr if stream is None else stream, label(desc)
    if enabled and not _interactive(stream):
        return LogLines(total, desc, unit, stream, **options)
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, file=stream, **options)


def track(items: Sequence, desc: str, enabled: bool, stream: TextIO | None = None, **options: Any) -> Iterable:
    """Iterate `items` with a rich progress bar on an interactive stderr, LogLines elsewhere,
    or plainly when disabled."""
    if not enabled:
        return items
    stream, desc = sys.stderr if stream is None else stream, label(desc)
    if not _interactive(stream):
        return _logged(items, desc, stream)
    from rich.console import Console
    from rich.progress import track as rich_track

    return rich_track(items, description=desc, console=Console(file=stream), **options)


def _logged(items: Sequence, desc: str, stream: TextIO) -> Iterator:
    with LogLines(len(items), desc, "", stream) as lines:
        for item in items:
            yield item
            lines.update(1)
