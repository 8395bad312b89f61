"""Shared test fixtures. Stage-specific fixtures live in each stage's test files."""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INFERQA_SHARED", REPO.parent / "shared"))
WIKIHINT = SHARED / "data" / "wikihint" / "test.json"
TRIVIAHG = SHARED / "data" / "triviahg" / "validation.json"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def says(answer: str):
    """An LLM (backend `says`, model `answer` in lower case) that replies `answer` to every
    prompt and scores every continuation 0.0."""
    from inferqa.llm.base import LLM, GenerationParams

    class Says(LLM):
        backend, model, mode = "says", answer.lower(), "chat"

        def chat(self, conversations, params=GenerationParams()):
            return [answer] * len(conversations)

        def complete(self, prompts, params=GenerationParams()):
            return [answer] * len(prompts)

        def logprob(self, prompt, continuation):
            return 0.0

    return Says()


def need_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (tests read ../shared/data; it is never copied into the repo)")
    return path


@pytest.fixture
def wikihint_file() -> Path:
    return need_shared(WIKIHINT)


@pytest.fixture
def triviahg_file() -> Path:
    return need_shared(TRIVIAHG)


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _headless_chromium(profile: Path, window: str, browser_log: bool = False):
    if not Path(CHROMIUM).exists() or not Path(CHROMEDRIVER).exists():
        pytest.skip("headless browser check needs Debian's chromium and chromium-driver "
                    "(apt-get install chromium chromium-driver); not installed here")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", f"--window-size={window}"):
        opts.add_argument(flag)
    if browser_log:
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


@pytest.fixture
def headless_chromium():
    """`headless_chromium(profile_dir, "W,H", browser_log=False)`: a selenium driver for Debian's
    headless Chromium; skips the test where Chromium, its driver or selenium is absent."""
    return _headless_chromium


@pytest.fixture(scope="session")
def minilm() -> str:
    """The bundled MiniLM's folder, as a model reference (skips where the package is absent)."""
    from inferqa.errors import InputError
    from inferqa.models import minilm_path

    try:
        return str(minilm_path())
    except InputError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def encoder(minilm):
    """The bundled MiniLM bi-encoder, loaded once for every test that needs it."""
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(minilm, device="cpu")


def _tiny_llama(folder: Path, words, *, hidden: int = 16, positions: int = 64, chat_template: str | None = None) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    vocab = {t: i for i, t in enumerate(specials + list(words))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                                eos_token="</s>", pad_token="<pad>")
    if chat_template:
        fast.chat_template = chat_template
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=hidden, intermediate_size=2 * hidden,
                                   num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                   max_position_embeddings=positions, bos_token_id=1, eos_token_id=2, pad_token_id=3)
    transformers.LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_llama():
    """`tiny_llama(folder, words, *, hidden=16, positions=64, chat_template=None)`: a random-weight
    Llama saved in `folder`, with an offline word-level tokenizer over `words` (split on whitespace
    and punctuation runs; BOS first); skips where torch or transformers is absent."""
    return _tiny_llama


SMALL = {"top_k": 3, "split": (0.5, 0.0, 0.5)}  # the small benchmark most tests use: 15 passages a question


@pytest.fixture(scope="session")
def bench_factory(tmp_path_factory):
    """The one way tests build a benchmark: `bench_factory(questions=4, *, root=None,
    name="bench", relabel=None, **build_options)` runs `build_benchmark` and returns the
    `Benchmark`. `questions`: a count (the first N demo questions) or `Question`s; options
    default to `SMALL` (top 3 hints, split 0.5/0/0.5); the directory is `root/name`, `root` a
    fresh temp directory unless given; `relabel(qid, hint_order) -> label` rewrites every
    qrels label afterwards (for hand-made label patterns)."""
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.formats.benchmark import Benchmark
    from inferqa.records import parse_passage_id

    def make(questions=4, *, root=None, name="bench", relabel=None, **options):
        if isinstance(questions, int):
            questions = load_questions(demo_path())[:questions]
        out = Path(root or tmp_path_factory.mktemp(name)) / name
        build_benchmark(questions, out, **{**SMALL, **options})
        if relabel is not None:
            bench = Benchmark(out)
            qrels = bench.qrels
            for qid, docs in qrels.items():
                for pid in docs:
                    docs[pid] = relabel(qid, parse_passage_id(pid)[1])
            qrels.to_file(out / "qrels.tsv")
        return Benchmark(out)

    return make


@pytest.fixture(scope="session")
def demo_bench_8q(bench_factory):
    """The first 8 demo questions with their top 3 hints: 8 × 15 = 120 passages. Shared by the
    retriever tests, which only add their own folders under its indexes/."""
    from inferqa.parameters import BUILD_SPLIT as SPLIT

    return bench_factory(8, split=SPLIT.default)


@pytest.fixture
def scratch(monkeypatch):
    """Plugins registered inside a test disappear after it."""
    from inferqa import registry

    for kind in registry.KINDS:
        registry.available(kind)  # built-ins found first, so they stay after the test
        monkeypatch.setitem(registry._PLUGINS, kind, dict(registry._PLUGINS[kind]))


def one_line_error(code, err, *needles):
    """Assert a bad input's outcome: exit 2 and one line `inferqa: error: ...` holding every needle."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("inferqa: error:"), err
    for n in needles:
        assert n in lines[0], lines[0]


def run_cli(monkeypatch, capsys, *args, columns: int | None = 200):
    """Run `inferqa ARGS` in-process through `inferqa.cli.main`; return (exit code, stdout, stderr).
    `columns`: the terminal width the command sees (COLUMNS); None leaves COLUMNS unset, as in
    a pipe or a log (80 columns)."""
    from inferqa.cli import main

    monkeypatch.setattr(sys, "argv", ["inferqa", *map(str, args)])
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)

        def no_terminal(*_):
            raise OSError("not a terminal")
        monkeypatch.setattr(os, "get_terminal_size", no_terminal)  # stdout a pipe, even under a terminal
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit) as exc:
        main()
    out, err = capsys.readouterr()
    return exc.value.code, out, err



def random_graded_case(seed: int, n_q: int = 40, n_docs: int = 300, depth: int = 120):
    """A random (run, qrels) with labels 0, 1, 2 and distinct scores (no tie-order issues), every
    question with a passage of label >= 1 (ir_measures drops the others), some with several of 2."""
    from inferqa.formats import Qrels, Run

    rng = random.Random(seed)
    qrels, run = Qrels(), Run()
    for qi in range(n_q):
        q = f"q{qi}"
        docs = [f"d{i}" for i in range(n_docs)]
        judged = rng.sample(docs, 60)
        qrels[q] = {d: rng.choice([0, 0, 1, 2]) for d in judged}
        qrels[q][judged[0]] = rng.choice([1, 2])
        if rng.random() < 0.3:
            qrels[q][judged[1]] = 2
        ranked = rng.sample(docs, rng.randint(1, depth))
        scores = sorted(rng.sample(range(10**6), len(ranked)), reverse=True)
        run[q] = [(d, float(s)) for d, s in zip(ranked, scores)]
    return run, qrels
