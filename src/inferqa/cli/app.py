"""The Typer app every command module registers on. Keep imports here light."""

from pathlib import Path

import typer
from typer.core import TyperCommand, TyperGroup

# Words a user may write after a flag believing it takes a value (`--demo true`).
_BOOL_WORDS = {"true", "false", "yes", "no", "on", "off"}


# A type's name (as typer shows it, or a class's __name__) as click shows it.
CLICK_TYPE_NAMES = {"str": "TEXT", "path": "PATH", "Path": "PATH", "int": "INTEGER", "float": "FLOAT",
                    "dict": "KEY=VALUE"}


def _click_type_name(shown: str | None) -> str | None:
    """typer's `<list[Path]>`, `<str>`, `<a|b>` as click names types: PATH, TEXT, [a|b]."""
    if not shown or not shown.startswith("<"):
        return shown
    inner = shown.strip("<>").removeprefix("list[").removesuffix("]")
    return CLICK_TYPE_NAMES.get(inner, f"[{inner}]" if "|" in inner else inner.upper())


def _tidy_flags(params: list) -> list:
    # typer shows every flag with a `<bool>` type column, as if it took a value, and the other
    # types (an argument's, a hand-written option's) as Python names
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        elif not getattr(param, "_click_named", False):
            shown = param.display_type_rich
            param.display_type_rich = lambda ctx, shown=shown: _click_type_name(shown(ctx))
            param._click_named = True
    return params


def _refuse_flag_values(command, ctx, args: list[str]) -> None:
    """`--demo true`: click takes `true` as the next argument (a file); say what is meant."""
    flags = {name: param for param in command.get_params(ctx) if getattr(param, "is_flag", False)
             for name in (*param.opts, *param.secondary_opts)}
    for tok, nxt in zip(args, args[1:]):
        if tok == "--":
            break
        if tok in flags and nxt.lower() in _BOOL_WORDS and not Path(nxt).exists():
            other = [o for o in (*flags[tok].opts, *flags[tok].secondary_opts) if o != tok]
            raise typer.BadParameter(f"a flag takes no value ({nxt!r} given): write {tok} alone"
                                     + (f" (or {other[0]})" if other else ""), ctx=ctx, param_hint=tok)


def _fold_long_words() -> None:
    """Help that wraps, never cut: in a narrow terminal rich ends a cell's word that does not
    fit (a long flag, a default list, a path) with '…'; folded, the word goes on over the
    next line. typer builds its help tables from `rich_utils.Table` and each help text with
    `rich_utils._make_rich_text`."""
    from rich.table import Table
    from typer import rich_utils

    if issubclass(rich_utils.Table, _FoldingTableMark):
        return

    class FoldingTable(Table, _FoldingTableMark):
        def add_column(self, *args, **options):
            options.setdefault("overflow", "fold")
            super().add_column(*args, **options)

        def add_row(self, *cells, **options):
            super().add_row(*cells, **options)
            for column in self.columns:
                column.overflow = "fold"

    make_text = rich_utils._make_rich_text

    def folding_text(**options):  # an option's help, laid out by rich's Columns, not in the table
        text = make_text(**options)
        if hasattr(text, "overflow"):
            text.overflow = "fold"
        return text

    rich_utils.Table = FoldingTable
    rich_utils._make_rich_text = folding_text


class _FoldingTableMark:
    pass


class _Flags:
    """Flags shown without a type, help folded where it does not fit."""

    def get_params(self, ctx):
        return _tidy_flags(super().get_params(ctx))

    def format_help(self, ctx, formatter):
        _fold_long_words()
        return super().format_help(ctx, formatter)


class FlagCommand(_Flags, TyperCommand):
    def parse_args(self, ctx, args):
        _refuse_flag_values(self, ctx, args)
        return super().parse_args(ctx, args)


class FlagGroup(_Flags, TyperGroup):
    pass


class InferqaTyper(typer.Typer):
    """A Typer whose commands show flags without a type and refuse `--flag true`."""

    def __init__(self, **options):
        super().__init__(cls=FlagGroup, **options)

    def command(self, *args, **options):
        options.setdefault("cls", FlagCommand)
        return super().command(*args, **options)


app = InferqaTyper(
    name="inferqa",
    help="Inferential Question Answering: build QUIT-style benchmarks, retrieve, rerank, read, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        from ..version import __version__

        typer.echo(f"inferqa {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    pass
