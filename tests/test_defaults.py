"""Every default is declared once (the stages' options, their functions' signatures; the plugins' options,
the registry; the shared ones, `inferqa.defaults`), and every other
place that writes one (a public function's signature, a command-line flag, an experiment-file
key) equals its declaration. A default that differs is a user getting another run from the CLI
than from Python or a YAML file."""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict

import pytest
import typer

from inferqa import registry
from inferqa.experiments import config
from inferqa.experiments.config import config_from_dict
import inferqa.cli  # noqa: F401 - declares every stage
from inferqa.stage import declared
from inferqa.parameters import GROUPING
from inferqa.experiments.finetune import finetune
from inferqa.reading.stage import read
from inferqa.reranking.stage import rerank
from inferqa.retrieve.stage import oracle, retrieve

RETRIEVE, ORACLE = retrieve.stage, oracle.stage
READ, RERANK = read.stage, rerank.stage

# Spellings of one option in different places (the place's name: the declaration's).
SYNONYMS = {"judge_samples": "samples", "judge_temperature": "temperature", "labeler": "llm", "leak_llm": "llm",
            "k": "depth"}
# Names that are a different setting in each place that writes them, never one declared default:
OWN = {
    "progress": "the library is quiet, a command line shows progress", "show_progress": "as progress",
    "strict": "the build's strictness about short questions, a reader's about file contents",
    "metrics": "each function's own measures: retrieval's set, compare's shorter one, the reader's EM/F1",
    "alphas": "check_read_options' () checks no grid", "batch_size": "each model's own batch",
    "max_new_tokens": "each model's own answer length", "window": "each method's own window",
    "parallel": "llama-cpp-python's sequences decoded in one process, a llama-server's slots",
}
# Packages whose public names are stage functions (and classes whose methods are).
STAGE_PACKAGES = ("inferqa", "inferqa.construct", "inferqa.retrieve", "inferqa.reranking", "inferqa.reading", "inferqa.tune",
                  "inferqa.label", "inferqa.evaluation", "inferqa.scale", "inferqa.experiments.finetune")
EXTRA_FUNCTIONS = (("inferqa.label.labelling", "label_benchmark"), ("inferqa.label.labelling", "judge_for"),
                   ("inferqa.label.parametric", "parametric_test"), ("inferqa.retrieve.encoding", "encode_texts"),
                   ("inferqa.retrieve.encoding", "embedding_worker"), ("inferqa.diversification", "diversify"),
                   ("inferqa.tune.stage", "tune_margin"), ("inferqa.hints", "hint_group_key"),
                   ("inferqa.formats.oracles", "oracle_retriever"), ("inferqa.llm.servers", "local_server"),
                   ("inferqa.data.quit", "labeller_correct"), ("inferqa.data.quit", "release_label"),
                   ("inferqa.scale.llm", "llm_opener"), ("inferqa.experiments.config", "ExperimentConfig"),
                   ("inferqa.experiments.config", "StageSpec"))


def declarations() -> dict[str, dict[str, object]]:
    """The one table: option name -> {who declares it: its default} (given defaults only)."""
    table: dict[str, dict[str, object]] = defaultdict(dict)

    def add(owner: str, opt: registry.Option) -> None:
        if opt.default is not None and opt.default is not registry.REQUIRED:
            table[opt.name][owner] = opt.default

    for stage in declared().values():
        for opt in stage.options:
            add(stage.name, opt)
    for kind in registry.KINDS:
        for p in registry.plugins(kind):
            for opt in p.options.values():
                add(f"{kind} {p.name}", opt)
    # and the options a stages module declares for several stages and functions (TOP_K, READ_KS, ...)
    for module in ("inferqa.defaults", "inferqa.parameters"):
        for const, opt in vars(importlib.import_module(module)).items():
            if isinstance(opt, registry.Option):
                add(f"{module}.{const}", opt)  # named so that no place mentions it
    return table


def expected(place: str, name: str, table) -> list:
    """The declared defaults a place may hold: where several declarers give `name` different
    defaults, the one whose name the place mentions (the longest such name), else any of them."""
    declared, where = table.get(name, {}), _words(place.split("(")[0])
    mentioned = sorted((o for o in declared if _words(o) in where), key=len)
    return [declared[mentioned[-1]]] if mentioned else list(declared.values())


