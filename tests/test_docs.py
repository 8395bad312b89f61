"""The documentation runs as written.

A fenced block right after a `<!-- runnable -->` line, in README.md or docs/*.md, is
executed here: shell blocks line by line with `bash -e` in a fresh folder (the venv's
`inferqa` first on PATH, offline, a private LLM cache), Python blocks with `exec` in the
same folder. Blocks of one page run in order in one folder, so a later block may use what
an earlier one wrote. The paragraph right after a block, when it says what the block prints
("Both print nDCG@10 0.3230, ..."), is checked too: every decimal figure in it (in its
`code` spans, where it has any) must be one the block printed, to the digits given. A page may read `data/wikihint/test.json`: the test links the real
WikiHint file there when it is present and skips the page otherwise.

A block that runs a script of `benchmarks/` (linked into the folder) on the real hint files
(`benchmarks/hint_data.py`: WikiHint test, TriviaHG validation) is skipped where they are
absent, after the page's other blocks ran. Where a block as written takes hours, `SIZES`
names what runs instead: sizes only (how many questions, training steps, synthetic
passages), every command, file and other option as written."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, TRIVIAHG, WIKIHINT

MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^" + re.escape(MARK) + r"\n```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)
AFTER = re.compile(r"\n*(.*?)(?:\n\s*\n|\Z)", re.S)  # the paragraph after a block's closing fence
SAYS_PRINTED = re.compile(r"^\W*(?:\w+\s+){0,3}prints?\b")
FIGURE = re.compile(r"[-+\u2212]?\d+\.\d+")
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# page -> (text of a block, what runs here instead): the sizes only, so a block of hours runs in minutes
SIZES = {
    "inferential.md": [
        # the first 6 questions of each hint file (TriviaHG's 0.7/0.1/0.2 cut keeps 1 dev and
        # 1 test question of them) and 2 training steps, instead of all and one epoch
        ("benchmarks/inferential_hard.py --out runs/inferential-hard",
         "benchmarks/inferential_hard.py --out runs/inferential-hard --questions 6 --max-steps 2"),
        ("benchmarks/inferential_budget.py --out runs/inferential-budget",
         "benchmarks/inferential_budget.py --out runs/inferential-budget --questions 6 --max-steps 2"),
        ("benchmarks/inferential_retrieval.py --out runs/inferential",
         "benchmarks/inferential_retrieval.py --out runs/inferential --questions 6 --eval-questions 1 --max-steps 2"),
        ("--scale 240000 2405325", "--scale 650 1300"),  # synthetic benchmarks of 2 and 4 questions
    ],
}
HINT_FILES = (WIKIHINT, TRIVIAHG)  # what the benchmark scripts read (benchmarks/hint_data.py)


def sized(page: Path, code: str) -> str:
    """A block's code with the page's `SIZES` substitutions."""
    for written, run in SIZES.get(page.name, []):
        code = code.replace(written, run)
    return code


def test_sizes_name_text_the_pages_hold():
    """A substitution whose text a page no longer holds would silently run the block at full size."""
    for name, subs in SIZES.items():
        code = "".join(c for _, c in runnable_blocks(REPO / "docs" / name))
        for written, run in subs:
            assert written in code, (name, written)
            assert sized(REPO / "docs" / name, written) == run


def runnable_blocks(page: Path) -> list[tuple[str, str]]:
    return [(lang, code) for lang, code in BLOCK.findall(page.read_text(encoding="utf-8"))]


def printed_figures(page: Path) -> list[list[str]]:
    """Per runnable block, the decimal figures the paragraph after it says it prints ([] if none)."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in BLOCK.finditer(text):
        para = AFTER.match(text, m.end()).group(1)
        quoted = re.findall(r"`([^`]+)`", para)  # with code spans, the figures in them; the prose may reason
        out.append(FIGURE.findall(" ".join(quoted) if quoted else para) if SAYS_PRINTED.match(para) else [])
    return out


def _value(figure: str) -> float:
    return float(figure.replace("\u2212", "-"))


