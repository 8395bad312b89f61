"""`inferqa read`, `evaluate-answers`, `import-answers` and `stored-answers`: reader answers
written by an LLM, scored, and brought in from (then scored as) the QUIT authors' stored ones."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ..defaults import MIN_LABEL
from ..errors import InputError
from ..parameters import (ALLOW_PARTIAL, BACKEND, BENCH_FLAG, CACHE, JUDGE_SAMPLES, JUDGE_TEMPERATURE, LLM_URLS,
                          NUM_ACTORS, OVERWRITE, PROTOCOL, RAY_ADDRESS, READ_KS, READ_STRATEGIES, READER_LLM_FLAG, RETRIEVE_SPLIT, RUN_HELP,
                          UNION_ALPHA, UNION_BETA, USE_CACHE)
from ..stage import Opt, stage

if TYPE_CHECKING:
    from ..formats import Answers, Benchmark

_ALPHA, _BETA = (replace(o, help=f"union_freq: {o.help}") for o in (UNION_ALPHA, UNION_BETA))


@dataclass
class Reading:
    """What `read` did: the rows it wrote, and its LLM call cache's hits and misses (None: no cache)."""

    rows: list[dict[str, Any]]
    cache: Any


@stage("read")
def read(run: Annotated["str | Path", Opt(RUN_HELP, metavar="RUN")], *,
         bench: Annotated[Path, BENCH_FLAG],
         llm: Annotated[str, READER_LLM_FLAG] = READER_LLM_FLAG.default,
         strategies: Annotated[list[str], replace(READ_STRATEGIES, flags=("--strategy", "-s"))] = READ_STRATEGIES.default,
         ks: Annotated[list[int], replace(READ_KS, flags=("--k",))] = READ_KS.default,
         out: Annotated[Path, Opt("ANSWERS.jsonl to write (atomically)", flags=("--out", "-o"))],
         split: Annotated["str | None", Opt("only questions of this split (default: all in the run)")] = None,
         alpha: Annotated[float, _ALPHA] = UNION_ALPHA.default,
         beta: Annotated[float, _BETA] = UNION_BETA.default,
         cache: Annotated["Path | None", CACHE] = None,
         use_cache: Annotated[bool, USE_CACHE] = USE_CACHE.default,
         backend: Annotated[str, BACKEND] = BACKEND.default,
         ray_address: Annotated["str | None", RAY_ADDRESS] = None,
         num_actors: Annotated[int, NUM_ACTORS] = NUM_ACTORS.default,
         llm_url: Annotated["list[str] | None", LLM_URLS] = None,
         allow_partial: Annotated[bool, ALLOW_PARTIAL] = False,
         overwrite: Annotated[bool, OVERWRITE] = False) -> Reading:
    """Answer each question from the top-k passages of RUN; write one row per question, strategy and k."""
    from ..formats import Answers
    from ..io import check_output
    from .context import strategy_plugin
    from .run import check_read_options, open_run_and_llm, read_with_llm

    check_output(out)
    # alpha and beta go to the chosen strategies that take them (union_freq); a value other than
    # the default that none of them takes is passed on too, to be refused as a slip
    taken = {o for name in strategies for o in strategy_plugin(name).options}
    context = {opt.name: value for opt, value in ((UNION_ALPHA, alpha), (UNION_BETA, beta))
               if opt.name in taken or value != opt.default}
    bench, ranked, model = open_run_and_llm(bench, run, split, allow_partial, llm,
                                            lambda: check_read_options(strategies, ks, **context), cache=cache,
                                            use_cache=use_cache, backend=backend, ray_address=ray_address,
                                            num_actors=num_actors, llm_urls=llm_url)
    with model:
        rows = _marked(read_with_llm(bench, ranked, model, strategies, ks, qids=ranked.qids, **context), bench)
    Answers(rows).to_file(out)
    return Reading(rows, getattr(model, "stats", None))


