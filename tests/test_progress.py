"""Progress in a non-terminal (a pipe, a log) is a line per 10 % of the work or per minute,
never one per item; a terminal gets tqdm's bar."""

from __future__ import annotations

import io
import re

import inferqa.progress
from inferqa.progress import LOG_QUIET_SECONDS, LogLines, counter, track
from conftest import run_cli

LINE = re.compile(r"^(?P<desc>.+): (?:(?P<pct>\d+)% )?\((?P<n>\d+)(?:/(?P<total>\d+))?(?: \w+)?, [\d.]+ s(?:, .*)?\)$")


def _slow_clock():
    """A clock whose work seems to have started long ago: the quiet start is over at once."""
    calls = []

    def clock() -> float:
        calls.append(None)
        return 0.0 if len(calls) == 1 else 10 * LOG_QUIET_SECONDS

    return clock


def _lines(stream: io.StringIO) -> list[re.Match]:
    found = [LINE.match(ln) for ln in stream.getvalue().splitlines()]
    assert all(found), stream.getvalue()
    return found


def test_a_line_per_tenth_of_the_work_however_many_items():
    for n, want in ((250, [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]), (3, [33, 66, 100]), (10, list(range(10, 101, 10)))):
        out = io.StringIO()
        with counter(n, "encoding passages", "psg", True, stream=out, clock=_slow_clock()) as bar:
            for _ in range(n):
                bar.update(1)
        got = _lines(out)
        assert [int(m["pct"]) for m in got] == want, out.getvalue()
        assert got[-1]["n"] == got[-1]["total"] == str(n) and got[0]["desc"] == "encoding passages"


def test_batched_updates_resumed_count_and_postfix():
    out = io.StringIO()
    with counter(1000, "reading", "prompt", True, stream=out, initial=350, clock=_slow_clock()) as bar:
        bar.set_postfix(loss="0.1234")
        for _ in range(13):
            bar.update(50)  # 400, 450, ..., 1000
    got = _lines(out)
    # 35 % already done when resumed: the first line at 40 %, then 50 % ... 100 %; 450 is no step
    assert [(int(m["pct"]), int(m["n"])) for m in got] == [(40, 400), (50, 500), (60, 600), (70, 700), (80, 800),
                                                          (90, 900), (100, 1000)]
    assert out.getvalue().splitlines()[-1].endswith(", loss=0.1234)")


def test_a_line_per_minute_when_the_total_is_unknown_or_slow():
    now = [0.0]
    out = io.StringIO()  # the items come slower than the quiet start: no line is held back
    lines = LogLines(None, "bm25 search", "question", out, clock=lambda: now[0])
    for _ in range(7):  # one item every 25 s: a line at 75 s (item 3), 150 s (item 6), and the last at close
        now[0] += 25.0
        lines.update(1)
    lines.close()
    got = _lines(out)
    assert [int(m["n"]) for m in got] == [3, 6, 7] and all(m["pct"] is None for m in got)
    # a known total, but slower than 10 % a minute: the minute wins
    now[0], out = 0.0, io.StringIO()
    with LogLines(1000, "labelling", "passage", out, clock=lambda: now[0]) as lines:
        for _ in range(3):
            now[0] += 61.0
            lines.update(1)
    assert [int(m["n"]) for m in _lines(out)] == [1, 2, 3]


def test_work_done_within_the_quiet_start_prints_nothing():
    now = [0.0]
    out = io.StringIO()
    with LogLines(100, "scoring", "query", out, clock=lambda: now[0]) as lines:
        for _ in range(100):
            now[0] += 0.9 * LOG_QUIET_SECONDS / 100
            lines.update(1)
    assert out.getvalue() == ""
    # past the quiet start, the next tenth prints the count reached, and close the last one
    now[0], out = 0.0, io.StringIO()
    with LogLines(100, "scoring", "query", out, clock=lambda: now[0]) as lines:
        for _ in range(100):
            now[0] += 2 * LOG_QUIET_SECONDS / 100
            lines.update(1)
    assert [int(m["n"]) for m in _lines(out)] == [50, 60, 70, 80, 90, 100]


