"""The experiment file: one YAML naming the benchmark, the stages and the grid to run
(docs/experiments.md shows a whole one; the shipped `configs/demo.yaml` is another).

Two fields are paths, and a relative one is resolved against the YAML file's folder:
`benchmark.path` and `llm_cache`. Values inside a stage's `options` (a model folder, say)
are passed on as written, so a relative one is relative to the working directory. Stage
kinds, strategies and their `options` are checked against the plugin registry (`inferqa
plugins`) when the file is read; a reader's options go to the context strategies that
declare them (alpha, beta). A key that is a stage's option (a retriever's `depth`, a
reranker's `window`, a fusion's `method`) is checked by that stage's declaration, with the
message the stage gives on the command line and in Python.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError
from ..io import read_yaml
from ..registry import REQUIRED, Option
from ..reranking.run import check_representative, check_window
from ..diversification import GROUPING, NAMES as DIVERSIFY_KEYS, check_diversify
from ..evaluation.stage import evaluate
from .finetune import finetune
from ..parameters import CACHE, READ_K
from ..reading.stage import read
from ..reranking.stage import rerank
from ..retrieve.stage import fuse, oracle, retrieve
from ..text import did_you_mean


def _keys(*options: Option) -> dict[str, Option]:
    return {o.name: o for o in options}


# The file's keys that are a stage's declared option, read through that declaration (its type,
# range and default); the others (name, benchmark, oracles, a stage's name and kind) are its own.
TOP_KEYS = _keys(retrieve.stage.option("split"), finetune.stage.option("max_questions"),
                 read.stage.option("strategies"), read.stage.option("ks"),
                 replace(evaluate.stage.option("metrics"), type=list, default=None),  # None: evaluate's
                 replace(oracle.stage.option("seed"),
                         help="seed of the oracle retriever's shuffle and the paired tests"),
                 replace(CACHE, name="llm_cache"))
RETRIEVER_KEYS = _keys(*(retrieve.stage.option(name) for name in ("depth", "options", *DIVERSIFY_KEYS)))
RERANKER_KEYS = _keys(*(rerank.stage.option(name) for name in ("depth", "window", "representative", "options",
                                                                      *DIVERSIFY_KEYS)))
READER_KEYS = _keys(read.stage.option("llm").with_default(REQUIRED))
FUSION_KEYS = _keys(*(fuse.stage.option(name) for name in ("method", "weights", "rrf_k", "norm", "depth")))
_RUN_NAMES = Option("retrievers", list, REQUIRED, "the names of two or more of the file's retrievers", item=str)
_KIND = Option("kind", str, REQUIRED)
_BOOL = Option("value", bool, REQUIRED)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


@dataclass(frozen=True)
class StageSpec:
    """One retriever or reranker: a display name, the registry kind, its options."""

    name: str
    kind: str
    depth: int
    options: dict[str, Any] = field(default_factory=dict)
    diversify: int | None = None  # at most N passages of one hint-group in the head (retrieve.diversify)
    diversify_by: str = GROUPING.default  # the hint-group: set | linked
    diversify_margin: float | None = None  # only queries whose top group leads by less (None: every query)
    diversify_share: float | None = None  # only this share of queries, those led by least (None: every query)
    window: str = rerank.stage.default("window")  # rerankers: plain, or one representative per hint-group
    representative: str = rerank.stage.default("representative")  # distinct windows: first, or all-hints


@dataclass(frozen=True)
class FusionSpec:
    """One fusion: a display name, the retrievers whose runs it fuses (in order), `fuse`'s options."""

    name: str
    retrievers: tuple[str, ...]
    method: str = fuse.stage.default("method")
    weights: tuple[float, ...] | None = None
    rrf_k: float | None = None
    norm: str | None = None
    depth: int = fuse.stage.default("depth")


@dataclass(frozen=True)
class ReaderSpec:
    name: str
    llm: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OracleSpec:
    retriever: bool = True   # oracle retriever, then every real reranker on it
    reranker: bool = True    # oracle reranker on every real retriever
    optimal: bool = True     # perfect retriever and reranker


