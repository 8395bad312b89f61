"""A ColBERT model folder: written in PyLate's layout, run with sentence-transformers.

PyLate cannot be installed beside sentence-transformers 6, whose `MultiVectorEncoder` reads
PyLate checkpoints (docs/retrieve.md). The folder is therefore written the way PyLate 1.x
writes one (`modules.json` = Transformer + `pylate.models.Dense.Dense`, PyLate's keys in
`config_sentence_transformers.json`), so either library loads it.

`init_colbert` starts one from any bi-encoder folder (the bundled MiniLM): the backbone's
weights, a new bias-free projection to `dim`, and ColBERT's conventions: `[unused0]` /
`[unused1]` query and document markers (in BERT's vocabulary, so no embedding grows),
queries padded with [MASK] to `query_length` and scored on every position.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..parameters import FINETUNE_SEED
from ..io import atomic_dir, write_json
from ..models import COLBERT, colbert_path, quiet_loading, resolve_embedding_model

QUERY_MARKER, DOCUMENT_MARKER = "[unused0]", "[unused1]"
DENSE_DIR = "1_Dense"


def _write_folder(out: Path, hf_model, tokenizer, weight, *, query_length: int, document_length: int) -> None:
    """Backbone + projection `weight` (dim x hidden) + configs, in PyLate's layout."""
    from safetensors.torch import save_file

    hf_model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    write_json(out / "sentence_bert_config.json", {"max_seq_length": document_length - 1, "do_lower_case": False})
    write_json(out / "modules.json", [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": DENSE_DIR, "type": "pylate.models.Dense.Dense"},
    ])
    (out / DENSE_DIR).mkdir(exist_ok=True)
    dim, hidden = weight.shape
    write_json(out / DENSE_DIR / "config.json", {
        "in_features": int(hidden), "out_features": int(dim), "bias": False,
        "activation_function": "torch.nn.modules.linear.Identity", "use_residual": False})
    save_file({"linear.weight": weight.detach().cpu().contiguous()}, str(out / DENSE_DIR / "model.safetensors"))
    write_json(out / "config_sentence_transformers.json", {
        "model_type": "ColBERT", "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "MaxSim",
        "query_prefix": QUERY_MARKER, "document_prefix": DOCUMENT_MARKER,
        "query_length": int(query_length), "document_length": int(document_length),
        "attend_to_expansion_tokens": False, "do_query_expansion": True,
        "skiplist_words": list(string.punctuation)})


def init_colbert(base: str | os.PathLike, out: str | os.PathLike, *, dim: int = 128, query_length: int = 32,
                 document_length: int = 256, seed: int = FINETUNE_SEED.default, overwrite: bool = False) -> Path:
    """A ColBERT folder from a bi-encoder's backbone and a new (orthogonal) projection. An
    existing non-empty `out` is refused before any work unless `overwrite`, which replaces only
    the files written here (`io.atomic_dir`'s own_files)."""
    from ..io import refuse_existing_folder

    refuse_existing_folder(out, overwrite)
    import torch
    from transformers import AutoModel, AutoTokenizer

    base = Path(base)
    with quiet_loading():
        hf_model, tokenizer = AutoModel.from_pretrained(base), AutoTokenizer.from_pretrained(base)
    hidden = hf_model.config.hidden_size
    if dim > hidden:
        raise InputError(f"projection dim {dim} exceeds the backbone's hidden size {hidden}", field="dim")
    # Orthogonal rows keep the backbone's token geometry (inner products shrink evenly), so the
    # untrained model already ranks sensibly and training starts from there.
    weight = torch.empty(dim, hidden)
    torch.nn.init.orthogonal_(weight, generator=torch.Generator().manual_seed(seed))
    with atomic_dir(out, overwrite, own_files=True) as tmp:
        _write_folder(tmp, hf_model, tokenizer, weight, query_length=query_length, document_length=document_length)
    return Path(out)


def write_colbert(model, folder: str | os.PathLike) -> Path:
    """Write a `MultiVectorEncoder` loaded by `load_colbert` into `folder`, in the same layout."""
    transformer, dense = model[0], model[1]
    config = json.loads(json.dumps(transformer.get_config_dict(), default=str))
    _write_folder(Path(folder), transformer.model, transformer.tokenizer, dense.linear.weight,
                  query_length=config["query_expansion"]["length"], document_length=config["document_length"])
    return Path(folder)


def is_colbert_folder(path: str | os.PathLike) -> bool:
    path = Path(path)
    return (path / "config_sentence_transformers.json").exists() and (path / DENSE_DIR).is_dir()


def _is_hub_id(name: str) -> bool:
    return not Path(name).exists() and name.count("/") == 1 and not name.startswith((".", "/", "~"))


def resolve_colbert_ref(name_or_path: str | os.PathLike) -> str:
    """The default name `colbert-triviahg` → its folder in the user cache; anything else as given."""
    if str(name_or_path) != COLBERT:
        return str(name_or_path)
    if not is_colbert_folder(colbert_path()):
        raise InputError(f"the default ColBERT model ({COLBERT}) is not trained yet: "
                         "`python benchmarks/finetune_triviahg.py --kind colbert` trains it into this folder, "
                         "or give another with model=FOLDER", file=colbert_path())
    return str(colbert_path())


def resolve_colbert_start(name_or_path: str) -> str:
    """Starting weights of `finetune colbert`: a ColBERT (the default name too) or a bi-encoder."""
    return resolve_colbert_ref(name_or_path) if name_or_path == COLBERT else resolve_embedding_model(name_or_path)


def load_colbert(path: str | os.PathLike, device: str | None = None):
    """A folder written here (or by PyLate), the default `colbert-triviahg`, or a Hugging Face
    ColBERT id such as `colbert-ir/colbertv2.0` (online only)."""
    from sentence_transformers import MultiVectorEncoder

    path = resolve_colbert_ref(path)
    if not _is_hub_id(str(path)) and not is_colbert_folder(path):
        raise InputError("not a ColBERT model folder (train one with `inferqa finetune colbert` or "
                         "benchmarks/finetune_triviahg.py --kind colbert)", file=path)
    return MultiVectorEncoder(str(path), device=device or "cpu")


def encode_tokens(model, texts: list[str], *, query: bool, batch_size: int = 32) -> list[np.ndarray]:
    """Unit-norm token vectors per text (float32): queries at their fixed length, documents
    without padding and punctuation."""
    if not texts:
        return []
    encode = model.encode_query if query else model.encode_document
    return [np.asarray(v, dtype=np.float32) for v in
            encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)]
