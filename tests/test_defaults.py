"""Every default of one option is the same wherever it is written: the plugins' declared
options, the public stage functions' signatures, the experiment file's keys and the
command-line flags. A default that differs is a user getting another run from the CLI than
from Python or a YAML file."""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict

import typer

from inferqa import registry
from inferqa.experiments.config import config_from_dict

# Spellings of one option in different places.
SYNONYMS = {"judge_samples": "samples", "judge_temperature": "temperature", "labeler": "llm", "leak_llm": "llm",
            "k": "depth"}
# Names that are a different concept in each place, never one shared default (so never compared):
OWN = {
    **dict.fromkeys(("batch_size", "chunk_size", "max_length", "max_new_tokens", "prompt", "mode", "window"),
                    "each plugin's own setting for its own model or method"),
    "out": "each command's own output", "options": "each stage's own option mapping",
    "kind": "what kind of thing each function makes (a prompt kind, a server kind)",
    "metrics": "each function's own measures: retrieval's set, compare's shorter one, the reader's EM/F1",
    "progress": "the library is quiet, a command line shows progress", "show_progress": "as progress",
    "strict": "the build's strictness about short questions, a reader's about file contents",
    "table_format": "a command that computes prints a boxed table; run, demo and reproduce print their "
                    "tables as the files they write hold them (md)",
}
# Packages whose public names are stage functions (and classes whose methods are).
STAGE_PACKAGES = ("inferqa", "inferqa.construct", "inferqa.retrieve", "inferqa.rerank", "inferqa.read",
                  "inferqa.label", "inferqa.evaluate", "inferqa.scale", "inferqa.experiments.finetune")
EXTRA_FUNCTIONS = (("inferqa.label.labelling", "label_benchmark"), ("inferqa.label.labelling", "judge_for"),
                   ("inferqa.label.parametric", "parametric_test"), ("inferqa.retrieve.encoding", "encode_texts"),
                   ("inferqa.retrieve.encoding", "embedding_worker"), ("inferqa.retrieve.diversify", "diversify"),
                   ("inferqa.tune.diversify", "tune_margin"), ("inferqa.hints", "hint_group_key"), ("inferqa.formats.oracles", "oracle_retriever"),
                   ("inferqa.llm.servers", "local_server"), ("inferqa.data.quit", "labeller_correct"),
                   ("inferqa.data.quit", "release_label"), ("inferqa.scale.llm", "llm_opener"))


def concept(place: str, name: str) -> str:
    """The option a default belongs to. A few names are several concepts, told apart by place:"""
    name = SYNONYMS.get(name, name)
    if name in OWN:
        return f"{name} of {place}"
    if name == "depth":
        if "explore" in place:
            return "explorer depth (passages shown per question)"
        return "rerank depth" if "rerank" in place.lower() else "retrieve depth"
    if name == "model":  # rerankers and the colbert retriever start from their own weights, not an encoder's
        return f"model of {place}" if "reranker" in place or "colbert" in place else "encoder"
    if name == "split":  # the build's train,dev,test spec; tuning reads dev; fine-tuning trains on train
        for where, what in (("build", "split spec"), ("fine-tuner", "training split"), ("finetune", "training split"),
                            ("tune", "tuning split")):
            if where in place:
                return what
    if name == "seed":  # the build's split shuffle, training, LLM sampling: three seeds besides the oracle's
        for where, what in (("build", "split seed"), ("parametric", "split seed"), ("finetune", "training seed"),
                            ("fine-tuner", "training seed"), ("colbert", "training seed"), ("llm ", "sampling seed")):
            if where in place:
                return what
        return "oracle and paired-test seed"
    if name == "temperature" and "clue" in place:
        return "clue softmax temperature"
    if name == "ks" and "tune" in place:
        return "tuning cutoffs"
    if name == "alphas" and "check_read_options" in place:  # () there: no grid to check
        return "alphas checked"
    return name


def _add(found: dict, place: str, name: str, value) -> None:
    if value is None or value is inspect.Parameter.empty or value is registry.REQUIRED:
        return
    found[concept(place, name)].append((place, value))


def _signature(found: dict, place: str, fn) -> None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return
    for p in params:
        _add(found, f"{place}({p.name}=)", p.name, p.default)


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
            for m in methods:
                if hasattr(p.factory, m):
                    yield f"{kind} {p.name}.{m}", getattr(p.factory, m)
    for p in registry.plugins("fine-tuner"):
        yield f"fine-tuner {p.name}", p.factory