def missing_figures(figures: list[str], printed: str) -> list[str]:
    """The figures no number in `printed` rounds to, at the figure's own number of decimals."""
    values = [_value(f) for f in FIGURE.findall(printed)]
    return [f for f in figures
            if not any(abs(v - _value(f)) <= 0.5 * 10 ** -len(f.partition(".")[2]) + 1e-12 for v in values)]


def test_printed_figures_are_checked_against_output():
    assert missing_figures(["0.3230", "0.4285"], "nDCG@10\t0.32297\nRR\t0.428512") == []
    assert missing_figures(["0.3220"], "nDCG@10\t0.3230") == ["0.3220"]
    assert missing_figures(["-0.0297", "0.062"], "MRR -0.0297 p=0.0620") == []
    assert ["0.3230", "0.4285", "0.5719"] in printed_figures(REPO / "docs" / "field.md")
    # the demo's clue and full-passage dense retrievers, from their runs (hit@1, MRR, nDCG@10)
    assert ["81.58", "84.48", "72.95", "76.32", "80.00", "71.11"] in printed_figures(REPO / "docs" / "experiments.md")


def test_marks_are_all_parsed():
    """A mark not followed by a fenced block would silently run nothing."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert text.count(MARK) == len(runnable_blocks(page)), page.name


def test_getting_started_and_readme_have_runnable_blocks():
    assert runnable_blocks(REPO / "README.md")
    assert runnable_blocks(REPO / "docs" / "getting-started.md")


@pytest.fixture(scope="session")
def llm_cache(tmp_path_factory) -> Path:
    """One LLM cache for every page: pages that run the same prompts pay for them once."""
    return tmp_path_factory.mktemp("docs-llm-cache") / "llm.sqlite"


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", INFERQA_LLM_CACHE=str(cache))
    return env


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if runnable_blocks(p)], ids=lambda p: p.name)
def test_page_runs_as_written(page: Path, tmp_path: Path, monkeypatch, llm_cache: Path):
    blocks = runnable_blocks(page)
    if any("data/wikihint/test.json" in code for _, code in blocks):
        if not WIKIHINT.exists():
            pytest.skip(f"{page.name} reads WikiHint test; shared data file {WIKIHINT} is absent")
        (tmp_path / "data" / "wikihint").mkdir(parents=True)
        os.symlink(WIKIHINT, tmp_path / "data" / "wikihint" / "test.json")
    env = _env(llm_cache)
    monkeypatch.chdir(tmp_path)
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "INFERQA_LLM_CACHE"):
        monkeypatch.setenv(k, env[k])
    if any("benchmarks/" in code for _, code in blocks):
        os.symlink(REPO / "benchmarks", tmp_path / "benchmarks")
    skipped = []
    for i, ((lang, code), figures) in enumerate(zip(blocks, printed_figures(page))):
        where = f"{page.name} runnable block {i + 1}"
        if "python benchmarks/" in code and not all(f.exists() for f in HINT_FILES):
            skipped.append(where)
            continue
        code = sized(page, code)
        if lang in ("bash", "sh", "console"):
            proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert proc.returncode == 0, f"{where} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
            printed = proc.stdout
        elif lang == "python":
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(code, where, "exec"), {"__name__": "docs_block"})
            printed = buffer.getvalue()
        else:
            pytest.fail(f"{where}: cannot run a {lang!r} block")
        missing = missing_figures(figures, printed)
        assert not missing, f"{where}: the text after it quotes {missing}, which it does not print:\n{printed[-2000:]}"
    if skipped:
        pytest.skip(f"the other blocks ran; {', '.join(skipped)} read the real hint files, absent here "
                    f"({', '.join(map(str, HINT_FILES))}; never copied into the repo)")


def test_mkdocs_builds_strictly(tmp_path: Path):
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists() and shutil.which("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install 'inferqa[docs]')")
    exe = str(mkdocs) if mkdocs.exists() else shutil.which("mkdocs")
    proc = subprocess.run([exe, "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "index.html").exists()
