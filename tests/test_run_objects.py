"""A Run indexes as ranx and pytrec_eval runs do (`run[q][pid]` is a score), and prints short."""

import pytest

from inferqa.formats import Run


def test_a_passage_id_indexes_its_score_as_in_ranx():
    ranx = pytest.importorskip("ranx")
    ranked = {"q1": [("p3", 3.5), ("p1", 2.0), ("p2", -1.0)], "q2": [("p9", 0.25)]}
    ours = Run(ranked, tag="bm25")
    theirs = ranx.Run({q: dict(r) for q, r in ranked.items()})
    for q, r in ranked.items():
        for pid, _ in r:
            assert ours[q][pid] == theirs[q][pid]
            assert pid in ours[q]
    assert "p9" not in ours["q1"] and ("p3", 3.5) in ours["q1"]
    assert ours["q1"][0] == ("p3", 3.5) and ours["q1"][-1] == ("p2", -1.0)  # still a list by position
    with pytest.raises(KeyError):
        ours["q1"]["p9"]


def test_assigned_rankings_index_by_passage_too():
    run = Run(tag="t")
    run["a"] = [("x", 1.0)]
    run.setdefault("b", []).append(("y", 0.5))
    run.update({"c": [("z", 0.1)]})
    assert (run["a"]["x"], run["b"]["y"], run["c"]["z"]) == (1.0, 0.5, 0.1)
    assert run == {"a": [("x", 1.0)], "b": [("y", 0.5)], "c": [("z", 0.1)]}


def test_repr_is_one_short_line():
    run = Run({f"q{i}": [(f"p{j}", float(-j)) for j in range(100)] for i in range(38)}, tag="bm25")
    assert repr(run) == "Run(tag='bm25', 38 questions, at most 100 passages each)"


def test_a_run_from_python_carries_the_same_provenance_tag_as_the_command(tmp_path, monkeypatch, capsys):
    """retrieve from Python, then `to_file` without `against`: the tag is the command's `bm25@HASH`."""
    from conftest import run_cli

    from inferqa.label.stage import build
    from inferqa.retrieve import get_retriever

    build(demo=True, out=tmp_path / "b")
    run_cli(monkeypatch, capsys, "index", tmp_path / "b")
    code, _, err = run_cli(monkeypatch, capsys, "retrieve", tmp_path / "b", "--depth", "5", "-o", tmp_path / "cli.trec")
    assert code in (0, None), err
    get_retriever("bm25").retrieve(tmp_path / "b", depth=5).to_file(tmp_path / "py.trec")
    cli, py = (tmp_path / "cli.trec").read_text(), (tmp_path / "py.trec").read_text()
    assert cli.split()[5].startswith("bm25@") and cli == py
