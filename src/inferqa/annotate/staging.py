"""Rewrite several files of one directory all or nothing: write every temp, then rename them.

A failure while writing leaves every original untouched and removes the temps. The
renames at the end are individually atomic and run in the order the files were staged,
so stage meta.json last: it records a round only once its data files are in place.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

from ..io import temp_beside


class StagedFiles:
    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._staged: list[tuple[Path, Path]] = []
        self._temps = contextlib.ExitStack()  # the io layer's locked temps: removed when not renamed

    def path(self, name: str) -> Path:
        """A temp path to write `name`'s new content to (by any writer, atomic or not)."""
        final = self.directory / name
        tmp = self._temps.enter_context(temp_beside(final))
        self._staged.append((tmp, final))
        return tmp

    @property
    def names(self) -> list[str]:
        return [final.name for _, final in self._staged]

    def commit(self) -> None:
        for tmp, final in self._staged:
            os.replace(tmp, final)
        self._staged.clear()
        self._temps.close()

    def discard(self) -> None:
        self._staged.clear()
        self._temps.close()


@contextlib.contextmanager
def staged_files(directory: str | os.PathLike) -> Iterator[StagedFiles]:
    staged = StagedFiles(Path(directory))
    try:
        yield staged
    except BaseException:
        staged.discard()
        raise
    staged.commit()
