"""The Typer app every command module registers on. Keep imports here light."""

import math

import typer

app = typer.Typer(
    name="inferqa",
    help="Inferential Question Answering: build QUIT-style benchmarks, retrieve, rerank, read, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def finite(text: str) -> float:
    """Parser of float options: nan and inf are refused (float() takes both)."""
    try:
        number = float(text)
    except (TypeError, ValueError):
        raise typer.BadParameter(f"{text!r} is not a number") from None
    if not math.isfinite(number):
        raise typer.BadParameter(f"{text!r} is not a finite number")
    return number
