"""Tables from hand-made result records: values, layout and every output format."""

from __future__ import annotations

import csv
import io
import json

import pytest

from inferqa.experiments.results import (OPTIMAL, ORACLE_RERANKER, PIPELINE, ExperimentResults, RankingResult,
                                         ReaderResult)
from inferqa.experiments.tables import (latex_escape, reader_table, reranking_table, retrieval_table,
                                        write_tables)


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
    assert rows[(PIPELINE, "bm25", "–", "smol", "union_norm")] == (0.25, 0.5)
    assert rows[(PIPELINE, "bm25", "llm", "smol", "union_freq")] == (0.0, None)  # k=3 never run
    assert rows[(OPTIMAL, "oracle", "oracle", "smol", "union_norm")] == (0.75, 1.0)
    assert t.rows[-1][0] == OPTIMAL  # optimal comes last
    assert [r[2] for r in t.rows[:2]] == ["–", "llm"]  # the first-stage row before the reranked one
    assert "| pipeline | bm25 | llm | smol | union_freq | 0.00 | – |" in t.to_markdown()


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
    assert (tmp_path / "tables" / "reader.md").read_text().startswith("**Reader exact match on toy**")
    assert not [p for p in (tmp_path / "tables").iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_results_roundtrip(results, tmp_path):
    results.save(tmp_path / "r.json")
    back = ExperimentResults.load(tmp_path / "r.json")
    assert back == results
