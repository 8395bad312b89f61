"""The experiment runner: config validation, stage cache, and end-to-end grids.

The grid tests use a scripted LLM (through the real SQLite call cache) whose reader answer
is right exactly when the context holds a hint of the asked question, so the reader's
EM@k must equal the run's hit@k: an independent check of the whole wiring. The last test
runs the shipped CI config with the real SmolLM2 model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest
import yaml

from inferqa.formats import Run
from inferqa.errors import InputError
from inferqa.experiments.config import config_from_dict, load_config, shipped_config
from inferqa.experiments.results import OPTIMAL, ORACLE_RERANKER, ORACLE_RETRIEVER, PIPELINE
from inferqa.experiments.store import StageStore
from inferqa.io import json_hash
from inferqa.llm.base import LLM, GenerationParams

BASE = {
    "name": "toy",
    "benchmark": {"demo": True},
    "split": "test",
    "max_questions": 3,
    "retrievers": [{"name": "bm25", "kind": "bm25", "depth": 10}],
    "rerankers": [{"name": "fake-yesno", "kind": "llm-pointwise", "depth": 5, "options": {"llm": "fake"}}],
    "readers": [{"name": "fake-reader", "llm": "fake"}],
    "strategies": ["union_norm"],
    "ks": [1, 3],
    "metrics": ["hit@1", "hit@3", "hit@10", "mrr"],
}


# -- config -----------------------------------------------------------------------------
def _write(tmp_path: Path, cfg: dict, name: str = "exp.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_config_parses_and_resolves_paths(tmp_path):
    cfg = load_config(_write(tmp_path, {**BASE, "benchmark": {"path": "bench"}}))
    assert cfg.benchmark.path == tmp_path / "bench"
    assert [r.name for r in cfg.retrievers] == ["bm25"] and cfg.retrievers[0].depth == 10
    assert cfg.rerankers[0].options == {"llm": "fake"}
    assert cfg.ks == (1, 3) and cfg.oracles.optimal is True
    assert load_config(shipped_config("demo")).name == "demo"
    assert load_config(shipped_config("ci")).max_questions == 3


@pytest.mark.parametrize("change, field", [
    ({"retrievers": []}, "retrievers"),
    ({"retrievers": [{"name": "x"}]}, "retrievers[0].kind"),
    ({"retrievers": [{"kind": "bm25", "depth": 0}]}, "retrievers[0].depth"),
    ({"rerankers": [{"name": "bm25", "kind": "upr"}]}, "rerankers[0].name"),
    ({"strategies": ["vote"]}, "strategies[0]"),
    ({"ks": [1, "three"]}, "ks[1]"),
    ({"metrics": ["hit@"]}, "metrics[0]"),
    ({"oracles": {"reranker": "yes"}}, "oracles.reranker"),
    ({"colour": "red"}, "(top level)"),
    ({"benchmark": {}}, "benchmark"),
])
def test_config_errors_name_file_and_field(tmp_path, change, field):
    path = _write(tmp_path, {**BASE, **change})
    with pytest.raises(InputError) as err:
        load_config(path)
    assert err.value.file == str(path) and err.value.field == field


TWO = [{"name": "bm25", "kind": "bm25", "depth": 10}, {"name": "bm25-b", "kind": "bm25", "options": {"b": 0.4}}]


def test_fusions_are_read_through_the_fuse_stage_s_declaration(tmp_path):
    from inferqa.retrieve.stage import fuse

    cfg = load_config(_write(tmp_path, {**BASE, "retrievers": TWO, "fusions": [
        {"retrievers": ["bm25", "bm25-b"]},
        {"name": "w", "retrievers": ["bm25-b", "bm25"], "method": "combsum", "weights": [2, 1], "norm": "zscore",
         "depth": 50}]}))
    plain, weighted = cfg.fusions
    assert (plain.name, plain.retrievers, plain.method, plain.depth) == ("bm25+bm25-b", ("bm25", "bm25-b"),
                                                                         fuse.stage.default("method"),
                                                                         fuse.stage.default("depth"))
    assert (weighted.weights, weighted.norm, weighted.depth) == ((2.0, 1.0), "zscore", 50)


@pytest.mark.parametrize("fusion, field, says", [
    ({"retrievers": ["bm25", "bm25-c"]}, "fusions[0].retrievers[1]", "'bm25-c' is not a retriever of this file"),
    ({"retrievers": ["bm25"]}, "fusions[0].retrievers", "two or more different retrievers"),
    ({"retrievers": ["bm25", "bm25"]}, "fusions[0].retrievers", "two or more different retrievers"),
    ({"name": "bm25", "retrievers": ["bm25", "bm25-b"]}, "fusions[0].name", "duplicate name 'bm25'"),
    ({"retrievers": ["bm25", "bm25-b"], "method": "vote"}, "fusions[0].method", "unknown fusion method 'vote'"),
    ({"retrievers": ["bm25", "bm25-b"], "weights": [1, 2, 3]}, "fusions[0].weights", "3 weights for 2 runs"),
    ({"retrievers": ["bm25", "bm25-b"], "norm": "minmax"}, "fusions[0].norm", "norm"),
    ({"retrievers": ["bm25", "bm25-b"], "depth": 0}, "fusions[0].depth",
     "fuse: option 'depth' takes an integer ≥ 1, not 0"),
    ({"retrievers": ["bm25", "bm25-b"], "fusion": "rrf"}, "fusions", "unknown key(s) fusion"),
])
def test_a_bad_fusion_is_one_error_naming_its_field(tmp_path, fusion, field, says):
    path = _write(tmp_path, {**BASE, "retrievers": TWO, "fusions": [fusion]})
    with pytest.raises(InputError) as err:
        load_config(path)
    assert err.value.file == str(path) and err.value.field == field and says in err.value.message


def test_a_reranker_may_not_take_a_fusion_s_name(tmp_path):
    path = _write(tmp_path, {**BASE, "retrievers": TWO, "fusions": [{"name": "f", "retrievers": ["bm25", "bm25-b"]}],
                             "rerankers": [{"name": "f", "kind": "oracle"}]})
    with pytest.raises(InputError, match="name 'f' is already a fusion's") as err:
        load_config(path)
    assert err.value.field == "rerankers[0].name"


def test_malformed_yaml_is_an_input_error(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(InputError, match="malformed YAML at line"):
        load_config(p)


def test_cli_reports_bad_config_on_one_line(tmp_path):
    path = _write(tmp_path, {**BASE, "ks": [0]})
    proc = subprocess.run([sys.executable, "-m", "inferqa", "run", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "field 'ks[0]'" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- stage store ------------------------------------------------------------------------
def test_json_hash_ignores_key_order_but_not_values():
    import hashlib

    assert json_hash({"a": 1, "b": [1, 2]}) == json_hash({"b": [1, 2], "a": 1})
    assert json_hash({"a": 1}) != json_hash({"a": 2})
    # by hand: 16 hex digits of the sha256 of the sorted JSON, default separators, a Path as its str
    assert json_hash({"b": Path("x"), "a": 1}) == hashlib.sha256(b'{"a": 1, "b": "x"}').hexdigest()[:16]


def test_stage_store_is_atomic_and_reuses(tmp_path):
    store = StageStore(tmp_path)
    calls = []

    def boom(tmp: Path, h: str) -> None:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("crash")

    with pytest.raises(RuntimeError):
        store.run("s", {"x": 1}, boom)
    assert not [p for p in (tmp_path / "stages").iterdir() if not p.name.startswith(".partial")]

    def ok(tmp: Path, h: str) -> None:
        calls.append(h)
        (tmp / "out.txt").write_text("done")

    a = store.run("s", {"x": 1}, ok)
    b = store.run("s", {"x": 1}, ok)
    c = store.run("s", {"x": 2}, ok)
    assert not a.reused and b.reused and not c.reused and a.path == b.path != c.path
    assert len(calls) == 2 and (a.path / "out.txt").read_text() == "done"
    assert store.executed == [f"s-{a.hash}", f"s-{c.hash}"] and store.reused == [f"s-{a.hash}"]


# -- the grid, with a scripted LLM -------------------------------------------------------
class ScriptedLLM(LLM):
    """Reader: the gold answer iff the hints include one of the asked question's hints.
    Pointwise reranker: ' yes' is likelier for passages with a hint of the question."""

    backend, model = "scripted", "oracle-ish"

    def __init__(self, questions, fail_after: int | None = None):
        self.by_text = {q.text: q for q in questions.values()}
        self.calls = 0
        self.fail_after = fail_after

    def _tick(self, n: int) -> None:
        self.calls += n
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("simulated crash")

    def _own(self, text: str) -> tuple[object, bool]:
        question_line = [ln for ln in text.splitlines() if ln.startswith("Question: ")][-1]
        q = self.by_text[question_line[len("Question: "):].strip()]
        return q, any(h.text in text for h in q.hints)

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        raise AssertionError("the reader uses chat with this backend")

    def chat(self, conversations, params: GenerationParams = GenerationParams()) -> list[str]:
        self._tick(len(conversations))
        out = []
        for conv in conversations:
            q, own = self._own(conv[-1]["content"])
            out.append(q.answers[0] if own else "NO ANSWER")
        return out

    def logprob(self, prompt: str, continuation: str) -> float:
        return self.logprobs([(prompt, continuation)])[0]

    def logprobs(self, pairs) -> list[float]:
        self._tick(len(pairs))
        out = []
        for prompt, cont in pairs:
            passage = prompt.split("Passage: ", 1)[1].split("\n", 1)[0]
            q, _ = self._own(prompt)
            own = sum(h.text in passage for h in q.hints)
            out.append(-1.0 + own if cont.strip() == "yes" else -1.0)
        return out


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    """Patch inferqa.llm.load_llm: 'fake' → ScriptedLLM behind the real SQLite cache."""
    import inferqa.llm as llm_mod
    from inferqa.formats.benchmark import Benchmark

    made: list[ScriptedLLM] = []
    state = {"fail_after": None, "cache": tmp_path / "llm.sqlite"}

    def fake_load(spec, *, cache=llm_mod.DEFAULT_CACHE, **options):
        assert spec == "fake"
        bench = Benchmark(next(tmp_path.glob("**/stages/build-demo-*")) / "bench")
        inner = ScriptedLLM(bench.questions, state["fail_after"])
        made.append(inner)
        return llm_mod.CachedLLM(inner, state["cache"])

    monkeypatch.setattr(llm_mod, "load_llm", fake_load)
    real_check = llm_mod.check_spec  # the up-front check of `inferqa run` takes 'fake' too
    monkeypatch.setattr(llm_mod, "check_spec", lambda spec: None if spec == "fake" else real_check(spec))
    return made, state


def _run(tmp_path, cfg: dict):
    from inferqa.experiments.runner import run_experiment
    config = config_from_dict(cfg, file=tmp_path / "exp.yaml")
    return run_experiment(config, tmp_path / "exp", progress=False, log=lambda s: None)


def test_grid_end_to_end_and_cache(tmp_path, scripted):
    made, _ = scripted
    first = _run(tmp_path, BASE)
    names = sorted(s.rsplit("-", 1)[0] for s in first.executed)
    assert names == sorted([
        "build-demo", "index-bm25", "retrieve-bm25", "rerank-bm25-fake-yesno", "rerank-bm25-oracle",
        "retrieve-oracle", "rerank-oracle-fake-yesno", "retrieve-optimal",
        "read-bm25-fake-reader", "read-bm25-fake-yesno-fake-reader", "read-bm25-oracle-fake-reader",
        "read-oracle-fake-yesno-fake-reader", "read-oracle-oracle-fake-reader"])
    assert first.llm_calls > 0 and first.llm_calls == sum(m.calls for m in made)

    res = first.results
    ranking = {(r.setting, r.retriever, r.reranker): r.metrics for r in res.ranking}
    reader = {(r.setting, r.retriever, r.reranker, r.k): r.em for r in res.reader}
    # The scripted reader is right iff a passage of the question is in the top k: EM@k = hit@k.
    for (setting, ret, rr), m in ranking.items():
        if (setting, ret, rr) == (ORACLE_RETRIEVER, "oracle", None):
            continue  # the oracle retriever alone is not read
        assert reader[(setting, ret, rr, 1)] == pytest.approx(m["hit@1"])
        assert reader[(setting, ret, rr, 3)] == pytest.approx(m["hit@3"])
    assert ranking[(OPTIMAL, "oracle", "oracle")]["mrr"] == 1.0
    assert reader[(OPTIMAL, "oracle", "oracle", 1)] == 1.0
    # the scripted reranker prefers own-question passages: it cannot do worse than BM25's head
    assert ranking[(PIPELINE, "bm25", "fake-yesno")]["hit@1"] >= ranking[(PIPELINE, "bm25", None)]["hit@1"]
    assert ranking[(ORACLE_RERANKER, "bm25", "oracle")]["hit@1"] == ranking[(PIPELINE, "bm25", None)]["hit@10"]

    out = tmp_path / "exp"
    for t in ("retrieval", "reranking", "reader"):
        for fmt in ("md", "csv", "json", "tex"):
            assert (out / "tables" / f"{t}.{fmt}").exists()
    assert json.loads((out / "results.json").read_text())["name"] == "toy"
    assert (out / "report.html").stat().st_size > 10_000
    page = (out / "explorer.html").read_text()  # every ranked run and reader setting, question by question
    assert first.explorer == out / "explorer.html"
    assert all(f'"name":"{name}"' in page for name in ("bm25", "bm25 → fake-yesno", "optimal / fake-reader"))

    # Second run: nothing recomputed, no LLM loaded, no backend call, same results.
    n_made = len(made)
    second = _run(tmp_path, BASE)
    assert second.executed == [] and second.llm_calls == 0 and second.llm_loads == 0
    assert len(made) == n_made
    assert second.results.ranking == res.ranking and second.results.reader == res.reader

    # Adding a reranker computes only its own stages (and their reads).
    more = {**BASE, "rerankers": BASE["rerankers"] + [
        {"name": "fake-yesno-7", "kind": "llm-pointwise", "depth": 7, "options": {"llm": "fake"}}]}
    third = _run(tmp_path, more)
    assert sorted(s.rsplit("-", 1)[0] for s in third.executed) == sorted([
        "rerank-bm25-fake-yesno-7", "rerank-bm25-oracle", "rerank-oracle-fake-yesno-7",
        "read-bm25-fake-yesno-7-fake-reader", "read-bm25-oracle-fake-reader",
        "read-oracle-fake-yesno-7-fake-reader"])  # the oracle reranker's depth follows the deepest reranker


def test_summary_says_the_answers_came_from_the_cache(tmp_path, scripted, monkeypatch):
    """A second experiment folder on the same call cache recomputes every stage but asks the
    backend nothing: the summary says every answer came from the cache, and names it."""
    from typer.testing import CliRunner

    from inferqa.cli.app import app
    from inferqa.llm.cache import LLMCache

    made, state = scripted
    first = _run(tmp_path, BASE)
    stored = LLMCache(state["cache"])
    rows = len(stored)
    stored.close()
    assert first.llm_calls == rows == sum(m.calls for m in made) > 0  # one cache row per backend call
    asked = first.llm_calls + first.llm_hits  # every request the grid makes, repeats included
    (tmp_path / "again").mkdir()
    second = _run(tmp_path / "again", BASE)
    assert second.executed and second.llm_calls == 0 and second.llm_hits == asked
    assert second.llm_caches == [state["cache"]]
    assert second.llm_summary() == f"LLM answers: 0 computed, {asked} from the cache ({state['cache']})"
    (tmp_path / "third").mkdir()
    config = _write(tmp_path / "third", {**BASE, "llm_cache": str(state["cache"])})
    res = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "third" / "exp"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert f"LLM answers: 0 computed, {asked} from the cache ({state['cache']})" in res.output
    # --format json: the tables alone on stdout, the closing lines on stderr
    res = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "third" / "exp"), "--no-progress",
                                   "--format", "json"])
    assert res.exit_code == 0, res.output
    tables = json.loads(res.stdout)
    assert [t["name"] for t in tables] == ["retrieval", "reranking", "reader"]
    assert tables[0]["rows"][0]["hit@1"] == second.results.ranking[0].metrics["hit@1"]
    assert "LLM answers: 0 computed, 0 from the cache" in res.stderr and "stages: 0 computed" in res.stderr


def test_crash_mid_grid_resumes_without_repeating_calls(tmp_path, scripted):
    made, state = scripted
    state["fail_after"] = 40
    with pytest.raises(RuntimeError, match="simulated crash"):
        _run(tmp_path, BASE)
    done_before = {p.name for p in (tmp_path / "exp" / "stages").iterdir() if not p.name.startswith(".")}
    calls_before = sum(m.calls for m in made)
    state["fail_after"] = None
    resumed = _run(tmp_path, BASE)
    assert not done_before & set(resumed.executed)  # finished stages were not redone
    assert done_before <= set(resumed.reused)
    # A clean run (own folder, own call cache) needs as many backend calls as the crashed and
    # the resumed run together, less the chunk in flight at the crash (the cache commits in
    # chunks of 8): nothing answered before the crash was asked again.
    state["cache"] = tmp_path / "fresh-llm.sqlite"
    (tmp_path / "fresh").mkdir()
    fresh = _run(tmp_path / "fresh", BASE)
    assert 0 < resumed.llm_calls < fresh.llm_calls
    assert 0 <= calls_before + resumed.llm_calls - fresh.llm_calls <= 8
    assert resumed.results.reader == fresh.results.reader
    assert resumed.results.ranking == fresh.results.ranking


def test_a_reranker_killed_mid_stage_resumes_from_its_checkpoint(tmp_path, scripted, monkeypatch):
    """The runner's rerank stage is the `rerank` stage function writing under stages/.partial/,
    so its checkpoint (beside that output) outlives the crash; the rerun takes the finished
    questions from it, then removes it."""
    from inferqa.formats.checkpoints import RankingCheckpoint

    _, state = scripted
    state["fail_after"] = 15  # 10 calls (yes, no) per question at depth 5: the second question crashes
    cfg = {**BASE, "readers": [], "oracles": False}
    with pytest.raises(RuntimeError, match="simulated crash"):
        _run(tmp_path, cfg)
    partial = tmp_path / "exp" / "stages" / ".partial"
    (checkpoint,) = partial.glob(".rerank-bm25-fake-yesno-*.trec.rerank-checkpoint.jsonl")
    assert len(checkpoint.read_text().splitlines()) == 2  # its header and the first question
    resumed = []
    real_read = RankingCheckpoint.read

    def read(self, *args):
        done = real_read(self, *args)
        resumed.append(sorted(done))
        return done

    monkeypatch.setattr(RankingCheckpoint, "read", read)
    state["fail_after"] = None
    again = _run(tmp_path, cfg)
    assert [len(done) for done in resumed] == [1]  # the first question, from the checkpoint
    assert any(s.startswith("rerank-bm25-fake-yesno-") for s in again.executed)
    assert list(partial.iterdir()) == []


# -- the real thing: shipped CI config with SmolLM2 ------------------------------------
@pytest.mark.llm
def test_ci_config_with_smollm2_twice(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install inferqa[llm])")
    from inferqa.models import smollm2_path
    try:
        smollm2_path()
    except InputError as exc:
        pytest.skip(str(exc))
    from typer.testing import CliRunner

    from inferqa.cli.app import app
    from inferqa.experiments.runner import run_experiment

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    config = load_config(shipped_config("ci"))
    first = run_experiment(config, tmp_path / "ci", progress=False, log=lambda s: None)
    assert first.llm_calls > 0 and first.llm_loads == 1
    em = {(r.setting, r.k) for r in first.results.reader}
    assert {(OPTIMAL, 1), (OPTIMAL, 3), (PIPELINE, 1)} <= em
    assert all(0.0 <= r.em <= 1.0 and r.questions == 3 for r in first.results.reader)

    result = CliRunner().invoke(app, ["run", str(shipped_config("ci")), "--out", str(tmp_path / "ci"),
                                      "--no-progress", "--overwrite"])  # written by run_experiment, not `run`
    assert result.exit_code == 0, result.output
    assert "stages: 0 computed" in result.output and "LLM answers: 0 computed, 0 from the cache" in result.output
    assert "**Reader exact match on ci (3 test questions; 95 % bootstrap CI in brackets)**" in result.output
    assert f"report: {tmp_path / 'ci' / 'report.html'}" in result.output


def test_run_reuses_the_indexes_inferqa_index_built(tmp_path, monkeypatch, capsys):
    """One index-directory scheme: `inferqa run` on a benchmark folder searches the indexes
    that `inferqa index` wrote in BENCH/indexes (nothing is encoded or indexed again), and its
    runs are those of `inferqa retrieve` with the same options."""
    from conftest import run_cli

    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.experiments.runner import run_experiment
    from inferqa.retrieve.base import Retriever

    bench = tmp_path / "bench"
    build_benchmark(load_questions(demo_path())[:8], bench, top_k=3, split=(0.5, 0.0, 0.5))
    kinds = [("bm25", {}, [])]
    try:
        import faiss  # noqa: F401
        import sentence_transformers  # noqa: F401
        kinds.append(("dense", {"model": "minilm"}, ["--model", "minilm"]))
    except ImportError:
        pass
    for kind, _, flags in kinds:
        assert run_cli(monkeypatch, capsys, "index", bench, "-r", kind, *flags)[0] == 0
        assert run_cli(monkeypatch, capsys, "retrieve", bench, "-r", kind, *flags, "--split", "test",
                       "--depth", "10", "-o", tmp_path / f"{kind}.trec")[0] == 0
    built = {p.name: p.stat().st_mtime_ns for p in (bench / "indexes").glob("*/*")}

    def no_reindex(self, *a, **k):
        raise AssertionError(f"{self.name} indexed again")

    monkeypatch.setattr(Retriever, "index", no_reindex)
    config = config_from_dict({"name": "reuse", "benchmark": {"path": str(bench)}, "split": "test",
                               "retrievers": [{"name": kind, "kind": kind, "depth": 10, "options": opts}
                                              for kind, opts, _ in kinds],
                               "oracles": False, "metrics": ["hit@1", "mrr"]}, file=tmp_path / "exp.yaml")
    outcome = run_experiment(config, tmp_path / "exp", progress=False, log=lambda s: None)
    assert sorted(s.rsplit("-", 1)[0] for s in outcome.reused if s.startswith("index-")) == sorted(
        f"index-{kind}" for kind, _, _ in kinds)
    assert not (tmp_path / "exp" / "indexes").exists()
    assert {p.name: p.stat().st_mtime_ns for p in (bench / "indexes").glob("*/*")} == built
    for kind, _, _ in kinds:
        stage = next((tmp_path / "exp" / "stages").glob(f"retrieve-{kind}-*"))
        ours, theirs = Run.from_file(stage / "run.trec"), Run.from_file(tmp_path / f"{kind}.trec")
        assert {q: [p for p, _ in r] for q, r in ours.items()} == {q: [p for p, _ in r] for q, r in theirs.items()}


def test_an_index_of_a_rewritten_corpus_is_not_reused(tmp_path):
    """The manifest records the corpus it indexed: a corpus.jsonl rewritten since (another
    corpus) makes the index unfinished; a copy of the same bytes (new mtime) does not."""
    import os

    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.retrieve import get_retriever

    bench = tmp_path / "bench"
    build_benchmark(load_questions(demo_path())[:4], bench, top_k=2, split=(1.0,))
    r = get_retriever("bm25").ensure_index(Benchmark(bench))
    corpus = bench / "corpus.jsonl"
    os.utime(corpus, ns=(0, 0))  # same bytes, another mtime: hashed, still the same corpus
    assert get_retriever("bm25").attach(Benchmark(bench)).is_indexed()
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    corpus.write_text("".join(lines), encoding="utf-8")  # rewritten with the same bytes
    assert get_retriever("bm25").attach(Benchmark(bench)).is_indexed()
    corpus.write_text("".join(lines[:-1]), encoding="utf-8")  # a passage dropped
    stale = get_retriever("bm25").attach(Benchmark(bench))
    assert not stale.is_indexed()
    with pytest.raises(InputError, match="another corpus.jsonl"):
        stale.load()
    assert r.index_dir == stale.index_dir


def test_run_on_a_benchmark_it_may_not_write_to_indexes_under_out(tmp_path):
    """BENCH/indexes cannot be made (here a file is in the way, which stops root too): the
    index goes to OUT/indexes under the same name, and the benchmark folder is untouched."""
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.experiments.runner import run_experiment

    bench = tmp_path / "bench"
    build_benchmark(load_questions(demo_path())[:4], bench, top_k=2, split=(0.5, 0.0, 0.5))
    (bench / "indexes").write_text("not a folder\n")
    before = sorted(p.name for p in bench.iterdir())
    config = config_from_dict({"name": "ro", "benchmark": {"path": str(bench)}, "split": "test",
                               "retrievers": [{"name": "bm25", "kind": "bm25", "depth": 10}], "oracles": False,
                               "metrics": ["hit@1"]}, file=tmp_path / "exp.yaml")
    outcome = run_experiment(config, tmp_path / "exp", progress=False, log=lambda s: None)
    built = [s for s in outcome.executed if s.startswith("index-bm25-")]
    assert len(built) == 1 and (tmp_path / "exp" / "indexes" / built[0].removeprefix("index-") / "retriever.json").exists()
    assert sorted(p.name for p in bench.iterdir()) == before
    again = run_experiment(config, tmp_path / "exp2", progress=False, log=lambda s: None)
    assert [s for s in again.executed if s.startswith("index-")] == built  # its own OUT: built again there


def test_diversify_options_enter_the_stage_hash_only_when_set():
    from inferqa.experiments.config import StageSpec
    from inferqa.experiments.runner import _diversify_input

    assert _diversify_input(StageSpec("s", "bm25", 10)) == {}
    assert _diversify_input(StageSpec("s", "bm25", 10, diversify=1)) == {"diversify": 1}
    assert _diversify_input(StageSpec("s", "bm25", 10, diversify=1, diversify_by="linked",
                                      diversify_margin=0.02)) == {"diversify": 1, "diversify_by": "linked",
                                                                  "diversify_margin": 0.02}
    assert _diversify_input(StageSpec("s", "bm25", 10, diversify=1, diversify_share=0.35)) == {
        "diversify": 1, "diversify_share": 0.35}
    hashes = {json_hash(_diversify_input(StageSpec("s", "bm25", 10, diversify=1, diversify_share=s)))
              for s in (0.3, 0.35)}
    assert len(hashes) == 2
