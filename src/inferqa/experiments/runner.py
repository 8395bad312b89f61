"""Run an experiment grid stage by stage, each stage cached by the hash of its inputs.

Stages and what each hash covers (besides the stage's own kind and options):
  build-demo      the embedded demo file's sha256 and the build options
  index           not a stage: BENCH/indexes/<kind>-<options hash> (Retriever.default_index_dir),
                  shared with `inferqa index`, rebuilt when corpus.jsonl changed (under
                  OUT/indexes/ for a benchmark folder we may not write to)
  retrieve        benchmark fingerprint, question ids, depth
  rerank          the upstream run's stage hash, depth
  read            the upstream run's stage hash, LLM spec, strategies, ks
Evaluation and tables are recomputed every time (milliseconds); models are loaded only
when a stage that needs them is missing, so a fully cached rerun loads none.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..formats.bench_write import content_hash
from ..formats.runs import short_hash
from ..formats.benchmark import Benchmark
from ..parameters import RERANK_DEPTH, RERANK_WINDOW
from ..errors import InputError
from ..formats import Answers
from ..io import atomic_open, check_output, read_text, write_json
from ..formats import Run
from ..retrieve.diversify import GROUPING
from ..stages import Settings
from .config import ExperimentConfig, ReaderSpec, StageSpec
from .results import (OPTIMAL, ORACLE, ORACLE_RERANKER, ORACLE_RETRIEVER, PIPELINE, ExperimentResults,
                      RankingResult, ReaderResult)
from .stages import StageOutput, StageStore, stage_hash

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

    def llm_calls(self) -> int:
        return sum(getattr(getattr(m, "stats", None), "misses", 0) for m in self.llms.values())

    def llm_hits(self) -> int:
        return sum(getattr(getattr(m, "stats", None), "hits", 0) for m in self.llms.values())

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
        from ..io import sha256_file

        demo = demo_path()
        shipped = labels_path().exists()
        options = demo_build_options()  # SmolLM2's shipped labels
        if spec.path is not None:  # build the demo where the config says
            self.log(f"  building the demo benchmark into {spec.path}")
            build_benchmark(load_questions(demo), spec.path, **options)
            return Benchmark(spec.path)

        def compute(tmp: Path, _h: str) -> None:
            build_benchmark(load_questions(demo), tmp / "bench", **options)

        labels = sha256_file(labels_path()) if shipped else None
        out = self.stage("build-demo", {"demo": sha256_file(demo), "labels": labels, **DEMO_BUILD}, compute)
        return Benchmark(out.path / "bench")

    # -- ranking stages ----------------------------------------------------------------------
    def retrieve(self, spec: StageSpec) -> RankedRun:
        from .. import registry
        from ..retrieve import get_retriever, question_queries

        options = dict(spec.options)
        if "show_progress" not in options and "show_progress" in registry.options_of("retriever", spec.kind):
            options["show_progress"] = self.progress  # not part of the stage hash: it shapes no output
        retriever = get_retriever(spec.kind, **options)
        inputs = {"bench": self.fp, "qids": self.qids_hash, "kind": spec.kind, "options": spec.options,
                  "depth": spec.depth, **_diversify_input(spec)}

        def compute(tmp: Path, _h: str) -> None:
            index_dir = self.index_dir(retriever)
            if retriever.attach(self.bench, index_dir).is_indexed():
                self.store.reused.append(f"index-{index_dir.name}")
            else:
                self.log(f"  indexing {spec.name} into {index_dir}")
                retriever.index(self.bench, index_dir)
                self.store.executed.append(f"index-{index_dir.name}")
            run = retriever.search(question_queries(self.bench, self.qids), spec.depth)
            self.diversified(run, spec).to_file(tmp / RUN_FILE, tag=spec.name)

        out = self.stage(f"retrieve-{spec.name}", inputs, compute, self.metric_line)
        return self.ranked(PIPELINE, spec.name, None, out)

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

    def diversified(self, run: Run, spec: StageSpec) -> Run:
        if spec.diversify is None:
            return run
        from ..retrieve.diversify import diversify

        return diversify(run, self.bench, spec.diversify, spec.diversify_by, spec.diversify_margin,
                         spec.diversify_share)

    def reranker(self, spec: StageSpec):
        from .. import registry

        plugin = registry.get("reranker", spec.kind)
        options = plugin.settings(spec.options)
        if isinstance(options.get("llm"), str):  # one loaded LLM per spec, shared by every stage
            options["llm"] = self.llm(options["llm"])
        return plugin.create(**options)

    def rerank(self, upstream: RankedRun, spec: StageSpec, setting: str) -> RankedRun:
        inputs = {"upstream": upstream.stage.hash, "kind": spec.kind, "options": spec.options, "depth": spec.depth,
                  **_diversify_input(spec), **({"window": spec.window} if spec.window != RERANK_WINDOW.default else {})}
        name = f"rerank-{upstream.retriever}-{spec.name}"

        def compute(tmp: Path, h: str) -> None:
            partial = self.store.partial_path(name, h)
            reranker = self.reranker(spec)
            run = reranker.rerank(upstream.run, self.bench, depth=spec.depth, window=spec.window, checkpoint=partial,
                                  progress=self.progress)
            self.diversified(run, spec).to_file(tmp / RUN_FILE, tag=spec.name)
            partial.unlink(missing_ok=True)

        out = self.stage(name, inputs, compute, self.metric_line)
        return self.ranked(setting, upstream.retriever, spec.name, out)

    def oracle_rerank(self, upstream: RankedRun, depth: int) -> RankedRun:
        from ..reranking import get_reranker

        def compute(tmp: Path, _h: str) -> None:
            out = get_reranker("oracle").rerank(upstream.run, self.bench, depth=depth)
            out.to_file(tmp / RUN_FILE, tag=ORACLE)

        out = self.stage(f"rerank-{upstream.retriever}-oracle", {"upstream": upstream.stage.hash, "kind": ORACLE,
                                                               "depth": depth}, compute, self.metric_line)
        return self.ranked(ORACLE_RERANKER, upstream.retriever, ORACLE, out)

    def oracle_retrieve(self) -> RankedRun:
        from ..evaluation import oracle_retriever

        def compute(tmp: Path, _h: str) -> None:
            oracle_retriever(self.bench, self.qids, seed=self.cfg.seed).to_file(tmp / RUN_FILE, tag=ORACLE)

        out = self.stage("retrieve-oracle", {"bench": self.fp, "qids": self.qids_hash, "kind": ORACLE,
                                             "seed": self.cfg.seed}, compute)
        return self.ranked(ORACLE_RETRIEVER, ORACLE, None, out)

    def optimal(self) -> RankedRun:
        from ..evaluation import optimal

        def compute(tmp: Path, _h: str) -> None:
            optimal(self.bench, self.qids).to_file(tmp / RUN_FILE, tag=OPTIMAL)

        out = self.stage("retrieve-optimal", {"bench": self.fp, "qids": self.qids_hash, "kind": OPTIMAL},
                         compute)
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
        inputs = {"upstream": ranked.stage.hash, "llm": reader.llm, "options": reader.options,
                  "strategies": list(self.cfg.strategies), "ks": list(self.cfg.ks)}

        def compute(tmp: Path, _h: str) -> None:
            rows = read_with_llm(self.bench, ranked.run.top(max(self.cfg.ks)), self.llm(reader.llm),
                            list(self.cfg.strategies), list(self.cfg.ks), qids=self.qids, progress=self.progress,
                            **reader.options)
            Answers(rows).to_file(tmp / ROWS_FILE)
            write_json(tmp / "summary.json", summarize(rows))

        summaries: dict[Path, list[dict]] = {}

        def summary_of(out: StageOutput) -> list[dict]:
            if out.path not in summaries:
                summaries[out.path] = _read_summary(out.path)
            return summaries[out.path]

        def line(out: StageOutput) -> str:
            summary = summary_of(out)
            best = max(summary, key=lambda s: s["em"] or 0, default=None)
            return f"best EM={100 * (best['em'] or 0):.2f} ({best['strategy']}, k={best['k']})" if best else ""

        out = self.stage(f"read-{label}-{reader.name}", inputs, compute, line)
        return [ReaderResult(ranked.setting, ranked.retriever, ranked.reranker, reader.name, s["strategy"], int(s["k"]),
                             float(s["em"] or 0.0), int(s["n"]), f"read-{label}-{reader.name}-{out.hash}")
                for s in summary_of(out)]

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
        self.qids_hash = stage_hash(self.qids)
        self.log(f"  benchmark {self.bench.path} ({len(self.bench.questions)} questions; "
                 f"{len(self.qids)} from split {cfg.split!r})")

        ranked: list[RankedRun] = []
        first = [self.retrieve(spec) for spec in cfg.retrievers]
        ranked += first
        for base in first:
            ranked += [self.rerank(base, spec, PIPELINE) for spec in cfg.rerankers]
        if cfg.oracles.reranker:
            depth = max((s.depth for s in cfg.rerankers), default=RERANK_DEPTH.default)
            ranked += [self.oracle_rerank(base, depth) for base in first]
        if cfg.oracles.retriever and cfg.rerankers:
            oracle_base = self.oracle_retrieve()
            ranked += [self.rerank(oracle_base, spec, ORACLE_RETRIEVER) for spec in cfg.rerankers]
        if cfg.oracles.optimal:
            ranked.append(self.optimal())
        self.ranked_runs = ranked

        from .comparisons import add_statistics, per_question_em, per_question_metrics

        results = ExperimentResults(name=cfg.name, config=cfg.to_dict())
        ranking_scores = []
        for r in ranked:
            ev = r.evaluation
            results.ranking.append(RankingResult(r.setting, r.retriever, r.reranker, ev["mean"],
                                                 len(self.qids), r.key, hit_curve=r.hit_curve))
            ranking_scores.append(per_question_metrics(ev["per_query"], self.qids, list(ev["mean"])))
        for reader in cfg.readers:
            for r in ranked:
                results.reader += self.read(r, reader)
        for stage in dict.fromkeys(r.stage for r in results.reader):
            self.answers[stage] = stage_answers(self.store.stages_dir / stage, self.bench)
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
    # Only when set, so the hashes of stages cached before the options existed still hold.
    if spec.diversify is None:
        return {}
    by = {} if spec.diversify_by == GROUPING.default else {"diversify_by": spec.diversify_by}
    margin = {} if spec.diversify_margin is None else {"diversify_margin": spec.diversify_margin}
    share = {} if spec.diversify_share is None else {"diversify_share": spec.diversify_share}
    return {"diversify": spec.diversify, **by, **margin, **share}


def _read_summary(path: Path) -> list[dict]:
    from ..io import read_json
    return read_json(path / "summary.json")


def run_experiment(config: ExperimentConfig, out_dir: str | Path, *, progress: bool = True,
                   log: Callable[[str], None] = print, write_outputs: bool = True) -> ExperimentRun:
    """Run (or resume) the grid of `config` in `out_dir`; write results.json, tables/, report.html."""
    from .report import environment, write_report
    from .tables import write_tables

    from .preflight import check_experiment

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
                            runner.llm_calls(), len(runner.llms), llm_hits=runner.llm_hits(),
                            llm_caches=runner.llm_caches())
    if write_outputs:
        import yaml

        if config.source is not None and config.source.is_file():
            config_text = read_text(config.source)
        else:
            config_text = yaml.safe_dump(config.to_dict(), sort_keys=False)
        with atomic_open(out_dir / "config.yaml") as fh:
            fh.write(config_text)
        results.save(out_dir / "results.json")
        outcome.tables = write_tables(results, out_dir / "tables")
        outcome.report = write_report(results, out_dir / "report.html", config_text, explorer="explorer.html")
        from .explorer import experiment_explorer
        runs = {r.key: r.run for r in runner.ranked_runs}
        outcome.explorer = experiment_explorer(runner.bench, results, runs, runner.answers, runner.qids,
                                               out_dir / "explorer.html")
    return outcome


def stage_answers(stage_dir: str | Path, bench: Benchmark) -> list[dict]:
    """The reader rows a read stage wrote (read like any answers file)."""
    return Answers.from_file(Path(stage_dir) / ROWS_FILE, bench, scored=True)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_stage(s: Settings) -> ExperimentRun:
    """The entry point of `stages.experiment.RUN`: the experiment file, run (or resumed) in
    its folder (default runs/<name>)."""
    from .config import load_config

    config = load_config(s.config)
    out_dir = check_output(s.out or Path("runs") / config.name, kind="dir")
    return run_experiment(config, out_dir, progress=s.progress, log=_stderr)


def demo_stage(s: Settings) -> ExperimentRun:
    """The entry point of `stages.experiment.DEMO`: a shipped config, the LLM cache first
    seeded with the demo's shipped answers unless `compute`."""
    from ..data.shipped_demo import seed_llm_cache
    from ..llm.cache import default_cache_path
    from .config import load_config, shipped_config

    config = load_config(shipped_config(s.config))
    out_dir = check_output(s.out, kind="dir")
    if not s.compute:
        added = seed_llm_cache(default_cache_path(config.llm_cache))
        if added:
            _stderr(f"  {added} shipped SmolLM2 answers copied into the LLM cache (--compute skips this)")
    return run_experiment(config, out_dir, progress=s.progress, log=_stderr)
