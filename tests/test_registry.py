"""The plugin registry: declared options checked and converted the same from text and Python,
one-line errors for unknown names and options, lazy discovery, listing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inferqa import registry
from inferqa.errors import InputError
from inferqa.registry import Option, plugin


def _declare():
    @plugin("reranker", "toy",
            Option("window", int, 20, "passages per window", min=1),
            Option("reduction", str, "sum", "how scores combine", choices=("sum", "mean")),
            Option("threshold", float, 0.85, "cosine cut", min=0, max=1, min_open=True),
            Option("stemmer", str, "english", "stemmer language", nullable=True),
            Option("lowercase", bool, True, "fold case"),
            Option("device", str, None, "torch device"))
    class Toy:
        """A toy reranker for the tests."""

        def __init__(self, **kw):
            self.kw = kw

    return Toy


def test_defaults_and_text_conversion(scratch):
    toy_cls = _declare()
    toy = registry.create("reranker", "toy")
    assert toy.kw == {"window": 20, "reduction": "sum", "threshold": 0.85, "stemmer": "english",
                      "lowercase": True, "device": None}
    assert toy_cls.name == "toy"
    text = registry.create("reranker", "toy", window="7", threshold="0.5", lowercase="no", stemmer="null",
                           device="cpu").kw
    assert text == {"window": 7, "reduction": "sum", "threshold": 0.5, "stemmer": None, "lowercase": False,
                    "device": "cpu"}
    assert type(text["window"]) is int and type(text["threshold"]) is float
    # Python values: an int where a float is declared becomes a float; None means the default
    py = registry.create("reranker", "toy", threshold=1, window=None, stemmer=None).kw
    assert py["threshold"] == 1.0 and type(py["threshold"]) is float
    assert py["window"] == 20 and py["stemmer"] is None
    # dashes in names are underscores (--opt hnsw-m=48)
    assert registry.get("reranker", "toy").settings({"reduction": "mean"})["reduction"] == "mean"


@pytest.mark.parametrize("options, message", [
    ({"reduction": "max"}, "reranker 'toy': option 'reduction' takes one of sum, mean, not 'max'"),
    ({"window": 0}, "reranker 'toy': option 'window' takes an integer ≥ 1, not 0"),
    ({"window": "0"}, "reranker 'toy': option 'window' takes an integer ≥ 1, not 0"),
    ({"window": "ten"}, "reranker 'toy': option 'window' takes an integer ≥ 1, not 'ten'"),
    ({"window": 2.5}, "reranker 'toy': option 'window' takes an integer ≥ 1, not 2.5 (float)"),
    ({"window": True}, "reranker 'toy': option 'window' takes an integer ≥ 1, not True (bool)"),
    ({"window": "null"}, "reranker 'toy': option 'window' takes an integer ≥ 1, not 'null'"),
    ({"threshold": 0}, "reranker 'toy': option 'threshold' takes a number in (0, 1], not 0.0"),
    ({"threshold": "1.5"}, "reranker 'toy': option 'threshold' takes a number in (0, 1], not 1.5"),
    ({"threshold": "nan"}, "reranker 'toy': option 'threshold' takes a number in (0, 1], not 'nan'"),
    ({"lowercase": "maybe"}, "reranker 'toy': option 'lowercase' takes true or false, not 'maybe'"),
    ({"device": 3}, "reranker 'toy': option 'device' takes text or null, not 3 (int)"),
    ({"windoww": 3}, "reranker 'toy' has no option 'windoww' (did you mean 'window'?); its options: "
                     "window, reduction, threshold, stemmer, lowercase, device"),
    ({"depth": 3}, "reranker 'toy' has no option 'depth'; its options: "
                   "window, reduction, threshold, stemmer, lowercase, device"),
])
def test_bad_options_are_one_line_errors(scratch, options, message):
    _declare()
    with pytest.raises(InputError) as err:
        registry.create("reranker", "toy", **options)
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_required_option_and_positional_arguments(scratch):
    @plugin("llm", "toy-llm", Option("mode", str, "chat", choices=("chat", "completion")),
            Option("model", str, registry.REQUIRED, "weights"))
    def toy_llm(target, *, mode, model):
        return (target, mode, model)

    with pytest.raises(InputError, match="llm 'toy-llm' needs option 'model' \\(text\\)"):
        registry.create("llm", "toy-llm", "x")
    # a function plugin comes back with its options bound
    bound = registry.create("llm", "toy-llm", "path.gguf", model="m", mode="completion")
    assert bound() == ("path.gguf", "completion", "m")


def test_extra_options_pass_through_but_near_misses_do_not(scratch):
    @plugin("llm", "toy-server", Option("max_retries", int, 3, min=0), extra=True)
    class Server:
        def __init__(self, **kw):
            self.kw = kw

    assert registry.create("llm", "toy-server", repeat_penalty="1.0", top_k="40").kw == \
        {"repeat_penalty": 1.0, "top_k": 40, "max_retries": 3}
    with pytest.raises(InputError, match="has no option 'max_retry' \\(did you mean 'max_retries'\\?\\)"):
        registry.create("llm", "toy-server", max_retry="1")


def test_unknown_names_and_kinds():
    with pytest.raises(InputError) as err:
        registry.create("reranker", "monot55")
    msg = str(err.value)
    assert msg.startswith("unknown reranker 'monot55' (did you mean 'monot5'?); available: ")
    assert "cross-encoder" in msg and "\n" not in msg
    with pytest.raises(InputError, match="unknown plugin kind 'rerankers'"):
        registry.available("rerankers")


def test_registering_a_name_twice_is_refused(scratch):
    _declare()
    with pytest.raises(ValueError, match="registered twice"):
        @plugin("reranker", "toy")
        class Other:  # noqa: F841
            pass


def test_every_kind_lists_its_builtins():
    assert {"bm25", "dense"} <= set(registry.available("retriever"))
    assert {"llm-pointwise", "llm-listwise", "upr", "cross-encoder", "monot5", "rankt5", "lit5"} \
        <= set(registry.available("reranker"))
    assert {"llama-cpp", "openai", "transformers", "smollm2", "gemma3-270m"} <= set(registry.available("llm"))
    assert {"union_norm", "union_freq", "concat"} <= set(registry.available("context"))
    assert {"string", "embedding", "llm"} <= set(registry.available("leak-judge"))
    assert {"exact-match", "llm"} <= set(registry.available("answer-judge"))


def test_declared_defaults_match_the_signatures():
    """One source of truth: a class's own keyword defaults equal its declared ones."""
    for kind in registry.KINDS:
        for p in registry.plugins(kind):
            params = inspect_params(p.factory)
            for opt in p.options.values():
                if opt.name in params and params[opt.name] is not _EMPTY:
                    assert params[opt.name] == opt.default, (p.title, opt.name)


