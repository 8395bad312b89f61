"""One pipeline, three roads: the command line, the Python stage functions and an experiment
file compute the same runs, because the experiment runner calls the stage functions too.

The pipeline, on the demo benchmark's test split: BM25 at depth 10; BM25 with k1 0.9, b 0.4
and `diversify: 1`; the oracle reranker's top 5 of the first run; the two runs fused by RRF.
Each road builds its own benchmark (the same bytes: the run tags carry its content hash) and
its own indexes. The run files are compared line by line, tags included, and scored alike;
a bad value gets the same message on every road.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import one_line_error, run_cli
from inferqa.errors import InputError

METRICS = ["hit@1", "hit@5", "hit@10", "recall@10", "mrr", "ndcg_exp@10"]
RUNS = ("bm25", "bm25-div", "oracle5", "fused")  # the road-independent names of the four runs


def _bench(root: Path) -> Path:
    from inferqa.label.stage import build

    build(demo=True, out=root / "bench")
    return root / "bench"


def _grid(bench: Path, **changes) -> dict:
    grid = {
        "name": "roads", "benchmark": {"path": str(bench)}, "split": "test",
        "retrievers": [{"name": "bm25", "kind": "bm25", "depth": 10},
                       {"name": "bm25-div", "kind": "bm25", "depth": 10, "options": {"k1": 0.9, "b": 0.4},
                        "diversify": 1}],
        "fusions": [{"name": "fused", "retrievers": ["bm25", "bm25-div"], "method": "rrf"}],
        "rerankers": [{"name": "oracle5", "kind": "oracle", "depth": 5}],
        "oracles": False, "metrics": METRICS,
    }
    grid.update(changes)
    return grid


def _cli_road(root: Path, monkeypatch, capsys) -> tuple[dict[str, Path], dict[str, dict]]:
    """(a) `inferqa index`, `retrieve`, `rerank`, `fuse`, then `evaluate --json` (in process)."""
    bench = _bench(root)
    steps = [("index", bench), ("index", bench, "--k1", "0.9", "--b", "0.4"),
             ("retrieve", bench, "--split", "test", "--depth", "10", "-o", root / "bm25.trec"),
             ("retrieve", bench, "--split", "test", "--depth", "10", "--k1", "0.9", "--b", "0.4", "--diversify", "1",
              "-o", root / "bm25-div.trec"),
             ("rerank", root / "bm25.trec", "--bench", bench, "-r", "oracle", "--depth", "5", "--no-progress",
              "-o", root / "oracle5.trec"),
             ("fuse", root / "bm25.trec", root / "bm25-div.trec", "--bench", bench, "--method", "rrf",
              "-o", root / "fused.trec")]
    for step in steps:
        code, out, err = run_cli(monkeypatch, capsys, *step)
        assert code == 0, (step, out, err)
    files = {n: root / f"{n}.trec" for n in RUNS}
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", *files.values(), "--bench", bench, "--split", "test",
                             "-m", ",".join(METRICS), "--json")
    assert code == 0, err
    return files, dict(zip(RUNS, (e["metrics"] for e in json.loads(out)["runs"])))


def _python_road(root: Path) -> dict[str, Path]:
    """(b) the stage functions, called from Python."""
    from inferqa.reranking.stage import rerank
    from inferqa.retrieve.stage import fuse, index, retrieve

    bench = _bench(root)
    index(bench)
    index(bench, k1=0.9, b=0.4)
    retrieve(bench, out=root / "bm25.trec", split="test", depth=10)
    retrieve(bench, out=root / "bm25-div.trec", split="test", depth=10, k1=0.9, b=0.4, diversify=1)
    rerank(root / "bm25.trec", bench=bench, reranker="oracle", depth=5, progress=False, out=root / "oracle5.trec")
    fuse([root / "bm25.trec", root / "bm25-div.trec"], bench=bench, method="rrf", out=root / "fused.trec")
    return {n: root / f"{n}.trec" for n in RUNS}


def _grid_road(root: Path):
    """(c) an experiment file, through the `run` stage function (`inferqa run`): the runner
    builds the indexes itself (through the `index` stage function)."""
    from inferqa.experiments.stage import run

    config = root / "roads.yaml"
    config.write_text(yaml.safe_dump(_grid(_bench(root))))
    outcome = run(config, out=root / "exp", progress=False)

    def stage(prefix: str) -> Path:  # the stage folder PREFIX-HASH (16 hex digits)
        (found,) = [p for p in (root / "exp" / "stages").glob(f"{prefix}-*/run.trec")
                    if len(p.parent.name) == len(prefix) + 17]
        return found

    files = {"bm25": stage("retrieve-bm25"), "bm25-div": stage("retrieve-bm25-div"),
             "oracle5": stage("rerank-bm25-oracle5"), "fused": stage("fuse-fused")}
    return files, outcome


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_the_three_roads_write_the_same_runs_and_score_them_alike(tmp_path, monkeypatch, capsys):
    from inferqa.evaluation.stage import evaluate

    cli, cli_metrics = _cli_road(tmp_path / "cli", monkeypatch, capsys)
    py = _python_road(tmp_path / "python")
    grid, outcome = _grid_road(tmp_path / "grid")
    assert sorted(s.rsplit("-", 1)[0] for s in outcome.executed if s.startswith("index-")) == ["index-bm25"] * 2
    for name in RUNS:
        ours = _lines(cli[name])
        assert len(ours) > 38, name
        assert _lines(py[name]) == ours, name
        assert _lines(grid[name]) == ours, name
    # what each file is, as its tag says, with the benchmark's content hash (one build, three times)
    tags = {name: {line.split()[5] for line in _lines(cli[name])} for name in RUNS}
    assert all(len(t) == 1 for t in tags.values())
    assert [next(iter(tags[n])).split("@")[0] for n in RUNS] == ["bm25", "bm25", "bm25+oracle", "fuse-rrf"]
    assert len({next(iter(t)).split("@")[1] for t in tags.values()}) == 1

    # the same metrics: the grid's table rows, `evaluate` in Python, `inferqa evaluate --json`
    rows = {(r.setting, r.retriever, r.reranker): r.metrics for r in outcome.results.ranking}
    assert list(rows) == [("pipeline", "bm25", None), ("pipeline", "bm25-div", None), ("pipeline", "fused", None),
                          ("pipeline", "bm25", "oracle5"), ("pipeline", "bm25-div", "oracle5"),
                          ("pipeline", "fused", "oracle5")]  # the fusion is one more retriever, reranked too
    in_grid = {"bm25": rows[("pipeline", "bm25", None)], "bm25-div": rows[("pipeline", "bm25-div", None)],
               "oracle5": rows[("pipeline", "bm25", "oracle5")], "fused": rows[("pipeline", "fused", None)]}
    for name in RUNS:
        (scored,) = evaluate(py[name], bench=tmp_path / "python" / "bench", split="test", metrics=METRICS)
        means = {m: float(v) for m, v in scored.means.items()}
        assert list(means) == METRICS
        assert {m: float(v) for m, v in in_grid[name].items()} == means, name
        assert cli_metrics[name] == {m: round(v, 10) for m, v in means.items()}, name  # --json: 10 digits
    assert in_grid["oracle5"]["hit@1"] > in_grid["bm25"]["hit@1"]

    # with max_questions, each stage's file holds the command line's lines of the split's first N
    from inferqa.experiments.config import config_from_dict
    from inferqa.experiments.runner import run_experiment
    from inferqa.formats import Benchmark

    bench = tmp_path / "grid" / "bench"
    first = Benchmark(bench).split_qids("test")[:3]
    config = config_from_dict(_grid(bench, max_questions=3), file=tmp_path / "grid" / "first3.yaml")
    run_experiment(config, tmp_path / "grid" / "first3", progress=False, log=lambda _: None)
    for name, prefix in (("bm25", "retrieve-bm25"), ("bm25-div", "retrieve-bm25-div"),
                         ("oracle5", "rerank-bm25-oracle5"), ("fused", "fuse-fused")):
        (stage,) = [p for p in (tmp_path / "grid" / "first3" / "stages").glob(f"{prefix}-*/run.trec")
                    if len(p.parent.name) == len(prefix) + 17]
        assert _lines(stage) == [line for line in _lines(cli[name]) if line.split()[0] in first], name


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A demo benchmark and its BM25 run (for the bad values)."""
    from inferqa.retrieve.stage import index, retrieve

    root = tmp_path_factory.mktemp("small")
    bench = _bench(root)
    index(bench)
    retrieve(bench, out=root / "bm25.trec", split="test", depth=10)
    return bench, root / "bm25.trec"


