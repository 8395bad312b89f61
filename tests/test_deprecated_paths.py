"""Renamed modules and packages: each old import path is the new module itself and says so, once, with a
DeprecationWarning; `inferqa.evaluate`, `inferqa.read` and `inferqa.rerank` stay the stage functions."""

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
import types
import warnings

import pytest

import inferqa
from conftest import REPO
from inferqa.evaluation import evaluate
from inferqa.reading import read_with_llm
from inferqa.reranking import rerank_run

PACKAGES = [("inferqa.evaluate", "inferqa.evaluation"), ("inferqa.read", "inferqa.reading"),
            ("inferqa.rerank", "inferqa.reranking")]
RENAMED = [
    ("inferqa.read.answers", "inferqa.reading.answer_scoring"),
    ("inferqa.read.answer_rows", "inferqa.reading.answer_scoring"),
    ("inferqa.read.stored", "inferqa.reading.oracle_reader"),
    ("inferqa.evaluate.answers", "inferqa.evaluation.exact_match"),
    ("inferqa.evaluate.stored", "inferqa.evaluation.stored_metrics"),
    ("inferqa.tuning", "inferqa.tune.diversify"),
    ("inferqa.options", "inferqa.option_values"),
]
# every module of the renamed packages under its old path
SUBMODULES = [(f"{old}.{info.name}", f"{new}.{info.name}") for old, new in PACKAGES
              for info in pkgutil.iter_modules(importlib.import_module(new).__path__)]
STAGE_FUNCTIONS = {"evaluate": evaluate, "read": read_with_llm, "rerank": rerank_run}


def _assert_stage_functions():
    for name, function in STAGE_FUNCTIONS.items():
        assert getattr(inferqa, name) is function and type(getattr(inferqa, name)) is types.FunctionType
        assert inspect.signature(getattr(inferqa, name)) == inspect.signature(function)


def _forget(old: str, monkeypatch) -> None:
    """Drop the old path, the old packages above it and the old modules below it from sys.modules, as in a fresh
    interpreter (the new modules stay)."""
    parts = old.split(".")
    for end in range(2, len(parts) + 1):
        monkeypatch.delitem(sys.modules, ".".join(parts[:end]), raising=False)
    for name in [name for name in sys.modules if name.startswith(f"{old}.")]:
        monkeypatch.delitem(sys.modules, name)


def test_submodules_are_listed():
    assert ("inferqa.evaluate.metrics", "inferqa.evaluation.metrics") in SUBMODULES
    assert ("inferqa.rerank.cross_encoder", "inferqa.reranking.cross_encoder") in SUBMODULES
    assert ("inferqa.read.run", "inferqa.reading.run") in SUBMODULES and len(SUBMODULES) > 20


