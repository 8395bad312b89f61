"""One check of a model path (`models.check_model_kind`), before anything is imported or
written: `finetune` and `rerank` given a file, an empty folder or another kind of model exit 2
with one line naming what was found there, and write nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import one_line_error, run_cli
from inferqa.errors import InputError
from inferqa.models import check_model_kind, model_found

SRC = Path(__file__).resolve().parents[1] / "src"


def _folder(root: Path, name: str, files: dict[str, object]) -> Path:
    folder = root / name
    folder.mkdir()
    for file, content in files.items():
        (folder / file).write_text(json.dumps(content))
    return folder


@pytest.fixture
def paths(tmp_path):
    """A file, an empty folder, a cross-encoder, a bi-encoder, a T5 and a trained dense model
    (config files only: the check reads no weights)."""
    (tmp_path / "weights.bin").write_text("not a model")
    (tmp_path / "empty").mkdir()
    return {
        "file": tmp_path / "weights.bin",
        "empty": tmp_path / "empty",
        "cross": _folder(tmp_path, "cross", {"config.json": {"architectures": ["BertForSequenceClassification"]}}),
        "bi": _folder(tmp_path, "bi", {"config.json": {"architectures": ["BertModel"]},
                                       "modules.json": [{"type": "sentence_transformers.models.Transformer"},
                                                        {"type": "sentence_transformers.models.Pooling"}]}),
        "t5": _folder(tmp_path, "t5", {"config.json": {"model_type": "t5",
                                                       "architectures": ["T5ForConditionalGeneration"]}}),
        "bare": _folder(tmp_path, "bare", {"config.json": {"architectures": ["BertModel"]}}),
        "dense": _folder(tmp_path, "dense", {"config.json": {}, "modules.json": [], "training.json":
                                             {"kind": "retriever"}}),
    }


def test_model_found_names_each_kind_of_folder(paths):
    assert {name: model_found(p) for name, p in paths.items()} == {
        "file": ("file", None), "empty": ("empty", None), "cross": ("cross-encoder", None),
        "bi": ("bi-encoder", None), "t5": ("t5", None), "bare": ("bare", None), "dense": ("bi-encoder", "retriever")}


@pytest.mark.parametrize("kind, accepted, refused", [
    ("clue", ["bi"], {"file": "a file", "empty": "an empty folder", "cross": "a cross-encoder", "t5": "a T5",
                      "dense": "holds a 'retriever' model"}),
    ("bi-encoder", ["bi", "dense"], {"cross": "a cross-encoder", "empty": "an empty folder"}),
    ("cross-encoder", ["cross"], {"bi": "a sentence-transformers bi-encoder", "dense": "a 'retriever' model",
                                  "file": "a file"}),
    ("encoder", ["bi", "cross", "dense"], {"t5": "a T5", "empty": "an empty folder"}),
    ("t5", ["t5"], {"cross": "a cross-encoder"}),
    ("colbert", ["bi"], {"bare": "a bare transformer", "cross": "a cross-encoder"}),
    ("colbert-start", ["bi", "bare"], {"cross": "a cross-encoder", "t5": "a T5", "empty": "an empty folder"}),
])
def test_check_model_kind_accepts_its_kind_and_names_what_else_it_found(paths, kind, accepted, refused):
    for name in accepted:
        assert check_model_kind(str(paths[name]), kind) == str(paths[name])
    for name, found in refused.items():
        with pytest.raises(InputError, match=found) as exc:
            check_model_kind(str(paths[name]), kind)
        assert str(paths[name]) in str(exc.value) and "\n" not in str(exc.value)
    assert check_model_kind("some-org/some-model", kind) == "some-org/some-model"  # a hub id is not a path


@pytest.fixture(scope="module")
def small(bench_factory):
    return bench_factory(4)


@pytest.mark.parametrize("kind", ["clue", "retriever"])
@pytest.mark.parametrize("model, found", [("file", "a file"), ("empty", "an empty folder"),
                                          ("cross", "a cross-encoder")])
def test_finetune_refuses_a_model_path_of_another_kind(small, paths, tmp_path, monkeypatch, capsys, kind, model,
                                                       found):
    out = tmp_path / "trained"
    code, _, err = run_cli(monkeypatch, capsys, "finetune", kind, "--bench", small.path, "--model", paths[model],
                           "-o", out)
    one_line_error(code, err, found, str(paths[model]))
    assert not out.exists()


@pytest.mark.parametrize("model, found", [("file", "a file"), ("empty", "an empty folder"),
                                          ("bi", "a sentence-transformers bi-encoder")])
def test_rerank_refuses_a_model_path_of_another_kind(small, paths, tmp_path, monkeypatch, capsys, model, found):
    from inferqa.formats import Run

    Run({q: [(next(iter(small.qrels[q])), 1.0)] for q in small.questions}).to_file(tmp_path / "in.trec")
    out = tmp_path / "out.trec"
    code, _, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "in.trec", "--bench", small.path,
                           "-r", "cross-encoder", "--model", paths[model], "-o", out)
    one_line_error(code, err, found, str(paths[model]))
    assert not out.exists() and not list(tmp_path.glob(".out.trec*"))


def _finetune_in_fresh_process(*args) -> tuple[int, str, bool]:
    """(exit code, stderr, whether sentence_transformers or torch was imported) of `inferqa finetune ARGS`."""
    script = ("import sys\nfrom inferqa.cli import main\nsys.argv = ['inferqa', 'finetune', *sys.argv[1:]]\n"
              "try:\n    main()\nfinally:\n"
              "    print('IMPORTED' if {'sentence_transformers', 'torch'} & set(sys.modules) else 'CLEAN')\n")
    r = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True, text=True,
                       env={"PYTHONPATH": str(SRC), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    return r.returncode, r.stderr, r.stdout.strip().endswith("IMPORTED")


def test_finetune_input_checks_run_before_the_model_libraries_are_imported(bench_factory, paths, tmp_path):
    one_train = bench_factory(4, split=(0.25, 0.0, 0.75))  # one training question: no in-batch negatives
    cases = [(("clue", "--bench", tmp_path / "missing"), "not found"),
             (("clue", "--bench", one_train.path), "1 question(s) to train on"),
             (("clue", "--bench", one_train.path, "--model", paths["file"]), "a file"),
             (("reranker", "--bench", one_train.path, "--model", paths["t5"]), "a T5")]
    for args, needle in cases:
        code, err, imported = _finetune_in_fresh_process(*args, "-o", tmp_path / "out")
        assert code == 2 and needle in err and err.count("\n") == 1, err
        assert not imported, args
        assert not (tmp_path / "out").exists()
