"""A hand-written miniature QUIT release (our own texts, the release's exact schema, three
splits) built end to end: ids verbatim, labels by the authors' rule, stored answers, the
authors' file formats in and out, paper-protocol metrics and optimal EM against hand-worked
values."""

from __future__ import annotations

import json
import math
from itertools import permutations

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.construct import build_benchmark
from inferqa.data import load_questions
from inferqa.errors import InputError
from inferqa.evaluation import evaluate
from inferqa.evaluation.exact_match import clean_answer_paper as clean_answer, paper_exact_match
from inferqa.evaluation.stored_metrics import accuracy_per_label, optimal_em
from inferqa.reading.oracle_reader import oracle_reader_em, union_passage
from inferqa.evaluation.doctor import diagnose
from inferqa.formats import iter_corpus, Run, sniff, stored_answers
from inferqa.formats import read_retriever_jsonl
from inferqa.formats.authors_files import write_pyserini_collection, write_rankify, write_retriever_jsonl

from conftest import one_line_error, run_cli

GOLD = {"Q_train_1": "Paris", "Q_train_2": "Volga", "Q_dev_1": "Kepler", "Q_test_1": "Basalt", "Q_test_2": "Lyre"}


def orderings(n=5):
    return [p for size in range(1, n + 1) for p in permutations(range(n), size)]


def mask(perm, right_to_left=False, n=5):
    m = "".join("1" if i in perm else "0" for i in range(n))
    return m[::-1] if right_to_left else m


def answers_for(qid, perm):
    """Rules the hand-worked numbers below follow. Labellers: gemma-3-1b is right (exactly)
    when the passage starts with hint 0; qwen-3-4b answers in lower case when hint 1 is in it
    (right only under the normalised match); llama-31-8b is always wrong. Readers: llama-32-1b
    is right from 4 hints on, gemma-3-4b when hint 2 is in the passage, qwen-3-8b never.
    Q_test_2's models are all wrong."""
    gold = GOLD[qid] if qid != "Q_test_2" else None
    def say(ok, wrong="Nothing", case=str):
        return case(gold) if ok and gold else wrong
    return {"gemma-3-1b": say(perm[0] == 0), "qwen-3-4b": say(1 in perm, case=str.lower),
            "llama-31-8b": "Something", "llama-32-1b": say(len(perm) >= 4),
            "gemma-3-4b": say(2 in perm), "qwen-3-8b": "NO ANSWER"}


def record(qid, right_to_left=False):
    subsets: dict = {}
    for perm in orderings():
        subsets.setdefault(mask(perm, right_to_left), {})["".join(map(str, perm))] = answers_for(qid, perm)
    return {"id": qid, "question": f"Which thing is {qid} about?", "answers": [GOLD[qid], GOLD[qid] + " (x)"],
            "hints": [{"hint": f"{qid} clue number {i}."} for i in range(5)], "subsets": subsets,
            "type": "ENTY", "difficulty": "easy"}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    d = tmp_path_factory.mktemp("release")
    files = {"train": [record("Q_train_1"), record("Q_train_2")],
             "dev": [record("Q_dev_1", right_to_left=True)],  # one file read right to left
             "test": [record("Q_test_1"), record("Q_test_2")]}
    for name, recs in files.items():
        (d / f"{name}.json").write_text(json.dumps(recs), encoding="utf-8")
    return d, files


@pytest.fixture(scope="module")
def bench(release):
    d, _ = release
    qs = [q for name in ("train", "dev", "test") for q in load_questions(d / f"{name}.json")]
    build_benchmark(qs, d / "bench", split="source", leak_policy="none")
    return Benchmark(d / "bench")


def test_ids_are_the_releases_verbatim(bench, release):
    _, files = release
    expected = {f"{r['id']}_{m}_{p}" for recs in files.values() for r in recs for m, perms in r["subsets"].items()
                for p in perms}
    got = [p.id for p in iter_corpus(bench)]
    assert len(got) == 5 * 325 and set(got) == expected
    assert "Q_train_1_10110_320" in got and "Q_dev_1_01101_320" in got  # left-to-right / right-to-left file
    assert bench.splits == {"train": ["Q_train_1", "Q_train_2"], "dev": ["Q_dev_1"], "test": ["Q_test_1", "Q_test_2"]}
    assert bench.meta["id_scheme"]["mask_bits"] == ["left-to-right", "right-to-left"]
    assert bench.passage_text("Q_train_1_10110_320") == "Q_train_1 clue number 3. Q_train_1 clue number 2. " \
                                                       "Q_train_1 clue number 0."


def test_labels_follow_the_authors_exact_rule_and_answers_are_stored(bench, release):
    # Exact: label 2 iff the passage starts with hint 0 — 1 + 4 + 12 + 24 + 24 = 65 orderings.
    for qid in ("Q_train_1", "Q_dev_1", "Q_test_1"):
        assert sum(v == 2 for v in bench.qrels[qid].values()) == 65
    assert set(bench.qrels["Q_test_2"].values()) == {1}
    assert bench.meta["labels"] == {"1": 5 * 325 - 4 * 65, "2": 4 * 65}
    assert bench.meta["options"]["label_match"] == "exact" and bench.meta["labelling"]["match"] == "exact"
    stored = {pid: r.to_dict() for pid, r in stored_answers(bench).items()}
    row = stored["Q_test_1_11000_10"]
    assert row["answers"] == {"gemma-3-1b": "Nothing", "qwen-3-4b": "basalt", "llama-31-8b": "Something"}
    assert row["correct"] == {"gemma-3-1b": False, "qwen-3-4b": False, "llama-31-8b": False}
    assert row["reader_answers"] == {"llama-32-1b": "Nothing", "gemma-3-4b": "Nothing", "qwen-3-8b": "NO ANSWER"}
    assert row["label"] == 1 and len(stored) == 5 * 325 and len(stored_answers(bench, ["Q_dev_1"])) == 325