@dataclass(frozen=True)
class BenchmarkSpec:
    path: Path | None = None
    demo: bool = False


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    benchmark: BenchmarkSpec
    split: str
    retrievers: tuple[StageSpec, ...]
    rerankers: tuple[StageSpec, ...] = ()
    fusions: tuple[FusionSpec, ...] = ()  # each reported as one more retriever
    readers: tuple[ReaderSpec, ...] = ()
    strategies: tuple[str, ...] = tuple(read.stage.default("strategies"))
    ks: tuple[int, ...] = tuple(read.stage.default("ks"))
    oracles: OracleSpec = OracleSpec()
    metrics: tuple[str, ...] | None = None  # None: inferqa.evaluation.DEFAULT_METRICS
    max_questions: int | None = None
    seed: int = TOP_KEYS["seed"].default
    llm_cache: Path | None = None  # None: the shared default (inferqa.llm.default_cache_path)
    source: Path | None = None     # the YAML file it came from

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON values (tuples as lists, paths as text): results.json's and config.yaml's."""
        return json.loads(json.dumps(asdict(self), default=str))


class _Checker:
    """Reads one mapping of the YAML, naming the file and the field in every error."""

    def __init__(self, file: Path | None):
        self.file = file

    def fail(self, msg: str, field: str, record: object = None) -> InputError:
        return InputError(msg, file=self.file, record=record, field=field)

    def mapping(self, obj: Any, field: str, allowed: set[str], record: object = None) -> dict:
        if not isinstance(obj, dict):
            raise self.fail(f"expected a mapping, got {type(obj).__name__}", field, record)
        unknown = sorted(set(obj) - allowed, key=str)
        if unknown:
            hint = did_you_mean(unknown[0], allowed, form="; {}")
            raise self.fail(f"unknown key(s) {', '.join(map(str, unknown))}{hint} (allowed: "
                            f"{', '.join(sorted(allowed))})", field, record)
        return obj

    def name(self, obj: Any, field: str, record: object = None) -> str:
        if not isinstance(obj, str) or not _NAME.match(obj):
            raise self.fail(f"{obj!r} is not a valid name (letters, digits, '_', '.', '+', '-')", field, record)
        return obj

    def string(self, obj: Any, field: str, record: object = None) -> str:
        if not isinstance(obj, str) or not obj.strip():
            raise self.fail(f"expected a non-empty string, got {obj!r}", field, record)
        return obj

    def new_name(self, obj: Any, field: str, seen: set[str], record: object, taken: str = "") -> str:
        """A valid name that is not yet in `seen`, added to it (`taken`: said after a duplicate)."""
        name = self.name(obj, field, record)
        if name in seen:
            raise self.fail(f"duplicate name {name!r}{taken}", field, record)
        seen.add(name)
        return name

    def declared(self, obj: Any, opt: Option, field: str, record: object = None, stage: str | None = None) -> Any:
        """`obj` as the declared Option `opt` checks it (type, range), or an error at `field`:
        with `stage`, the option's own message as that stage gives it on every road
        (`retrieve: option 'depth' takes an integer ≥ 1, not 0`)."""
        if isinstance(obj, str) and opt.types[0] is str:
            self.string(obj, field, record)
        try:
            if stage is None and isinstance(obj, str) and opt.types[0] not in (str, Path):
                raise InputError("text")  # YAML values come typed: text is no number
            return opt.check(obj, stage or field, text=stage is None)  # a stage's: YAML values as Python's
        except InputError as exc:
            raise self.fail(exc.message if stage else f"expected {opt.accepts()}, got {obj!r}", field, record) from None

    def read(self, raw: dict, declared: dict[str, Option], prefix: str, record: object = None,
             stage: str | None = None) -> dict[str, Any]:
        """Each of `declared`'s keys in `raw` checked as declared (error at `prefix + key`; with
        `stage`, in the words of that stage's own check), the others their declared defaults."""
        out = {}
        for key, opt in declared.items():
            if key in raw:
                out[key] = self.declared(raw[key], opt, prefix + key, record, stage)
            elif opt.required:
                raise self.fail(f"missing '{key}'" + (f" ({opt.help})" if opt.help else ""), prefix + key, record)
            else:
                out[key] = opt.default
        return out

    def items(self, raw: Any, field: str, allowed: set[str], short: str = "") -> Iterator[tuple[int, str, dict]]:
        """(i, "FIELD[i].", the mapping) of each item in the list at `field` (None: no item); with
        `short`, an item that is text is the value of that key."""
        if raw is not None and not isinstance(raw, list):
            raise self.fail(f"expected a list, got {type(raw).__name__}", field)
        for i, item in enumerate(raw or []):
            item = {short: item} if short and isinstance(item, str) else item
            yield i, f"{field}[{i}].", self.mapping(item, field, allowed, record=i)


def _checked(c: _Checker, field: str, record: object, check) -> Any:
    """A registry check whose InputError gets this file and field."""
    try:
        return check()
    except InputError as exc:
        raise c.fail(exc.message, field, record) from None