def _marked(rows: list[dict[str, Any]], bench: "Benchmark") -> list[dict[str, Any]]:
    """The rows recording what they were read against: the benchmark's content hash (its
    short form, as a run's tag carries it) in BENCH_HASH_FIELD."""
    from ..formats.runs import BENCH_HASH_FIELD, short_hash

    content_hash = bench.meta.get("content_hash") if isinstance(bench.meta, dict) else None
    return [{**r, BENCH_HASH_FIELD: short_hash(content_hash)} for r in rows] if content_hash else rows


@stage("evaluate-answers")
def evaluate_answers(answers: Annotated[Path, Opt("ANSWERS.jsonl written by `inferqa read`, or an authors' reader "
                                                  "output (Rankify JSON with predicted_answer)", metavar="ANSWERS")],
                     *,
                     bench: Annotated["Path | Benchmark | None", Opt("re-score against this benchmark's gold answers "
                                                                     "(default: the rows' golds)",
                                                                     flags=("--bench", "-b"))] = None,
                     split: Annotated["str | None", Opt("only the rows of this split's questions (needs --bench)")]
                     = None,
                     judge: Annotated["str | None", Opt("LLM spec of an answer-equivalence judge (GPT-Eval style)")]
                     = None,
                     judge_samples: Annotated[int, JUDGE_SAMPLES] = JUDGE_SAMPLES.default,
                     judge_temperature: Annotated[float, JUDGE_TEMPERATURE] = JUDGE_TEMPERATURE.default,
                     cache: Annotated["Path | None", CACHE] = None,
                     protocol: Annotated[str, replace(PROTOCOL, help="inferqa: normalised EM | paper: the QUIT authors' "
                                                      "answer cleaning, then exact case-sensitive EM "
                                                      "(inferqa.evaluation.exact_match)")] = PROTOCOL.default) -> tuple[Answers, tuple[str, ...]]:
    """Print EM, F1 and contains (and the LLM judge's accuracy) per strategy and k."""
    # returns (the rows, of `split` only with a benchmark, scored by `score_answers`; the metric names set)
    from ..evaluation.metrics import check_protocol
    from ..formats import Answers
    from ..formats.coerce import as_benchmark
    from ..formats.runs import BENCH_HASH_FIELD, warn_if_benchmark_changed_since
    from ..io import check_output
    from ..llm import DEFAULT_CACHE
    from ..scale import load_scaled_llm
    from .answer_scoring import score_answers

    check_protocol(protocol)
    bench = None if bench is None else as_benchmark(bench)
    if judge and bench is None:
        raise InputError("--judge needs --bench (the judge reads the question)", field="judge")
    if split is not None and bench is None:
        raise InputError("split needs a benchmark (--bench DIR): its splits name the questions", field="split")
    rows = Answers.from_file(answers, bench)
    if bench is not None:
        warn_if_benchmark_changed_since(rows[0].get(BENCH_HASH_FIELD), answers, bench)
    if split is not None:
        wanted = set(bench.split_qids(split))
        rows = Answers([r for r in rows if r["qid"] in wanted])
        if not rows:
            raise InputError(f"no row of split {split!r}", file=answers, field="split")
    if cache is not None:
        check_output(cache)
    opened = load_scaled_llm(judge, cache=DEFAULT_CACHE if cache is None else cache) if judge else nullcontext()
    with opened as model:  # a judge LLM, or None
        metrics = score_answers(rows, model, judge_samples=judge_samples, judge_temperature=judge_temperature,
                                protocol=protocol)
    return rows, metrics


