"""Run an experiment grid stage by stage, each stage cached by the hash of its inputs.

A grid computes what the command line computes: each index, retrieval, fusion, reranking
and oracle run is made by its stage function (`index`, `retrieve`, `fuse`, `rerank`,
`oracle`: `Stage.compute`, the values checked as on every road), written into the stage
store's temp folder; the runner adds the cache, the grid and the tables around them.

Stages and what each hash covers (besides the stage's own kind and options):
  build-demo      the embedded demo file's sha256 and the build options
  index           not a stage: BENCH/indexes/<kind>-<options hash> (Retriever.default_index_dir),
                  shared with `inferqa index`, rebuilt when corpus.jsonl changed (under
                  OUT/indexes/ for a benchmark folder we may not write to)
  retrieve        benchmark fingerprint, question ids, depth
  fuse            the fused runs' stage hashes, the fusion's options
  rerank          the upstream run's stage hash, depth
  read            the upstream run's stage hash, LLM spec, strategies, ks
Evaluation and tables are recomputed every time (milliseconds); models are loaded only
when a stage that needs them is missing, so a fully cached rerun loads none.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..diversification import GROUPING, NAMES as DIVERSIFY_KEYS
from ..errors import InputError
from ..formats import Answers, Run
from ..formats.bench_write import content_hash
from ..formats.benchmark import Benchmark
from ..formats.runs import short_hash
from ..io import atomic_open, check_output, json_hash, read_json, read_text, sha256_file, write_json
from ..parameters import RERANK_DEPTH, RERANK_REPRESENTATIVE, RERANK_WINDOW
from .config import ExperimentConfig, FusionSpec, ReaderSpec, StageSpec
from .results import (OPTIMAL, ORACLE, ORACLE_RERANKER, ORACLE_RETRIEVER, PIPELINE, ExperimentResults,
                      RankingResult, ReaderResult)
from .store import StageOutput, StageStore

RUN_FILE = "run.trec"
ROWS_FILE = "answers.jsonl"


@dataclass
class RankedRun:
    """A run the grid produced, with where it came from, parsed once and evaluated once
    (`evaluation`: `evaluate(..., per_query=True)`)."""

    setting: str
    retriever: str
    reranker: str | None
    stage: StageOutput
    run: Run = field(repr=False)
    evaluation: dict[str, Any] = field(repr=False)
    hit_curve: list[float] = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.stage.name}-{self.stage.hash}"


@dataclass
class ExperimentRun:
    """What `run_experiment` returns: results, where they were written, what was recomputed."""

    results: ExperimentResults
    out_dir: Path
    executed: list[str]
    reused: list[str]
    llm_calls: int        # backend calls (cache misses) made by this run
    llm_loads: int        # LLMs loaded by this run (0 when every LLM stage was cached)
    tables: list[Path] = field(default_factory=list)
    report: Path | None = None
    explorer: Path | None = None
    llm_hits: int = 0     # LLM answers served from the call cache instead of the backend
    llm_caches: list[Path] = field(default_factory=list)  # the call caches the loaded LLMs used

    def llm_summary(self) -> str:
        """'LLM answers: 0 computed, 240 from the cache (PATH)': where this run's answers came from."""
        where = f" ({', '.join(map(str, self.llm_caches))})" if self.llm_caches else ""
        return f"LLM answers: {self.llm_calls} computed, {self.llm_hits} from the cache{where}"

    def summary_lines(self) -> list[str]:
        """What was done and where it was written, as `inferqa run` prints it after the tables."""
        lines = []
        if self.results.tests:
            from .comparisons import CORRECTION, SIGNIFICANT, significant

            lines.append(f"paired tests: {len(self.results.tests)} in {self.out_dir / 'tables'}/tests-*.md, "
                         f"{sum(map(significant, self.results.tests))} with {CORRECTION}-corrected p < {SIGNIFICANT}")
        total = self.results.timings.get("total", 0.0)
        return [*lines, f"stages: {len(self.executed)} computed, {len(self.reused)} reused; {self.llm_summary()}; "
                f"wall time {total:.1f} s", f"tables: {self.out_dir / 'tables'}", f"report: {self.report}",
                f"explorer: {self.explorer}"]


