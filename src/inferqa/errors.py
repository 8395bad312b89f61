"""One error type for bad input: the CLI turns it into one line on stderr and exit code 2."""

from __future__ import annotations

from typing import Any


class InputError(Exception):
    """Bad input, located by file, record (index or id) and field."""

    def __init__(self, message: str, *, file: object = None, record: object = None, field: str | None = None):
        self.message = message
        self.file = str(file) if file is not None else None
        self.record = record
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = (self.file, None if self.record is None else f"record {self.record}",
                 f"field '{self.field}'" if self.field else None)
        prefix = ": ".join(part for part in where if part)
        return f"{prefix}: {self.message}" if prefix else self.message


def optional_import(module: str, wanted_by: str) -> Any:
    """`module` imported, or an InputError saying that `wanted_by` needs it (ranx, pandas: optional)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(f"{wanted_by} needs {module}, which is not installed (pip install {module})") from None


def warn(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """`warnings.warn` pointed at the first frame outside inferqa: the user's own line, however
    deep in the library (a stage function, the registry) the warning is raised."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the function that called warn
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category if not isinstance(message, Warning) else None, stacklevel=level)
