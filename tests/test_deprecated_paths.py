"""Renamed modules: each old import path is the new module itself, and says so with a DeprecationWarning."""

import importlib
import sys

import pytest

MOVES = [
    ("inferqa.read.answers", "inferqa.read.answer_scoring"),
    ("inferqa.read.answer_rows", "inferqa.read.answer_scoring"),
    ("inferqa.read.stored", "inferqa.read.oracle_reader"),
    ("inferqa.evaluate.answers", "inferqa.evaluate.exact_match"),
    ("inferqa.evaluate.stored", "inferqa.evaluate.stored_metrics"),
    ("inferqa.tuning", "inferqa.tune.diversify"),
    ("inferqa.options", "inferqa.option_values"),
]


@pytest.mark.parametrize("old,new", MOVES)
def test_old_path_is_the_new_module_with_a_warning(old, new, monkeypatch):
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: import {new} instead"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert sys.modules[old] is sys.modules[new]


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