def _stages(c: _Checker, raw: Any, plugin_kind: str, keys: dict[str, Option], stage: str) -> tuple[StageSpec, ...]:
    from .. import registry

    out, seen = [], set()
    for i, at, item in c.items(raw, f"{plugin_kind}s", {"name", "kind", *keys}):
        kind = c.read(item, _keys(_KIND), at, i)["kind"]
        name = c.new_name(item.get("name", kind), at + "name", seen, i)
        values = c.read(item, keys, at, i, stage)
        options = dict(values["options"] or {})
        plugin = _checked(c, at + "kind", i, lambda: registry.get(plugin_kind, kind))
        _checked(c, at + "options", i, lambda: plugin.settings(options))
        try:
            diversified = check_diversify(*(values[key] for key in DIVERSIFY_KEYS))
        except InputError as exc:
            raise c.fail(exc.message, at + str(exc.field), record=i) from None
        window = _checked(c, at + "window", i, lambda: check_window(values.get("window", StageSpec.window)))
        representative = _checked(c, at + "representative", i, lambda: check_representative(
            values.get("representative", StageSpec.representative), window))
        out.append(StageSpec(name, kind, values["depth"], options, *diversified, window=window,
                             representative=representative))
    return tuple(out)


def _readers(c: _Checker, raw: Any) -> tuple[ReaderSpec, ...]:
    out, seen = [], set()
    for i, at, item in c.items(raw, "readers", {"name", "options", *READER_KEYS}, short="llm"):
        llm = c.read(item, READER_KEYS, at, i, read.stage.name)["llm"]
        name = c.new_name(item.get("name", re.sub(r"[^A-Za-z0-9_.+-]", "-", llm)), at + "name", seen, i)
        options = item.get("options")
        if options is not None and (not isinstance(options, dict) or not all(isinstance(k, str) for k in options)):
            raise c.fail("expected a mapping of option names to values", at + "options", i)
        out.append(ReaderSpec(name, llm, dict(options or {})))
    return tuple(out)


def _benchmark(c: _Checker, raw: Any, base: Path) -> BenchmarkSpec:
    if isinstance(raw, str):
        raw = {"demo": True} if raw == "demo" else {"path": raw}
    raw = c.mapping(raw, "benchmark", {"path", "demo"})
    demo = c.declared(raw.get("demo", False), _BOOL, "benchmark.demo")
    path = raw.get("path")
    if path is not None:
        path = _resolved(Path(c.string(path, "benchmark.path")), base)
    if not demo and path is None:
        raise c.fail("give a benchmark 'path' or 'demo: true'", "benchmark")
    return BenchmarkSpec(path=path, demo=demo)


def _resolved(path: Path, base: Path) -> Path:
    path = path.expanduser()
    return path if path.is_absolute() else base / path


def _pipeline(c: _Checker, raw: dict) -> dict[str, Any]:
    """The retrievers, rerankers and readers, each checked against the registry."""
    retrievers = _stages(c, raw["retrievers"], "retriever", RETRIEVER_KEYS, retrieve.stage.name)
    if not retrievers:
        raise c.fail("at least one retriever is needed", "retrievers")
    fusions = _fusions(c, raw.get("fusions"), retrievers)
    rerankers = _stages(c, raw.get("rerankers"), "reranker", RERANKER_KEYS, rerank.stage.name)
    taken = {s.name: "a retriever's" for s in retrievers} | {s.name: "a fusion's" for s in fusions}
    for i, s in enumerate(rerankers):
        if s.name in taken:
            raise c.fail(f"name {s.name!r} is already {taken[s.name]}", f"rerankers[{i}].name", i)
    return {"retrievers": retrievers, "rerankers": rerankers, "fusions": fusions,
            "readers": _readers(c, raw.get("readers"))}


