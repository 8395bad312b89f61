"""No command replaces a file it did not write (`inferqa.formats.outputs`).

For every command with an output path: a path the benchmark owns is refused with or without
--overwrite; an existing foreign file (or non-empty folder) is refused without --overwrite
and replaced with it; the command's own earlier output is replaced without it. Each refusal
is one line, exit 2, the bytes where they were and nothing else written (no temp file). Then
the same through the Python API (`Stage.run(out=...)`), and the ledger's own rules.

The demo benchmark (`inferqa build --demo`: 48 questions, SmolLM2's shipped labels) is built
once; `read` answers with a stub LLM, and `demo` runs a tiny grid instead of the shipped one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, says
from inferqa.errors import InputError
from inferqa.formats.outputs import LEDGER

TINY = "name: t\nbenchmark: {{path: {bench}}}\nsplit: test\nmax_questions: 2\nretrievers: [{{name: b, kind: bm25, " \
       "depth: 5}}]\noracles: false\n"


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> dict[str, Path]:
    """A demo benchmark with its bm25 index, two runs of it and a tiny experiment file."""
    from inferqa.label.stage import build
    from inferqa.retrieve.stage import index, oracle

    root = tmp_path_factory.mktemp("guard")
    bench = root / "bench"
    build(demo=True, out=bench)
    index(bench, retriever="bm25")
    oracle(bench, kind="optimal", out=root / "optimal.trec")
    oracle(bench, kind="retriever", out=root / "retriever.trec")
    (root / "tiny.yaml").write_text(TINY.format(bench=bench), encoding="utf-8")
    return {"root": root, "bench": bench}


# Every command with an output path (its `out` option): the command line, with {o} the path.
FILE_COMMANDS = {
    "retrieve": "retrieve {bench} -r bm25 --depth 5 --split test -o {o}",
    "oracle": "oracle {bench} --kind optimal -o {o}",
    "fuse": "fuse {root}/optimal.trec {root}/retriever.trec -o {o}",
    "rerank": "rerank {root}/retriever.trec -b {bench} -r oracle --depth 5 -o {o}",
    "read": "read optimal -b {bench} --k 1 --split test -o {o}",
    "export": "export qrels --bench {bench} -o {o}",
    "annotate export": "annotate export {bench} -o {o}",
    "explore": "explore {root}/optimal.trec --bench {bench} -o {o}",
}
FOLDER_COMMANDS = {
    "reproduce": "reproduce --example -o {o}",
    "run": "run {root}/tiny.yaml -o {o} --no-progress",
    "demo": "demo --compute -o {o} --no-progress",
}
# Their folder's own rule decides about an existing one (build: a benchmark only with
# --overwrite; finetune: a non-empty folder only with --overwrite; download: a new folder).
SELF_CHECKED = {
    "build": "build --demo -o {o}",
    "finetune": "finetune retriever --bench {bench} -o {o}",
    "download": "download quit -o {o}",
}
@pytest.fixture
def cheap(monkeypatch, ws):
    """`read` answers with a stub LLM; `demo` runs the tiny grid (its shipped one loads models)."""
    import inferqa.reading.run
    from inferqa.experiments import runner
    from inferqa.experiments.config import load_config

    monkeypatch.setattr(inferqa.reading.run, "llm_opener", lambda *a, **k: lambda spec: says("Einstein"))
    real = runner.run_experiment
    monkeypatch.setattr(runner, "run_experiment",
                        lambda config, out, **kw: real(load_config(ws["root"] / "tiny.yaml"), out, **kw))


def _argv(ws, line: str, o: Path, *extra: str) -> list[str]:
    return [*line.format(root=ws["root"], bench=ws["bench"], o=o).split(), *extra]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(monkeypatch, capsys, argv, *needles) -> str:
    code, _, err = run_cli(monkeypatch, capsys, *argv)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("inferqa: error:"), (code, err)
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _ran(monkeypatch, capsys, argv) -> None:
    code, _, err = run_cli(monkeypatch, capsys, *argv)
    assert code in (0, None), err


def test_every_command_with_an_output_is_covered():
    """A new stage with an `out` option must be added above (and so be checked)."""
    import inferqa.cli  # noqa: F401 - declares every stage
    from inferqa.stage import declared

    stages = {name: s for name, s in declared().items() if "out" in s.by_name}
    assert sorted(stages) == sorted(ALL)
    for name, stage in stages.items():
        guarded = name in FILE_COMMANDS or name in FOLDER_COMMANDS
        assert (stage.output != "self-checked folder") == guarded, name
        assert ("overwrite" in stage.by_name) == (name != "download"), name


ALL = {**FILE_COMMANDS, **FOLDER_COMMANDS, **SELF_CHECKED}


@pytest.mark.parametrize("name,overwrite", [(n, o) for o in (False, True) for n in ALL if not (o and n == "download")],
                         ids=[f"{n}-{'overwrite' if o else 'plain'}" for o in (False, True) for n in ALL
                              if not (o and n == "download")])  # download takes no --overwrite: it never replaces
def test_a_path_the_benchmark_owns_is_refused(ws, name, overwrite, monkeypatch, capsys, cheap):
    """bench/qrels.tsv (and, for a folder output, bench/indexes/new): refused, --overwrite or not."""
    bench = ws["bench"]
    before = _tree(ws["root"])
    targets = [bench / "qrels.tsv", bench / "labels.jsonl"]
    if name not in FILE_COMMANDS:
        targets.append(bench / "indexes" / "new")
    for o in targets:
        line = _refused(monkeypatch, capsys, _argv(ws, ALL[name], o, *(["--overwrite"] if overwrite else [])),
                        str(o), f"the benchmark {bench} owns this")
        assert "give --overwrite" not in line
    assert _tree(ws["root"]) == before  # nothing written: no temp file, no ledger


@pytest.mark.parametrize("name", list(FILE_COMMANDS))
def test_a_foreign_file_needs_overwrite_and_its_own_output_does_not(ws, name, tmp_path, monkeypatch, capsys,
                                                                     cheap):
    o = tmp_path / "notes.md"
    o.write_bytes(b"my notes\n")
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS[name], o), str(o), "give --overwrite")
    assert _tree(tmp_path) == {"notes.md": b"my notes\n"}

    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS[name], o, "--overwrite"))
    first = o.read_bytes()
    assert first != b"my notes\n"
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS[name], o))  # its own earlier output: no --overwrite
    first = o.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == [LEDGER, "notes.md"]  # no temp file left

    o.write_bytes(first + b"edited by hand\n")  # edited since: foreign again
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS[name], o), str(o), "give --overwrite")
    assert o.read_bytes() == first + b"edited by hand\n"


@pytest.mark.parametrize("name", list(FOLDER_COMMANDS))
def test_a_foreign_folder_needs_overwrite_and_its_own_output_does_not(ws, name, tmp_path, monkeypatch, capsys,
                                                                      cheap):
    o = tmp_path / "out"
    o.mkdir()
    (o / "notes.md").write_bytes(b"my notes\n")
    _refused(monkeypatch, capsys, _argv(ws, FOLDER_COMMANDS[name], o), str(o), "give --overwrite")
    assert _tree(tmp_path) == {"out/notes.md": b"my notes\n"}

    _ran(monkeypatch, capsys, _argv(ws, FOLDER_COMMANDS[name], o, "--overwrite"))
    assert (o / "notes.md").read_bytes() == b"my notes\n" and len(list(o.iterdir())) > 1
    _ran(monkeypatch, capsys, _argv(ws, FOLDER_COMMANDS[name], o))  # its own earlier output
    other = next(n for n in FOLDER_COMMANDS if n != name)  # another command's folder is foreign
    _refused(monkeypatch, capsys, _argv(ws, FOLDER_COMMANDS[other], o), str(o), "give --overwrite")


def test_an_output_of_another_command_is_foreign(ws, tmp_path, monkeypatch, capsys):
    o = tmp_path / "run.trec"
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], o))
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["fuse"], o), str(o), "give --overwrite")
    # `inferqa export` and `inferqa annotate export` share a stage name, not a command
    sheet = tmp_path / "sheet.csv"
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["annotate export"], sheet))
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["export"], sheet), str(sheet), "give --overwrite")


def test_self_checked_folders_keep_their_rules(ws, tmp_path, monkeypatch, capsys):
    """build: a benchmark is replaced only with --overwrite, even its own; finetune: a
    non-empty folder only with --overwrite; download: only a new folder."""
    o = tmp_path / "b"
    _ran(monkeypatch, capsys, _argv(ws, SELF_CHECKED["build"], o))
    before = _tree(o)
    _refused(monkeypatch, capsys, _argv(ws, SELF_CHECKED["build"], o), "already holds a benchmark", "--overwrite")
    assert _tree(o) == before
    model = tmp_path / "model"
    model.mkdir()
    (model / "notes.md").write_text("mine")
    _refused(monkeypatch, capsys, _argv(ws, SELF_CHECKED["finetune"], model), str(model), "give --overwrite")
    _refused(monkeypatch, capsys, _argv(ws, SELF_CHECKED["download"], model), str(model), "new folder")
    assert _tree(model) == {"notes.md": b"mine"} and not (tmp_path / LEDGER).exists()


def test_a_cache_in_a_benchmark_is_refused(ws, monkeypatch, capsys):
    """An LLM call cache is a store commands add to (none replaces it): only the benchmark's
    files are refused there."""
    qrels = ws["bench"] / "qrels.tsv"
    before = qrels.read_bytes()
    _refused(monkeypatch, capsys, ["tune-union", "--bench", ws["bench"], "--cache", qrels], "owns this file")
    assert qrels.read_bytes() == before


# -- the Python API: Stage.run(out=...) ------------------------------------------------------

def test_stage_run_refuses_as_the_command_line_does(ws, tmp_path):
    from inferqa.reproduce.stage import reproduce
    from inferqa.retrieve.stage import oracle, retrieve

    bench = ws["bench"]
    foreign = tmp_path / "notes.md"
    foreign.write_text("mine")
    with pytest.raises(InputError, match="already exists and this command did not write it; give --overwrite"):
        retrieve(bench, out=foreign, depth=5)
    with pytest.raises(InputError, match="owns this file"):
        oracle(bench, kind="optimal", out=bench / "qrels.tsv", overwrite=True)
    assert foreign.read_text() == "mine"
    oracle(bench, kind="optimal", out=foreign, overwrite=True)
    oracle(bench, kind="optimal", out=foreign)  # its own now
    folder = tmp_path / "tables"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    with pytest.raises(InputError, match="did not write it"):
        reproduce(example=True, out=folder)
    reproduce(example=True, out=folder, overwrite=True)
    assert (folder / "keep.txt").read_text() == "mine"


# -- the ledger --------------------------------------------------------------------------------

def test_the_ledger_records_the_command_and_the_bytes(ws, tmp_path, monkeypatch, capsys):
    from inferqa.formats.outputs import is_own

    o = tmp_path / "run.trec"
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], o))
    ledger = json.loads((tmp_path / LEDGER).read_text())
    assert ledger == {"run.trec": {"command": "oracle",
                                   "sha256": __import__("hashlib").sha256(o.read_bytes()).hexdigest()}}
    assert is_own(o, "oracle") and not is_own(o, "inferqa.retrieve.stage:fuse_stage")
    (tmp_path / LEDGER).write_text("{not json")  # an unreadable ledger: every file foreign
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], o), "give --overwrite")
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], tmp_path / LEDGER, "--overwrite"), "ledger")


def test_a_benchmark_reached_through_a_link_is_still_owned(ws, tmp_path, monkeypatch, capsys):
    link = tmp_path / "linked"
    link.symlink_to(ws["bench"], target_is_directory=True)
    _refused(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], link / "qrels.tsv", "--overwrite"),
             "owns this file")
    # a run written inside the benchmark folder is not the benchmark's: allowed
    inside = ws["bench"] / "runs" / "optimal.trec"
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], inside))
    _ran(monkeypatch, capsys, _argv(ws, FILE_COMMANDS["oracle"], inside))


def test_a_demo_folder_from_before_the_ledger_is_the_demos_own(ws, tmp_path, monkeypatch, capsys, cheap):
    """`make demo` over a runs/demo written by an older inferqa: told by the shipped config it holds."""
    from inferqa.experiments.config import shipped_config
    from inferqa.formats.outputs import DEMO, is_own

    o = tmp_path / "demo"
    o.mkdir()
    (o / "results.json").write_text("{}")
    (o / "config.yaml").write_bytes(shipped_config("demo").read_bytes())
    assert is_own(o, DEMO)
    (o / "config.yaml").write_bytes(shipped_config("demo").read_bytes() + b"# mine\n")
    assert not is_own(o, DEMO)
    (o / "config.yaml").write_bytes(shipped_config("ci").read_bytes())
    assert is_own(o, DEMO) and not is_own(o, "inferqa.experiments.runner:run_stage")
