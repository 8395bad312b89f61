"""Flags of the LLM call options (`inferqa.stages.llm`) for the commands not yet made from a stage
declaration (label), and `parse_list` for their list flags."""

from __future__ import annotations

from typing import Any, Callable, List

from ..defaults import NUM_ACTORS
from ..errors import InputError
from ..stages.llm import BACKEND, CACHE, LLM_URLS, RAY_ADDRESS
from .flags import option_flag

cache_opt = option_flag(CACHE, "--cache")
backend_opt = option_flag(BACKEND, "--backend", filled=True)
ray_address_opt = option_flag(RAY_ADDRESS, "--ray-address")
num_actors_opt = option_flag(NUM_ACTORS, "--num-actors", filled=True)
llm_url_opt = option_flag(LLM_URLS, "--llm-url")


def llm_opener(*args: Any, **kwargs: Any) -> Callable[[str], Any]:
    """`inferqa.scale.llm.llm_opener`, imported when a command runs (not at start-up)."""
    from ..scale.llm import llm_opener as opener

    return opener(*args, **kwargs)


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