def _fusions(c: _Checker, raw: Any, retrievers: tuple[StageSpec, ...]) -> tuple[FusionSpec, ...]:
    """Each fusion: two or more of the file's retrievers and the `fuse` stage's options, checked
    as `inferqa fuse` checks them (the method, its options, one weight per run)."""
    from ..retrieve.fusion import check_weights, fusion_method

    names = [s.name for s in retrievers]
    out, seen = [], set(names)
    for i, at, item in c.items(raw, "fusions", {"name", "retrievers", *FUSION_KEYS}):
        runs = c.read(item, _keys(_RUN_NAMES), at, i)["retrievers"]
        for j, run in enumerate(runs):
            if run not in names:
                hint = did_you_mean(run, names) if isinstance(run, str) else ""
                raise c.fail(f"{run!r} is not a retriever of this file{hint} (they are: {', '.join(names)})",
                             f"{at}retrievers[{j}]", i)
        if len(set(runs)) < 2 or len(set(runs)) < len(runs):
            raise c.fail(f"a fusion takes two or more different retrievers, not {runs!r}", at + "retrievers", i)
        name = c.new_name(item.get("name", "+".join(runs)), at + "name", seen, i, " (a retriever or fusion has it)")
        values = c.read(item, FUSION_KEYS, at, i, fuse.stage.name)
        options = {k: values[k] for k in ("rrf_k", "norm")}
        try:
            fusion_method(values["method"], values["weights"], **options)
            weights = None if values["weights"] is None else check_weights(values["weights"], len(runs))
        except InputError as exc:  # the field the check names, else the option its message names
            named = [k for k in options if options[k] is not None and repr(k) in exc.message]
            key = exc.field if exc.field in FUSION_KEYS else (named or ["method"])[0]
            raise c.fail(exc.message, at + key, record=i) from None
        out.append(FusionSpec(name, tuple(runs), values["method"], None if weights is None else tuple(weights),
                              values["rrf_k"], values["norm"], values["depth"]))
    return tuple(out)


def _reading(c: _Checker, values: dict[str, Any], readers: tuple[ReaderSpec, ...]) -> dict[str, tuple]:
    """The strategies (known, taking the readers' options) and the ks (each a k ≥ 1)."""
    from ..reading.context import strategies as context_strategies, strategy_plugin

    strategies = tuple(values["strategies"])  # lists: TOP_KEYS checked them
    for i, s in enumerate(strategies):
        _checked(c, f"strategies[{i}]", None, lambda: strategy_plugin(c.string(s, f"strategies[{i}]")))
    for i, reader in enumerate(readers):
        _checked(c, f"readers[{i}].options", i, lambda: context_strategies(strategies, reader.options))
    ks = tuple(c.declared(k, READ_K, f"ks[{i}]") for i, k in enumerate(values["ks"]))
    if readers and (not strategies or not ks):
        raise c.fail("readers need at least one strategy and one k", "strategies" if not strategies else "ks")
    return {"strategies": strategies, "ks": ks}


def _metrics(c: _Checker, metrics: Any) -> tuple[str, ...] | None:
    if metrics is None:
        return None
    from ..evaluation import parse_metric

    metrics = tuple(c.string(m, f"metrics[{i}]") for i, m in enumerate(metrics))
    for i, m in enumerate(metrics):
        _checked(c, f"metrics[{i}]", None, lambda: parse_metric(m))
    return metrics


def _oracles(c: _Checker, raw: Any) -> OracleSpec:
    if isinstance(raw, bool):
        raw = {"retriever": raw, "reranker": raw, "optimal": raw}
    raw = c.mapping(raw, "oracles", {"retriever", "reranker", "optimal"})
    return OracleSpec(**{k: c.declared(v, _BOOL, f"oracles.{k}") for k, v in raw.items()})


def config_from_dict(raw: Any, *, file: str | os.PathLike | None = None) -> ExperimentConfig:
    """Validate a parsed YAML document; every error names the file and the field."""
    path = Path(file) if file is not None else None
    base = path.parent if path is not None else Path.cwd()
    c = _Checker(path)
    raw = c.mapping(raw, "(top level)", {"name", "benchmark", "retrievers", "fusions", "rerankers", "readers",
                                         "oracles", *TOP_KEYS})
    for key in ("name", "benchmark", "retrievers"):
        if key not in raw:
            raise c.fail(f"missing required key '{key}'", key)
    name = c.name(raw["name"], "name")
    benchmark = _benchmark(c, raw["benchmark"], base)
    pipeline = _pipeline(c, raw)
    values = c.read(raw, TOP_KEYS, "")
    cache = values["llm_cache"]
    return ExperimentConfig(
        name=name, benchmark=benchmark, split=values["split"], **pipeline,
        **_reading(c, values, pipeline["readers"]), oracles=_oracles(c, raw.get("oracles", {})),
        metrics=_metrics(c, values["metrics"]), max_questions=values["max_questions"], seed=values["seed"],
        llm_cache=None if cache is None else _resolved(cache, base), source=path)


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """The experiment file at `path`, checked (one line naming the file and key when it is not)."""
    return config_from_dict(read_yaml(path), file=path)


def shipped_config(name: str) -> Path:
    """A config that ships with the package: `demo` or `ci`."""
    path = Path(__file__).parent / "configs" / f"{name}.yaml"
    if not path.exists():
        raise InputError(f"no shipped experiment named {name!r}", file=path)
    return path
