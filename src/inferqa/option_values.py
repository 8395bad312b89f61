"""Option values given as text (`--opt K=V`, `?key=value` in an LLM spec): the text stays text,
`inferqa.registry` converts it by the option's declared type."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from .errors import InputError


# The one spelling of booleans in text, for declared and undeclared options alike.
BOOL_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}


def parse_bool(text: str) -> bool | None:
    """A boolean's text (a BOOL_WORDS word, 1 or 0, any case) → its value; None if it is none."""
    low = text.strip().lower()
    return BOOL_WORDS.get(low, {"1": True, "0": False}.get(low))


def parse_scalar(text: str) -> Any:
    """A BOOL_WORDS word → its bool, then int, then float, else the text (1 stays a number): the type
    guessed for options nobody declares (server-specific fields)."""
    if text.strip().lower() in BOOL_WORDS:
        return parse_bool(text)
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_key_values(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """['hnsw-m=48', 'x=1.5'] → {'hnsw_m': '48', 'x': '1.5'}; `flag` names the option in errors."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--{flag} expects KEY=VALUE, got {pair!r}", field=flag)
        out[key.replace("-", "_")] = value
    return out


def named_path(item: str) -> tuple[str, Path]:
    """NAME=PATH, or PATH named by its stem (a run or answers file given on the command line)."""
    name, sep, path = item.rpartition("=")
    return (name, Path(path)) if sep and name else (Path(item).stem, Path(item))