@pytest.mark.parametrize("old,new", PACKAGES + RENAMED + SUBMODULES)
def test_old_path_is_the_new_module_with_one_warning(old, new, monkeypatch):
    _forget(old, monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    said = [w for w in caught if str(w.message).startswith(f"{old} is deprecated:")]
    assert len(said) == 1 and said[0].category is DeprecationWarning
    assert f"{old} is deprecated: import {new} instead" in str(said[0].message)
    assert module is importlib.import_module(new) and sys.modules[old] is sys.modules[new]
    assert module.__name__ == module.__spec__.name == new
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(old) is module  # imported once, warned once
    _assert_stage_functions()


def test_from_imports_of_old_paths_share_the_new_objects(monkeypatch):
    for old, _ in PACKAGES:
        _forget(old, monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from inferqa.evaluate import per_query_scores
        from inferqa.evaluate.metrics import resolve
        from inferqa.rerank.cross_encoder import CrossEncoderReranker
        from inferqa.read import summarize
    said = {str(w.message).split(" instead")[0] for w in caught if w.category is DeprecationWarning}
    assert said == {f"{old} is deprecated: import {new}" for old, new in [
        *PACKAGES, ("inferqa.evaluate.metrics", "inferqa.evaluation.metrics"),
        ("inferqa.rerank.cross_encoder", "inferqa.reranking.cross_encoder")]}
    import inferqa.evaluation.metrics
    import inferqa.reading
    import inferqa.reranking.cross_encoder

    assert per_query_scores is inferqa.evaluation.per_query_scores and resolve is inferqa.evaluation.metrics.resolve
    assert CrossEncoderReranker is inferqa.reranking.cross_encoder.CrossEncoderReranker
    assert summarize is inferqa.reading.summarize
    monkeypatch.setattr(inferqa.evaluation.metrics, "DEFAULT_METRICS", ("RR",))
    assert sys.modules["inferqa.evaluate.metrics"].DEFAULT_METRICS == ("RR",)  # one module: patches are shared
    _assert_stage_functions()


def test_stage_names_stay_functions_after_importing_the_old_packages(monkeypatch):
    for old, _ in PACKAGES:
        _forget(old, monkeypatch)
    with pytest.warns(DeprecationWarning):
        import inferqa.evaluate.metrics  # noqa: F401  # binds inferqa.evaluate, which must stay the function
        import inferqa.read
        import inferqa.rerank  # noqa: F401
    _assert_stage_functions()
    assert inferqa.evaluate.__module__ == "inferqa.evaluation.metrics"
    monkeypatch.setattr(inferqa, "evaluate", len)  # a function may still be patched in
    assert inferqa.evaluate is len


@pytest.mark.parametrize("old,new", [("inferqa.read.run", "inferqa.reading.run"),
                                     ("inferqa.evaluate.metrics", "inferqa.evaluation.metrics"),
                                     ("inferqa.rerank.cross_encoder", "inferqa.reranking.cross_encoder")])
def test_plain_import_of_a_module_below_a_stage_function(old, new, monkeypatch):
    """`import inferqa.read.run as run` reaches the module through the function `inferqa.read`."""
    _forget(old, monkeypatch)
    names: dict = {}
    with pytest.warns(DeprecationWarning, match=f"{old} is deprecated"):
        exec(f"import {old} as alias", names)  # the statement itself, as a user writes it
    assert names["alias"] is importlib.import_module(new)
    stage = getattr(inferqa, old.split(".")[1])
    assert getattr(stage, old.split(".")[2]) is names["alias"]  # the attribute chain inferqa.read.run too
    _assert_stage_functions()


# deprecated modules that are files of their own (a re-export of several modules' names), not paths of MOVED
DEPRECATED_FILES = ("inferqa.stage_options",)


def test_importing_any_current_module_warns_nothing(tmp_path):
    code = ("import importlib, pkgutil, inferqa\n"
            "def fail(name): raise ImportError(name)\n"
            "names = [m.name for m in pkgutil.walk_packages(inferqa.__path__, 'inferqa.', onerror=fail)\n"
            f"         if m.name.rpartition('.')[2] != '__main__' and m.name not in {DEPRECATED_FILES!r}]\n"
            "for name in names: importlib.import_module(name)\n"
            "print(len(names), sorted(set(names) & set(inferqa._deprecated.MOVED)))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    count, aliases = done.stdout.split(" ", 1)
    assert int(count) > 150 and aliases.strip() == "[]"  # no alias file is left to import


def test_stage_options_re_exports_each_stage_s_own_declaration_with_a_warning(monkeypatch):
    """inferqa.stage_options, split among the stages modules, still gives every old name: the very
    Option object its stage declares, with a DeprecationWarning naming the new places."""
    from inferqa.stages import build, llm, read, tune

    monkeypatch.delitem(sys.modules, "inferqa.stage_options", raising=False)
    with pytest.warns(DeprecationWarning, match=r"inferqa.stage_options is deprecated: .*inferqa.stages.build.*"
                                                r"inferqa.stages.read.*inferqa.stages.tune.*inferqa.stages.llm"):
        old = importlib.import_module("inferqa.stage_options")
    homes = {"TOP_K": build, "SPLIT": build, "SEED": build, "LEAK_THRESHOLD": build, "LEAK_LLM": build,
             "LABELER": build, "MIN_F1": build, "LABEL_MATCH": build, "READER_LLM": read, "READ_STRATEGIES": read,
             "READ_KS": read, "UNION_ALPHA": read, "UNION_BETA": read, "TUNE_KS": tune, "TUNE_ALPHAS": tune,
             "TUNE_METRIC": tune, "TUNE_MEASURES": tune, "TUNE_PER_GROUP": tune, "TUNE_SHARES": tune,
             "JUDGE_SAMPLES": llm, "JUDGE_TEMPERATURE": llm}
    assert sorted(old.__all__) == sorted(homes)
    for name, home in homes.items():
        assert getattr(old, name) is getattr(home, name), name
