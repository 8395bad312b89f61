"""explorer.html: the data it embeds (checked against hand-made runs, answers and labels), the CLI,
and the page itself in headless Chromium (open, filter, open a question, compare two settings)."""

from __future__ import annotations

import json
import re

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.experiments.explorer import explorer_data, render_explorer, write_explorer
from inferqa.io import write_jsonl
from inferqa.reading.context import merge
from inferqa.records import Hint, Question
from inferqa.formats import Run
from inferqa.records import passage_id as _pid

def passage_id(qid, order):
    return _pid(qid, order, 3)  # every question of these tests keeps 3 hints




def _questions(n: int = 6) -> list[Question]:
    return [Question(f"q{i}", f"Question number {i} about thing {i}?", [f"answer {i}", f"alias {i}"],
                     [Hint(f"Clue {j} of question {i} says something.", convergence=round(0.9 - j / 10, 2))
                      for j in range(3)],
                     {"type": "person" if i % 2 else "place", "difficulty": "hard" if i % 3 == 0 else "easy"})
            for i in range(n)]


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    b = bench_factory(_questions(), split=[2, 1, 3], seed=1)
    root = b.path
    # labels.jsonl as the labeller writes it: q of the test split, one labelled and one copied row
    rows = []
    for qid in b.splits["test"]:
        own = passage_id(qid, (0, 1))
        rows.append({"pid": own, "qid": qid, "label": 2, "answers": {"smol": b.questions[qid].answers[0]},
                     "correct": {"smol": True}, "copied_from": None})
        rows.append({"pid": passage_id(qid, (1, 0)), "qid": qid, "label": 2, "answers": {}, "correct": {},
                     "copied_from": own})
    write_jsonl(root / "labels.jsonl", rows)
    qrels = b.qrels
    for r in rows:
        qrels[r["qid"]][r["pid"]] = 2
    qrels.to_file(root / "qrels.tsv")
    return Benchmark(root)


def _runs(bench: Benchmark):
    test = bench.splits["test"]
    other = bench.splits["train"][0]
    good, bad = Run(), Run()
    for qid in test:
        good[qid] = [(passage_id(qid, (1, 0)), 3.0), (passage_id(other, (2,)), 2.0), (passage_id(qid, (2,)), 1.0)]
        bad[qid] = [(passage_id(other, (0, 1)), 2.0), (passage_id(other, (2,)), 1.0), (passage_id(qid, (0,)), 0.5)]
    bad[test[0]] = [(passage_id(other, (0,)), 1.0)]  # a miss: no own passage at all
    return [("good", "pipeline", good), ("bad", "pipeline", bad)]


def _answers(bench: Benchmark, runs):
    sets = []
    for name, _, run in runs:
        rows = []
        for qid in bench.splits["test"]:
            for strategy in ("union_norm", "union_freq", "concat"):
                for k in (1, 3):
                    pids = [p for p, _ in run[qid][:k]]
                    right = name == "good" and k == 3 and strategy != "concat"
                    rows.append({"qid": qid, "strategy": strategy, "k": k, "pids": pids,
                                 "prediction": bench.questions[qid].answers[0] if right else "NO ANSWER",
                                 "raw": "I do not know." if not right else bench.questions[qid].answers[0],
                                 "em": 1.0 if right else 0.0})
        sets.append((f"{name} / smol", name, rows))
    return sets