@pytest.mark.parametrize("kind", ["retriever", "reranker", "leak-judge"])
def test_constructors_take_resolved_settings(kind):
    """The Option table is the one source of defaults: the registry passes every declared option,
    so no __init__ of a plugin class (or of its bases) has a default of its own for one."""
    import inspect

    for p in registry.plugins(kind):
        if not inspect.isclass(p.factory):
            continue
        own = [(cls.__name__, name) for cls in p.factory.__mro__ if "__init__" in cls.__dict__
               for name, par in inspect.signature(cls.__dict__["__init__"]).parameters.items()
               if name in p.options and par.default is not par.empty]
        assert own == [], p.title


_EMPTY = object()


def inspect_params(obj) -> dict:
    import inspect

    fn = obj.__init__ if inspect.isclass(obj) else obj
    return {n: (_EMPTY if v.default is v.empty else v.default)
            for n, v in inspect.signature(fn).parameters.items()}


def test_listing_imports_no_heavy_library():
    code = ("import sys; from inferqa import registry\n"
            "for k in registry.KINDS: registry.available(k)\n"
            "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'llama_cpp', 'openai', 'faiss')"
            " if m in sys.modules]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plugins_command_prints_options():
    from typer.testing import CliRunner

    from inferqa.cli import app

    res = CliRunner().invoke(app, ["plugins", "reranker", "upr"])
    assert res.exit_code == 0, res.output
    assert "reduction: one of sum, mean (default 'sum')" in res.output
    res = CliRunner().invoke(app, ["plugins"])
    assert res.exit_code == 0
    for kind in registry.KINDS:
        assert f"{kind}:" in res.output


def test_documented_stemmer_null_and_cli_text_options():
    from inferqa.retrieve import get_retriever

    bm25 = get_retriever("bm25", stemmer="null", stopwords="none", k1="1.2", dedup="false")
    assert bm25.options == {"k1": 1.2, "b": 0.75, "stemmer": None, "stopwords": None, "dedup": False}
    with pytest.raises(InputError, match="retriever 'bm25': option 'k1' takes a number ≥ 0, not 'high'"):
        get_retriever("bm25", k1="high")


def test_llm_spec_options_are_checked_before_anything_loads():
    from inferqa.llm import load_llm, parse_spec

    with pytest.raises(InputError) as err:
        load_llm("smollm2?n_thread=1", cache=None)
    assert str(err.value).startswith("llm 'smollm2' has no option 'n_thread' (did you mean 'n_threads'?)")
    with pytest.raises(InputError, match="option 'mode' takes one of chat, completion, not 'chatty'"):
        load_llm("llama-cpp:/nowhere.gguf?mode=chatty", cache=None)  # before the missing file
    with pytest.raises(InputError, match="option 'n_ctx' takes an integer ≥ 1, not 0"):
        load_llm("smollm2", cache=None, n_ctx=0)
    assert parse_spec("openai:m@http://h:1/v1?timeout=5").options == {"timeout": "5"}  # typed by the registry
    with pytest.raises(InputError, match="unknown LLM spec 'nope:x': expected one of .*smollm2"):
        parse_spec("nope:x")


def test_yaml_option_typo_is_one_line(tmp_path):
    from inferqa.experiments.config import load_config

    base = "name: t\nbenchmark: {demo: true}\nretrievers:\n  - {kind: bm25, options: {%s}}\n"
    (tmp_path / "ok.yaml").write_text(base % "k1: 1.2, stemmer: null")
    assert load_config(tmp_path / "ok.yaml").retrievers[0].options == {"k1": 1.2, "stemmer": None}
    (tmp_path / "typo.yaml").write_text(base % "k_1: 1.2")
    with pytest.raises(InputError) as err:
        load_config(tmp_path / "typo.yaml")
    assert str(err.value) == (f"{tmp_path / 'typo.yaml'}: record 0: field 'retrievers[0].options': retriever 'bm25' "
                              "has no option 'k_1' (did you mean 'k1'?); its options: k1, b, stemmer, stopwords, "
                              "dedup, show_progress")
    (tmp_path / "reader.yaml").write_text(base % "" + "strategies: [union_norm]\n"
                                          "readers:\n  - {llm: smollm2, options: {alpha: 0.5}}\n")
    with pytest.raises(InputError, match="no context strategy of union_norm takes option 'alpha'"):
        load_config(tmp_path / "reader.yaml")


# Every plugin that declares a torch `device` refuses one torch cannot read, when it is built,
# before any model loads; a device torch reads passes as written.
DEVICE_PLUGINS = [("retriever", "dense"), ("retriever", "clue"), ("retriever", "colbert"),
                  ("reranker", "cross-encoder"), ("reranker", "monot5"), ("reranker", "rankt5"),
                  ("reranker", "lit5"), ("llm", "transformers"), ("leak-judge", "embedding")]


def test_every_device_option_is_declared_with_the_check():
    declaring = sorted((kind, p.name) for kind in registry.KINDS for p in registry.plugins(kind)
                       if "device" in p.options)
    assert declaring == sorted(DEVICE_PLUGINS)
    assert all(registry.get(k, n).options["device"].validate is not None for k, n in DEVICE_PLUGINS)


@pytest.mark.parametrize("kind,name", DEVICE_PLUGINS)
def test_an_unreadable_device_is_one_line_naming_the_plugin(kind, name):
    plug = registry.get(kind, name)
    with pytest.raises(InputError) as err:
        plug.settings({"device": "cuad"})
    assert str(err.value) == (f"{kind} {name!r}: option 'device': not a torch device: 'cuad' "
                              "(cpu, cuda, cuda:1, mps, ...)")
    assert plug.settings({"device": "cuda:1"})["device"] == "cuda:1"  # checked, not opened: no GPU needed


def test_cli_refuses_an_unreadable_device_with_exit_2(demo_bench_8q, tmp_path, monkeypatch, capsys):
    from conftest import run_cli

    code, out, err = run_cli(monkeypatch, capsys, "retrieve", demo_bench_8q.path, "-r", "dense", "--opt", "device=gpu0",
                             "-o", tmp_path / "run.trec")
    assert code == 2
    assert err.strip().splitlines() == [
        "inferqa: error: retriever 'dense': option 'device': not a torch device: 'gpu0' (cpu, cuda, cuda:1, mps, ...)"]
    assert list(tmp_path.iterdir()) == []