def _words(text: str) -> str:
    return text.lower().replace("-", "_").replace(" ", "_")


def _stage_functions():
    for pkg in STAGE_PACKAGES:
        module = importlib.import_module(pkg)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if inspect.isfunction(obj):
                yield f"{pkg}.{name}", obj
            elif inspect.isclass(obj) and obj.__module__.startswith("inferqa"):
                for attr, fn in vars(obj).items():
                    if inspect.isfunction(fn) and (attr == "__init__" or not attr.startswith("_")):
                        yield f"{pkg}.{name}.{attr}", fn
    for module, name in EXTRA_FUNCTIONS:
        yield f"{module}.{name}", getattr(importlib.import_module(module), name)
    for kind, methods in (("retriever", ("index", "retrieve", "search", "__init__")), ("reranker", ("rerank",))):
        for p in registry.plugins(kind):
            yield from ((f"{kind} {p.name}.{m}", getattr(p.factory, m)) for m in methods if hasattr(p.factory, m))
    for p in registry.plugins("fine-tuner"):
        yield f"fine-tuner {p.name}", p.factory


def places():
    """(place, name, default) of every signature parameter and every flag not made from a
    declaration (a flag made from one is the declaration, `cli.stage_command`)."""
    for place, fn in _stage_functions():
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        yield from ((f"{place}({p.name}=)", p.name, p.default) for p in params)
    from inferqa.cli import app

    for name, command in typer.main.get_command(app).commands.items():
        yield from ((f"inferqa {name} {p.opts[0] if p.opts else p.name}", p.name, p.default) for p in command.params)


def _same(a, b) -> bool:
    def norm(v):
        return list(v) if isinstance(v, tuple) else v
    return norm(a) == norm(b) and isinstance(a, bool) == isinstance(b, bool)


def test_every_default_equals_its_declaration():
    table, checked, clashes = declarations(), 0, []
    for place, name, value in places():
        name = SYNONYMS.get(name, name)
        want = expected(place, name, table)
        if value is None or value is inspect.Parameter.empty or name in OWN or not want:
            continue
        checked += 1
        if not any(_same(value, w) for w in want):
            clashes.append(f"{place}: {value!r}, declared {' or '.join(sorted({repr(w) for w in want}))}")
    assert not clashes, "\n".join(clashes)
    assert checked > 100  # the walk reaches the signatures and flags


@pytest.mark.parametrize("place, declared", [
    ("inferqa.retrieve.Retriever.retrieve(depth=)", RETRIEVE.default("depth")),
    ("inferqa.reranking.rerank_run(depth=)", RERANK.default("depth")),
    ("reranker llm-pointwise.rerank(depth=)", RERANK.default("depth")),
    ("inferqa.formats.oracles.oracle_retriever(seed=)", ORACLE.default("seed")),
])
def test_a_place_is_held_to_its_own_stage_s_declaration(place, declared):
    """Where several stages declare one name (depth, seed), a place answers to the one it names."""
    name = place.split("(")[1].rstrip("=)")
    assert expected(place, name, declarations()) == [declared]
    assert [v for p, _, v in places() if p == place] == [declared]


def test_the_experiment_file_reads_its_keys_through_the_stages_declarations():
    """Each key's declaration is its stage's, and a key left out is that declaration's default."""
    assert config.RETRIEVER_KEYS["depth"] is RETRIEVE.option("depth")
    assert config.RERANKER_KEYS["depth"] is RERANK.option("depth")
    assert {k: config.TOP_KEYS[k] for k in ("split", "ks", "strategies", "max_questions")} == {
        "split": RETRIEVE.option("split"), "ks": READ.option("ks"), "strategies": READ.option("strategies"),
        "max_questions": finetune.stage.option("max_questions")}
    cfg = config_from_dict({"name": "x", "benchmark": {"demo": True},
                            "retrievers": [{"kind": "bm25"}], "rerankers": [{"kind": "oracle"}]})
    got = {"split": cfg.split, "seed": cfg.seed, "ks": list(cfg.ks), "strategies": list(cfg.strategies),
           "retrievers[].depth": cfg.retrievers[0].depth, "rerankers[].depth": cfg.rerankers[0].depth,
           "diversify_by": cfg.rerankers[0].diversify_by}
    assert got == {"split": RETRIEVE.default("split"), "seed": ORACLE.default("seed"), "ks": READ.default("ks"),
                   "strategies": READ.default("strategies"), "retrievers[].depth": RETRIEVE.default("depth"),
                   "rerankers[].depth": RERANK.default("depth"), "diversify_by": GROUPING.default}
    assert got == {"split": "test", "seed": 0, "ks": [1, 3, 5], "strategies": ["union_norm"],
                   "retrievers[].depth": 1000, "rerankers[].depth": 100, "diversify_by": "set"}


