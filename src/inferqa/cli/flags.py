"""Command-line flags generated from the registry's declared options: one declaration.

A flag's default is None (not given: the plugin's declared default applies) and its help
is the declaration's help, what it accepts and its default, so neither is written twice.
"""

from __future__ import annotations

from typing import Any

import typer


def _default(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))  # as the flag is written
    return "none" if value is None else "empty" if value == "" else str(value)


def option_help(opt: Any, takes: str | None = None, shown_default: str | None = None) -> str:
    """'term-frequency saturation (a number ≥ 0, default 1.5)' from a registry Option; what it
    accepts as a flag's text is read, by its first type (an LLM spec, not an LLM instance; a
    list flag is repeated or comma-separated)."""
    from dataclasses import replace

    from ..registry import REQUIRED

    default = "" if opt.default is REQUIRED else f", default {shown_default or _default(opt.default)}"
    if takes is None:
        takes = "repeat the flag or comma-separate" if opt.types[0] is list else replace(opt, type=opt.types[0]).accepts()
    return f"{opt.help} ({takes}{default})"


def flag_text(opt: Any, owner: str | None = None, note: str | None = None, takes: str | None = None,
              shown_default: str | None = None) -> str:
    """A flag's help: 'Cosine from which ... (a number in (0, 1], default 0.85).', after
    'OWNER: ' when a plugin owns it (then not capitalised), with '; NOTE' after it; `takes`
    replaces what it accepts in words, `shown_default` the default (an option whose None
    the stage resolves, e.g. from another declaration)."""
    text = option_help(opt, takes, shown_default)
    return (f"{owner}: {text}" if owner else capitalized(text)) + (f"; {note}" if note else "") + "."


def capitalized(text: str) -> str:
    """`text` with a capital first letter, unless it starts with a name (union_freq) that keeps its case."""
    import re

    return text if re.match(r"\w+_\w+", text) else text[0].upper() + text[1:]


def declared_help(kind: str, option: str, names: tuple[str, ...] | None = None) -> str:
    """The help of OPTION as the plugins of KIND (those in `names`, else all) declare it:
    'bm25: term-frequency saturation (a number ≥ 0, default 1.5)'; one entry per wording."""
    from .. import registry

    parts: dict[str, list[str]] = {}
    for p in registry.plugins(kind):
        opt = p.options.get(option)
        if opt is None or (names is not None and p.name not in names):
            continue
        parts.setdefault(option_help(opt), []).append(p.name)
    if not parts:
        raise ValueError(f"no {kind} declares option {option!r}")
    return "; ".join(f"{', '.join(who)}: {text}" for text, who in parts.items()) + "."


TABLE_FORMATS = ("table", "md", "csv", "tex", "json")


def format_flag(default: str = "table") -> Any:
    """`--format`, as every command that prints tables takes it."""
    from .output import JSON_DIGITS

    return typer.Option(None, "--format", help="How tables print: table (boxed, fitted to the terminal; 80 "
                        "columns in a pipe or log, no cell cut) | md (GitHub pipe table) | csv | tex (booktabs) "
                        f"| json (fractions to {JSON_DIGITS} significant digits); default {default}; see "
                        "docs/getting-started.md#output-formats", show_default=False)


json_flag = typer.Option(False, "--json", help="The same as --format json.")


def chosen_format(fmt: str | None, as_json: bool, default: str = "table") -> str:
    """The format asked for by `--format` and `--json` (refused where they disagree or unknown,
    `--format X --json` for any X but json); `default` is the command's format when neither is
    given (`format_flag`'s default is None: not given)."""
    from ..errors import InputError
    from ..text import did_you_mean

    if fmt is None:
        return "json" if as_json else default
    if fmt not in TABLE_FORMATS:
        raise InputError(f"unknown --format {fmt!r}{did_you_mean(fmt, TABLE_FORMATS)}; "
                         f"one of {' | '.join(TABLE_FORMATS)}", field="format")
    if as_json and fmt != "json":
        raise InputError(f"--json and --format {fmt} disagree; give one", field="format")
    return "json" if as_json else fmt
