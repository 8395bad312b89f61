"""The Typer app every command module registers on. Keep imports here light."""

import typer

app = typer.Typer(
    name="inferqa",
    help="Inferential Question Answering: build QUIT-style benchmarks, retrieve, rerank, read, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