def test_the_four_resolved_defaults():
    from inferqa.defaults import NUM_ACTORS
    from inferqa.llm.llamacpp import N_CTX

    table = declarations()
    assert set(table["num_actors"].values()) == {NUM_ACTORS.default} == {1}
    assert set(table["n_ctx"].values()) == {N_CTX.default} == {4096}
    assert table["depth"]["retrieve"] == 1000 and table["depth"]["rerank"] == 100 and table["seed"]["oracle"] == 0


def _literal_defaults_outside_declarations(declared_defaults: dict[str, set[str]]) -> list[str]:
    """Every function parameter in src/ whose default is a literal equal to a default declared
    for an option of the same name, except the stage functions' own signatures (the
    declarations) and the names in OWN; None and booleans (a flag not given) are not counted."""
    import ast
    from pathlib import Path

    import inferqa

    own = {(inspect.getsourcefile(s.function), s.function.__code__.co_firstlineno) for s in declared().values()}
    hits = []
    for path in sorted(Path(inferqa.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if (str(path), first) in own:
                continue
            for arg, value, line in _literal_defaults(node):
                if arg not in OWN and repr(value) in declared_defaults.get(arg, ()):
                    hits.append(f"{path.name}:{line} {arg}={value!r}")
    return hits


def _literal_defaults(node) -> list[tuple[str, object, int]]:
    """(parameter, value, line) of each parameter of a function's AST node whose default is a literal."""
    import ast

    args = node.args
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    out = []
    for arg, default in pairs:
        try:
            out.append((arg.arg, ast.literal_eval(default), default.lineno))
        except ValueError:
            continue
    return out


def test_no_literal_repeats_a_declared_default():
    """A default is written once: where another function needs it, it reads the declaration
    (`TEST.default`), never the literal again."""
    values = {name: {repr(v) for v in by_owner.values() if v is not True and v is not False}
              for name, by_owner in declarations().items()}
    assert _literal_defaults_outside_declarations(values) == []


def test_the_literal_check_finds_a_repeat(tmp_path, monkeypatch):
    """The check above can fail: a function writing protocol="inferqa" again is found."""
    import inferqa

    fake = tmp_path / "inferqa"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "mod.py").write_text('def f(run, protocol="inferqa", depth=5):\n    pass\n')
    monkeypatch.setattr(inferqa, "__file__", str(fake / "__init__.py"))
    assert _literal_defaults_outside_declarations({"protocol": {"'inferqa'"}, "depth": {"1000"}}) == \
        ["mod.py:1 protocol='inferqa'"]


def test_no_two_stage_signatures_write_one_default_as_a_literal():
    """A stage's own literal default is its declaration; the same option name with the same
    literal in a second stage's signature, or one a shared option declares, is a repeat: the
    second reads the shared declaration (`= TUNE_SPLIT.default`)."""
    import ast

    from inferqa import defaults, parameters

    shared = {(o.name, repr(o.default)) for mod in (parameters, defaults) for o in vars(mod).values()
              if isinstance(o, registry.Option) and o.default not in (None, True, False, registry.REQUIRED)}
    written: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, stage in declared().items():
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(stage.function)).lstrip())
        for arg, value, _ in _literal_defaults(tree.body[0]):
            if value is not None and value is not True and value is not False and arg not in OWN:
                written[arg, repr(value)].append(name)
    repeats = {key: who for key, who in written.items() if len(who) > 1 or key in shared}
    assert repeats == {}
