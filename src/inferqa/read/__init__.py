"""Readers: merge the top-k passages into a context, ask an LLM, clean and score its answer."""

from .answers import contains, exact_match, f1, llm_judge
from .context import STRATEGIES, build_context, concat, format_context, merge, union_freq, union_norm
from .prompts import NO_ANSWER
from .reader import Reader, ReaderOutput, clean_answer
from .run import read_run, summarize, tune_union

__all__ = ["union_norm", "union_freq", "concat", "merge", "build_context", "format_context", "STRATEGIES",
           "Reader", "ReaderOutput", "clean_answer", "NO_ANSWER", "read_run", "summarize", "tune_union",
           "exact_match", "f1", "contains", "llm_judge"]