def test_data_encodes_runs_contexts_and_labels(bench):
    runs = _runs(bench)
    data = explorer_data(bench, runs, _answers(bench, runs), qids=bench.splits["test"], depth=2)
    test = bench.splits["test"]
    assert [q["id"] for q in data["questions"]] == test
    assert data["questions"][0]["hints"] == [h.text for h in bench.questions[test[0]].hints]
    assert data["questions"][0]["split"] == "test"
    other = bench.splits["train"][0]
    assert [f["id"] for f in data["foreign"]] == [other]  # one shared table entry, however often it is used
    oq = len(test)  # the foreign question's index in the page's question table
    good, bad = data["runs"]
    assert good["top"][1] == f"10.2 {oq}:2.0"  # own passage (1, 0) label 2, then the other question's (2,)
    assert good["first"][1] == [1, 1]
    assert bad["top"][1] == f"{oq}:01.0 {oq}:2.0"  # cut at depth 2
    assert bad["first"][1] == [3, None]  # the own passage at rank 3 is label 1: no label 2 anywhere
    assert bad["first"][0] == [None, None]

    s = data["sets"][0]
    assert s["name"] == "good / smol" and s["run"] == "good"
    assert s["keys"] == ["union_norm|1", "union_norm|3", "union_freq|1", "union_freq|3", "concat|1", "concat|3"]
    strings = data["strings"][1]
    pred, em, ctx, raw, stored = s["rows"][1][s["keys"].index("union_freq|3")].split(";")
    assert (strings[int(pred)], em, raw, stored) == (bench.questions[test[1]].answers[0], "1", "", "=")  # = run's top 3
    # the context, as the reader's own merge orders the hint texts
    q1 = bench.questions[test[1]]
    texts = merge([bench.hints_of(p) for p, _ in runs[0][2][test[1]][:3]], "union_freq")
    names = {h.text: str(i) for i, h in enumerate(q1.hints)}
    names.update({h.text: f"{oq}:{i}" for i, h in enumerate(bench.questions[other].hints)})
    assert ctx.split("|") == [names[t] for t in texts]
    pred, em, ctx, raw, stored = s["rows"][1][s["keys"].index("concat|3")].split(";")
    assert ctx == f"1,0|{oq}:2|2" and strings[int(pred)] == "NO ANSWER" and strings[int(raw)] == "I do not know."
    # the other question's hints are kept only where a shown passage holds them: (2,), (0, 1), (0,)
    assert data["foreign"][0]["hints"] == {str(h): bench.questions[other].hints[h].text for h in (0, 1, 2)}

    # labellers' answers: the copied row shows its source's answer
    lab = data["labels"][1]
    assert data["labellers"] == ["smol"]
    copied, given = lab["10"].split(";")
    assert copied == "01" and given == f"0.{strings.index(q1.answers[0])}+"
    json.dumps(data)  # plain JSON


def test_written_page_is_self_contained(bench, tmp_path):
    runs = _runs(bench)
    html = render_explorer(explorer_data(bench, runs, _answers(bench, runs), title="t </script> x"))
    assert "t &lt;/script&gt; x" in html  # the title is escaped
    assert html.count("</script>") == 2  # the JSON block and the code; no tag inside the data
    assert not re.search(r'(?:src|href)="', html) and "http://" not in html and "https://" not in html


def test_cli_explore(bench, tmp_path):
    from typer.testing import CliRunner

    from inferqa.cli.app import app

    runs = _runs(bench)
    for name, _, run in runs:
        run.to_file(tmp_path / f"{name}.trec", tag=name)
    sets = _answers(bench, runs)
    write_jsonl(tmp_path / "good.jsonl", sets[0][2])
    out = tmp_path / "x.html"
    res = CliRunner().invoke(app, ["explore", str(tmp_path / "good.trec"), f"worse={tmp_path / 'bad.trec'}",
                                   "--bench", str(bench.path), "--answers", f"good={tmp_path / 'good.jsonl'}",
                                   "--split", "test", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', out.read_text(),
                                re.S).group(1))
    assert [r["name"] for r in data["runs"]] == ["good", "worse"]
    assert data["sets"][0]["run"] == "good" and len(data["questions"]) == 3
    write_jsonl(tmp_path / "broken.jsonl", [{"qid": "q1", "k": 1}])
    res = CliRunner().invoke(app, ["explore", "--bench", str(bench.path), "--answers", str(tmp_path / "broken.jsonl")])
    # main() turns the InputError into one line and exit code 2
    assert isinstance(res.exception, InputError)
    assert "broken.jsonl" in str(res.exception) and "line 1" in str(res.exception) and "strategy" in str(res.exception)


