"""Readers: merge the top-k passages into a context, ask an LLM, clean and score its answer
(scoring itself: inferqa.evaluation.exact_match).

Its stage's function `read_with_llm` is also `inferqa.read(bench, run, "smollm2")` (benchmark,
run and LLM as objects, paths or an LLM spec).
"""

from .answer_scoring import ExactMatchAnswerJudge, LLMAnswerJudge, answer_judge, score_answers
from .context import build_context, concat, format_context, merge, strategies, strategy, union_freq, union_norm
from ..formats.answers import Answers

from .prompts import NO_ANSWER
from .reader import Reader, ReaderOutput
from .evidence import evidence_sets, vote
from .run import check_read_options, read_with_llm, summarize
from .oracle_reader import oracle_reader_em, union_passage

__all__ = ["union_norm", "union_freq", "concat", "merge", "build_context", "format_context", "strategy", "strategies",
           "Reader", "ReaderOutput", "NO_ANSWER", "read_with_llm", "summarize",
           "answer_judge", "ExactMatchAnswerJudge", "LLMAnswerJudge",
           "check_read_options", "Answers", "score_answers", "evidence_sets", "vote",
           "oracle_reader_em", "union_passage"]
