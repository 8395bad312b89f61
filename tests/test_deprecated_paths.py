"""Renamed modules: each old import path is the new module itself, and says so with a DeprecationWarning."""

import importlib
import sys

import pytest

MOVES = [
    ("inferqa.reading.answers", "inferqa.reading.answer_scoring"),
    ("inferqa.reading.answer_rows", "inferqa.reading.answer_scoring"),
    ("inferqa.reading.stored", "inferqa.reading.oracle_reader"),
    ("inferqa.evaluation.answers", "inferqa.evaluation.exact_match"),
    ("inferqa.evaluation.stored", "inferqa.evaluation.stored_metrics"),
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
