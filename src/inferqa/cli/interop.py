"""`inferqa doctor`, `inferqa export`, `inferqa import-answers`, `inferqa stored-answers`:
the QUIT authors' files in and out, run checks, and answer numbers from stored answers."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import registry
from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..defaults import MIN_LABEL
from ..stage_options import READ_KS
from ..options import parse_key_values
from .app import allow_partial_opt, app
from .flags import option_flag
from .llm_options import parse_list
from .output import echo_json

@app.command("doctor")
def doctor_cmd(
    run_file: Path = typer.Argument(..., help="Run file: TREC or Rankify/DPR JSON (told apart by content)."),
    bench_dir: Path = typer.Option(..., "--bench", help="Benchmark directory the run is about."),
    split: Optional[str] = typer.Option(None, "--split", help="Split the run covers (needed for JSON runs)."),
    tie_length: int = typer.Option(10, "--tie-length", help="Report runs of at least this many equal scores."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Ids not in the corpus, missing questions, duplicates, title/id disagreements, tied scores (exit 1 on
    any; ties among the orderings of one hint set are by design and only noted)."""
    from ..evaluate.doctor import diagnose

    if tie_length < 2:
        raise InputError("--tie-length must be at least 2", field="tie-length")
    report = diagnose(run_file, Benchmark(bench_dir), split, tie_length)
    if as_json:
        echo_json(report)
    else:
        typer.echo(f"{run_file} ({report['format']}): {report['questions']} questions, {report['passages']} "
                   f"passages, longest run of tied scores {report['longest_tie']}")
        for name, c in report["checks"].items():
            mark = "ok" if not c["count"] else f"{c['count']:,}"
            typer.echo(f"  {name.replace('_', ' ')}: {mark}" + (f"  e.g. {'; '.join(c['examples'])}" if c["count"] else ""))
        notes = {"tied_orderings": "hold the orderings of one hint set (by design: the same words)",
                 "tied_same_label": "hold passages of one label (their order changes no score)"}
        for name, what in notes.items():
            c = report["info"][name]
            if c["count"]:
                typer.echo(f"  note: {c['count']:,} runs of tied scores {what}; not a problem. "
                           f"E.g. {c['examples'][0]}")
    if not report["ok"]:
        raise typer.Exit(1)


# the export flags that are options of a target (`inferqa plugins export NAME`)
EXPORT_FLAGS = {"run": "--run", "first_stage": "--first-stage", "with_text": "--no-text", "reranked": "--reranked",
                "allow_partial": "--allow-partial"}


@app.command("export")
def export_cmd(
    kind: str = typer.Argument(..., help="; ".join(f"{p.name}: {p.help}" for p in registry.plugins("export"))
                               + " (`inferqa plugins export NAME`: its options)."),
    bench_dir: Path = typer.Option(..., "--bench", help="Benchmark directory."),
    out: Path = typer.Option(..., "--out", "-o", help="File to write (atomically)."),
    run_file: Optional[Path] = typer.Option(None, "--run", help="Run to convert (rankify)."),
    split: Optional[str] = typer.Option(None, "--split", help="Split, in dataset order (rankify, retriever-jsonl); "
                                        "qrels, topics: the split's questions (default: all)."),
    no_text: bool = typer.Option(False, "--no-text", help="rankify: leave passage texts out."),
    reranked: bool = typer.Option(False, "--reranked", help="rankify: RUN is a reranker's output: write it as "
                                  "`reranked_ctxs` too, as the authors' reranker files hold it (implied by "
                                  "--first-stage, and by a Rankify RUN that has reranked_ctxs)."),
    first_stage: Optional[Path] = typer.Option(None, "--first-stage", help="rankify: the run RUN reranked, "
                                               "written as `ctxs` (default: RUN itself)."),
    allow_partial: bool = allow_partial_opt,
    opt: Optional[List[str]] = typer.Option(None, "--opt", help="Another option of the target KEY=VALUE "
                                            "(repeatable; `inferqa plugins export NAME` lists them)."),
) -> None:
    """Write the QUIT authors' file formats, or a split's TREC qrels and topics, from an inferqa benchmark."""
    from ..exports import export
    from ..io import check_output

    target = registry.get("export", kind)
    given = {"run": run_file, "first_stage": first_stage, "with_text": False if no_text else None,
             "reranked": reranked or None, "allow_partial": allow_partial or None}
    options = {k: str(v) if isinstance(v, Path) else v for k, v in given.items() if v is not None}
    for name in options:
        if name not in target.options:
            raise InputError(f"{EXPORT_FLAGS[name]} does not apply to export {kind}", field=EXPORT_FLAGS[name][2:])
    options.update(parse_key_values(opt or [], "opt"))
    target.settings(options)  # an option error before the output is checked or the benchmark read
    check_output(out)
    n = export(kind, Benchmark(bench_dir), out, split, **options)
    what = "passages" if target.meta.get("counts") == "passages" else f"questions of split {split or 'all'}"
    typer.echo(f"{out}: {n:,} {what}")


