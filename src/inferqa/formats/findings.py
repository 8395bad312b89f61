"""What reading or checking a file met, by kind: raised at once when strict (every command),
collected when not (the doctor)."""

from __future__ import annotations

from ..errors import InputError


class Findings(dict):
    """kind -> examples of the problems met while reading: raised at once when strict."""

    def __init__(self, strict: bool = True):
        super().__init__()
        self.strict = strict

    def add(self, kind: str, example: str, error: InputError) -> None:
        if self.strict:
            raise error
        self.setdefault(kind, []).append(example)
