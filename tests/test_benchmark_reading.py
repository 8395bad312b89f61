"""Reading a benchmark never writes: it opens from a read-only folder, a reader racing a live
writer reads the old benchmark or the new one (never a mix), and a write a killed process left
half done is read as it commits, changed by no reader, and finished by the next writer."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inferqa.formats.bench_write import JOURNAL, KILL_AT_ENV, BenchmarkWrite
from inferqa.formats.benchmark import Benchmark
from inferqa.formats.labels import LabelRow, Labels
from inferqa.formats.qrels import Qrels

# Writes label set A or B into a benchmark through the benchmark write transaction: once
# (`once A`), or alternately until the file `stop` appears (`loop`), printing how many commits.
WRITER = """
import shutil, sys
from pathlib import Path
from inferqa.formats.bench_write import BenchmarkWrite
from inferqa.formats.benchmark import Benchmark

bench, sets, how = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

def write(which):
    meta = dict(Benchmark(bench).meta)
    with BenchmarkWrite(bench) as w:
        shutil.copyfile(sets / f"{which}.labels.jsonl", w.path("labels.jsonl"))
        shutil.copyfile(sets / f"{which}.qrels.tsv", w.path("qrels.tsv"))
        w.commit(meta)

if how == "once":
    write(sys.argv[4])
else:
    n = 0
    while not (sets / "stop").exists():
        write("AB"[n % 2])
        n += 1
        if n == 1:
            print("started", flush=True)
    print(n, flush=True)
