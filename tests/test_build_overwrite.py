"""A rebuild never destroys what it did not create (indexes, runs, notes), and refuses an
existing benchmark unless --overwrite is given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_cli
from inferqa.errors import InputError
from inferqa.formats import Run
from inferqa.formats.bench_write import BUILD_FILES


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """relative path -> (content, inode) of every file under `folder`."""
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_ino)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def seeded(monkeypatch, capsys, tmp_path):
    """A demo benchmark holding a BM25 index, a run and a foreign file."""
    import inferqa

    bench = tmp_path / "bench"
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", bench)
    assert code in (0, None), err
    bm25 = inferqa.get_retriever("bm25")
    bm25.index(bench)
    run = bm25.retrieve(bench, split="test", depth=10)
    (bench / "myruns").mkdir()
    run.to_file(bench / "myruns" / "x.trec")
    (bench / "my_notes.txt").write_text("what I tried\n")
    return bench, run


def retrieve_again(bench: Path) -> Run:
    import inferqa

    return inferqa.get_retriever("bm25").retrieve(bench, split="test", depth=10)


def test_rebuild_without_overwrite_is_refused_and_changes_nothing(seeded, monkeypatch, capsys):
    bench, _ = seeded
    before = snapshot(bench)
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", bench)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{bench}: already holds a benchmark (1 index, 1 run, 1 other file); give --overwrite" in err
    assert snapshot(bench) == before


def test_rebuild_with_overwrite_replaces_only_the_build_files(seeded, monkeypatch, capsys):
    bench, run = seeded
    before = snapshot(bench)
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", bench, "--overwrite")
    assert code in (0, None), err
    after = snapshot(bench)
    for name, (content, inode) in before.items():
        if name in BUILD_FILES:
            assert after[name][1] != inode  # written anew
        else:
            assert after[name] == (content, inode)  # index, run and notes untouched
    assert {n for n in after if n in BUILD_FILES} == {n for n in before if n in BUILD_FILES}
    assert retrieve_again(bench) == run  # same corpus: the index is still this benchmark's


def test_an_index_of_a_changed_corpus_is_refused_not_deleted(seeded, monkeypatch, capsys):
    bench, _ = seeded
    index_files = {n for n in snapshot(bench) if n.startswith("indexes")}
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--top-k", "2", "--out", bench, "--overwrite")
    assert code in (0, None), err
    after = snapshot(bench)
    assert index_files <= set(after) and "my_notes.txt" in after and "myruns/x.trec" in after
    with pytest.raises(InputError, match=r"index was built from another corpus.jsonl .*inferqa index"):
        retrieve_again(bench)


def test_api_refuses_too(tmp_path):
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions

    questions = load_questions(demo_path())[:2]
    build_benchmark(questions, tmp_path / "b", top_k=2, split=(1.0,))
    (tmp_path / "b" / "labels.jsonl").write_text("")  # a build file the next build does not write
    before = snapshot(tmp_path / "b")
    with pytest.raises(InputError, match="already holds a benchmark"):
        build_benchmark(questions, tmp_path / "b", top_k=2, split=(1.0,))
    assert snapshot(tmp_path / "b") == before
    build_benchmark(questions, tmp_path / "b", top_k=2, split=(1.0,), overwrite=True)
    assert not (tmp_path / "b" / "labels.jsonl").exists()  # an older build's file, not this one's
    assert sorted(os.listdir(tmp_path / "b")) == sorted(n for n in before if n != "labels.jsonl")


def test_a_folder_write_without_overwrite_refuses_before_any_work(tmp_path):
    from inferqa.io import atomic_dir

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "mine.txt").write_text("keep")
    ran = []
    with pytest.raises(InputError, match="already exists; give --overwrite"):
        with atomic_dir(tmp_path / "d", overwrite=False):
            ran.append(True)
    assert not ran and snapshot(tmp_path) == {"d/mine.txt": (b"keep", (tmp_path / "d" / "mine.txt").stat().st_ino)}
