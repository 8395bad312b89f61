"""At 80 columns every command's --help wraps and cuts nothing: no '…', and each declared
option's help is there in full, read down its column across the wrapped lines."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from inferqa.cli import app

_BOX = re.compile(r"[│╭╮╰╯─\s]")


def _commands(cmd, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _commands(sub, (*path, name))


ROOT = typer.main.get_command(app)
COMMANDS = list(_commands(ROOT))


def _in_its_column(help_text: str, lines: list[str]) -> bool:
    """Whether `help_text` starts at some line's column x and runs on down that column
    (what lies left of x, a folded flag or type, is another column's)."""
    words = help_text.split()
    first, whole = words[0], _BOX.sub("", help_text)
    for i, line in enumerate(lines):
        for x in (m.start() for m in re.finditer(re.escape(first), line)):
            column = "".join(_BOX.sub("", rest[x:]) for rest in lines[i:])
            if column.startswith(whole):
                return True
    return False


def test_the_walk_finds_every_command_and_sub_command():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"", "evaluate", "doctor", "stored-answers", "diagnose monotonicity", "annotate export"} <= names
    assert len(names) > 30


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) or "inferqa" for p, _ in COMMANDS])
def test_help_at_80_columns_cuts_no_text(path, cmd):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    assert "…" not in result.output
    shown = [p for p in cmd.params if p.help and not getattr(p, "hidden", False)]
    for param in shown:
        assert _in_its_column(param.help, lines), f"{' '.join(path)} {param.opts}: {param.help!r} not in full"


@pytest.mark.parametrize("path,cmd", [(p, c) for p, c in COMMANDS if not getattr(c, "commands", None)],
                         ids=[" ".join(p) for p, c in COMMANDS if not getattr(c, "commands", None)])
def test_every_flag_name_stays_on_one_line_at_80_columns(path, cmd, monkeypatch):
    """An option's name is never cut across two lines (`--labellers-stop-at-first-c` / `orrect`)."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("TERMINAL_WIDTH", "80")
    out = CliRunner().invoke(app, [*path, "--help"], terminal_width=80).output
    lines = out.splitlines()
    for param in cmd.params:
        for flag in (*param.opts, *param.secondary_opts):
            if flag.startswith("--"):
                assert any(re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", line) for line in lines), (flag, out)


@pytest.mark.parametrize("path,cmd", [(p, c) for p, c in COMMANDS if not getattr(c, "commands", None)],
                         ids=[" ".join(p) for p, c in COMMANDS if not getattr(c, "commands", None)])
def test_every_type_column_names_types_as_click_does(path, cmd):
    # typer alone shows an argument's or a hand-written option's type as `<path>`, `<list[str]>`
    from inferqa.cli.app import _click_type_name

    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not re.search(r"│[^│]*\s<(str|path|int|float|list\[\w+\])>\s", result.output), result.output
    assert [_click_type_name(t) for t in ("<list[Path]>", "<str>", "<int>", "<a|b>", "PATH")] == [
        "PATH", "TEXT", "INTEGER", "[a|b]", "PATH"]