@app.command("import-answers")
def import_answers_cmd(
    retriever_jsonl: Path = typer.Argument(..., help="The authors' retriever.jsonl of one split."),
    bench_dir: Path = typer.Option(..., "--bench", help="Benchmark directory (labels.jsonl is updated)."),
    split: str = typer.Option(..., "--split", help="Split of the file (its lines are that split, in order)."),
) -> None:
    """Store the file's per-passage reader answers (`rag_answers`) in the benchmark's labels.jsonl."""
    from ..io import check_output
    from ..formats import read_retriever_jsonl
    from ..formats.authors_files import merge_reader_answers

    check_output(bench_dir / "labels.jsonl")
    bench = Benchmark(bench_dir)
    counts = merge_reader_answers(bench, read_retriever_jsonl(retriever_jsonl, bench, split))
    typer.echo(", ".join(f"{k.replace('_', ' ')}: {v:,}" for k, v in counts.items()))


@app.command("stored-answers")
def stored_answers_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory with stored answers (labels.jsonl)."),
    split: str = typer.Option("test", "--split", help="Questions: train | dev | test | all."),
    model: Optional[List[str]] = typer.Option(None, "--model", help="Model(s) whose stored answers to score "
                                              "(default: every one stored)."),
    run_file: Optional[Path] = typer.Option(None, "--run", help="Also the oracle-reranker reader over this run: "
                                            "top-k unions looked up in the stored answers (inferqa: the run's "
                                            "passages sorted by label first; paper: in the run's own order)."),
    ks: Optional[List[str]] = option_flag(READ_KS, "--k", note="of the oracle-reranker reader"),
    min_label: Optional[int] = option_flag(MIN_LABEL, "--min-label", note="for optimal EM; inferqa protocol only"),
    protocol: str = typer.Option("inferqa", "--protocol", help="inferqa | paper: the rows of the QUIT authors' "
                                 "scripts (accuracy and optimal EM over labels 1 and 2, 1, 2; both unions un_k "
                                 "and uf_k; hint contribution)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    allow_partial: bool = allow_partial_opt,
) -> None:
    """The paper's answer-level numbers without a model: optimal EM, accuracy per label, oracle reranker."""
    from ..evaluate.metrics import check_protocol
    from ..evaluate.stored import load_store, stored_models
    from ..read.stored import answer_table, paper_answer_table
    from ..rerank.oracle import oracle_rerank

    check_protocol(protocol)
    paper = protocol == "paper"
    if paper and min_label is not None:
        raise InputError("--min-label applies to the inferqa protocol (the paper's rows are labels 1 and 2, 1, 2)",
                         field="min-label")
    from ..evaluate import check_min_label

    bench = Benchmark(bench_dir)
    if min_label is not None:
        check_min_label(min_label, bench.qrels)
    qids = bench.split_qids(split)
    ranked = None
    if run_file is not None:  # read (and its ids checked) before the stored answers
        from ..formats import open_run

        run = open_run(run_file, bench, split, allow_partial=allow_partial, allow_duplicates=paper)
        ranked = run if paper else oracle_rerank(run, bench)
    store = load_store(bench, qids)
    models = parse_list(model) or stored_models(store)
    if not models:
        raise InputError(f"no stored answers for split {split!r}: labels.jsonl is missing or holds none",
                         file=bench.path / "labels.jsonl", field="reader_answers")
    cutoffs = parse_list(ks, int, flag="k") if ks else READ_KS.default
    out = {m: paper_answer_table(bench, qids, m, ranked, cutoffs, store) if paper
           else answer_table(bench, qids, m, ranked, cutoffs, store, min_label or MIN_LABEL.default) for m in models}
    payload = {"bench": str(bench_dir), "split": split, "questions": len(qids), "protocol": protocol, "models": out}
    if as_json:
        echo_json(payload)
        return
    pct = lambda d, name="": ", ".join(f"{name}{k}: {100 * v:.2f}" for k, v in d.items())  # noqa: E731
    for m, row in out.items():
        if paper:
            line = (f"{m}: accuracy {pct(row['accuracy'], 'labels ')}; optimal EM {pct(row['optimal_em'], 'labels ')}; "
                    f"hints of correct passages (oracle) {pct(row['hint_contribution']['oracle'])}")
            if "oracle_reranker_em" in row:
                line += (f"; oracle reranker EM {pct(row['oracle_reranker_em'])}; hints of correct top passages "
                         f"(run) {pct(row['hint_contribution']['run'])}")
            typer.echo(line)
            continue
        acc = ", ".join(f"label {k}: {100 * v:.2f}" for k, v in row["accuracy_per_label"].items())
        line = f"{m}: optimal EM {100 * row['optimal_em']:.2f}; accuracy {acc}"
        if "oracle_reranker_em" in row:
            line += "; oracle reranker EM " + ", ".join(f"k={k}: {100 * v:.2f}"
                                                        for k, v in row["oracle_reranker_em"].items())
        typer.echo(line)
