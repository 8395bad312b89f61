"""A bad --model path for `inferqa index` and `retrieve` (issue 37 item 13): a file, an empty
folder or a missing path fails in one line, exit 2, before anything is written or a model
library imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO, one_line_error, run_cli


@pytest.fixture
def bench(bench_factory):
    return bench_factory(2)  # one each: a case's folder is checked untouched


def _tree(folder):
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.fixture
def bad_models(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"not a model")
    (tmp_path / "empty").mkdir()
    return {"a file": tmp_path / "model.bin", "an empty folder": tmp_path / "empty", "missing": tmp_path / "nowhere"}


@pytest.mark.parametrize("retriever", ["dense", "clue"])
@pytest.mark.parametrize("command", ["index", "retrieve"])
def test_a_bad_model_path_is_one_line_and_writes_nothing(bench, bad_models, tmp_path, monkeypatch, capsys,
                                                         retriever, command):
    before = _tree(bench.path)
    for what, model in bad_models.items():
        out = ["--out", tmp_path / "run.trec"] if command == "retrieve" else []
        code, _, err = run_cli(monkeypatch, capsys, command, bench.path, "-r", retriever, "--model", model, *out)
        one_line_error(code, err, str(model), "model")
        assert _tree(bench.path) == before, what
        assert not (bench.path / "indexes").exists() and not (tmp_path / "run.trec").exists(), what


def test_a_bad_model_path_fails_before_a_model_library_is_imported(bench, bad_models):
    code = ("import sys\nfrom inferqa.cli import main\nsys.argv = ['inferqa', 'index', sys.argv[1], '-r', 'dense', "
            "'--model', sys.argv[2]]\ntry:\n    main()\nexcept SystemExit as e:\n    print(e.code, "
            "'sentence_transformers' in sys.modules, 'torch' in sys.modules)\n")
    for what, model in bad_models.items():
        done = subprocess.run([sys.executable, "-c", code, str(bench.path), str(model)], capture_output=True,
                              text=True, cwd=REPO, env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
        assert done.stdout.split() == ["2", "False", "False"], (what, done.stdout, done.stderr)


def test_the_dense_plugin_checks_its_model_as_clue_does(tmp_path):
    """One model-path check for every model-loading plugin: dense, built from Python, refuses an
    empty folder by what it holds, as clue does (it used to check only that the path exists)."""
    from inferqa.errors import InputError
    from inferqa.retrieve import get_retriever

    empty = tmp_path / "weights"
    empty.mkdir()
    for name in ("dense", "clue"):
        with pytest.raises(InputError, match="not a '(dense|clue)' model: found an empty folder"):
            get_retriever(name, model=str(empty))