@stage("import-answers")
def import_answers(retriever_jsonl: Annotated[Path, Opt("the authors' retriever.jsonl of one split",
                                                        metavar="RETRIEVER_JSONL")], *,
                   bench: Annotated[Path, Opt("benchmark directory (labels.jsonl is updated)", flags=("--bench",))],
                   split: Annotated[str, Opt("split of the file (its lines are that split, in order)")]
                   ) -> dict[str, int]:
    """Store the file's per-passage reader answers (`rag_answers`) in the benchmark's labels.jsonl."""
    from ..formats.answers import read_retriever_jsonl
    from ..formats.authors_files import merge_reader_answers
    from ..formats.benchmark import Benchmark
    from ..io import check_output

    check_output(bench / "labels.jsonl")
    opened = Benchmark(bench)
    return merge_reader_answers(opened, read_retriever_jsonl(retriever_jsonl, opened, split))


@stage("stored-answers")
def stored_answers(bench: Annotated[Path, Opt("benchmark directory with stored answers (labels.jsonl)",
                                              metavar="BENCH_DIR")], *,
                   split: Annotated[str, replace(RETRIEVE_SPLIT, help="questions: train | dev | test | all")]
                   = RETRIEVE_SPLIT.default,
                   models: Annotated["list[str] | None", Opt("model(s) whose stored answers to score (default: every "
                                                             "one stored)", flags=("--model",))] = None,
                   run: Annotated["Path | None", Opt("also the oracle-reranker reader over this run: top-k unions "
                                                     "looked up in the stored answers (inferqa: the run's passages "
                                                     "sorted by label first; paper: in the run's own order)")] = None,
                   ks: Annotated[list[int], replace(READ_KS, help=f"{READ_KS.help} of the oracle-reranker reader",
                                                    flags=("--k",))] = READ_KS.default,
                   min_label: Annotated[int, Opt(f"{MIN_LABEL.help} for optimal EM; inferqa protocol only", min=1)]
                   = MIN_LABEL.default,
                   protocol: Annotated[str, replace(PROTOCOL, help="inferqa | paper: the rows of the QUIT authors' "
                                                    "scripts (accuracy and optimal EM over labels 1 and 2, 1, 2; both "
                                                    "unions un_k and uf_k; hint contribution)")] = PROTOCOL.default,
                   as_json: Annotated[bool, Opt("print JSON", flags=("--json",))] = False,
                   allow_partial: Annotated[bool, ALLOW_PARTIAL] = False) -> dict[str, Any]:
    """The paper's answer-level numbers without a model: optimal EM, accuracy per label, oracle reranker."""
    # returns each model's answer table: `oracle_reader.answer_table`, or `paper_answer_table` (paper protocol)
    from ..evaluation import check_min_label
    from ..evaluation.metrics import check_protocol
    from ..evaluation.stored_metrics import load_store, stored_models
    from ..formats import open_run
    from ..formats.benchmark import Benchmark
    from ..reranking.oracle import oracle_rerank
    from .oracle_reader import answer_table, paper_answer_table

    check_protocol(protocol)
    paper = protocol == "paper"
    min_label_given = min_label != MIN_LABEL.default
    if paper and min_label_given:
        raise InputError("--min-label applies to the inferqa protocol (the paper's rows are labels 1 and 2, 1, 2)",
                         field="min-label")
    opened = Benchmark(bench)
    if min_label_given:
        check_min_label(min_label, opened.qrels)
    qids = opened.split_qids(split)
    ranked = None
    if run is not None:  # read (and its ids checked) before the stored answers; the oracle reranker's order
        ranked = open_run(run, opened, split, allow_partial=allow_partial, allow_duplicates=paper)
        ranked = ranked if paper else oracle_rerank(ranked, opened)
    store = load_store(opened, qids)
    models = models or stored_models(store)
    if not models:
        raise InputError(f"no stored answers for split {split!r}: labels.jsonl is missing or holds none",
                         file=opened.path / "labels.jsonl", field="reader_answers")
    tables = {m: paper_answer_table(opened, qids, m, ranked, ks, store) if paper
              else answer_table(opened, qids, m, ranked, ks, store, min_label) for m in models}
    return {"bench": str(bench), "split": split, "questions": len(qids), "protocol": protocol, "models": tables}
