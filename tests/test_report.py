"""The HTML report: self-contained, and it renders in headless Chromium (tables, images)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferqa.experiments.report import write_report
from inferqa.experiments.results import (OPTIMAL, ORACLE_RERANKER, PIPELINE, ExperimentResults, RankingResult,
                                         ReaderResult)



def _results() -> ExperimentResults:
    hits = lambda a, b, c: {"hit@1": a, "hit@5": b, "hit@10": c, "mrr": a}  # noqa: E731
    reader = []
    for setting, ret, rr, base in ((PIPELINE, "bm25", None, 0.1), (ORACLE_RERANKER, "bm25", "oracle", 0.4),
                                   (OPTIMAL, "oracle", "oracle", 0.7)):
        for strategy in ("union_norm", "union_freq"):
            for k in (1, 3, 5):
                reader.append(ReaderResult(setting, ret, rr, "smol", strategy, k, base + k / 100, 10))
    return ExperimentResults(
        name="render-check",
        ranking=[RankingResult(PIPELINE, "bm25", None, hits(0.0, 0.2, 0.3), 10),
                 RankingResult(PIPELINE, "dense", None, hits(0.1, 0.3, 0.5), 10),
                 RankingResult(PIPELINE, "dense", "llm", hits(0.2, 0.4, 0.5), 10)],
        reader=reader, config={"name": "render-check"}, timings={"total": 1.5})


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    return write_report(_results(), out, config_text="name: render-check\n")


def test_report_is_self_contained(report):
    html = report.read_text()
    # Every src/href is inline data: nothing to fetch.
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs and all(r.startswith("data:image/png;base64,") for r in refs)
    assert len(refs) == 3  # hit curves, EM by k, oracle gap
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert 'id="table-retrieval"' in html and 'id="table-reader"' in html
    assert "name: render-check" in html  # the config is shown
    assert "&quot;python&quot;" in html  # the environment is shown (HTML-escaped JSON)


def test_report_renders_in_headless_chromium(report, tmp_path, headless_chromium):
    driver = headless_chromium(tmp_path / "profile", "1280,2000")
    try:
        driver.get(report.as_uri())
        assert driver.title == "inferqa: render-check"
        images = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);")
        assert len(images) == 3
        assert all(done and w > 100 and h > 100 for done, w, h in images), images
        tables = driver.execute_script(
            "return Array.from(document.querySelectorAll('table')).map("
            "t => [t.id, t.rows.length, t.getBoundingClientRect().height]);")
        by_id = {tid: (rows, height) for tid, rows, height in tables}
        assert by_id["table-retrieval"][0] == 3  # header + bm25 + dense
        assert by_id["table-reader"][0] == 1 + 3 * 2  # header + 3 settings x 2 strategies
        assert all(height > 0 for _, height in by_id.values())
        cell = driver.execute_script(
            "return document.querySelector('#table-retrieval tbody tr:nth-child(2) td:nth-child(3)').innerText;")
        assert cell == "30.00"  # dense hit@5 = 0.3, shown in percent
        shot = tmp_path / "report.png"
        driver.set_window_size(1280, 2000)
        assert driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
    finally:
        driver.quit()


def _full_results() -> ExperimentResults:
    """_results() with Hit@k curves, paired tests and stage timings, as `inferqa run` keeps them."""
    from dataclasses import replace

    base = _results()
    curves = {"bm25": [0.0, 0.1, 0.1, 0.15, 0.2, 0.2, 0.25, 0.3, 0.3, 0.3],
              "dense": [0.1, 0.2, 0.2, 0.25, 0.3, 0.4, 0.45, 0.5, 0.5, 0.5]}
    ranking = [replace(r, hit_curve=curves[r.retriever] if r.reranker is None else
                       [min(1.0, v + 0.1) for v in curves[r.retriever]]) for r in base.ranking]
    tests = [{"family": "ranking", "metric": "hit@5", "a": "dense → llm", "b": "dense", "n": 10, "mean_a": 0.4,
              "mean_b": 0.3, "diff": 0.1, "ci_low": 0.0, "ci_high": 0.2, "p": 0.01, "exact": True},
             {"family": "ranking", "metric": "hit@1", "a": "dense", "b": "bm25", "n": 10, "mean_a": 0.1,
              "mean_b": 0.0, "diff": 0.1, "ci_low": 0.0, "ci_high": 0.3, "p": 0.5, "exact": True},
             {"family": "reader", "metric": "em", "a": "bm25 → oracle reranker", "b": "bm25", "n": 10,
              "mean_a": 0.43, "mean_b": 0.13, "diff": 0.3, "ci_low": 0.1, "ci_high": 0.5, "p": 0.0004,
              "exact": True, "reader": "smol", "strategy": "union_norm", "k": 3}]
    timings = {"retrieve-bm25-0a1b2c3d": 1.25, "retrieve-bm25-0a1b2c3d cpu": 1.0,
               "read-bm25-smol-9f8e7d6c": 10.5, "read-bm25-smol-9f8e7d6c cpu": 9.75, "total": 12.0}
    return replace(base, ranking=ranking, tests=tests, timings=timings)


@pytest.fixture(scope="module")
def full_report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    return write_report(_full_results(), out, explorer="explorer.html")


def test_report_series_styles_bold_marks_link_and_timings(full_report, tmp_path, headless_chromium):
    import json

    driver = headless_chromium(tmp_path / "profile", "1280,2400")
    try:
        driver.get(full_report.as_uri())
        assert driver.find_element("id", "explorer-link").get_attribute("href").endswith("/explorer.html")
        figs = driver.execute_script("return Array.from(document.querySelectorAll('figure')).map("
                                     "f => [f.querySelector('figcaption').innerText, f.dataset.series]);")
        series = {caption: json.loads(data) for caption, data in figs}
        assert len(series) == 3
        for caption, drawn in series.items():
            for axis in {s["axis"] for s in drawn}:
                on = [s for s in drawn if s["axis"] == axis]
                looks = [(s["color"], s["linestyle"], s["marker"]) for s in on]
                assert len(set(looks)) == len(looks), (caption, looks)  # no two share colour and style
                assert len({s["color"] for s in on}) == len(on), (caption, looks)  # nor even a colour
        hits = series["Hit@k curves"]
        assert [s["label"] for s in hits] == ["bm25", "dense", "dense → llm"]
        assert all(s["points"] == 10 for s in hits)  # Hit@k at every k from 1 to 10, not 3 metrics
        em = series["Exact match by strategy and k"]
        # EM of the lines: 11-15, 41-45, 71-75 %: the axis spans 11-75 with 8 % padding (5.12 points)
        assert em[0]["ylim"] == pytest.approx([11 - 5.12, 75 + 5.12], abs=1e-3)
        retrieval_bold = driver.execute_script(
            "return Array.from(document.querySelectorAll('#table-retrieval b')).map("
            "b => [b.closest('tr').cells[0].innerText, b.innerText, getComputedStyle(b).fontWeight]);")
        # dense is best in every column (hit@1 10, hit@5 30, hit@10 50, mrr 10)
        assert [(r, v) for r, v, _ in retrieval_bold] == [("dense", "10.00"), ("dense", "30.00"),
                                                           ("dense", "50.00"), ("dense", "10.00")]
        assert all(int(w) >= 700 for _, _, w in retrieval_bold)
        # the oracle rows of the reranking table are bounds: only the pipeline row is bold
        rerank_bold = driver.execute_script(
            "return Array.from(document.querySelectorAll('#table-reranking b')).map("
            "b => b.closest('tr').cells[0].innerText);")
        assert rerank_bold and set(rerank_bold) == {"pipeline"}
        marks = driver.execute_script(
            "return Array.from(document.querySelectorAll('sup.sig')).map(s => [s.closest('table').id, "
            "s.closest('tr').cells[1].innerText, s.closest('td').cellIndex, s.title]);")
        # p = 0.01 (dense → llm, hit@5) and p = 0.0004 (oracle reranker EM@3); p = 0.5 gets no mark; each
        # the only test of its column, so Holm leaves it as it is
        assert marks == [["table-reranking", "dense", 4,
                          "p = 0.010 against dense (paired test, holm-corrected over 1 test)"],
                         ["table-reader", "bm25", 6, "p = <0.001 against bm25 (paired test, holm-corrected over 1 test)"]]
        timings = driver.execute_script(
            "return Array.from(document.querySelectorAll('#table-timings tr')).map("
            "r => Array.from(r.cells).map(c => c.innerText));")
        assert timings == [["stage", "hash", "wall", "cpu"], ["retrieve-bm25", "0a1b2c3d", "1.2", "1.0"],
                           ["read-bm25-smol", "9f8e7d6c", "10.5", "9.8"], ["total", "", "12.0", ""]]
        assert "&quot;total&quot;" not in full_report.read_text()  # no raw JSON dump of the timings
        assert driver.save_screenshot(str(tmp_path / "full.png"))
    finally:
        driver.quit()


def test_hit_curve_is_hit_at_every_k_to_the_run_depth():
    from inferqa.experiments.runner import hit_curve
    from inferqa.formats import Qrels, Run

    qrels = Qrels({"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"d": 1}})
    run = Run({"q1": [("b", 3.0), ("a", 2.0), ("x", 1.0)], "q2": [("c", 1.0)], "q3": [("y", 2.0), ("z", 1.0)]})
    # first relevant: q1 at 2, q2 at 1, q3 never; depth 3
    assert hit_curve(run, qrels) == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    assert hit_curve(Run(), qrels) == []


def test_report_marks_and_tests_tables_use_the_corrected_p_as_compare_does():
    """One rule: a † needs the Holm-corrected p below 0.05, corrected over the tests of its
    column, as `inferqa compare` corrects over the runs it compares (adjust_p, its default)."""
    from dataclasses import replace

    from inferqa.evaluation.significance import adjust_p
    from inferqa.experiments.report import emphasised
    from inferqa.experiments.tables import all_tables

    base = _full_results()
    one = {"family": "ranking", "n": 10, "mean_a": 0.4, "mean_b": 0.3, "diff": 0.1, "ci_low": 0.0, "ci_high": 0.2,
           "exact": True}
    # two tests of hit@5 at p 0.03 and 0.04: each below 0.05 alone, Holm makes them 0.06 and 0.06
    tests = [{**one, "metric": "hit@5", "a": "dense → llm", "b": "dense", "p": 0.03},
             {**one, "metric": "hit@5", "a": "dense", "b": "bm25", "p": 0.04},
             {**one, "metric": "mrr", "a": "dense → llm", "b": "dense", "p": 0.001},
             {**one, "metric": "mrr", "a": "dense", "b": "bm25", "p": 0.5}]
    results = replace(base, tests=tests)
    holm = {m: list(adjust_p([t["p"] for t in tests if t["metric"] == m], "holm")) for m in ("hit@5", "mrr")}
    assert holm["hit@5"] == pytest.approx([0.06, 0.06]) and holm["mrr"] == pytest.approx([0.002, 0.5])
    tables = {t.name: t for t in all_tables(results)}
    marked = {(tables[name].rows[r][1], tables[name].columns[c])
              for name in ("retrieval", "reranking") for (r, c) in emphasised(tables[name], results).marks}
    assert marked == {("dense", "mrr")}  # the reranked dense row; hit@5 p 0.03 is no longer a mark
    tested = tables["tests-ranking"]
    at = tested.columns.index("p (holm)")
    assert [row[at] for row in tested.rows] == pytest.approx([0.06, 0.06, 0.002, 0.5])
    assert "holm-corrected over the tests of one metric" in tested.note
