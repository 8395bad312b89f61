"""The docs' Plugins page runs as written: its three plugin snippets are executed and
their plugins checked by hand-worked values, and its CLI error lines are what the CLI prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from inferqa import registry
from inferqa.formats import iter_corpus
from inferqa.construct import build_benchmark
from inferqa.errors import InputError
from inferqa.records import Hint, Question
from inferqa.formats import Run

PLUGINS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def section() -> str:
    return PLUGINS_PAGE.read_text(encoding="utf-8")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section(), re.S)


@pytest.fixture
def readme_plugins(scratch):
    """Each snippet run in order, in one namespace; its plugins vanish after the test."""
    snippets = blocks("python")
    assert len(snippets) == 3, "retriever, reranker and LLM backend"
    namespaces = []
    for code in snippets:
        ns: dict = {"__name__": "readme_snippet"}
        exec(compile(code, str(PLUGINS_PAGE), "exec"), ns)
        namespaces.append(ns)
    return namespaces


def tiny_bench(path: Path):
    from inferqa.formats.benchmark import Benchmark

    questions = [Question("a", "Which red planet has two moons?", ["Mars"],
                          [Hint("Its two moons are Phobos and Deimos."), Hint("The red planet.")]),
                 Question("b", "Which ocean is the largest?", ["Pacific"],
                          [Hint("The largest ocean by far."), Hint("It borders Japan.")])]
    build_benchmark(questions, path, top_k=2, split=(1.0,))
    return Benchmark(path)


def test_retriever_snippet(readme_plugins, tmp_path):
    ns = readme_plugins[0]
    assert ns["retriever"].options == {"lowercase": True, "min_shared": 2}
    bench = tiny_bench(tmp_path / "bench")
    r = registry.create("retriever", "overlap")
    r.index(bench)
    run = r.search({"a": "Which red planet has two moons?"}, k=10)
    texts = {p.id: p.text for p in iter_corpus(bench)}
    query = set("which red planet has two moons?".split())
    expected = {pid: len(query & set(t.lower().split())) for pid, t in texts.items()}
    got = dict(run["a"])
    assert got == {pid: float(n) for pid, n in expected.items() if n >= 1}
    assert [s for _, s in run["a"]] == sorted(got.values(), reverse=True)
    # "two" and "moons" (and "red planet") only in question a's passages
    assert all(pid.startswith("a_") for pid, s in run["a"] if s >= 2)
    with pytest.raises(InputError, match="retriever 'overlap': option 'min_shared' takes an integer ≥ 1, not 0"):
        registry.create("retriever", "overlap", min_shared=0)


def test_reranker_snippet(readme_plugins):
    ns = readme_plugins[1]
    assert ns["reranker"].score("q", ["a b c", "a"]) == [3.0, 1.0]
    short = registry.create("reranker", "length")
    assert short.rank("q", ["a b c", "a", "a b"]) == [(1, -1.0), (2, -2.0), (0, -3.0)]
    with pytest.raises(InputError) as err:
        registry.create("reranker", "length", prefer="tall")
    assert str(err.value) == "reranker 'length': option 'prefer' takes one of short, long, not 'tall'"
    assert f"{err.value}" in " ".join(section().replace("#", " ").split())  # the README quotes the real message


def test_llm_snippet(readme_plugins):
    from inferqa.llm import load_llm

    llm = readme_plugins[2]["llm"]
    assert llm.words == 2 and llm.identity == "echo:anything"
    assert load_llm("echo:x", cache=None, words="4").complete(["a b c d e"]) == ["b c d e"]
    with pytest.raises(InputError, match="llm 'echo' has no option 'word' \\(did you mean 'words'\\?\\)"):
        load_llm("echo:x?word=2", cache=None)


def test_cli_error_lines(tmp_path):
    """The `$ command` / `inferqa: error: ...` pairs of the section, run for real."""
    bench = tiny_bench(tmp_path / "bench")
    Run({"a": [(p.id, 1.0) for p in iter_corpus(bench) if p.qid == "a"]}).to_file(tmp_path / "run.trec")
    text = blocks("text")[0].splitlines()
    pairs = [(line[2:], text[i + 1]) for i, line in enumerate(text) if line.startswith("$ ")]
    assert len(pairs) == 2
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    for command, expected in pairs:
        argv = shlex.split(command)
        assert argv[0] == "inferqa"
        res = subprocess.run([sys.executable, "-m", "inferqa", *argv[1:]], cwd=tmp_path, env=env,
                             capture_output=True, text=True)
        assert res.returncode == 2, res.stderr
        assert res.stderr.strip() == expected
        assert not (tmp_path / "out.trec").exists() and not (tmp_path / "answers.jsonl").exists()


def test_the_page_names_every_kind():
    names = set(re.findall(r"`([a-z-]+)`", section()))
    assert set(registry.KINDS) <= names, set(registry.KINDS) - names