"""


def env() -> dict:
    src = str(Path(__file__).parents[1] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


@pytest.fixture
def setup(bench_factory, tmp_path):
    """(benchmark folder holding label set A, folder of the sets and the writer script, A, B):
    B turns every label of A the other way (1 <-> 2), in qrels.tsv and labels.jsonl alike."""
    bench = bench_factory(3, root=tmp_path, name="bench")
    sets = tmp_path / "sets"
    sets.mkdir()
    (sets / "writer.py").write_text(WRITER)
    expected = {}
    for which, flip in (("A", False), ("B", True)):
        qrels = Qrels({q: {p: (3 - lab if flip else lab) if lab else 0 for p, lab in docs.items()}
                       for q, docs in bench.qrels.items()})
        rows = Labels(LabelRow(pid=p, qid=q, label=lab, answers={}, correct={})
                      for q, docs in qrels.items() for p, lab in docs.items() if lab)
        qrels.to_file(sets / f"{which}.qrels.tsv")
        rows.to_file(sets / f"{which}.labels.jsonl")
        expected[which] = (qrels, {r.pid: r.label for r in rows})
    assert expected["A"] != expected["B"] and expected["A"][1]
    assert write(bench.path, sets, "A") == 0 and read(bench.path) == expected["A"]
    return bench.path, sets, expected["A"], expected["B"]


def write(bench: Path, sets: Path, which: str, **extra_env) -> int:
    return subprocess.run([sys.executable, str(sets / "writer.py"), str(bench), str(sets), "once", which],
                          env={**env(), **extra_env}, stderr=subprocess.PIPE).returncode


def read(bench: Path, pause: float = 0.0) -> tuple:
    """(qrels, pid -> label of labels.jsonl) as one reader of the benchmark reads them."""
    b = Benchmark(bench)
    qrels = b.qrels
    time.sleep(pause)  # a writer may commit meanwhile: this reader still reads what it opened
    return qrels, {r.pid: r.label for r in Labels.of(b)}


def folder_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        h.update(f"{p.relative_to(folder)}\0{st.st_mode}\0{st.st_ino}\0{st.st_mtime_ns}\n".encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def permissions_bind(folder: Path) -> bool:
    """Whether writing into the read-only `folder` fails (root with CAP_DAC_OVERRIDE writes anyway)."""
    try:
        (folder / "probe").touch()
    except PermissionError:
        return True
    (folder / "probe").unlink()
    return False


def test_a_read_only_benchmark_opens_and_evaluates(setup):
    import inferqa
    from inferqa.formats.oracles import optimal

    bench, sets, a, b = setup
    assert write(bench, sets, "B", **{KILL_AT_ENV: "5"}) == -9  # killed right after writing its journal
    assert (bench / JOURNAL).exists()
    folders = [bench, *(p for p in bench.rglob("*") if p.is_dir())]
    for p in [*bench.rglob("*"), bench]:
        p.chmod(p.stat().st_mode & ~0o222)
    try:
        if os.geteuid() == 0 and not permissions_bind(bench):
            pytest.skip("root writes whatever the permissions say")
        assert read(bench) == b  # the pending commit, read as it commits
        opened = Benchmark(bench)
        scores = inferqa.evaluate(optimal(opened, list(opened.questions)), bench, ["RR", "hit@10"])
        assert scores["RR"] == 1.0 and inferqa.evaluate(optimal(opened, list(opened.questions)), opened.qrels,
                                                        ["RR"])["RR"] == 1.0
    finally:
        for p in folders:
            p.chmod(p.stat().st_mode | 0o200)


def test_a_reader_racing_a_live_writer_reads_the_old_or_the_new_benchmark(setup):
    bench, sets, a, b = setup
    writer = subprocess.Popen([sys.executable, str(sets / "writer.py"), str(bench), str(sets), "loop"],
                              env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "started"
        seen = []
        for i in range(50):
            got = read(bench, pause=0.002 * (i % 3))
            assert got in (a, b), f"read {i} is a mix of the two label sets"
            seen.append("A" if got == a else "B")
    finally:
        (sets / "stop").touch()
        out, err = writer.communicate(timeout=60)
    assert writer.returncode == 0, err
    assert int(out.split()[-1]) > 5  # the writer committed all the while


def test_a_pending_write_is_read_as_it_commits_changes_nothing_and_the_next_writer_finishes_it(setup):
    bench, sets, a, b = setup
    pending = 0
    for step in range(1, 30):  # the write killed at each of its steps in turn, then left to finish
        code = write(bench, sets, "B", **{KILL_AT_ENV: str(step)})
        before = folder_hash(bench)
        has_journal = (bench / JOURNAL).exists()
        got = read(bench)
        assert got == b if has_journal or code == 0 else got in (a, b)
        assert folder_hash(bench) == before  # opening and reading wrote nothing, replayed nothing
        pending += has_journal
        with BenchmarkWrite(bench):  # the next writer finishes (or sweeps) what the killed one left
            pass
        assert not [p.name for p in bench.iterdir() if p.name.startswith(".")]
        assert read(bench) == got  # what the reader read before is what the commit left
        assert (bench / "qrels.tsv").read_bytes() == (sets / f"{'AB'[got == b]}.qrels.tsv").read_bytes()
        if code == 0:
            break
        assert code == -9
        assert write(bench, sets, "A") == 0
    assert pending >= 3 and code == 0


def test_the_one_qrels_reader_names_a_bad_line_wherever_qrels_are_read(setup, tmp_path):
    from inferqa.errors import InputError
    from inferqa.formats.bench_write import label_counts

    bad = tmp_path / "bad.tsv"
    bad.write_text("q1 0 p1 1\nq1 0 p2 two\n")
    for reader in (label_counts, Qrels.from_file):  # meta's label counts, as every qrels reader
        with pytest.raises(InputError) as got:
            reader(bad)
        assert (got.value.file, got.value.record, got.value.field) == (str(bad), "line 2", "label")
    bench, sets, a, b = setup
    before = folder_hash(bench)
    with pytest.raises(InputError, match="line 2.*label"), BenchmarkWrite(bench) as w:
        w.path("qrels.tsv").write_bytes(bad.read_bytes())
        w.commit(dict(Benchmark(bench).meta))  # a bad line is refused, not skipped: nothing committed
    assert folder_hash(bench) == before and read(bench) == a


def test_a_dead_writers_staging_folder_goes_with_a_notice(tmp_path, capsys):
    """A build killed outright leaves `.inferqa-staged-PID-TOKEN` inside the benchmark; the next
    write removes it (its process no longer runs) and says so in one line."""
    from inferqa.label.stage import build

    build(demo=True, out=tmp_path / "b")
    capsys.readouterr()
    stale = tmp_path / "b" / ".inferqa-staged-999999999-deadbeef"
    (stale / "x").parent.mkdir()
    (stale / "x").write_text("half")
    build(demo=True, out=tmp_path / "b", overwrite=True)
    err = capsys.readouterr().err
    assert not stale.exists()
    assert f"inferqa: removed {stale}, the staging folder of a write by process 999999999" in err