class _Runner:
    def __init__(self, config: ExperimentConfig, out_dir: Path, progress: bool, log: Callable[[str], None]):
        self.cfg = config
        self.out = out_dir
        self.progress = progress
        self.log = log
        self.store = StageStore(out_dir)
        self.llms: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self._parsed: dict[Path, tuple] = {}  # stage folder -> its run, evaluation and hit curve
        self.answers: dict[str, list[dict]] = {}  # read stage -> its rows, read once

    # -- helpers ---------------------------------------------------------------------------
    def llm(self, spec: str) -> Any:
        """One cached LLM per spec, loaded on first need."""
        if spec not in self.llms:
            from ..llm import default_cache_path, load_llm

            self.log(f"  loading LLM {spec}")
            self.llms[spec] = load_llm(spec, cache=default_cache_path(self.cfg.llm_cache))
        return self.llms[spec]

    def llm_count(self, stat: str) -> int:
        """The loaded LLMs' `stat` summed: misses (backend calls) or hits (answers from the cache)."""
        return sum(getattr(getattr(m, "stats", None), stat, 0) for m in self.llms.values())

    def llm_caches(self) -> list[Path]:
        from ..llm.cache import CachedLLM

        return sorted({m.cache.path for m in self.llms.values() if isinstance(m, CachedLLM)})

    def stage(self, name: str, inputs: dict[str, Any], compute: Callable[[Path, str], None],
              summary: Callable[[StageOutput], str] | None = None) -> StageOutput:
        cpu0 = time.process_time()
        out = self.store.run(name, inputs, compute)
        cpu = time.process_time() - cpu0
        if not out.reused:
            self.timings[f"{name}-{out.hash}"] = round(out.seconds, 3)
            self.timings[f"{name}-{out.hash} cpu"] = round(cpu, 3)
        note = "cached" if out.reused else f"done in {out.seconds:.1f} s (cpu {cpu:.1f} s)"
        extra = f"  {summary(out)}" if summary else ""
        self.log(f"  {name:<40} {note}{extra}")
        return out

    # -- benchmark -------------------------------------------------------------------------
    def benchmark(self) -> Benchmark:
        spec = self.cfg.benchmark
        if spec.path is not None and (spec.path / "questions.jsonl").exists():
            return Benchmark(spec.path)
        if not spec.demo:
            raise InputError("benchmark directory not found", file=spec.path, field="benchmark.path")
        from ..construct import build_benchmark
        from ..data import demo_path, load_questions
        from ..data.shipped_demo import DEMO_BUILD, demo_build_options, labels_path

        demo = demo_path()
        options = demo_build_options()  # SmolLM2's shipped labels
        if spec.path is not None:  # build the demo where the config says
            self.log(f"  building the demo benchmark into {spec.path}")
            build_benchmark(load_questions(demo), spec.path, **options)
            return Benchmark(spec.path)

        def compute(tmp: Path, _h: str) -> None:
            build_benchmark(load_questions(demo), tmp / "bench", **options)

        labels = sha256_file(labels_path()) if labels_path().exists() else None
        out = self.stage("build-demo", {"demo": sha256_file(demo), "labels": labels, **DEMO_BUILD}, compute)
        return Benchmark(out.path / "bench")

    # -- ranking stages: each computed by its stage function, as the command line computes it -----
    def retrieve(self, spec: StageSpec) -> RankedRun:
        from .. import registry
        from ..retrieve import get_retriever
        from ..retrieve.stage import index, retrieve

        options = dict(spec.options)
        if "show_progress" not in options and "show_progress" in registry.options_of("retriever", spec.kind):
            options["show_progress"] = self.progress  # not part of the stage hash: it shapes no output
        inputs = {"bench": self.fp, "qids": self.qids_hash, "kind": spec.kind, "options": spec.options,
                  "depth": spec.depth, **_diversify_input(spec)}

        def compute(tmp: Path, _h: str) -> None:
            retriever = get_retriever(spec.kind, **options)  # for its index folder; the stages build their own
            index_dir = self.index_dir(retriever)
            if retriever.attach(self.bench, index_dir).is_indexed():
                self.store.reused.append(f"index-{index_dir.name}")
            else:
                self.log(f"  indexing {spec.name} into {index_dir}")
                index.stage.compute(bench=self.bench, retriever=spec.kind, options=options, index_dir=index_dir)
                self.store.executed.append(f"index-{index_dir.name}")
            retrieve.stage.compute(bench=self.bench, out=tmp / RUN_FILE, split=self.cfg.split, depth=spec.depth,
                                   retriever=spec.kind, options=options, index_dir=index_dir,
                                   **_diversify_options(spec))
            self.cut(tmp / RUN_FILE)

        out = self.stage(f"retrieve-{spec.name}", inputs, compute, self.metric_line)
        return self.ranked(PIPELINE, spec.name, None, out)

    def cut(self, path: Path) -> None:
        """The TREC run a split's stage wrote at `path`, cut to the experiment's questions (with
        `max_questions`, the split's first N): its lines for them, as they are."""
        if len(self.qids) < len(self.bench.split_qids(self.cfg.split)):
            keep = set(self.qids)
            lines = read_text(path, allow_empty=True).splitlines(keepends=True)
            with atomic_open(path) as fh:
                fh.writelines(line for line in lines if line.split(None, 1)[0] in keep)

    def index_dir(self, retriever) -> Path:
        """BENCH/indexes/<kind>-<options hash>, shared with `inferqa index`; for a benchmark we may
        not write to, a finished index there is still used, else it is built under OUT/indexes/."""
        shared = retriever.default_index_dir(self.bench)
        if retriever.attach(self.bench).is_indexed():
            return shared
        try:
            check_output(shared, kind="dir")
        except InputError:
            return self.out / "indexes" / shared.name
        return shared

    def fuse(self, spec: FusionSpec, retrieved: dict[str, RankedRun]) -> RankedRun:
        from ..retrieve.stage import fuse

        parts = [retrieved[name] for name in spec.retrievers]
        settings = {"method": spec.method, "weights": None if spec.weights is None else list(spec.weights),
                    "rrf_k": spec.rrf_k, "norm": spec.norm, "depth": spec.depth}
        inputs = {"upstream": [p.stage.hash for p in parts], "kind": "fuse", **settings}

        def compute(tmp: Path, _h: str) -> None:
            # allow_partial: a retriever may find nothing for a question; the experiment scores
            # every question anyway (one a run lacks counts 0). Runs of the same questions fuse
            # as `inferqa fuse` fuses them.
            fuse.stage.compute(runs=[p.run for p in parts], out=tmp / RUN_FILE, bench=self.bench, allow_partial=True,
                               **settings)

        out = self.stage(f"fuse-{spec.name}", inputs, compute, self.metric_line)
        return self.ranked(PIPELINE, spec.name, None, out)

    def rerank(self, upstream: RankedRun, spec: StageSpec, setting: str) -> RankedRun:
        from .. import registry

        inputs = {"kind": spec.kind, "options": spec.options, "depth": spec.depth, **_diversify_input(spec),
                  **({"window": spec.window} if spec.window != RERANK_WINDOW.default else {}),
                  **({"representative": spec.representative}
                     if spec.representative != RERANK_REPRESENTATIVE.default else {})}
        options, llm = dict(spec.options), None
        llm_option = registry.get("reranker", spec.kind).options.get("llm")
        if llm_option is not None:  # one loaded LLM per spec, shared by every stage
            llm = options.pop("llm", llm_option.default)
        return self.reranked(upstream, spec.name, setting, inputs, reranker=spec.kind, llm=llm, options=options,
                             depth=spec.depth, window=spec.window, representative=spec.representative,
                             progress=self.progress, **_diversify_options(spec))

    def oracle_rerank(self, upstream: RankedRun, depth: int) -> RankedRun:
        return self.reranked(upstream, ORACLE, ORACLE_RERANKER, {"kind": ORACLE, "depth": depth}, reranker=ORACLE,
                             depth=depth, progress=False)  # instant: no bar

    def reranked(self, upstream: RankedRun, reranker_name: str, setting: str, inputs: dict[str, Any],
                 **settings: Any) -> RankedRun:
        """The `rerank` stage on the upstream run (an `llm` spec loaded when it computes). It writes
        its output first under stages/.partial/, where its checkpoint (beside its output) outlives
        a crash: the stage's rerun resumes from it."""
        from ..reranking.stage import rerank

        name = f"rerank-{upstream.retriever}-{reranker_name}"

        def compute(tmp: Path, h: str) -> None:
            if isinstance(settings.get("llm"), str):  # loaded only now: a cached stage loads no LLM
                settings["llm"] = self.llm(settings["llm"])
            partial = self.store.partial_path(name, h, suffix=".trec")
            rerank.stage.compute(run=upstream.run, bench=self.bench, out=partial, **settings)
            os.replace(partial, tmp / RUN_FILE)

        out = self.stage(name, {"upstream": upstream.stage.hash, **inputs}, compute, self.metric_line)
        return self.ranked(setting, upstream.retriever, reranker_name, out)

    def oracle(self, kind: str) -> RankedRun:
        """The `oracle` stage's run of KIND (retriever, optimal) on the split, cut to the
        experiment's questions (each question's run depends on that question alone)."""
        from ..retrieve.stage import oracle

        def compute(tmp: Path, _h: str) -> None:
            oracle.stage.compute(bench=self.bench, kind=kind, out=tmp / RUN_FILE, split=self.cfg.split,
                                 seed=self.cfg.seed)  # optimal takes no seed: the stage passes it on to none
            self.cut(tmp / RUN_FILE)

        inputs = {"bench": self.fp, "qids": self.qids_hash}
        if kind == "retriever":
            out = self.stage("retrieve-oracle", {**inputs, "kind": ORACLE, "seed": self.cfg.seed}, compute)
            return self.ranked(ORACLE_RETRIEVER, ORACLE, None, out)
        out = self.stage("retrieve-optimal", {**inputs, "kind": OPTIMAL}, compute)
        return self.ranked(OPTIMAL, ORACLE, ORACLE, out)

    # -- evaluation and reading ------------------------------------------------------------
    def parsed(self, out: StageOutput) -> tuple[Run, dict[str, Any], list[float]]:
        """The stage's run, its per-question evaluation and its hit curve, each computed once."""
        if out.path not in self._parsed:
            from ..evaluation import DEFAULT_METRICS, evaluate

            run = Run.from_file(out.path / RUN_FILE)
            qrels = self.bench.qrels.only(self.qids)  # the experiment's questions: one the run lacks counts 0
            ev = evaluate(run, qrels, self.cfg.metrics or DEFAULT_METRICS, per_query=True)
            self._parsed[out.path] = run, ev, hit_curve(run, qrels)
        return self._parsed[out.path]

    def ranked(self, setting: str, retriever: str, reranker: str | None, out: StageOutput) -> RankedRun:
        return RankedRun(setting, retriever, reranker, out, *self.parsed(out))

    def metric_line(self, out: StageOutput) -> str:
        m = {k: float(v) for k, v in self.parsed(out)[1]["mean"].items()}
        shown = [k for k in ("hit@1", "hit@10", "mrr", "ndcg_exp@10") if k in m] or list(m)[:4]
        return " ".join(f"{k}={100 * m[k]:.2f}" for k in shown)

    def read(self, ranked: RankedRun, reader: ReaderSpec) -> list[ReaderResult]:
        from ..reading import read_with_llm, summarize

        label = ranked.retriever if ranked.reranker is None else f"{ranked.retriever}-{ranked.reranker}"
        name = f"read-{label}-{reader.name}"
        inputs = {"upstream": ranked.stage.hash, "llm": reader.llm, "options": reader.options,
                  "strategies": list(self.cfg.strategies), "ks": list(self.cfg.ks)}

        def compute(tmp: Path, _h: str) -> None:
            rows = read_with_llm(self.bench, ranked.run.top(max(self.cfg.ks)), self.llm(reader.llm),
                            list(self.cfg.strategies), list(self.cfg.ks), qids=self.qids, progress=self.progress,
                            **reader.options)
            Answers(rows).to_file(tmp / ROWS_FILE)
            write_json(tmp / "summary.json", summarize(rows))

        summary: list[dict] = []

        def line(out: StageOutput) -> str:  # `stage` calls it on every output: the summary is read once
            summary[:] = read_json(out.path / "summary.json")
            best = max(summary, key=lambda s: s["em"] or 0, default=None)
            return f"best EM={100 * (best['em'] or 0):.2f} ({best['strategy']}, k={best['k']})" if best else ""

        out = self.stage(name, inputs, compute, line)
        return [ReaderResult(ranked.setting, ranked.retriever, ranked.reranker, reader.name, s["strategy"], int(s["k"]),
                             float(s["em"] or 0.0), int(s["n"]), f"{name}-{out.hash}")
                for s in summary]

    # -- the grid ----------------------------------------------------------------------------
    def run(self) -> ExperimentResults:
        cfg = self.cfg
        t_all = time.perf_counter()
        self.log(f"experiment {cfg.name} → {self.out}")
        self.bench = self.benchmark()
        self.fp = short_hash(content_hash(self.bench.path))  # the benchmark's, as meta.json records it
        qids = self.bench.split_qids(cfg.split)
        self.qids = qids[:cfg.max_questions] if cfg.max_questions else qids
        if not self.qids:
            raise InputError(f"split {cfg.split!r} has no questions", file=self.bench.path, field="split")
        self.qids_hash = json_hash(self.qids)
        self.log(f"  benchmark {self.bench.path} ({len(self.bench.questions)} questions; "
                 f"{len(self.qids)} from split {cfg.split!r})")

        retrieved = {spec.name: self.retrieve(spec) for spec in cfg.retrievers}
        first = [*retrieved.values(), *(self.fuse(spec, retrieved) for spec in cfg.fusions)]
        ranked = list(first)
        for base in first:
            ranked += [self.rerank(base, spec, PIPELINE) for spec in cfg.rerankers]
        if cfg.oracles.reranker:
            depth = max((s.depth for s in cfg.rerankers), default=RERANK_DEPTH.default)
            ranked += [self.oracle_rerank(base, depth) for base in first]
        if cfg.oracles.retriever and cfg.rerankers:
            oracle_base = self.oracle("retriever")
            ranked += [self.rerank(oracle_base, spec, ORACLE_RETRIEVER) for spec in cfg.rerankers]
        if cfg.oracles.optimal:
            ranked.append(self.oracle("optimal"))
        self.ranked_runs = ranked

        from .comparisons import add_statistics, per_question_em, per_question_metrics

        results = ExperimentResults(cfg.name, config=cfg.to_dict(), ranking=[
            RankingResult(r.setting, r.retriever, r.reranker, r.evaluation["mean"], len(self.qids), r.key,
                          hit_curve=r.hit_curve) for r in ranked])
        ranking_scores = [per_question_metrics(r.evaluation["per_query"], self.qids, list(r.evaluation["mean"]))
                          for r in ranked]
        for reader in cfg.readers:
            for r in ranked:
                results.reader += self.read(r, reader)
        for stage in dict.fromkeys(r.stage for r in results.reader):  # the reader rows, read like any answers file
            self.answers[stage] = Answers.from_file(self.store.stages_dir / stage / ROWS_FILE, self.bench, scored=True)
        em = {stage: per_question_em(rows, self.qids) for stage, rows in self.answers.items()}
        results = add_statistics(results, ranking_scores, [em[r.stage][(r.strategy, r.k)] for r in results.reader],
                                 seed=cfg.seed)
        self.timings["total"] = round(time.perf_counter() - t_all, 3)
        results.timings = dict(self.timings)
        return results