def test_normalized_match_is_a_recorded_option(release, tmp_path):
    d, _ = release
    meta = build_benchmark(load_questions(d / "test.json"), tmp_path / "b", split="source", leak_policy="none",
                           label_match="normalized")
    # Starts with hint 0, or holds hint 1: 261 with hint 1 + 16 from {0, 2, 3, 4} starting with 0.
    assert meta["labels"] == {"1": 325 + 325 - 277, "2": 277} and meta["options"]["label_match"] == "normalized"
    with pytest.raises(InputError, match="label-match"):
        build_benchmark(load_questions(d / "test.json"), tmp_path / "c", label_match="fuzzy")


def rankify_fixture(path, titles=None):
    """Test split, in dataset order: Q_test_1 gets a passage of Q_test_2 (label 0 for it), then
    a label-2 and a label-1 passage of its own; Q_test_2 gets an empty list."""
    ctxs = [{"id": pid, "score": s, "has_answer": False, "text": "", "title": t}
            for pid, s, t in zip(["Q_test_2_10000_0", "Q_test_1_10000_0", "Q_test_1_01000_1"], [9.0, 8.5, 8.0],
                                 titles or ["Q_test_2", "Q_test_1", "Q_test_1"])]
    data = [{"question": "Which thing is Q_test_1 about?", "answers": ["Basalt"], "ctxs": ctxs},
            {"question": "Which thing is Q_test_2 about?", "answers": ["Lyre"], "ctxs": []}]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


PAPER = {
    "hit@1": 0.0, "hit@2": 0.5,                      # empty list counts 0
    "precision@5": round((2 / 3) / 2, 4),            # 2 relevant / min(5, 3 retrieved)
    "mrr@10": 0.25, "recall@5": round((2 / 325) / 2, 4),
    "map@3": round(((1 / 2 + 2 / 3) / 325) / 2, 4),  # cut at 3, over all 325 relevant
    "ndcg@3": round(((3 / math.log2(3) + 1 / 2) / (3 + 3 / math.log2(3) + 3 / 2)) / 2, 4),
}


def test_rankify_run_evaluates_to_hand_worked_paper_numbers(bench, tmp_path, monkeypatch, capsys):
    f = rankify_fixture(tmp_path / "bm25.json")
    assert sniff(f) == "rankify"
    run = Run.from_file(f, bench=bench, split="test")
    assert list(run) == ["Q_test_1", "Q_test_2"] and run["Q_test_2"] == []
    assert evaluate(run, bench.qrels, list(PAPER), protocol="paper") == PAPER
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", f, "--bench", bench.path, "--split", "test",
                             "--protocol", "paper", "--metrics", ",".join(PAPER), "--json")
    assert code in (0, None), err
    assert json.loads(out)["metrics"] == PAPER and json.loads(out)["protocol"] == "paper"
    with pytest.raises(InputError, match="give --bench DIR and --split"):
        Run.from_file(f)
    with pytest.raises(InputError, match="question text differs"):
        Run.from_file(f, bench=bench, split="train")


def test_rankify_written_from_a_trec_run_round_trips(bench, tmp_path):
    trec = tmp_path / "run.trec"
    Run({"Q_test_2": [("Q_test_2_00100_2", 3.0), ("Q_test_1_10000_0", 2.0)],
         "Q_test_1": [("Q_test_1_11000_01", 1.5)]}).to_file(trec)
    assert sniff(trec) == "trec"
    out = tmp_path / "run.json"
    assert write_rankify(Run.from_file(trec), bench, "test", out) == 2
    data = json.loads(out.read_text())
    assert [d["question"] for d in data] == ["Which thing is Q_test_1 about?", "Which thing is Q_test_2 about?"]
    first = data[0]["ctxs"][0]
    # has_answer: the answer-in-text test of the authors' files (no hint names "Basalt"), not label 2.
    assert first == {"id": "Q_test_1_11000_01", "score": 1.5, "has_answer": False,
                     "text": "Q_test_1 clue number 0. Q_test_1 clue number 1.", "title": "Q_test_1"}
    back = Run.from_file(out, bench=bench, split="test"); info = back.info
    assert back == Run.from_file(trec) and info[1]["titles"] == ["Q_test_2", "Q_test_1"]


def test_retriever_jsonl_and_pyserini_exports(bench, tmp_path):
    f = tmp_path / "retriever.jsonl"
    assert write_retriever_jsonl(bench, "test", f) == 2
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    assert lines[0]["question"] == "Which thing is Q_test_1 about?" and len(lines[0]["contexts"]) == 325
    ctx = next(c for c in lines[0]["contexts"] if c["id"] == "Q_test_1_11110_3210")
    assert ctx["label"] == 1 and ctx["rag_answers"] == {"llama-32-1b": "Basalt", "gemma-3-4b": "Basalt",
                                                         "qwen-3-8b": "NO ANSWER"}
    imported = read_retriever_jsonl(f, bench, "test")
    got = imported["Q_test_1_11110_3210"]
    assert (got.label, got.reader_answers, got.text) == (1, ctx["rag_answers"], ctx["text"])
    col = tmp_path / "collection.jsonl"
    assert write_pyserini_collection(bench, col) == 5 * 325
    first = json.loads(col.read_text().splitlines()[0])
    assert first == {"id": "Q_train_1_10000_0", "contents": "Q_train_1 clue number 0.", "title": "Q_train_1"}


