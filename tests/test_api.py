"""The Python API: `inferqa`'s exports, paths or objects everywhere, a light import, and the
getting-started page's Python example printing what the page says (tests/test_docs.py runs
every runnable block; this checks the numbers)."""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import inferqa
from conftest import REPO
from inferqa.formats.benchmark import Benchmark
from inferqa.formats import Qrels, Run

EXPORTS = ["build_benchmark", "Benchmark", "load_questions", "get_retriever", "get_reranker", "rerank", "read",
           "evaluate", "compare", "Run", "Qrels", "load_llm", "open_run"]


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """exported name -> (module, attribute) as the `if TYPE_CHECKING:` block of inferqa/__init__.py imports it"""
    tree = ast.parse(Path(inferqa.__file__).read_text())
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    return {alias.asname or alias.name: (f"inferqa.{node.module}", alias.name)
            for node in block.body for alias in node.names}


def test_stage_names_are_plain_functions_that_type_checkers_see():
    from inferqa.evaluation import evaluate
    from inferqa.reading import read_with_llm
    from inferqa.reranking import rerank_run

    for name, function in (("evaluate", evaluate), ("read", read_with_llm), ("rerank", rerank_run)):
        assert getattr(inferqa, name) is function and type(getattr(inferqa, name)) is types.FunctionType
        assert inspect.signature(getattr(inferqa, name)) == inspect.signature(function)
    assert _type_checking_imports() == inferqa._EXPORTS  # what IDEs resolve is what runs
    assert inferqa.__all__ == ["__version__", *inferqa._EXPORTS]


def test_exports_are_the_stages_and_the_import_is_light(tmp_path):
    assert set(EXPORTS) <= set(inferqa.__all__) and set(EXPORTS) <= set(dir(inferqa))
    from inferqa.evaluation import evaluate as evaluate_fn
    from inferqa.reranking import rerank_run

    from inferqa.formats import open_run

    assert inferqa.Run is Run and inferqa.Qrels is Qrels and inferqa.Benchmark is Benchmark
    assert inferqa.open_run is open_run
    from inferqa.retrieve.fusion import fuse

    assert inferqa.fuse is fuse and "fuse" in inferqa.__all__
    assert inferqa.evaluation.evaluate is evaluate_fn and callable(inferqa.evaluate)
    assert inferqa.reranking.rerank_run is rerank_run and callable(inferqa.rerank) and callable(inferqa.read)
    with pytest.raises(AttributeError):
        inferqa.nope  # noqa: B018
    done = _python("import sys, inferqa, inferqa.cli\n"
                   "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers', 'llama_cpp', 'faiss') "
                   "if m in sys.modules]\n"
                   "print(heavy, 'inferqa.evaluation.comparison' in sys.modules)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False"]  # and a stage's code not loaded until it runs


def test_every_stage_takes_paths_or_objects(tmp_path, demo_bench_8q):
    bench = demo_bench_8q
    path = str(bench.path)
    bm25 = inferqa.get_retriever("bm25")
    assert bm25.index(path) == bm25.index(bench)  # the README's index("bench") raised AttributeError before
    run = bm25.retrieve(path, split="all", depth=10)
    run.to_file(tmp_path / "bm25.trec")
    by_path = inferqa.evaluate(tmp_path / "bm25.trec", str(bench.path / "qrels.tsv"), ["mrr", "RR"])
    assert by_path == inferqa.evaluate(run, bench.qrels, ["mrr", "RR"]) == inferqa.evaluate(run, path, ["mrr", "RR"])
    test_q = set(bench.split_qids("test"))
    cut = inferqa.evaluate(tmp_path / "bm25.trec", bench, ["mrr"], split="test", per_query=True)["per_query"]
    assert set(cut) == test_q
    reranked = inferqa.rerank(str(tmp_path / "bm25.trec"), path, "oracle", depth=5)
    order = lambda r: {q: [pid for pid, _ in ranked] for q, ranked in r.items()}  # noqa: E731
    assert order(reranked) == order(inferqa.rerank(run, bench, "oracle", depth=5))  # scores: 6 decimals in the file
    from test_reader import FirstHint

    rows = inferqa.read(path, tmp_path / "bm25.trec", FirstHint(), ["union_norm"], [1], progress=False)
    assert {r["qid"] for r in rows} == set(run) and all(r["k"] == 1 for r in rows)
    from inferqa.data import demo_path
    from inferqa.errors import InputError

    meta = inferqa.build_benchmark(demo_path(), tmp_path / "b", top_k=2, split=(1.0, 0.0, 0.0))
    assert meta["sources"][0]["path"] == str(demo_path()) and meta["counts"]["passages_per_question"] == 4
    assert meta["counts"]["questions"] == len(inferqa.load_questions(demo_path()))
    with pytest.raises(InputError, match="split needs a benchmark"):
        inferqa.evaluate(run, bench.qrels, ["mrr"], split="test")


PAGE = REPO / "docs" / "getting-started.md"


def _python_example() -> str:
    section = PAGE.read_text(encoding="utf-8").split("\n## The same in Python\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_python_example_prints_what_the_docs_say(tmp_path):
    done = _python(_python_example(), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # the demo's BM25 row, as the experiment runner computed it for docs/experiments.md (same
    # benchmark, same numbers), and the printed comparison
    import ast
    got = ast.literal_eval(lines[0])
    bm25 = next(r for r in (REPO / "docs" / "experiments.md").read_text(encoding="utf-8").splitlines()
                if r.startswith("| bm25 | "))
    hit1, hit10, recall10, mrr, ndcg10 = (float(c.split()[0]) for c in bm25.strip("|").split("|")[1:])
    assert (got["hit@10"], got["mrr"], got["ndcg_exp@10"]) == (round(hit10 / 100, 4), round(mrr / 100, 4),
                                                           round(ndcg10 / 100, 4))
    assert got["RR"] == got["mrr"] and got["nDCG@10"] != got["ndcg_exp@10"]  # the linear gain differs
    assert lines[1] == "tuned MRR -0.0297 [-0.0667, -0.0029] p=0.062"
    assert lines[2] == "oracle MRR +0.1302 [+0.0474, +0.2290] p=0.031"
    flat = " ".join(PAGE.read_text(encoding="utf-8").split())
    for line in lines:  # the README says what the block prints
        assert " ".join(line.split()) in flat, line
    assert (tmp_path / "bench" / "labels.jsonl").exists() and (tmp_path / "bm25-tuned.trec").exists()


def test_read_takes_an_llm_spec_and_closes_what_it_opened(tmp_path, scratch, demo_bench_8q, monkeypatch):
    from inferqa.registry import plugin
    from test_reader import FirstHint

    opened = []

    @plugin("llm", "first-hint-double", target=False)
    class Double(FirstHint):
        def __init__(self):
            super().__init__()
            self.closed = False
            opened.append(self)

        def close(self):
            self.closed = True

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    run = inferqa.get_retriever("bm25").ensure_index(demo_bench_8q).retrieve(demo_bench_8q, split="all", depth=3)
    by_spec = inferqa.read(demo_bench_8q.path, run, "first-hint-double", ["union_norm"], [1, 3], progress=False)
    by_object = inferqa.read(demo_bench_8q, run, FirstHint(), ["union_norm"], [1, 3], progress=False)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "llm"} for r in rows]  # noqa: E731
    assert strip(by_spec) == strip(by_object) and len(by_spec) == 2 * len(run)
    assert len(opened) == 1 and opened[0].closed