def test_the_page_does_not_depend_on_the_hash_seed(bench, tmp_path):
    import os
    import subprocess
    import sys

    runs = _runs(bench)
    for name, _, run in runs:
        run.to_file(tmp_path / f"{name}.trec", tag=name)
    both = Run({q: [(passage_id(q, (0, 1)), 2.0), (passage_id(q, (1, 0)), 1.0)] for q in bench.splits["test"]})
    both.to_file(tmp_path / "both.trec", tag="both")  # two labelled passages shown per question
    write_jsonl(tmp_path / "good.jsonl", _answers(bench, runs)[0][2])
    pages = set()
    for seed in ("1", "2", "3", "4"):
        out = tmp_path / f"x{seed}.html"
        subprocess.run([sys.executable, "-m", "inferqa", "explore", str(tmp_path / "good.trec"),
                        str(tmp_path / "both.trec"), "--bench", str(bench.path), "--answers",
                        f"good={tmp_path / 'good.jsonl'}", "--out", str(out)],
                       check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": seed})
        pages.add(out.read_bytes())
    assert len(pages) == 1


def test_page_in_headless_chromium(bench, tmp_path, headless_chromium):
    runs = _runs(bench)
    train_q = bench.splits["train"][1]
    runs[0][2][train_q] = [(passage_id(train_q, (0,)), 1.0)]  # one question outside the test split
    page = write_explorer(explorer_data(bench, runs, _answers(bench, runs)), tmp_path / "explorer.html")
    driver = headless_chromium(tmp_path / "profile", "1400,1600", browser_log=True)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    try:
        driver.get(page.as_uri())
        rows = lambda: driver.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")  # noqa: E731
        assert len(rows()) == 4  # every question of the runs and answer sets, in benchmark order
        assert driver.find_element(By.ID, "count").text == "4 of 4 questions"
        Select(driver.find_element(By.ID, "f-split")).select_by_value("test")
        assert len(rows()) == 3
        # hit or miss: run "bad" misses the first test question at every cut
        Select(driver.find_element(By.ID, "f-run")).select_by_visible_text("bad")
        Select(driver.find_element(By.ID, "f-hit")).select_by_value("miss")
        first_test = [q["id"] for q in json.loads(re.search(
            r'id="data">(.*?)</script>', page.read_text(), re.S).group(1))["questions"]].index(bench.splits["test"][0])
        assert [r.get_attribute("data-i") for r in rows()] == [str(first_test)]
        Select(driver.find_element(By.ID, "f-hit")).select_by_value("")
        # EM right for good / smol at union_norm k=3: every test question
        Select(driver.find_element(By.ID, "f-em0")).select_by_value("1")
        Select(driver.find_element(By.ID, "f-sk0")).select_by_value("union_norm|3")
        assert len(rows()) == 3
        Select(driver.find_element(By.ID, "f-sk0")).select_by_value("concat|3")
        assert len(rows()) == 0 and driver.find_element(By.ID, "count").text == "0 of 4 questions"
        Select(driver.find_element(By.ID, "f-em0")).select_by_value("")
        Select(driver.find_element(By.ID, "f-type")).select_by_value("person")
        types = {bench.questions[q].metadata["type"] for q in bench.splits["test"]}
        assert len(rows()) == sum(bench.questions[q].metadata["type"] == "person" for q in bench.splits["test"])
        assert types  # the filter was exercised on real values
        Select(driver.find_element(By.ID, "f-type")).select_by_value("")

        # open the second test question
        rows()[1].click()
        q = bench.questions[driver.find_elements(By.CSS_SELECTOR, "#qtable tbody tr.sel td")[0].text]
        assert driver.find_element(By.ID, "qtitle").text == q.text
        detail = driver.find_element(By.ID, "detail").text
        assert q.answers[0] in detail and q.hints[2].text in detail
        run_rows = driver.find_elements(By.CSS_SELECTOR, "#runs tr")
        assert len(run_rows) == 2
        passes = run_rows[0].find_elements(By.CSS_SELECTOR, ".pass")
        assert passes[0].get_attribute("class") == "pass l2" and passes[1].get_attribute("class") == "pass l0"
        assert driver.find_elements(By.CSS_SELECTOR, "#answers tbody tr")  # one row per setting at the chosen k
        # compare two settings side by side
        Select(driver.find_element(By.ID, "cmpA")).select_by_value("0#union_norm|3")
        Select(driver.find_element(By.ID, "cmpB")).select_by_value("1#union_norm|3")
        a, b = driver.find_element(By.ID, "cmp-a").text, driver.find_element(By.ID, "cmp-b").text
        assert "good / smol" in a and "EM ✓" in a and q.answers[0] in a
        assert "bad / smol" in b and "EM ✗" in b and "NO ANSWER" in b
        assert "Labellers' answers" in detail
        shot = tmp_path / "explorer.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", css)[:3])


