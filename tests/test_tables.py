"""Tables from hand-made result records: values, layout and every output format."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from inferqa.experiments.results import (OPTIMAL, ORACLE_RERANKER, PIPELINE, ExperimentResults, RankingResult,
                                         ReaderResult)
from inferqa.experiments.comparisons import add_statistics
from inferqa.experiments.tables import (latex_escape, reader_table, reranking_table, retrieval_table,
                                        significance_table, write_tables)


@pytest.fixture
def results() -> ExperimentResults:
    m = lambda h1, mrr: {"hit@1": h1, "mrr": mrr}  # noqa: E731
    return ExperimentResults(
        name="toy",
        ranking=[
            RankingResult(PIPELINE, "bm25", None, m(0.25, 0.5), 4),
            RankingResult(PIPELINE, "dense_1", None, m(0.5, 0.625), 4),
            RankingResult(PIPELINE, "bm25", "llm", m(0.75, 0.8), 4),
            RankingResult(ORACLE_RERANKER, "bm25", "oracle", m(1.0, 1.0), 4),
        ],
        reader=[
            ReaderResult(PIPELINE, "bm25", None, "smol", "union_norm", 1, 0.25, 4),
            ReaderResult(PIPELINE, "bm25", None, "smol", "union_norm", 3, 0.5, 4),
            ReaderResult(OPTIMAL, "oracle", "oracle", "smol", "union_norm", 1, 0.75, 4),
            ReaderResult(OPTIMAL, "oracle", "oracle", "smol", "union_norm", 3, 1.0, 4),
            ReaderResult(PIPELINE, "bm25", "llm", "smol", "union_freq", 1, 0.0, 4),
        ],
    )


def test_retrieval_table_has_first_stage_runs_only(results):
    t = retrieval_table(results)
    assert t.columns == ("retriever", "hit@1", "mrr")
    assert t.rows == (("bm25", 0.25, 0.5), ("dense_1", 0.5, 0.625))
    md = t.to_markdown().splitlines()
    assert md[2] == "| retriever | hit@1 | mrr |"
    assert md[3] == "|---|---:|---:|"
    assert md[4] == "| bm25 | 25.00 | 50.00 |"
    assert md[5] == "| dense_1 | 50.00 | 62.50 |"


def test_reranking_table_orders_pipeline_before_oracles(results):
    t = reranking_table(results)
    assert [r[:3] for r in t.rows] == [(PIPELINE, "bm25", "llm"), (ORACLE_RERANKER, "bm25", "oracle")]
    assert t.rows[0][3:] == (0.75, 0.8)


def test_reader_table_pivots_k_into_columns(results):
    t = reader_table(results)
    assert t.columns[-2:] == ("EM@1", "EM@3")
    rows = {r[:5]: r[5:] for r in t.rows}
    assert rows[(PIPELINE, "bm25", "—", "smol", "union_norm")] == (0.25, 0.5)
    assert rows[(PIPELINE, "bm25", "llm", "smol", "union_freq")] == (0.0, None)  # k=3 never run
    assert rows[(OPTIMAL, "oracle", "oracle", "smol", "union_norm")] == (0.75, 1.0)
    assert t.rows[-1][0] == OPTIMAL  # optimal comes last
    assert [r[2] for r in t.rows[:2]] == ["—", "llm"]  # the first-stage row before the reranked one
    assert "| pipeline | bm25 | llm | smol | union_freq | 0.00 | — |" in t.to_markdown()


def test_csv_and_json_keep_raw_values(results):
    t = retrieval_table(results)
    parsed = list(csv.reader(io.StringIO(t.to_csv())))
    assert parsed[0] == ["retriever", "hit@1", "mrr"]
    assert parsed[2] == ["dense_1", "0.500000", "0.625000"]
    j = json.loads(t.to_json())
    assert j["rows"][1] == {"retriever": "dense_1", "hit@1": 0.5, "mrr": 0.625}


def test_latex_escapes_and_aligns(results):
    tex = retrieval_table(results).to_latex()
    assert "\\begin{tabular}{lrr}" in tex
    assert "dense\\_1 & 50.00 & 62.50 \\\\" in tex
    assert latex_escape("a&b_c%") == "a\\&b\\_c\\%"


def test_write_tables_writes_every_format(results, tmp_path):
    paths = write_tables(results, tmp_path / "tables")
    names = sorted(p.name for p in paths)
    assert names == sorted(f"{t}.{f}" for t in ("retrieval", "reranking", "reader")
                           for f in ("md", "csv", "json", "tex"))
    assert (tmp_path / "tables" / "reader.md").read_text().startswith("**Reader exact match on toy (4 questions)**")
    assert not [p for p in (tmp_path / "tables").iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_results_roundtrip(results, tmp_path):
    results.save(tmp_path / "r.json")
    back = ExperimentResults.load(tmp_path / "r.json")
    assert back == results


def _with_statistics(results):
    """Per-question scores of the toy results (4 questions), chosen so the means match the fixture."""
    v = lambda *x: np.array(x, dtype=float)  # noqa: E731
    ranking = [{"hit@1": v(0, 1, 0, 0), "mrr": v(.5, 1, .25, .25)},
               {"hit@1": v(1, 1, 0, 0), "mrr": v(1, 1, .25, .25)},
               {"hit@1": v(1, 1, 1, 0), "mrr": v(1, 1, 1, .2)},
               {"hit@1": v(1, 1, 1, 1), "mrr": v(1, 1, 1, 1)}]
    reader = [v(0, 1, 0, 0), v(1, 1, 0, 0), v(1, 1, 1, 0), v(1, 1, 1, 1), v(0, 0, 0, 0)]
    for r, scores in zip(results.ranking, ranking):
        assert all(scores[m].mean() == pytest.approx(r.metrics[m]) for m in r.metrics)
    for r, em in zip(results.reader, reader):
        assert em.mean() == pytest.approx(r.em)
    return add_statistics(results, ranking, reader, seed=3)


def test_paired_tests_pick_the_pairs_and_match_hand_worked_p_values(results):
    stats = _with_statistics(results)
    got = {(t["family"], t["a"], t["b"], t["metric"], t.get("strategy"), t.get("k")): t for t in stats.tests}
    assert set(got) == {
        ("ranking", "dense_1", "bm25", "mrr", None, None),          # retriever vs the first retriever
        ("ranking", "bm25 → llm", "bm25", "mrr", None, None),       # reranked vs its first stage
        ("reader", "bm25", "optimal", "em", "union_norm", 1),       # every setting vs optimal
        ("reader", "bm25", "optimal", "em", "union_norm", 3),
    }
    # mrr differences (.5, 0, 0, 0): one non-zero difference, both signs as extreme -> p = 1
    assert got[("ranking", "dense_1", "bm25", "mrr", None, None)]["p"] == 1.0
    # (.5, 0, .75, -.05): of the 8 sign patterns, 4 reach |sum| >= 1.2 -> p = .5
    rr = got[("ranking", "bm25 → llm", "bm25", "mrr", None, None)]
    assert rr["p"] == pytest.approx(0.5) and rr["exact"] and rr["diff"] == pytest.approx(0.3) and rr["n"] == 4
    em1 = got[("reader", "bm25", "optimal", "em", "union_norm", 1)]
    assert em1["p"] == pytest.approx(0.5) and em1["diff"] == pytest.approx(-0.5)
    assert em1["ci_low"] <= -0.5 <= em1["ci_high"]


def test_tables_show_intervals_and_question_counts(results):
    stats = _with_statistics(results)
    t = retrieval_table(stats)
    assert t.title == "Retrieval on toy (4 questions; 95 % bootstrap CI in brackets)"
    lo, hi = stats.ranking[0].ci["hit@1"]
    assert 0 <= lo <= 0.25 <= hi <= 1
    assert t.text_rows()[0][1] == f"25.00 [{100 * lo:.1f}, {100 * hi:.1f}]"
    assert stats.ranking[3].ci["hit@1"] == [1.0, 1.0]  # constant scores: a zero-width interval
    parsed = list(csv.reader(io.StringIO(t.to_csv())))
    assert parsed[0] == ["retriever", "hit@1", "mrr", "hit@1 ci_low", "hit@1 ci_high", "mrr ci_low", "mrr ci_high"]
    assert float(parsed[1][3]) == pytest.approx(lo, abs=1e-6)
    assert json.loads(t.to_json())["rows"][0]["ci95"]["hit@1"] == [lo, hi]
    rd = significance_table(stats, "reader")
    assert rd.columns == ("reader", "strategy", "k", "A", "B", "EM A", "EM B", "A − B", "p", "p (holm)", "n")
    first = rd.text_rows()[0]
    assert first[:5] == ["smol", "union_norm", "1", "bm25", "optimal"]
    assert first[5:7] == ["25.00", "75.00"] and first[7].startswith("-50.00 [") and first[8:] == ["0.500", "0.500", "4"]  # one test: Holm leaves its p as it is
    assert "holm-corrected over the tests of one metric" in rd.to_markdown()  # issue 37: one significance rule, corrected


# -- the one text renderer (inferqa.tabular) ---------------------------------------------------

from inferqa.tabular import TextTable, blocks, boxed, csv_text, latex, markdown  # noqa: E402


def parse_boxed(text: str) -> dict[tuple[str, str], str]:
    """(row label, column) -> cell, read back from every block of a boxed table."""
    cells, header = {}, []
    for line in text.splitlines():
        if line.startswith("┃"):
            header = [c.strip() for c in line.strip("┃").split("┃")]
        elif line.startswith("│"):
            row = [c.strip() for c in line.strip("│").split("│")]
            assert len(row) == len(header), line
            for h, c in zip(header[1:], row[1:]):
                cells[row[0], h] = c
    return cells


def _wide(cell: str = "x" * 20) -> TextTable:
    header = ("run", "m1", "m2", "m3", "m4", "m5")
    return TextTable("a wide table", header, (("long-run-1", *[cell] * 5), ("b", *[f"{i}" for i in range(5)])))


def test_blocks_of_whole_columns_fit_the_width_hand_worked():
    # the label column is 10 wide, each other one 20: a block of k columns spans 14 + 23 k
    t = _wide()
    assert blocks(t, 80) == [[1, 2], [3, 4], [5]]  # 60; 83 would not fit
    assert blocks(t, 83) == [[1, 2, 3], [4, 5]]
    grouped = TextTable(t.title, t.header, t.rows, groups=(3, 2))
    # the group of 3 is too wide for one block, so it splits; the group of 2 stays whole
    assert blocks(grouped, 80) == [[1, 2], [3], [4, 5]]
    assert blocks(t, 36) is None  # the labels and one column span 37


def test_boxed_fits_80_columns_and_keeps_every_cell_whole():
    t = TextTable("vs base (percent)", ("run", "ndcg_exp@10", "Δ [95 % CI]", "p", "hit@10", "Δ [95 % CI]", "p"),
                  (("base", "42.64", "", "", "55.26", "", ""),
                   ("a-much-longer-run-name", "100.00", "+57.36 [42.62, 71.51]", "<0.001", "31.72",
                    "-23.54 [-38.10, -9.87]", "0.012")), groups=(3, 3), note="p: a paired test; " * 8)
    text = boxed(t, 80)
    assert all(len(line) <= 80 for line in text.splitlines()) and "…" not in text
    got = parse_boxed(text)
    assert got["a-much-longer-run-name", "ndcg_exp@10"] == "100.00" and got["base", "hit@10"] == "55.26"
    assert got["a-much-longer-run-name", "p"] == "0.012"  # the second block's p: it follows hit@10
    assert text.count("┃ run ") == 2  # two blocks, the row labels in each
    for row in t.rows:
        assert all(cell in text for cell in row)
    assert " ".join(text.split()).endswith(("p: a paired test; " * 8).strip())  # the note, wrapped
    wide = boxed(t, 200)
    assert wide.count("┃ run ") == 1 and max(map(len, wide.splitlines())) > 80


def test_records_where_one_column_does_not_fit():
    text = boxed(_wide(), 30)
    lines = text.splitlines()
    assert all(len(line) <= 30 for line in lines)
    assert "long-run-1" in lines and "  m5: " + "x" * 20 in lines and "  m1: 0" in lines


def _tricky() -> TextTable:
    return TextTable("R&D_runs: 95 % [CI]", ("run", "ndcg_exp@10", "note"),
                     (("a|b", "42.10", 'said "yes", twice'), ("c_d & e", "<0.001", "#1 ~ $x^2$ {ok}")))


def test_markdown_and_csv_parse_back_to_the_same_cells():
    t = _tricky()
    md = markdown(t).splitlines()
    assert md[0] == "**R&D_runs: 95 % [CI]**" and md[3] == "|---|---:|---:|"
    parsed = list(csv.reader((ln[2:-2] for ln in md if ln.startswith("| ")), delimiter="|", escapechar="\\",
                             quoting=csv.QUOTE_NONE))
    assert [[c.strip() for c in r] for r in parsed] == [list(t.header), *map(list, t.rows)]
    assert list(csv.reader(io.StringIO(csv_text(t)))) == [list(t.header), *map(list, t.rows)]


def test_latex_is_booktabs_with_the_special_characters_escaped():
    tex = latex(_tricky(), label="x").splitlines()
    assert "\\caption{R\\&D\\_runs: 95 \\% [CI]}" in tex and "\\label{tab:x}" in tex
    assert "\\begin{tabular}{lrr}" in tex
    assert tex.index("\\toprule") < tex.index("\\midrule") < tex.index("\\bottomrule")
    assert "run & ndcg\\_exp@10 & note \\\\" in tex
    assert ("c\\_d \\& e & \\textless{}0.001 & \\#1 \\textasciitilde{} \\$x\\textasciicircum{}2\\$ \\{ok\\} \\\\"
            in tex)
