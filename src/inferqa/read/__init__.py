"""Readers: merge the top-k passages into a context, ask an LLM, clean and score its answer."""

from .answers import ExactMatchAnswerJudge, LLMAnswerJudge, answer_judge, contains, exact_match, f1
from .context import build_context, concat, format_context, merge, strategies, strategy, union_freq, union_norm
from .answer_rows import load_answers, score_answers
from .prompts import NO_ANSWER
from .reader import Reader, ReaderOutput, clean_answer
from .evidence import evidence_sets, vote
from .run import check_read_options, read_run, summarize, tune_union

__all__ = ["union_norm", "union_freq", "concat", "merge", "build_context", "format_context", "strategy", "strategies",
           "Reader", "ReaderOutput", "clean_answer", "NO_ANSWER", "read_run", "summarize", "tune_union",
           "exact_match", "f1", "contains", "answer_judge", "ExactMatchAnswerJudge", "LLMAnswerJudge",
           "check_read_options", "load_answers", "score_answers", "evidence_sets", "vote"]