def test_answer_level_numbers_from_stored_answers(bench):
    test = bench.split_qids("test")
    # Any relevant passage: Q_test_1 has 4+-hint passages answered right by llama-32-1b; Q_test_2 none.
    assert optimal_em(bench, test, "llama-32-1b") == 0.5
    assert optimal_em(bench, test, "qwen-3-8b") == 0.0
    assert optimal_em(bench, ["Q_train_1", "Q_train_2"], "gemma-3-4b", min_label=2) == 1.0
    # llama-32-1b: label 2 (starts with hint 0): 24 + 24 of 65 have 4+ hints; label 1: Q_test_1's
    # 240 - 48 four-or-five-hint passages of its 260, none of Q_test_2's 325.
    assert accuracy_per_label(bench, test, "llama-32-1b") == {1: 192 / 585, 2: 48 / 65}
    with pytest.raises(InputError, match="no stored answers of model"):
        optimal_em(bench, test, "gpt-9")


def test_oracle_reranker_reader_looks_answers_up(bench):
    assert union_passage(bench, ["Q_test_1_10000_0", "Q_test_1_11000_10", "Q_test_1_00110_32"]) == "Q_test_1_11110_0132"
    assert union_passage(bench, ["Q_test_1_10000_0", "Q_test_2_10000_0"]) is None
    assert union_passage(bench, ["Q_dev_1_00001_0", "Q_dev_1_00010_1"]) == "Q_dev_1_00011_01"  # right-to-left
    run = Run({"Q_test_1": [("Q_test_1_10000_0", 3.0), ("Q_test_1_01000_1", 2.0), ("Q_test_1_00100_2", 1.5),
                            ("Q_test_1_00010_3", 1.0)],
               "Q_test_2": [("Q_test_2_10000_0", 1.0)]})
    # llama-32-1b is right from 4 hints on: only k = 4 reaches a 4-hint union (for Q_test_1).
    assert oracle_reader_em(run, bench, "llama-32-1b", [1, 3, 4]) == {1: 0.0, 3: 0.0, 4: 0.5}
    # gemma-3-4b is right once hint 2 is in: k = 3 and on.
    assert oracle_reader_em(run, bench, "gemma-3-4b", [1, 2, 3]) == {1: 0.0, 2: 0.0, 3: 0.5}


def test_paper_answer_cleaning_and_exact_em():
    assert clean_answer("  Let me think.\n(Basalt ") == "Basalt"
    assert clean_answer("") == clean_answer("There is no answer here") == "NO ANSWER"
    assert paper_exact_match("Basalt", ["Basalt"]) and not paper_exact_match("basalt", ["Basalt"])
    assert not paper_exact_match("no answer", ["no answer"])


def test_doctor_finds_the_shift_missing_questions_duplicates_and_ties(bench, tmp_path):
    clean = diagnose(rankify_fixture(tmp_path / "ok.json"), bench, "test")
    assert clean["checks"]["questions_missing"] == {"count": 1, "examples": ["Q_test_2"]}  # the empty list
    assert clean["checks"]["title_disagrees_with_id"]["count"] == 0
    # Every id shifted to another corpus line: titles name one question, ids another.
    shifted = diagnose(rankify_fixture(tmp_path / "shift.json", titles=["Q_test_1", "Q_test_1", "Q_test_2"]),
                       bench, "test")
    assert shifted["checks"]["title_disagrees_with_id"]["count"] == 2 and not shifted["ok"]
    trec = tmp_path / "bad.trec"
    lines = [f"Q_test_1 Q0 Q_test_1_{mask(p)}_{''.join(map(str, p))} {r + 1} 1.0 t" for r, p in
             enumerate(orderings()[:12])]
    lines += ["Q_test_1 Q0 Q_test_1_10000_0 13 0.5 t", "Q_test_1 Q0 Q_test_1_1000_0 14 0.4 t",
              "Q_nope Q0 Q_nope_10000_0 1 1.0 t"]
    trec.write_text("\n".join(lines) + "\n")
    r = diagnose(trec, bench, "test", tie_length=10)
    c = r["checks"]
    assert c["duplicate_ids"]["count"] == 1 and c["ids_not_in_corpus"]["count"] == 2  # short mask, unknown question
    assert c["questions_missing"]["examples"] == ["Q_test_2"] and c["questions_not_in_benchmark"]["count"] == 1
    assert c["tied_score_runs"]["count"] == 1 and r["longest_tie"] == 12
    # Without --split: the splits the run touches (here test only), not the whole benchmark.
    assert diagnose(trec, bench)["checks"]["questions_missing"]["examples"] == ["Q_test_2"]


def test_release_commands_end_to_end(release, tmp_path, monkeypatch, capsys):
    d, _ = release
    out = tmp_path / "bench"
    code, _, err = run_cli(monkeypatch, capsys, "build", d / "train.json", d / "dev.json", d / "test.json",
                           "--split", "source", "--leak-policy", "none", "--out", out)
    assert code in (0, None), err
    code, text, err = run_cli(monkeypatch, capsys, "stored-answers", out, "--split", "test", "--model",
                              "llama-32-1b", "--json")
    assert code in (0, None), err
    got = json.loads(text)["models"]["llama-32-1b"]
    assert got == {"optimal_em": 0.5, "accuracy_per_label": {"1": round(192 / 585, 4), "2": round(48 / 65, 4)}}
    trec = tmp_path / "ranked.trec"
    Run({"Q_test_1": [("Q_test_1_00100_2", 2.0), ("Q_test_1_10000_0", 1.0)]}).to_file(trec)
    code, text, err = run_cli(monkeypatch, capsys, "stored-answers", out, "--split", "test", "--model",
                              "gemma-3-4b", "--run", trec, "--k", "1,2", "--json")
    assert code in (0, None), err
    # Oracle order: the label-2 passage (hint 0) first; gemma-3-4b is right once hint 2 joins, at k = 2.
    assert json.loads(text)["models"]["gemma-3-4b"]["oracle_reranker_em"] == {"1": 0.0, "2": 1.0}
    code, text, err = run_cli(monkeypatch, capsys, "export", "retriever-jsonl", "--bench", out, "--split", "test",
                              "--out", tmp_path / "r.jsonl")
    assert code in (0, None) and "2 questions" in text, err
    code, text, err = run_cli(monkeypatch, capsys, "import-answers", tmp_path / "r.jsonl", "--bench", out,
                              "--split", "test")
    assert code in (0, None) and "label disagreements: 0" in text, err
    run = rankify_fixture(tmp_path / "run.json", titles=["Q_test_1", "Q_test_1", "Q_test_2"])
    code, text, err = run_cli(monkeypatch, capsys, "doctor", run, "--bench", out, "--split", "test", "--json")
    assert code == 1 and json.loads(text)["checks"]["title_disagrees_with_id"]["count"] == 2
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", out, "--out", tmp_path / "x.json",
                           "--run", run)
    assert code == 2 and err.count("\n") == 1 and "--split" in err
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", run, "--bench", out, "--protocol", "nope", "--split",
                           "test")
    assert code == 2 and "unknown protocol" in err


