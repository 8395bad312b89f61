"""Option values given as text (`--opt K=V`, `?key=value` in an LLM spec), typed once."""

from __future__ import annotations

from typing import Any, Sequence

from .errors import InputError


def parse_scalar(text: str) -> Any:
    """'true'/'yes' → True, 'false'/'no' → False, then int, then float, else the text."""
    low = text.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_key_values(pairs: Sequence[str], flag: str) -> dict[str, Any]:
    """['hnsw-m=48', 'x=1.5'] → {'hnsw_m': 48, 'x': 1.5}; `flag` names the option in errors."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--{flag} expects KEY=VALUE, got {pair!r}", field=flag)
        out[key.replace("-", "_")] = parse_scalar(value)
    return out
