"""A command made from a stage function's signature (`inferqa.stage`): its options become flags.

A flag's text is converted and checked by `Stage.settings` like any value (not given: None, the
default). A list flag is repeated or comma-separated (not at a comma inside brackets, as in
`nDCG(gains={0:0,1:1})@10`; a positional list takes each argument whole), a dict flag takes
KEY=VALUE pairs, a bool is a flag (--no-X sets False). A warning the stage raises prints as one
line on stderr ('note: ...', or its category's `prefix`).
"""

from __future__ import annotations

import inspect
import re
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, List, Mapping, Optional

import typer

from .. import registry
from ..option_values import parse_key_values
from ..registry import REQUIRED, Option
from ..stage import stage_of
from .app import CLICK_TYPE_NAMES, app
from .output import chosen_format, format_flag, json_flag


def _default(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))  # as the flag is written
    return "none" if value is None else "empty" if value == "" else str(value)


def option_help(opt: Any, takes: str | None = None, shown_default: str | None = None) -> str:
    """'term-frequency saturation (a number ≥ 0, default 1.5)' from a registry Option; what it
    takes is its flag's text, read by its first type (an LLM spec, not an LLM instance)."""
    default = "" if opt.default is REQUIRED else f", default {shown_default or _default(opt.default)}"
    if takes is None:
        takes = ("repeat the flag or comma-separate" if opt.types[0] is list
                 else replace(opt, type=opt.types[0]).accepts())
    return f"{opt.help} ({takes}{default})"


def flag_text(opt: Any, owner: str | None = None, note: str | None = None, takes: str | None = None,
              shown_default: str | None = None) -> str:
    """A flag's help: 'Cosine from which ... (a number in (0, 1], default 0.85).', after 'OWNER: '
    (not capitalised), then '; NOTE'; `takes` and `shown_default` replace what it accepts and its default."""
    text = option_help(opt, takes, shown_default)
    return (f"{owner}: {text}" if owner else capitalized(text)) + (f"; {note}" if note else "") + "."


def capitalized(text: str) -> str:
    """`text` with a capital first letter, unless it starts with a name (union_freq) that keeps its case."""
    return text if re.match(r"\w+_\w+", text) else text[0].upper() + text[1:]


def declared_help(kind: str, option: str) -> str:
    """The help of OPTION as the plugins of KIND declare it: 'bm25: term-frequency saturation
    (a number ≥ 0, default 1.5)'; one entry per wording."""
    parts: dict[str, list[str]] = {}
    for p in registry.plugins(kind):
        if option in p.options:
            parts.setdefault(option_help(p.options[option]), []).append(p.name)
    if not parts:
        raise ValueError(f"no {kind} declares option {option!r}")
    return "; ".join(f"{', '.join(who)}: {text}" for text, who in parts.items()) + "."


# show(result, settings, fmt): prints the stage's result; fmt is None unless the command prints tables.
Show = Callable[[Any, Any, Optional[str]], None]  # settings as attributes: s.out, s.depth


def _metavar(opt: Option) -> str:
    """What a flag takes, as click names types: INTEGER, FLOAT, PATH, TEXT, [a|b|c]."""
    if opt.metavar:
        return opt.metavar
    choices = "[" + "|".join(map(str, opt.choices or ())) + "]"
    if opt.choices and len(choices) <= 16:  # a longer one would squeeze the flags' column (its help lists them)
        return choices
    kind = opt.item_type if opt.types[0] is list else opt.types[0]
    return CLICK_TYPE_NAMES.get(getattr(kind, "__name__", ""), "TEXT")


def _param(opt: Option, given_help: str | None, words: Mapping[str, str]) -> inspect.Parameter:
    # an argument: no flag to repeat, no default; a --no-X flag: its default is not to be given
    plain = opt.positional or opt.cli_flags[0].startswith("--no-")
    text = given_help or (capitalized(opt.help) + "." if plain else flag_text(opt, **words))
    if opt.positional:
        default: Any = typer.Argument(... if opt.required else None, metavar=opt.metavar or opt.name.upper(),
                                      help=text, show_default=False)
        kind = Path if Path in (opt.item_type if opt.types[0] is list else opt.types[0], *opt.types) else str
        annotation: Any = List[kind] if opt.types[0] is list else kind  # type: ignore[valid-type]
        annotation = annotation if opt.required else Optional[annotation]
    elif opt.types[0] is bool:
        flags = opt.cli_flags
        if opt.default is True and not opt.flags:  # --x/--no-x: either can be written
            flags = (f"{flags[0]}/--no-{flags[0][2:]}",)
        default, annotation = typer.Option(None, *flags, help=text, show_default=False), Optional[bool]
    else:
        default = typer.Option(... if opt.required else None, *opt.cli_flags, metavar=_metavar(opt), help=text,
                               show_default=False)
        annotation = Optional[List[str]] if opt.types[0] in (list, dict) else Optional[str]
    return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def _value(opt: Option, given: Any, owner: str) -> Any:
    """The flag's text as the stage takes it, converted but not checked (None: not given): the
    stage checks every value, whichever road it came by."""
    if given is None:
        return None
    if opt.types[0] is bool:
        return given if opt.default is True and not opt.flags else not opt.cli_flags[0].startswith("--no-")
    if opt.types[0] is dict:
        return parse_key_values(given, opt.cli_flags[0].lstrip("-"))
    if opt.types[0] is list:
        item = Option(opt.name, opt.item_type, REQUIRED)
        texts = [str(p) for p in given]
        parts = texts if opt.positional else [p for text in texts for p in _OUTER_COMMA.split(text)]
        return [item.parse(part.strip(), owner) for part in parts if part.strip()]
    return opt.parse(str(given), owner)


_OUTER_COMMA = re.compile(r",(?![^([{]*[)\]}])")  # a comma not inside (), [] or {}


def stage_command(function: Callable[..., Any], show: Show, *, name: str | None = None, tables: bool | str = False,
                  group: typer.Typer | None = None, helps: Mapping[str, str] | None = None,
                  words: Mapping[str, Mapping[str, str]] | None = None) -> Callable[..., None]:
    """Register stage `function` as command NAME (default the stage's) on `group` (default the app).
    `tables`: it takes --format/--json (a format's name: the default one) and `show` gets the chosen
    format; `helps`: an option's whole help (e.g. read from the plugins that declare it);
    `words`: per option, the `flag_text` parts of its help beyond the declaration's."""
    stage = stage_of(function)
    params = [_param(opt, (helps or {}).get(opt.name), (words or {}).get(opt.name, {})) for opt in stage.options]
    default_format = tables if isinstance(tables, str) else "table"
    if tables:
        params += [inspect.Parameter("table_format", inspect.Parameter.KEYWORD_ONLY,
                                     default=format_flag(default_format), annotation=str),
                   inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=json_flag, annotation=bool)]

    def command(**given: Any) -> None:
        fmt = chosen_format(given.pop("table_format"), given.pop("as_json"), default_format) if tables else None
        settings = stage.settings({opt.name: _value(opt, given[opt.name], stage.name) for opt in stage.options})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = stage.execute(settings)
        for w in caught:
            typer.echo(f"{getattr(w.category, 'prefix', 'note')}: {w.message}", err=True)
        show(result, SimpleNamespace(**settings), fmt)

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__doc__ = stage.help + (f"\n\n{stage.description}" if stage.description else "")
    command.__name__ = (name or stage.name).replace(" ", "_").replace("-", "_") + "_cmd"
    (group or app).command(name or stage.name)(command)
    return command