def test_bm25_dedup_reads_the_releases_ids_in_either_bit_order(bench):
    from inferqa.retrieve import get_retriever, question_queries

    queries = {**question_queries(bench), "dev-hint": "Q_dev_1 clue number 3"}
    runs = []
    for dedup in (True, False):
        r = get_retriever("bm25", dedup=dedup, show_progress=False)
        r.index(bench)
        runs.append(r.search(queries, 5 * 325))
    dedup, plain = runs
    for qid in plain:
        d, p = dict(dedup[qid]), dict(plain[qid])
        assert d.keys() == p.keys() and max(abs(d[x] - p[x]) for x in p) < 1e-5, qid
    # The right-to-left file's passages holding hint 3 (mask bit 1 from the left) score highest.
    top = dedup["dev-hint"][0][0]
    assert top.startswith("Q_dev_1_") and "3" in top.rsplit("_", 1)[1] and top.split("_")[3][1] == "1"


def test_evaluate_answers_reads_the_authors_reader_output(bench, tmp_path, monkeypatch, capsys):
    f = tmp_path / "reader.json"
    f.write_text(json.dumps([
        {"question": "Which thing is Q_test_1 about?", "answers": ["Basalt"], "ctxs": [],
         "predicted_answer": {"qwen-3-8b": {"Q_test_1_un_1": "basalt", "Q_test_1_uf_3": "Thinking...\n(Basalt"}}},
        {"question": "Which thing is Q_test_2 about?", "answers": ["Lyre"], "ctxs": [],
         "predicted_answer": {"qwen-3-8b": {"Q_test_2_un_1": "Lyre", "Q_test_2_uf_3": "no answer"}}}]))
    code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", f, "--bench", bench.path, "--protocol", "paper")
    assert code in (0, None), err
    rows = [[c.strip() for c in ln.split("│")] for ln in out.splitlines() if "qwen-3-8b/" in ln]
    # union_norm k=1: "basalt" misses (case), "Lyre" hits; union_freq k=3: the authors compare stored
    # answers as stored (issue 19), so "Thinking...\n(Basalt" misses, and "no answer" too.
    assert [(r[1], r[2], r[4]) for r in rows] == [("qwen-3-8b/union_norm", "1", "50.00"),
                                                   ("qwen-3-8b/union_freq", "3", "0.00")]
    f.write_text(json.dumps([{"predicted_answer": {"m": {"Q_test_1_zz_1": "x"}}}]))
    code, _, err = run_cli(monkeypatch, capsys, "evaluate-answers", f, "--bench", bench.path)
    assert code == 2 and "qid_un|uf_k" in err and err.count("\n") == 1


def test_paper_rows_from_stored_answers(bench):
    from inferqa.evaluation.stored_metrics import PAPER_LABEL_ROWS, accuracy, hint_contribution_oracle, hint_contribution_run

    test = bench.split_qids("test")
    # gemma-3-4b is right where hint 2 is in: 261 passages of Q_test_1 (1 + 8 + 36 + 96 + 120 by size),
    # 49 of them label 2 (start with hint 0); Q_test_2's 325 (label 1) never.
    assert accuracy(bench, test, "gemma-3-4b", PAPER_LABEL_ROWS["1 and 2"]) == 261 / 650
    assert accuracy(bench, test, "gemma-3-4b", PAPER_LABEL_ROWS["1"]) == 212 / 585
    assert accuracy(bench, test, "gemma-3-4b", PAPER_LABEL_ROWS["2"]) == 49 / 65
    # gemma-3-1b is right exactly on the label-2 passages: no label-1 passage answers a question.
    assert optimal_em(bench, test, "gemma-3-1b", labels=(1,)) == 0.0
    assert optimal_em(bench, test, "gemma-3-1b", labels=(2,)) == optimal_em(bench, test, "gemma-3-1b") == 0.5
    assert hint_contribution_oracle(bench, test, "gemma-3-4b") == {0: 0.0, 1: 1 / 261, 2: 8 / 261, 3: 36 / 261,
                                                                   4: 96 / 261, 5: 120 / 261}
    assert hint_contribution_oracle(bench, test, "llama-32-1b") == {0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0, 4: 0.5, 5: 0.5}
    top = Run({"Q_test_1": [("Q_test_1_00110_32", 1.0)], "Q_test_2": [("Q_test_2_10000_0", 1.0)]})
    assert hint_contribution_run(top, bench, "gemma-3-4b") == {0: 0.0, 1: 0.0, 2: 1.0, 3: 0.0, 4: 0.0, 5: 0.0}
    # Another question's passage on top has no stored answer for this question.
    assert set(hint_contribution_run(Run({"Q_test_2": [("Q_test_1_00100_2", 1.0)]}), bench,
                                     "gemma-3-4b").values()) == {0.0}


