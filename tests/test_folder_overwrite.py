"""io.atomic_dir(own_files=True): a folder a user names is refused when it holds files, unless
overwrite; then only the files the writer writes (and those it wrote last time) change."""

from __future__ import annotations

import pytest

from inferqa.errors import InputError
from inferqa.io import atomic_dir


def _files(folder):
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _write(path, files, overwrite=False):
    with atomic_dir(path, overwrite, own_files=True) as tmp:
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)


def test_a_rewrite_replaces_its_own_files_only(tmp_path):
    out = tmp_path / "model"
    _write(out, {"weights.bin": "1", "tok/vocab.txt": "a", "old-only.txt": "o"})
    (out / "notes.txt").write_text("mine")
    (out / "tok" / "extra.txt").write_text("mine too")
    with pytest.raises(InputError, match="already exists; give --overwrite"):
        _write(out, {"weights.bin": "2"})
    assert _files(out) == {"weights.bin": "1", "tok/vocab.txt": "a", "old-only.txt": "o", "notes.txt": "mine",
                           "tok/extra.txt": "mine too"}
    _write(out, {"weights.bin": "2", "new.txt": "n"}, overwrite=True)
    # the previous write's files it no longer writes go; the user's stay, and the folder holding one
    assert _files(out) == {"weights.bin": "2", "new.txt": "n", "notes.txt": "mine", "tok/extra.txt": "mine too"}
    assert [p.name for p in tmp_path.iterdir()] == ["model"]


def test_an_emptied_folder_of_its_own_is_removed_and_an_empty_target_is_taken(tmp_path):
    out = tmp_path / "m"
    out.mkdir()  # empty: nothing to lose, no --overwrite needed
    _write(out, {"sub/a.txt": "a", "b.txt": "b"})
    _write(out, {"b.txt": "B"}, overwrite=True)
    assert _files(out) == {"b.txt": "B"} and not (out / "sub").exists()


def test_a_failed_rewrite_changes_nothing(tmp_path):
    out = tmp_path / "m"
    _write(out, {"a.txt": "a"})
    with pytest.raises(RuntimeError):
        with atomic_dir(out, True, own_files=True) as tmp:
            (tmp / "a.txt").write_text("half")
            raise RuntimeError("stopped")
    assert _files(out) == {"a.txt": "a"} and [p.name for p in tmp_path.iterdir()] == ["m"]
