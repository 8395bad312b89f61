"""`inferqa index` / `retrieve` declared once (inferqa.retrieve.stage): the command a missing
index suggests builds the index that retrieve then finds, and a bad --model path fails before
anything is written."""

from __future__ import annotations

import re
import shlex

import pytest

from conftest import one_line_error, run_cli
from inferqa.formats import Run


@pytest.fixture(scope="module")
def bench(bench_factory):
    return bench_factory(2)


def _suggested(err: str) -> list[str]:
    """The `inferqa index ...` command quoted in a one-line error, as argv (without 'inferqa')."""
    words = shlex.split(re.search(r"`(inferqa index [^`]*)`", err).group(1))
    assert words[:2] == ["inferqa", "index"]
    return words[1:]


def _retrieve_after_suggestion(monkeypatch, capsys, bench, out, *retriever_args):
    args = ["retrieve", bench.path, "--split", "all", "--depth", "5", "--out", out, *retriever_args]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    one_line_error(code, err, "no finished", "inferqa index")
    suggestion = _suggested(err)
    code, _, err = run_cli(monkeypatch, capsys, *suggestion)
    assert code == 0, (suggestion, err)
    code, _, err = run_cli(monkeypatch, capsys, *args)
    assert code == 0, err
    run = Run.from_file(out)
    assert set(run) == set(bench.questions) and all(len(r) == 5 for r in run.values())
    return suggestion


def test_the_suggested_index_command_repeats_the_options_and_works(bench, tmp_path, monkeypatch, capsys):
    suggestion = _retrieve_after_suggestion(monkeypatch, capsys, bench, tmp_path / "bm25.trec",
                                            "-r", "bm25", "--k1", "1.2", "--opt", "b=0.5",
                                            "--index-dir", tmp_path / "my index")
    assert suggestion[1:] == [str(bench.path), "--retriever", "bm25", "--opt", "k1=1.2", "--opt", "b=0.5",
                              "--index-dir", str(tmp_path / "my index")]


def test_the_suggested_clue_index_command_repeats_model(bench, minilm, tmp_path, monkeypatch, capsys):
    """issue 37 item 6: `retrieve -r clue --model M` without an index suggested a command without --model."""
    suggestion = _retrieve_after_suggestion(monkeypatch, capsys, bench, tmp_path / "clue.trec",
                                            "-r", "clue", "--model", minilm, "--opt", "unit_prefix=clue: ")
    assert suggestion[suggestion.index("--model") + 1] == minilm and "unit_prefix=clue: " in suggestion


def test_the_stages_run_from_python_as_from_the_command_line(bench, tmp_path):
    """One function per stage: index / retrieve / fuse / oracle take a Benchmark and Run objects
    and write what the command writes; the Python API's defaults are the declaration's, and a
    value of the wrong type or out of range is the command line's one-line error."""
    import inspect

    from inferqa.errors import InputError
    from inferqa.formats.oracles import oracle_retriever
    from inferqa.retrieve import Retriever, get_retriever
    from inferqa.retrieve.fusion import fuse as fuse_runs
    from inferqa.retrieve.stage import fuse, index, oracle, retrieve

    def ids(r):
        return {q: [p for p, _ in ranked] for q, ranked in r.items()}

    signature = inspect.signature(Retriever.retrieve).parameters
    assert signature["depth"].default == retrieve.stage.default("depth") == inspect.signature(retrieve).parameters[
        "depth"].default == 1000
    assert signature["split"].default == retrieve.stage.default("split") == "test"
    assert index(bench, retriever="bm25", k1=1.1).name.startswith("bm25-")
    for bad, got in (("10", "'10' (text)"), (0, "0")):
        with pytest.raises(InputError) as err:
            retrieve(bench, out=tmp_path / "x.trec", depth=bad)
        assert str(err.value) == f"retrieve: option 'depth' takes an integer ≥ 1, not {got}"
    assert not (tmp_path / "x.trec").exists()
    run = retrieve(bench, out=tmp_path / "a.trec", k1=1.1, depth=4)
    want = get_retriever("bm25", k1=1.1).retrieve(bench, depth=4)
    assert ids(run) == ids(want) == ids(Run.from_file(tmp_path / "a.trec"))
    oracle_run = oracle(bench, kind="retriever", out=tmp_path / "o.trec", seed=3)
    assert oracle_run == oracle_retriever(bench, bench.split_qids("test"), seed=3)
    fused = fuse([run, oracle_run], out=tmp_path / "f.trec", depth=3)
    assert fused == fuse_runs([run, oracle_run], "rrf", depth=3) and ids(Run.from_file(tmp_path / "f.trec")) == ids(fused)


def test_an_index_named_by_0_1s_ten_hex_digits_is_renamed_and_used(bench_factory, capsys):
    import hashlib
    import json

    from inferqa.retrieve import get_retriever

    fresh = bench_factory(2)
    r = get_retriever("bm25", show_progress=False)
    built = r.ensure_index(fresh).index_dir
    blob = json.dumps({"retriever": "bm25", **r.index_options()}, sort_keys=True, default=str)
    digest = hashlib.sha256(blob.encode()).hexdigest()  # by hand: sha256 of the sorted JSON
    assert built.name == f"bm25-{digest[:16]}"
    older = built.with_name(f"bm25-{digest[:10]}")  # as 0.1 named it
    built.rename(older)
    capsys.readouterr()
    again = get_retriever("bm25", show_progress=False).attach(fresh)
    assert again.index_dir == built and built.is_dir() and not older.exists()
    assert f"renamed index {older.name} to {built.name}" in capsys.readouterr().err
    assert set(again.search({"q": "a hint"}, 3)) == {"q"}