def test_union_freq_passage_follows_the_authors_scores(bench):
    # hint 0 at (rank 1, position 2) and (2, 1): 0.6 * 1.5 + 0.4 * 1.5 = 1.5 beats hint 1 (1.0), hint 3 (0.5).
    pids = ["Q_test_1_11000_10", "Q_test_1_10010_03"]
    assert union_passage(bench, pids) == "Q_test_1_11010_103"
    assert union_passage(bench, pids, "union_freq") == "Q_test_1_11010_013"


def test_stored_answers_paper_protocol(bench, tmp_path, monkeypatch, capsys):
    trec = tmp_path / "reranked.trec"
    Run({"Q_test_1": [("Q_test_1_11000_10", 2.0), ("Q_test_1_10010_03", 1.0)],
         "Q_test_2": [("Q_test_2_10000_0", 1.0)]}).to_file(trec)
    code, text, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--split", "test", "--model",
                              "gemma-3-1b", "--run", trec, "--k", "1,2", "--protocol", "paper", "--json")
    assert code in (0, None), err
    got = json.loads(text)["models"]["gemma-3-1b"]
    zero = {str(n): 0.0 for n in range(6)}
    assert got == {
        # 65 label-2 passages of Q_test_1, all right; Q_test_2 has none; no label-1 passage is right.
        "accuracy": {"1 and 2": round(65 / 650, 4), "1": 0.0, "2": 1.0},
        "optimal_em": {"1 and 2": 0.5, "1": 0.0, "2": 0.5},
        # right exactly on the passages that start with hint 0: 1, 4, 12, 24, 24 by size
        "hint_contribution": {"oracle": {**zero, **{str(n): round(c / 65, 4) for n, c in
                                                     zip(range(1, 6), (1, 4, 12, 24, 24))}},
                              "run": zero},  # each top passage starts with another hint
        # The run's own order: k=1 reads hints (1, 0); k=2 un (1, 0, 3), uf (0, 1, 3): right for Q_test_1 only.
        "oracle_reranker_em": {"un_1": 0.0, "uf_1": 0.0, "un_2": 0.0, "uf_2": 0.5}}
    code, text, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--split", "test", "--model",
                              "gemma-3-1b", "--run", trec, "--k", "1,2", "--protocol", "paper")
    assert code in (0, None), err
    assert text.startswith("gemma-3-1b: accuracy labels 1 and 2: 10.00, labels 1: 0.00, labels 2: 100.00;")
    assert "oracle reranker EM un_1: 0.00, uf_1: 0.00, un_2: 0.00, uf_2: 50.00" in text
    # Ours sorts the run by label first: the label-2 passage (0, 3) leads at every k.
    code, text, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--split", "test", "--model",
                              "gemma-3-1b", "--run", trec, "--k", "1,2", "--json")
    assert code in (0, None), err
    assert json.loads(text)["models"]["gemma-3-1b"]["oracle_reranker_em"] == {"1": 0.5, "2": 0.5}
    code, _, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--protocol", "paper",
                           "--min-label", "2")
    assert code == 2 and "--min-label" in err and err.count("\n") == 1


def test_release_strings_are_kept_verbatim(tmp_path):
    rec = record("Q_test_1")
    rec["question"] = "Which  thing is it? "
    rec["answers"] = ["Sri  Lanka", "Ceylon"]
    rec["hints"] = [{"hint": "Alpha  beta "}, {"hint": " gamma"}, {"hint": "delta\tx"}, {"hint": "eps"},
                    {"hint": "zeta"}]
    rec["subsets"]["10000"]["0"]["gemma-3-1b"] = "Sri  Lanka"  # the gold as written: label 2
    rec["subsets"]["01000"]["1"]["gemma-3-1b"] = "Sri Lanka"   # not as written: label 1
    (tmp_path / "test.json").write_text(json.dumps([rec]), encoding="utf-8")
    build_benchmark(load_questions(tmp_path / "test.json"), tmp_path / "b", split="source", leak_policy="none")
    b = Benchmark(tmp_path / "b")
    q = b.questions["Q_test_1"]
    assert (q.text, q.answers) == ("Which  thing is it? ", ["Sri  Lanka", "Ceylon"])
    # ' '.join(hints).strip(): inner whitespace kept, only the passage's own ends stripped.
    texts = {p.id: p.text for p in iter_corpus(b)}
    assert texts["Q_test_1_11000_01"] == b.passage_text("Q_test_1_11000_01") == "Alpha  beta   gamma"
    assert texts["Q_test_1_11000_10"] == "gamma Alpha  beta"
    assert texts["Q_test_1_10100_20"] == "delta\tx Alpha  beta"
    assert b.qrels["Q_test_1"]["Q_test_1_10000_0"] == 2 and b.qrels["Q_test_1"]["Q_test_1_01000_1"] == 1
    write_pyserini_collection(b, tmp_path / "c.jsonl")
    lines = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    assert next(x for x in lines if x["id"] == "Q_test_1_11000_10")["contents"] == "gamma Alpha  beta"


