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
