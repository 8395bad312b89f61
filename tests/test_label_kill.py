"""`label` killed with SIGKILL at any point leaves a benchmark whose labels.jsonl, qrels.tsv and
meta.json agree: the old benchmark or the new one, never a mix (the write is one transaction)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from inferqa.formats.bench_write import KILL_AT_ENV, BenchmarkWrite, content_hash, label_counts
from inferqa.formats.benchmark import Benchmark

LABEL_SCRIPT = """
import sys
from inferqa.label import label_benchmark
from inferqa.llm.base import LLM, GenerationParams

class FirstHintKeyed(LLM):
    backend, mode, model = "keyed", "chat", "dust"

    def chat(self, conversations, params=GenerationParams()):
        return ["Mars" if conv[-1]["content"].split("- ")[1].startswith("rusty") else "Venus"
                for conv in conversations]

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError

    def logprob(self, prompt, continuation):
        raise AssertionError

label_benchmark(sys.argv[1], [FirstHintKeyed()], progress=False)
"""


def state(bench: Path) -> tuple:
    """(labels.jsonl, qrels.tsv, meta.json) as a reader of the benchmark reads them (a half-done
    commit as it commits, replaying nothing)."""
    b = Benchmark(bench)
    labels = b.file("labels.jsonl")
    return (labels.read_text() if labels.exists() else None, b.file("qrels.tsv").read_text(),
            json.loads(b.file("meta.json").read_text()))


def label(bench: Path, script: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(script), str(bench)], env=env, stderr=subprocess.PIPE)


def check_agrees(bench: Path, old: tuple, new: tuple) -> str:
    now = state(bench)
    assert now in (old, new)
    with BenchmarkWrite(bench):  # the next write finishes a killed one's commit and sweeps what it staged
        pass
    assert not [p for p in bench.iterdir() if p.name.startswith(".")]
    assert state(bench) == now  # what a reader read before is what the commit left
    labels, _, meta = now
    assert meta["labels"] == label_counts(bench / "qrels.tsv") and meta["content_hash"] == content_hash(bench)
    if labels is not None:  # every labelled passage's row agrees with its qrels label
        qrels = {line.split()[2]: int(line.split()[3]) for line in now[1].splitlines()}
        assert all(qrels[json.loads(r)["pid"]] == json.loads(r)["label"] for r in labels.splitlines())
    return "new" if now == new else "old"


def test_label_killed_at_every_step_and_at_random_times(bench_factory, tmp_path):
    from inferqa.records import Hint, Question

    qs = [Question("p", "Which planet is red?", ["Mars"],
                   [Hint("rusty dust", 0.9), Hint("two small moons", 0.8), Hint("fourth from the sun", 0.7)])]
    original = bench_factory(qs, root=tmp_path, name="b0", split=(1.0, 0.0, 0.0)).path
    script = tmp_path / "label.py"
    script.write_text(LABEL_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1] / "src"),
                                                        os.environ.get("PYTHONPATH", "")])}
    old = state(original)
    done = tmp_path / "done"
    shutil.copytree(original, done)
    t0 = time.perf_counter()
    assert label(done, script, env).wait() == 0
    whole = time.perf_counter() - t0
    new = state(done)
    assert new != old and new[0] is not None

    outcomes = []
    step = 1
    while True:  # the test hook kills the process at its Nth write step, for every N
        bench = tmp_path / f"step{step}"
        shutil.copytree(original, bench)
        proc = label(bench, script, {**env, KILL_AT_ENV: str(step)})
        code = proc.wait()
        outcomes.append(check_agrees(bench, old, new))
        if code == 0:
            break
        assert code == -signal.SIGKILL
        step += 1
    assert step >= 8 and outcomes[0] == "old" and outcomes[-1] == "new"
    assert "old" in outcomes[:-1] and "new" in outcomes[:-1]  # killed after the journal: rolled forward

    for i in range(12):  # and at random times, from start-up to the end
        bench = tmp_path / f"random{i}"
        shutil.copytree(original, bench)
        proc = label(bench, script, env)
        time.sleep(whole * (i + 0.5) / 12)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        outcomes.append(check_agrees(bench, old, new))
    assert len(outcomes) >= 20