def test_export_rankify_keeps_titles_writes_reranked_ctxs_and_tests_answers_in_text(bench, tmp_path, monkeypatch,
                                                                                     capsys):
    shifted = rankify_fixture(tmp_path / "shift.json", titles=["Q_test_1", "Q_test_1", "Q_test_2"])
    out = tmp_path / "out.json"
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", shifted, "--out", out)
    assert code in (0, None), err
    data = json.loads(out.read_text())
    assert [c["title"] for c in data[0]["ctxs"]] == ["Q_test_1", "Q_test_1", "Q_test_2"]  # as the source had them
    assert "reranked_ctxs" not in data[0]
    assert diagnose(out, bench, "test")["checks"]["title_disagrees_with_id"]["count"] == 2  # still visible
    first, reranked = tmp_path / "first.trec", tmp_path / "reranked.trec"
    Run({"Q_test_1": [("Q_test_1_01000_1", 2.0), ("Q_test_1_10000_0", 1.0)]}).to_file(first)
    Run({"Q_test_1": [("Q_test_1_10000_0", 2.0), ("Q_test_1_01000_1", 1.0)]}).to_file(reranked)
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", reranked, "--first-stage", first, "--no-text", "--out", out)
    assert code in (0, None), err
    data = json.loads(out.read_text())
    assert [c["id"] for c in data[0]["ctxs"]] == ["Q_test_1_01000_1", "Q_test_1_10000_0"]
    assert [c["id"] for c in data[0]["reranked_ctxs"]] == ["Q_test_1_10000_0", "Q_test_1_01000_1"]
    assert data[1] == {"question": "Which thing is Q_test_2 about?", "answers": ["Lyre", "Lyre (x)"], "ctxs": [],
                       "reranked_ctxs": []}
    # Read back, a reranker's file is its reranked_ctxs, and exports as one again without --reranked.
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", out, "--out", tmp_path / "again.json")
    assert code in (0, None), err
    again = json.loads((tmp_path / "again.json").read_text())
    assert again[0]["reranked_ctxs"] == again[0]["ctxs"] and again[0]["ctxs"][0]["id"] == "Q_test_1_10000_0"


def test_has_answer_is_the_answer_in_text_test(tmp_path):
    from inferqa.text import answer_in_text

    rec = record("Q_test_1")
    rec["hints"][1]["hint"] = "Cliffs of basalt-rock."
    (tmp_path / "test.json").write_text(json.dumps([rec]), encoding="utf-8")
    build_benchmark(load_questions(tmp_path / "test.json"), tmp_path / "b", split="source", leak_policy="none")
    b = Benchmark(tmp_path / "b")
    run = Run({"Q_test_1": [("Q_test_1_11000_01", 2.0), ("Q_test_1_10000_0", 1.0), ("Q_nope_10000_0", 0.5)]})
    write_rankify(run, b, "test", tmp_path / "r.json")
    ctxs = json.loads((tmp_path / "r.json").read_text())[0]["ctxs"]
    # Uncased tokens in a row ("basalt" "-" "rock" holds "basalt"); an unknown question's passage: False.
    assert [c["has_answer"] for c in ctxs] == [True, False, False]
    assert answer_in_text("Sri Lanka, in 1948.", ["sri lanka"]) and not answer_in_text("Srilanka", ["Sri Lanka"])
    assert not answer_in_text("Basalts", ["Basalt"]) and answer_in_text("(x) Basalt", ["Basalt (x)", "y"]) is False


# --- round trip: our exports, read by the authors' rules (our own re-implementation of them) ---

def _authors_index(retriever_jsonl):
    """Per question (by position): pid -> label, text -> stored reader answers, and the answers."""
    rows = [json.loads(x) for x in retriever_jsonl.read_text().splitlines()]
    return ([{c["id"]: c["label"] for c in r["contexts"]} for r in rows],
            [{c["text"]: c["rag_answers"] for c in r["contexts"]} for r in rows], rows)


def _authors_retrieval(gold, runs, k, threshold=0):
    """Hit, recall (questions without a passage above `threshold` left out), precision, MRR, MAP,
    nDCG at k, each rounded to 4 as their results scripts print them."""
    hit = rec = n = p = mrr = ap = nd = 0.0
    for labels, ranked in zip(gold, runs):
        top = ranked[:k]
        rels = {pid for pid, lab in labels.items() if lab > threshold}
        if rels:
            n += 1
            hit += any(pid in rels for pid in top)
            rec += len(rels & set(top)) / len(rels)
        any_rel = {pid for pid, lab in labels.items() if lab > 0}
        p += len(any_rel & set(top)) / max(1, min(k, len(top)))
        first = next((r for r, pid in enumerate(top, 1) if pid in any_rel), 0)
        mrr += 1 / first if first else 0.0
        found, s = 0, 0.0
        for r, pid in enumerate(top, 1):
            if pid in any_rel:
                found += 1
                s += found / r
        ap += s / len(any_rel) if any_rel else 0.0
        dcg = sum((2 ** labels.get(pid, 0) - 1) / math.log2(r + 1) for r, pid in enumerate(top, 1))
        ideal = sorted((lab for lab in labels.values() if lab > 0), reverse=True)[:k]
        idcg = sum((2 ** lab - 1) / math.log2(r + 1) for r, lab in enumerate(ideal, 1))
        nd += dcg / idcg if idcg else 0.0
    q = len(runs)
    return {f"hit@{k}": round(hit / n, 4) if n else 0.0, f"recall@{k}": round(rec / n, 4) if n else 0.0,
            f"precision@{k}": round(p / q, 4), f"mrr@{k}": round(mrr / q, 4), f"map@{k}": round(ap / q, 4),
            f"ndcg@{k}": round(nd / q, 4)}


def _authors_union_text(ids, hints, union):
    lists = [[hints["_".join(pid.split("_")[:3])][int(c)] for c in pid.split("_")[-1]] for pid in ids]
    if union == "un":
        return " ".join(dict.fromkeys(h for hs in lists for h in hs))
    by_rank, by_pos = {}, {}
    for rank, hs in enumerate(lists, 1):
        for pos, h in enumerate(hs, 1):
            by_rank.setdefault(h, []).append(rank)
            by_pos.setdefault(h, []).append(pos)
    score = {h: 0.6 * sum(1 / r for r in by_rank[h]) + 0.4 * sum(1 / p for p in by_pos[h]) for h in by_rank}
    return " ".join(sorted(score, key=lambda h: score[h], reverse=True))