def test_nothing_when_disabled_a_bar_on_a_terminal():
    out = io.StringIO()
    with counter(5, "x", "item", False, stream=out) as bar:
        bar.update(5)
    assert out.getvalue() == ""
    assert list(track([1, 2, 3], "x", False, stream=out)) == [1, 2, 3] and out.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    bar = counter(5, "x", "item", True, stream=term)
    assert not isinstance(bar, LogLines)
    bar.update(5)
    bar.close()
    assert "5/5" in term.getvalue()


def test_track_in_a_log_and_the_build_command(monkeypatch, capsys, tmp_path):
    # a fast build (well within the quiet start) prints no progress in a log
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", tmp_path / "fast")
    assert code in (0, None) and "Building passages" not in err, err
    monkeypatch.setattr(inferqa.progress, "_clock", _slow_clock())
    out = io.StringIO()
    assert list(track(list(range(48)), "Building passages", True, stream=out)) == list(range(48))
    assert [int(m["pct"]) // 10 for m in _lines(out)] == list(range(1, 11))  # 10 %, 20 %, 31 %, ...
    # `inferqa build --demo` with stderr captured (no terminal), slower: 48 questions, ten progress lines
    monkeypatch.setattr(inferqa.progress, "_clock", _slow_clock())
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", tmp_path / "b")
    assert code in (0, None), err
    progress = [ln for ln in err.splitlines() if ln.startswith("Building passages: ")]
    assert len(progress) == 10 and progress[-1].startswith("Building passages: 100% (48/48,"), err


# -- other libraries' bars off a terminal ------------------------------------------------------

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_other_bars_quiet_off_a_terminal_only_and_a_users_setting_kept(monkeypatch):
    from inferqa.progress import QUIET_BARS_ENV, quiet_other_bars

    for name in QUIET_BARS_ENV:
        monkeypatch.delenv(name, raising=False)
    assert quiet_other_bars(_Tty()) is False
    assert not any(name in inferqa.progress.os.environ for name in QUIET_BARS_ENV)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "0")  # the user asked for the hub's bars
    assert quiet_other_bars(io.StringIO()) is True
    assert inferqa.progress.os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "0"
    assert inferqa.progress.os.environ["TQDM_DISABLE"] == "1"
    out = io.StringIO()  # ours keep their line per 10 %
    with counter(4, "reading", "q", True, stream=out, clock=_slow_clock()) as bar:
        bar.update(4)
    assert [int(m["pct"]) for m in _lines(out)] == [100]


def test_a_model_loaded_through_the_cli_in_a_pipe_draws_no_bar(bench_factory, minilm):
    """`index -r dense` loads the bundled MiniLM through transformers, whose "Loading weights
    0%|...|" bar reached a piped stderr before the CLI silenced other libraries' bars."""
    import os
    import subprocess
    import sys

    bench = bench_factory(2)
    env = {k: v for k, v in os.environ.items() if k not in inferqa.progress.QUIET_BARS_ENV}
    done = subprocess.run([sys.executable, "-m", "inferqa", "index", str(bench.path), "-r", "dense"],
                          capture_output=True, text=True, timeout=300, env={**env, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("index written: ")
    assert "%|" not in done.stderr and "\r" not in done.stderr, done.stderr


def test_a_long_label_is_cut_in_its_middle_so_a_line_fits_80_columns():
    import io

    from inferqa.progress import LABEL_WIDTH, counter, label

    desc = "labelling with llama-cpp:/home/someone/models/smollm2-135m-instruct-q8_0.gguf?n_ctx=4096"
    short = label(desc)
    assert len(short) == LABEL_WIDTH and short.startswith("labelling with ll") and short.endswith("n_ctx=4096")
    assert label("reading") == "reading"
    out = io.StringIO()  # not a terminal: one line per update
    with counter(1000, desc, "passage", True, stream=out, clock=_slow_clock()) as bar:
        bar.update(1000)
    assert out.getvalue() and all(len(line) <= 80 for line in out.getvalue().splitlines()), out.getvalue()
