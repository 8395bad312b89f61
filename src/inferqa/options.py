"""Option values given as text (`--opt K=V`, `?key=value` in an LLM spec).

The text stays text: `inferqa.registry` converts it by the option's declared type.
`parse_scalar` guesses a type only for options nobody declares (server-specific fields).
"""

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


def parse_key_values(pairs: Sequence[str], flag: str) -> dict[str, str]:
    """['hnsw-m=48', 'x=1.5'] → {'hnsw_m': '48', 'x': '1.5'}; `flag` names the option in errors."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--{flag} expects KEY=VALUE, got {pair!r}", field=flag)
        out[key.replace("-", "_")] = value
    return out