def test_exports_read_by_the_authors_rules_give_our_paper_numbers(bench, release, tmp_path, monkeypatch, capsys):
    import random

    _, files = release
    rng = random.Random(7)
    test = bench.split_qids("test")
    pool = [pid for q in test for pid in bench.qrels[q]]
    # First stage: 40 passages from both questions (others' count 0), a relevant one listed twice.
    first = {}
    for q in test:
        ranked = rng.sample(pool, 40)
        ranked.insert(3, ranked[next(i for i, p in enumerate(ranked) if p.startswith(q))])
        first[q] = [(pid, float(50 - r)) for r, pid in enumerate(ranked)]
    # A reranker's output: each question's own passages, shuffled (the oracle-reranker reader reads them).
    reranked = {q: [(pid, float(60 - r)) for r, pid in enumerate(rng.sample(sorted(bench.qrels[q]), 12))]
                for q in test}
    Run(first).to_file(tmp_path / "first.trec", tag="t")
    Run(reranked).to_file(tmp_path / "reranked.trec", tag="t")
    for args in (["--run", tmp_path / "first.trec", "--out", tmp_path / "retriever.json"],
                 ["--run", tmp_path / "reranked.trec", "--first-stage", tmp_path / "first.trec",
                  "--out", tmp_path / "reranker.json"]):
        code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test", *args)
        assert code in (0, None), err
    code, _, err = run_cli(monkeypatch, capsys, "export", "retriever-jsonl", "--bench", bench.path, "--split", "test",
                           "--out", tmp_path / "retriever.jsonl")
    assert code in (0, None), err
    gold, by_text, index_rows = _authors_index(tmp_path / "retriever.jsonl")
    retriever = json.loads((tmp_path / "retriever.json").read_text())
    reranker = json.loads((tmp_path / "reranker.json").read_text())

    def ours(run, *extra):
        code, out, err = run_cli(monkeypatch, capsys, "evaluate", run, "--bench", bench.path, "--split", "test",
                                 "--protocol", "paper", "--json", *extra)
        assert code in (0, None), err
        return json.loads(out)["metrics"]

    names = [f"{m}@{k}" for k in (1, 5, 10, 50) for m in ("hit", "recall", "precision", "mrr", "map", "ndcg")]
    theirs = {}
    for k in (1, 5, 10, 50):
        theirs.update(_authors_retrieval(gold, [[c["id"] for c in q["ctxs"]] for q in retriever], k))
    assert ours(tmp_path / "first.trec", "--metrics", ",".join(names)) == theirs
    assert ours(tmp_path / "retriever.json", "--metrics", ",".join(names)) == theirs
    # A TREC run cannot list an empty question; the authors' file of it does, and it counts 0.
    Run({"Q_test_1": first["Q_test_1"]}).to_file(tmp_path / "one.trec", tag="t")
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", tmp_path / "one.trec", "--out", tmp_path / "one.json")
    assert code in (0, None), err
    one = json.loads((tmp_path / "one.json").read_text())
    assert one[1]["ctxs"] == []
    theirs_one = {}
    for k in (1, 5, 10, 50):
        theirs_one.update(_authors_retrieval(gold, [[c["id"] for c in q["ctxs"]] for q in one], k))
    assert ours(tmp_path / "one.trec", "--metrics", ",".join(names)) == theirs_one
    assert ours(tmp_path / "one.json", "--metrics", ",".join(names)) == theirs_one
    label2 = {m: v for k in (5, 50) for m, v in _authors_retrieval(gold, [[c["id"] for c in q["ctxs"]]
                                                                        for q in retriever], k, 1).items()
              if m.startswith(("hit", "recall"))}
    assert ours(tmp_path / "retriever.json", "--min-label", "2", "--metrics", ",".join(label2)) == label2
    ndcg = {}
    for k in (1, 5, 10, 326):
        ndcg[f"ndcg@{k}"] = _authors_retrieval(gold, [[c["id"] for c in q["reranked_ctxs"]] for q in reranker],
                                               k)[f"ndcg@{k}"]
    assert ours(tmp_path / "reranker.json", "--metrics", ",".join(ndcg)) == ndcg

    # Answer rows: rag.py's accuracy and optimal EM, the oracle-reranker reader, hint contribution.
    hints = {r["id"]: [h["hint"] for h in r["hints"]] for recs in files.values() for r in recs}
    code, out, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--split", "test", "--protocol",
                             "paper", "--run", tmp_path / "reranker.json", "--json")
    assert code in (0, None), err
    table = json.loads(out)["models"]
    for model in ("llama-32-1b", "gemma-3-4b", "qwen-3-8b"):
        acc, em = {}, {}
        for row in ("1 and 2", "1", "2"):
            pairs = [(r["answers"], c) for r in index_rows for c in r["contexts"] if str(c["label"]) in row]
            acc[row] = round(sum(c["rag_answers"][model] in a for a, c in pairs) / len(pairs), 4)
            em[row] = round(sum(any(c["rag_answers"][model] in r["answers"] for c in r["contexts"]
                                    if str(c["label"]) in row) for r in index_rows) / len(index_rows), 4)
        assert table[model]["accuracy"] == acc and table[model]["optimal_em"] == em
        reader = {}
        for k in (1, 3, 5):
            for union in ("un", "uf"):
                right = 0
                for i, q in enumerate(reranker):
                    text = _authors_union_text([c["id"] for c in q["reranked_ctxs"][:k]], hints, union).strip()
                    right += by_text[i][text][model] in q["answers"]
                reader[f"{union}_{k}"] = round(right / len(reranker), 4)
        assert table[model]["oracle_reranker_em"] == reader
        counts = {n: 0 for n in range(6)}
        for r in index_rows:
            for c in r["contexts"]:
                if c["rag_answers"][model] in r["answers"]:
                    counts[c["id"].split("_")[3].count("1")] += 1
        total = sum(counts.values())
        assert table[model]["hint_contribution"]["oracle"] == {str(n): round(c / total, 4) if total else 0.0
                                                               for n, c in counts.items()}
        # Over the run: the top passage of each question read alone (un_1), when that is right.
        counts = {n: 0 for n in range(6)}
        for i, q in enumerate(reranker):
            top = q["reranked_ctxs"][0]["id"]
            if by_text[i][_authors_union_text([top], hints, "un")][model] in q["answers"]:
                counts[top.split("_")[3].count("1")] += 1
        total = sum(counts.values())
        assert table[model]["hint_contribution"]["run"] == {str(n): round(c / total, 4) if total else 0.0
                                                            for n, c in counts.items()}