def _errors(tmp_path: Path, monkeypatch, capsys, cli: tuple, python, grid: dict) -> tuple[str, InputError, InputError]:
    """What each road says of the same bad value: the command's one line (less its `inferqa:
    error:`), the Python stage function's error, the experiment file's error (whose one line
    `inferqa run` prints)."""
    code, _, err = run_cli(monkeypatch, capsys, *cli)
    one_line_error(code, err)
    with pytest.raises(InputError) as in_python:
        python()
    config = tmp_path / "bad.yaml"
    config.write_text(yaml.safe_dump(grid))
    from inferqa.experiments.stage import run

    with pytest.raises(InputError) as in_grid:
        run(config, out=tmp_path / "exp", progress=False)
    code, _, grid_err = run_cli(monkeypatch, capsys, "run", config, "-o", tmp_path / "exp", "--no-progress")
    one_line_error(code, grid_err)
    assert grid_err.strip() == f"inferqa: error: {in_grid.value}"
    assert not (tmp_path / "exp").exists()  # refused before the experiment folder is made
    return err.strip().removeprefix("inferqa: error: "), in_python.value, in_grid.value


def test_depth_0_gets_the_same_message_on_every_road(tmp_path, monkeypatch, capsys, small):
    from inferqa.retrieve.stage import retrieve

    bench, _ = small
    grid = _grid(bench, retrievers=[{"name": "bm25", "kind": "bm25", "depth": 0}], fusions=[])
    cli, py, in_grid = _errors(tmp_path, monkeypatch, capsys,
                               ("retrieve", bench, "--depth", "0", "-o", tmp_path / "x.trec"),
                               lambda: retrieve(bench, depth=0, out=tmp_path / "x.trec"), grid)
    said = "retrieve: option 'depth' takes an integer ≥ 1, not 0"
    assert cli == str(py) == py.message == said
    assert in_grid.message == said and in_grid.field == "retrievers[0].depth"
    assert not (tmp_path / "x.trec").exists()


def test_an_unknown_window_gets_the_same_message_on_every_road(tmp_path, monkeypatch, capsys, small):
    from inferqa.reranking.stage import rerank

    bench, run = small
    grid = _grid(bench, rerankers=[{"name": "o", "kind": "oracle", "depth": 5, "window": "nope"}])
    cli, py, in_grid = _errors(tmp_path, monkeypatch, capsys,
                               ("rerank", run, "--bench", bench, "-r", "oracle", "--window", "nope",
                                "-o", tmp_path / "x.trec"),
                               lambda: rerank(run, bench=bench, reranker="oracle", window="nope",
                                              out=tmp_path / "x.trec"), grid)
    said = "unknown window 'nope'; the windows are plain, linked, question, set"
    assert cli == str(py) and py.message == said and py.field == "window"
    assert in_grid.message == said and in_grid.field == "rerankers[0].window"