def _yaml(found: dict) -> None:
    """What the experiment file gives for every key left out."""
    cfg = config_from_dict({"name": "x", "benchmark": {"demo": True},
                            "retrievers": [{"kind": "bm25"}], "rerankers": [{"kind": "oracle"}]})
    for key in ("seed", "split", "ks", "strategies"):
        _add(found, f"experiment YAML {key}", key, getattr(cfg, key))
    for field, stage in (("retrievers", cfg.retrievers[0]), ("rerankers", cfg.rerankers[0])):
        for key in ("depth", "diversify_by"):
            _add(found, f"experiment YAML {field}[].{key}", key, getattr(stage, key))


def _cli(found: dict) -> None:
    """Flags' defaults: a typer default, or for a command made from a stage declaration
    (its flags default to None, not given), the declared option's."""
    import pkgutil

    import inferqa.stages
    from inferqa.cli import app
    from inferqa.stages import Stage

    for name, command in typer.main.get_command(app).commands.items():
        for param in command.params:
            flag = param.opts[0] if param.opts else param.name
            _add(found, f"inferqa {name} {flag}", param.name, param.default)
    for info in pkgutil.iter_modules(inferqa.stages.__path__):
        for stage in vars(importlib.import_module(f"inferqa.stages.{info.name}")).values():
            if isinstance(stage, Stage):
                for opt in stage.options:
                    _add(found, f"inferqa {stage.name} {opt.cli_flags[0]}", opt.name, opt.default)


def all_defaults() -> dict[str, list[tuple[str, object]]]:
    found: dict[str, list] = defaultdict(list)
    for kind in registry.KINDS:
        for p in registry.plugins(kind):
            for opt in p.options.values():
                _add(found, f"{kind} {p.name}", opt.name, opt.default)
    for place, fn in _stage_functions():
        _signature(found, place, fn)
    _yaml(found)
    _cli(found)
    return found


def _same(a, b) -> bool:
    def norm(v):
        return list(v) if isinstance(v, tuple) else v
    return norm(a) == norm(b) and isinstance(a, bool) == isinstance(b, bool)


def test_every_default_of_one_option_is_the_same_everywhere():
    found = all_defaults()
    clashes = []
    for name, places in sorted(found.items()):
        first_place, first = places[0]
        for place, value in places[1:]:
            if not _same(first, value):
                clashes.append(f"{name}: {first!r} at {first_place}, but {value!r} at {place}")
    assert not clashes, "\n".join(clashes)


def test_the_walk_sees_each_kind_of_place():
    """The shared defaults are found in plugins, signatures, the YAML schema and flags alike."""
    found = all_defaults()
    places = {c: " | ".join(p for p, _ in found[c]) for c in ("retrieve depth", "rerank depth", "encoder", "llm",
                                                              "samples", "num_actors", "diversify_by")}
    assert "experiment YAML retrievers[].depth" in places["retrieve depth"]
    assert "inferqa retrieve --depth" in places["retrieve depth"] and "retrieve(depth=)" in places["retrieve depth"]
    assert "experiment YAML rerankers[].depth" in places["rerank depth"]
    assert "inferqa rerank --depth" in places["rerank depth"] and "rerank_run(depth=)" in places["rerank depth"]
    assert "retriever dense" in places["encoder"] and "inferqa finetune --model" in places["encoder"]
    assert "answer-judge llm" in places["samples"] and "inferqa evaluate-answers" in places["samples"]
    assert "inferqa index --num-actors" in places["num_actors"] and "Executor" in places["num_actors"]
    assert "experiment YAML" in places["diversify_by"]


def test_the_four_resolved_defaults():
    from inferqa.defaults import NUM_ACTORS
    from inferqa.stages.retrieve import RETRIEVE
    from inferqa.formats.oracles import ORACLE_SEED
    from inferqa.llm.llamacpp import N_CTX

    found = all_defaults()
    assert {v for _, v in found["retrieve depth"]} == {RETRIEVE.default("depth")} == {1000}
    assert {v for _, v in found["oracle and paired-test seed"]} == {ORACLE_SEED.default} == {0}
    assert {v for _, v in found["num_actors"]} == {NUM_ACTORS.default} == {1}
    assert {v for _, v in found["n_ctx"]} == {N_CTX.default} == {4096}
