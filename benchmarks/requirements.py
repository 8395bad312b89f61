"""What each benchmark script needs beyond `pip install 'inferqa[all,test]'`, checked before it
starts: a missing module is one line naming what to install, and exit code 2."""

from __future__ import annotations

import importlib.util
import sys

# module -> pip requirement
PIP = {"numba": "numba", "bm25s": "bm25s", "Stemmer": "PyStemmer", "ir_measures": "ir_measures",
       "pytrec_eval": "pytrec-eval-terrier", "psutil": "psutil", "ray": "'inferqa[ray]'",
       "sentence_transformers": "'inferqa[dense]'", "faiss": "'inferqa[dense]'",
       "transformers": "'inferqa[transformers]'", "llama_cpp": "'inferqa[llm]'"}


def missing(modules) -> list[str]:
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require(script: str, modules, what: str = "", hint: str = "") -> None:
    """Exit with one line if any of `modules` is not importable."""
    gone = missing(modules)
    if gone:
        pips = " ".join(dict.fromkeys(PIP.get(m, m) for m in gone))
        why = f" for {what}" if what else ""
        print(f"{script}: needs {', '.join(gone)}{why}: pip install {pips}{hint}", file=sys.stderr)
        raise SystemExit(2)
