"""Options shared by the commands that call LLMs (read, rerank, tune-union, evaluate-answers, label)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import typer

from ..defaults import NUM_ACTORS
from ..errors import InputError
from .flags import option_flag

CACHE_HELP = ("SQLite cache of LLM calls (default $INFERQA_LLM_CACHE, $INFERQA_CACHE/llm.sqlite or "
              "~/.cache/inferqa/llm.sqlite).")
RUN_HELP = "A TREC run file, or 'optimal' for every relevant passage sorted by label (the oracle pipeline)."
BACKEND_HELP = "local, or ray: run the model on a pool of Ray actors (docs/scaling.md)."

cache_opt = typer.Option(None, "--cache", help=CACHE_HELP)
no_cache_opt = typer.Option(False, "--no-cache", help="Call the backend for every prompt.")
backend_opt = typer.Option("local", "--backend", help=BACKEND_HELP)
ray_address_opt = typer.Option(None, "--ray-address", help="Ray cluster: auto, ray://HEAD:10001 (default: start Ray here).")
num_actors_opt = option_flag(NUM_ACTORS, "--num-actors", filled=True)
llm_url_opt = typer.Option(None, "--llm-url", help="With --backend ray and an openai: spec: one server URL per "
                           "repeat; actors take them round-robin.")


def parse_list(values: List[str] | None, cast=str, flag: str | None = None) -> list:
    """Accept both repeated options and comma-separated lists."""
    import math

    out = []
    for v in values or []:
        for part in str(v).split(","):
            if part.strip():
                try:
                    value = cast(part.strip())
                except ValueError:
                    raise InputError(f"not a valid value: {part.strip()!r}", field=flag) from None
                if isinstance(value, float) and not math.isfinite(value):
                    raise InputError(f"not a finite number: {part.strip()!r}", field=flag)
                out.append(value)
    return out


def llm_opener(cache: Optional[Path], no_cache: bool = False, backend: str = "local",
               ray_address: Optional[str] = None, num_actors: int = NUM_ACTORS.default,
               llm_urls: Optional[List[str]] = None) -> Callable[[str], object]:
    """spec -> LLM with the given cache and execution backend (inferqa.scale.load_scaled_llm)."""
    from ..io import check_output
    from ..llm import default_cache_path
    from ..scale import check_backend, load_scaled_llm

    check_backend(backend)
    if cache is not None and not no_cache:
        check_output(cache)

    def open_llm(spec: str):
        return load_scaled_llm(spec, backend=backend, ray_address=ray_address, num_actors=num_actors,
                               base_urls=llm_urls or (),
                               cache=None if no_cache else default_cache_path(cache))

    return open_llm
