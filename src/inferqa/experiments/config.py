"""The experiment file: one YAML naming the benchmark, the stages and the grid to run.

```yaml
name: demo
benchmark: {demo: true}            # or {path: runs/my-bench}
split: test
max_questions: 8                   # optional: the first N questions of the split
retrievers:
  - {name: bm25, kind: bm25, depth: 100}
  - {name: minilm, kind: dense, options: {model: minilm}}
  - {name: clue-div1, kind: clue, diversify: 1}   # at most 1 passage per hint-group in the head
  - {name: clue-q1, kind: clue, diversify: 1, diversify_by: linked}   # … per linked hint family
  - {name: clue-gate, kind: clue, diversify: 1, diversify_by: linked, diversify_margin: 0.02}  # uncertain heads
  - {name: clue-share, kind: clue, diversify: 1, diversify_by: linked, diversify_share: 0.35}  # the least certain 35 %
rerankers:
  - {name: smollm2-yesno, kind: llm-pointwise, depth: 10, options: {llm: smollm2}}
readers:
  - {name: smollm2, llm: smollm2}
strategies: [union_norm, union_freq]
ks: [1, 3, 5]
oracles: {retriever: true, reranker: true, optimal: true}
```

Two fields are paths, and a relative one is resolved against the YAML file's folder:
`benchmark.path` and `llm_cache`. Values inside a stage's `options` (a model folder, say)
are passed on as written, so a relative one is relative to the working directory. Stage
kinds, strategies and their `options` are checked against the plugin registry (`inferqa
plugins`) when the file is read; a reader's options go to the context strategies that
declare them (alpha, beta).
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..stages.rerank import RERANK_DEPTH
from ..errors import InputError
from ..formats.oracles import ORACLE_SEED
from ..io import read_yaml
from ..registry import REQUIRED, Option
from ..retrieve.diversify import GROUPING, NAMES as DIVERSIFY_KEYS, check_diversify
from ..stage_options import READ_KS, READ_STRATEGIES
from ..stages.retrieve import RETRIEVE
from ..text import did_you_mean

_POSITIVE = Option("value", int, REQUIRED, min=1)
_BOOL = Option("value", bool, REQUIRED)
_SEED = replace(ORACLE_SEED, help="seed of the oracle retriever's shuffle and the paired tests")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
DEFAULT_STRATEGIES = tuple(READ_STRATEGIES.default)


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
    readers: tuple[ReaderSpec, ...] = ()
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    ks: tuple[int, ...] = tuple(READ_KS.default)
    oracles: OracleSpec = OracleSpec()
    metrics: tuple[str, ...] | None = None  # None: inferqa.evaluate.DEFAULT_METRICS
    max_questions: int | None = None
    seed: int = _SEED.default
    llm_cache: Path | None = None  # None: the shared default (inferqa.llm.default_cache_path)
    source: Path | None = None     # the YAML file it came from

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        return _plain(d)


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    return obj


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

    def declared(self, obj: Any, opt: Option, field: str, record: object = None) -> Any:
        """`obj` as the registry Option `opt` checks it (type, range), or an error at `field`."""
        try:
            if isinstance(obj, str) and str not in opt.types:  # YAML values come typed: text is a type error
                raise InputError("text")
            return opt.check(obj, field)
        except InputError:
            raise self.fail(f"expected {opt.accepts()}, got {obj!r}", field, record) from None

    def positive_int(self, obj: Any, field: str, record: object = None) -> int:
        return self.declared(obj, _POSITIVE, field, record)

    def boolean(self, obj: Any, field: str) -> bool:
        return self.declared(obj, _BOOL, field)

    def options(self, obj: Any, field: str, record: object = None) -> dict:
        if obj is None:
            return {}
        if not isinstance(obj, dict) or not all(isinstance(k, str) for k in obj):
            raise self.fail("expected a mapping of option names to values", field, record)
        return dict(obj)

    def listing(self, obj: Any, field: str) -> list:
        if obj is None:
            return []
        if not isinstance(obj, list):
            raise self.fail(f"expected a list, got {type(obj).__name__}", field)
        return obj


def _checked(c: _Checker, field: str, record: object, check) -> Any:
    """A registry check whose InputError gets this file and field."""
    try:
        return check()
    except InputError as exc:
        raise c.fail(exc.message, field, record) from None


def _stages(c: _Checker, raw: Any, field: str, depth_option: Option, plugin_kind: str) -> tuple[StageSpec, ...]:
    from .. import registry

    out, seen = [], set()
    for i, item in enumerate(c.listing(raw, field)):
        item = c.mapping(item, field, {"name", "kind", "depth", "options", *DIVERSIFY_KEYS}, record=i)
        if "kind" not in item:
            raise c.fail("missing 'kind'", f"{field}[{i}].kind", record=i)
        kind = c.string(item["kind"], f"{field}[{i}].kind", record=i)
        name = c.name(item.get("name", kind), f"{field}[{i}].name", record=i)
        if name in seen:
            raise c.fail(f"duplicate name {name!r}", f"{field}[{i}].name", record=i)
        seen.add(name)
        depth = c.declared(item.get("depth", depth_option.default), depth_option, f"{field}[{i}].depth", record=i)
        options = c.options(item.get("options"), f"{field}[{i}].options", i)
        plugin = _checked(c, f"{field}[{i}].kind", i, lambda: registry.get(plugin_kind, kind))
        _checked(c, f"{field}[{i}].options", i, lambda: plugin.settings(options))
        try:
            div, by, margin, share = check_diversify(*(item.get(key) for key in DIVERSIFY_KEYS))
        except InputError as exc:
            raise c.fail(exc.message, f"{field}[{i}].{exc.field}", record=i) from None
        out.append(StageSpec(name, kind, depth, options, div, by, margin, share))
    return tuple(out)


def _readers(c: _Checker, raw: Any) -> tuple[ReaderSpec, ...]:
    out, seen = [], set()
    for i, item in enumerate(c.listing(raw, "readers")):
        if isinstance(item, str):
            item = {"llm": item}
        item = c.mapping(item, "readers", {"name", "llm", "options"}, record=i)
        if "llm" not in item:
            raise c.fail("missing 'llm' (an LLM spec such as smollm2 or llama-cpp:PATH)", f"readers[{i}].llm", i)
        llm = c.string(item["llm"], f"readers[{i}].llm", i)
        name = c.name(item.get("name", re.sub(r"[^A-Za-z0-9_.+-]", "-", llm)), f"readers[{i}].name", i)
        if name in seen:
            raise c.fail(f"duplicate name {name!r}", f"readers[{i}].name", i)
        seen.add(name)
        out.append(ReaderSpec(name, llm, c.options(item.get("options"), f"readers[{i}].options", i)))
    return tuple(out)


def config_from_dict(raw: Any, *, file: str | os.PathLike | None = None) -> ExperimentConfig:
    """Validate a parsed YAML document; every error names the file and the field."""
    path = Path(file) if file is not None else None
    base = path.parent if path is not None else Path.cwd()
    c = _Checker(path)
    raw = c.mapping(raw, "(top level)", {
        "name", "benchmark", "split", "max_questions", "retrievers", "rerankers", "readers",
        "strategies", "ks", "oracles", "metrics", "seed", "llm_cache"})

    for key in ("name", "benchmark", "retrievers"):
        if key not in raw:
            raise c.fail(f"missing required key '{key}'", key)
    name = c.name(raw["name"], "name")

    bench_raw = raw["benchmark"]
    if isinstance(bench_raw, str):
        bench_raw = {"demo": True} if bench_raw == "demo" else {"path": bench_raw}
    bench_raw = c.mapping(bench_raw, "benchmark", {"path", "demo"})
    demo = c.boolean(bench_raw.get("demo", False), "benchmark.demo")
    bpath = bench_raw.get("path")
    if bpath is not None:
        bpath = Path(c.string(bpath, "benchmark.path")).expanduser()
        bpath = bpath if bpath.is_absolute() else (base / bpath)
    if not demo and bpath is None:
        raise c.fail("give a benchmark 'path' or 'demo: true'", "benchmark")
    benchmark = BenchmarkSpec(path=bpath, demo=demo)

    retrievers = _stages(c, raw["retrievers"], "retrievers", depth_option=RETRIEVE.option("depth"), plugin_kind="retriever")
    if not retrievers:
        raise c.fail("at least one retriever is needed", "retrievers")
    rerankers = _stages(c, raw.get("rerankers"), "rerankers", depth_option=RERANK_DEPTH, plugin_kind="reranker")
    taken = {s.name for s in retrievers}
    for i, s in enumerate(rerankers):
        if s.name in taken:
            raise c.fail(f"name {s.name!r} is already a retriever's", f"rerankers[{i}].name", i)
    readers = _readers(c, raw.get("readers"))

    from ..read.context import strategies as context_strategies, strategy_plugin

    strategies = tuple(c.listing(raw.get("strategies", list(DEFAULT_STRATEGIES)), "strategies"))
    for i, s in enumerate(strategies):
        _checked(c, f"strategies[{i}]", None, lambda: strategy_plugin(c.string(s, f"strategies[{i}]")))
    for i, reader in enumerate(readers):
        _checked(c, f"readers[{i}].options", i, lambda: context_strategies(strategies, reader.options))
    ks = tuple(c.positive_int(k, f"ks[{i}]") for i, k in enumerate(c.listing(raw.get("ks", READ_KS.default), "ks")))
    if readers and (not strategies or not ks):
        raise c.fail("readers need at least one strategy and one k", "strategies" if not strategies else "ks")

    oracles_raw = raw.get("oracles", {})
    if isinstance(oracles_raw, bool):
        oracles_raw = {"retriever": oracles_raw, "reranker": oracles_raw, "optimal": oracles_raw}
    oracles_raw = c.mapping(oracles_raw, "oracles", {"retriever", "reranker", "optimal"})
    oracles = OracleSpec(**{k: c.boolean(v, f"oracles.{k}") for k, v in oracles_raw.items()})

    metrics = raw.get("metrics")
    if metrics is not None:
        metrics = tuple(c.string(m, f"metrics[{i}]") for i, m in enumerate(c.listing(metrics, "metrics")))
        from ..evaluate import parse_metric
        for i, m in enumerate(metrics):
            try:
                parse_metric(m)
            except InputError as exc:
                raise c.fail(exc.message, f"metrics[{i}]") from None

    maxq = raw.get("max_questions")
    maxq = None if maxq is None else c.positive_int(maxq, "max_questions")
    seed = c.declared(raw.get("seed", _SEED.default), _SEED, "seed")
    split = c.string(raw.get("split", "test"), "split")
    cache = raw.get("llm_cache")
    if cache is not None:
        cache = Path(c.string(cache, "llm_cache")).expanduser()
        cache = cache if cache.is_absolute() else base / cache

    return ExperimentConfig(
        name=name, benchmark=benchmark, split=split, retrievers=retrievers, rerankers=rerankers,
        readers=readers, strategies=strategies, ks=ks, oracles=oracles, metrics=metrics,
        max_questions=maxq, seed=seed, llm_cache=cache, source=path)


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """The experiment file at `path`, checked (one line naming the file and key when it is not)."""
    path = Path(path)
    return config_from_dict(read_yaml(path), file=path)


def shipped_config(name: str) -> Path:
    """A config that ships with the package: `demo` or `ci`."""
    path = Path(__file__).parent / "configs" / f"{name}.yaml"
    if not path.exists():
        raise InputError(f"no shipped experiment named {name!r}", file=path)
    return path
