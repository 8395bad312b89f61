"""A warning from deep inside inferqa (a stage function, a reader) names the caller's own line."""

import warnings

from inferqa.formats import Run


def test_a_scope_warning_names_this_file(tmp_path):
    from inferqa import evaluate
    from inferqa.label.stage import build

    bench = build(demo=True, out=tmp_path / "b")
    run = Run({"demo_01": [("demo_01_100_0", 1.0)]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(run, tmp_path / "b", ["hit@1"])  # the line warned about
    lacks = [w for w in caught if "lacks" in str(w.message)]
    assert lacks and all(w.filename == __file__ for w in lacks), [(w.filename, w.lineno) for w in caught]