def test_page_controls_in_headless_chromium(bench, tmp_path, headless_chromium):
    """Chip colours apart from label colours, the list legend, labelled filter groups, a sticky
    list, a detail pane that follows the filter, the two-run filter, difficulty and arrow keys."""
    runs = _runs(bench)
    train_q = bench.splits["train"][1]
    runs[0][2][train_q] = [(passage_id(train_q, (0,)), 1.0)]
    data = explorer_data(bench, runs, _answers(bench, runs))
    page = write_explorer(data, tmp_path / "explorer.html")
    ids = [q["id"] for q in data["questions"]]
    test = [q for q in ids if q in bench.splits["test"]]  # in page order
    driver = headless_chromium(tmp_path / "profile", "1400,700", browser_log=True)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    js = driver.execute_script
    pick = lambda el_id, value: Select(driver.find_element(By.ID, el_id)).select_by_value(value)  # noqa: E731
    listed = lambda: [ids[int(r.get_attribute("data-i"))] for r in  # noqa: E731
                      driver.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")]
    title = lambda: driver.find_element(By.ID, "qtitle").text  # noqa: E731
    try:
        driver.get(page.as_uri())
        # every control sits in a group with a visible name; the two EM groups are told apart
        groups = js("return Array.from(document.querySelectorAll('#filters select, #filters input')).map("
                    "el => { const f = el.closest('fieldset'); return f ? f.querySelector('legend').innerText : ''; });")
        assert groups and all(g.strip() for g in groups)
        em_legends = js("return ['g-em0', 'g-em1'].map(id => document.getElementById(id).querySelector('legend').innerText);")
        assert len(set(em_legends)) == 2
        legend = driver.find_element(By.ID, "list-legend").text
        assert "#3" in legend and "–" in legend and "label ≥ L" in legend

        # hit in A, miss in B: good has a label-2 passage at rank 1 for every test question; bad has
        # none for the first and a label-1 one at rank 3 for the others
        pick("f-split", "test")
        pick("f-hitk", "1")
        pick("f-ab", "hit-miss")
        assert listed() == test
        pick("f-hitk", "3")
        assert listed() == [test[0]]
        pick("f-ab", "miss-hit")
        assert listed() == []
        pick("f-ab", "")
        # difficulty
        for level in ("easy", "hard"):
            pick("f-diff", level)
            assert listed() == [q for q in test if bench.questions[q].metadata["difficulty"] == level]
        pick("f-diff", "")

        # the detail pane follows the filter
        persons = [q for q in test if bench.questions[q].metadata["type"] == "person"]
        places = [q for q in test if bench.questions[q].metadata["type"] == "place"]
        assert persons and places
        driver.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")[test.index(persons[0])].click()
        assert title() == bench.questions[persons[0]].text
        pick("f-type", "place")
        assert title() == bench.questions[places[0]].text  # the removed question gave way to the first match
        driver.find_element(By.ID, "f-text").send_keys("no such question")
        assert driver.find_elements(By.ID, "no-match") and not driver.find_elements(By.ID, "qtitle")
        driver.find_element(By.ID, "f-text").clear()
        driver.find_element(By.ID, "f-text").send_keys(" ")  # an input event with an empty query
        pick("f-type", "")

        # arrow keys step through the filtered list
        driver.find_elements(By.CSS_SELECTOR, "#qtable tbody tr")[0].click()
        body = driver.find_element(By.TAG_NAME, "body")
        assert title() == bench.questions[test[0]].text
        body.send_keys(Keys.ARROW_DOWN)
        assert title() == bench.questions[test[1]].text
        body.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN, Keys.ARROW_DOWN)  # stops at the last
        assert title() == bench.questions[test[-1]].text
        body.send_keys(Keys.ARROW_UP)
        assert title() == bench.questions[test[-2]].text
        assert js("return document.querySelector('#qtable tr.sel').dataset.i") == str(ids.index(test[-2]))

        # hint chips and label colours stay apart (RGB distance > 100 from each label colour)
        chips = {_rgb(c) for c in js("return Array.from(document.querySelectorAll('.hint .chip')).map("
                                     "c => getComputedStyle(c).backgroundColor);")}
        labels = {_rgb(js(f"const e = document.createElement('span'); e.className = 'pass l{n}'; "
                          "document.body.appendChild(e); const c = getComputedStyle(e).borderTopColor; "
                          "e.remove(); return c;")) for n in (0, 1, 2)}
        assert len(chips) == 3 and len(labels) == 3
        gap = min(sum((a - b) ** 2 for a, b in zip(c, lab)) ** 0.5 for c in chips for lab in labels)
        assert gap > 100, (chips, labels)
        dots = js("return Array.from(document.querySelectorAll('.legend .dot')).map("
                  "d => getComputedStyle(d).borderTopColor);")
        assert {_rgb(d) for d in dots} == labels  # the legend shows the label colours themselves

        # the list stays in view while the page scrolls
        assert js("return getComputedStyle(document.getElementById('list')).position") == "sticky"
        js("window.scrollTo(0, 600)")
        assert js("return window.scrollY") > 0
        assert abs(js("return document.getElementById('list').getBoundingClientRect().top")) < 2
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()