def test_paper_em_compares_stored_answers_as_stored_and_cleans_raw_generations(bench, tmp_path, monkeypatch,
                                                                                capsys):
    import inferqa.evaluation.exact_match as answers

    monkeypatch.setattr(answers, "_spacy", lambda: None)
    rag = tmp_path / "rag.json"
    rag.write_text(json.dumps([
        {"question": "Which thing is Q_test_1 about?", "answers": ["Basalt"], "ctxs": [],
         "predicted_answer": {"gemma-3-4b": {"Q_test_1_un_1": " Basalt", "Q_test_1_uf_1": "Basalt"}}},
        {"question": "Which thing is Q_test_2 about?", "answers": ["Lyre"], "ctxs": [],
         "predicted_answer": {"gemma-3-4b": {"Q_test_2_un_1": "Lyre", "Q_test_2_uf_1": "( Lyre"}}}]))
    ours = tmp_path / "answers.jsonl"
    ours.write_text("".join(json.dumps(r) + "\n" for r in [
        {"qid": "Q_test_1", "strategy": "union_norm", "k": 1, "prediction": "Basalt", "raw": "( Basalt"},
        {"qid": "Q_test_2", "strategy": "union_norm", "k": 1, "prediction": "Lyre", "raw": "Hmm.\nLyre\n"}]))

    def em(path, *protocol):
        code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--bench", bench.path, *protocol)
        assert code in (0, None), err
        return [[c.strip() for c in ln.split("│")][4] for ln in out.splitlines() if "union_" in ln]

    # As stored: " Basalt" misses, "( Lyre" misses; ours normalises both to hits.
    assert em(rag, "--protocol", "paper") == ["50.00", "50.00"] and em(rag) == ["100.00", "100.00"]
    # A raw generation is cleaned the authors' way: "( Basalt" -> " Basalt" misses, "Hmm.\nLyre\n" -> "Lyre".
    assert em(ours, "--protocol", "paper") == ["50.00"] and em(ours) == ["100.00"]


def test_build_from_the_releases_zsd_files(release, bench, tmp_path, monkeypatch, capsys):
    """The release on the hub ships train.zsd, dev.zsd, test.zsd (zstd of train.json ...)."""
    zstandard = pytest.importorskip("zstandard")
    d, _ = release
    for name in ("train", "dev", "test"):
        (tmp_path / f"{name}.zsd").write_bytes(zstandard.ZstdCompressor().compress((d / f"{name}.json").read_bytes()))
    code, _, err = run_cli(monkeypatch, capsys, "build", *(tmp_path / f"{n}.zsd" for n in ("train", "dev", "test")),
                           "--split", "source", "--leak-policy", "none", "--out", tmp_path / "B")
    assert code in (0, None), err
    got = Benchmark(tmp_path / "B")
    assert got.splits == bench.splits == {"train": ["Q_train_1", "Q_train_2"], "dev": ["Q_dev_1"],
                                          "test": ["Q_test_1", "Q_test_2"]}
    assert got.qrels == bench.qrels and len(got.qrels["Q_dev_1"]) == 325
    assert [q.to_dict() for q in got.questions.values()] == [q.to_dict() for q in bench.questions.values()]
    assert stored_answers(got) == stored_answers(bench)


def test_stored_answers_are_typed_label_rows_and_bad_reader_answers_is_one_line(bench, tmp_path, monkeypatch,
                                                                                 capsys):
    import shutil

    from inferqa.evaluation.stored_metrics import load_store
    from inferqa.formats import LabelRow

    lines = (bench.path / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    rows = stored_answers(bench, ["Q_test_1"])
    row = rows["Q_test_1_11000_10"]
    assert isinstance(row, LabelRow) and len(rows) == 325
    assert row.reader_answers == {"llama-32-1b": "Nothing", "gemma-3-4b": "Nothing", "qwen-3-8b": "NO ANSWER"}
    raw = next(json.loads(ln) for ln in lines if json.loads(ln)["pid"] == "Q_test_1_11000_10")
    assert row.to_dict() == raw and list(row.to_dict()) == list(raw)  # written back as read, keys in order
    # readers' answers first, the labellers' over them
    assert load_store(bench, ["Q_test_1"])["Q_test_1_11000_10"] == {
        "llama-32-1b": "Nothing", "gemma-3-4b": "Nothing", "qwen-3-8b": "NO ANSWER",
        "gemma-3-1b": "Nothing", "qwen-3-4b": "basalt", "llama-31-8b": "Something"}
    at = next(i for i, ln in enumerate(lines) if json.loads(ln)["qid"] == "Q_test_2")
    for bad in ("Lyre", {"llama-32-1b": 3}):
        b = tmp_path / f"bench_{type(bad).__name__}"
        shutil.copytree(bench.path, b)
        obj = json.loads(lines[at])
        obj["reader_answers"] = bad
        (b / "labels.jsonl").write_text("\n".join(lines[:at] + [json.dumps(obj)] + lines[at + 1:]) + "\n",
                                        encoding="utf-8")
        with pytest.raises(InputError, match=f"line {at + 1}.*reader_answers"):
            load_store(Benchmark(b), ["Q_test_2"])
        assert len(stored_answers(Benchmark(b), ["Q_dev_1"])) == 325  # rows of other questions are not read
        code, _, err = run_cli(monkeypatch, capsys, "stored-answers", b, "--split", "test", "--json")
        one_line_error(code, err, "labels.jsonl", f"line {at + 1}", "reader_answers")