HIT_CURVE_DEPTH = 100


def hit_curve(run: Run, qrels) -> list[float]:
    """hit@k for every k from 1 to the run's depth (at most HIT_CURVE_DEPTH)."""
    from ..evaluation import evaluate

    depth = min(HIT_CURVE_DEPTH, max((len(r) for r in run.values()), default=0))
    return list(evaluate(run, qrels, [f"hit@{k}" for k in range(1, depth + 1)]).values()) if depth else []


def _diversify_input(spec: StageSpec) -> dict[str, Any]:
    """`_diversify_options` as a stage hash's input: only the options set (the grouping only when
    not the default), so the hashes of stages cached before the options existed still hold."""
    return {key: value for key, value in _diversify_options(spec).items()
            if value is not None and not (key == "diversify_by" and value == GROUPING.default)}


def _diversify_options(spec: StageSpec) -> dict[str, Any]:
    """The stage's diversify options as `inferqa retrieve` and `rerank` take them (None: not given)."""
    return {} if spec.diversify is None else {key: getattr(spec, key) for key in DIVERSIFY_KEYS}


def run_experiment(config: ExperimentConfig, out_dir: str | Path, *, progress: bool = True,
                   log: Callable[[str], None] = print, write_outputs: bool = True) -> ExperimentRun:
    """Run (or resume) the grid of `config` in `out_dir`; write results.json, tables/, report.html."""
    from .explorer import experiment_explorer
    from .preflight import check_experiment
    from .report import environment, write_report
    from .tables import write_tables

    out_dir = Path(out_dir)
    check_experiment(config, out_dir)  # everything the config names, before the folder exists
    out_dir.mkdir(parents=True, exist_ok=True)
    runner = _Runner(config, out_dir, progress, log)
    try:
        results = runner.run()
    finally:
        for m in runner.llms.values():
            close = getattr(m, "close", None)
            if close:
                close()
    results.environment = environment()
    outcome = ExperimentRun(results, out_dir, list(runner.store.executed), list(runner.store.reused),
                            runner.llm_count("misses"), len(runner.llms), llm_hits=runner.llm_count("hits"),
                            llm_caches=runner.llm_caches())
    if write_outputs:
        import yaml

        from_file = config.source is not None and config.source.is_file()
        config_text = read_text(config.source) if from_file else yaml.safe_dump(config.to_dict(), sort_keys=False)
        with atomic_open(out_dir / "config.yaml") as fh:
            fh.write(config_text)
        results.save(out_dir / "results.json")
        outcome.tables = write_tables(results, out_dir / "tables")
        outcome.report = write_report(results, out_dir / "report.html", config_text, explorer="explorer.html")
        runs = {r.key: r.run for r in runner.ranked_runs}
        outcome.explorer = experiment_explorer(runner.bench, results, runs, runner.answers, runner.qids,
                                               out_dir / "explorer.html")
    return outcome
