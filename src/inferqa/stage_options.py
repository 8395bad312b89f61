"""Options of the build, label, annotate, read and tuning stages that `inferqa --help` shows, declared once.

They live here, not beside their plugins, because importing `inferqa.read`, `inferqa.label`,
`inferqa.annotate` or `inferqa.construct` at CLI start-up costs about 0.1 s each; this module
imports only the registry and the LLM interface. The stages declare their plugins and take
their defaults from these very objects and `cli.flags.option_flag` makes each a flag, so a
default and its help are written only here. List defaults are shared: read them, never change them.
"""

from __future__ import annotations

from .defaults import DEFAULT_LLM
from .llm.base import LLM
from .registry import Option

# passage ids spell hint indices with one digit each: at most 10 hints
TOP_K = Option("top_k", int, 5, "hints kept per question", min=1, max=10)
SPLIT = Option("split", str, "0.7,0.1,0.2", "the train,dev,test split: fractions, counts (5000,862,1539), 'source' "
               "or a roles file (roles.yaml: per source file, its split names)")
SEED = Option("seed", int, 13, "seed of the split shuffle")
LEAK_THRESHOLD = Option("threshold", float, 0.85, "cosine from which a hint span leaks", min=0, max=1,
                        min_open=True)
LEAK_LLM = Option("llm", (str, LLM), DEFAULT_LLM, "LLM asked whether the hint gives the answer")
LABELER = Option("labeler", str, DEFAULT_LLM, "LLM spec of a labeller; repeat the flag for several")
MIN_F1 = Option("min_f1", float, 0.5, "token F1 to a gold alias from which an answer the judge rejected is "
                "contested (so exported too), as is one contained in an alias or containing one", min=0, max=1)
READER_LLM = Option("llm", str, DEFAULT_LLM, "LLM spec of the reader: smollm2, gemma3-270m, llama-cpp:/path.gguf, "
                    "openai:MODEL@URL or transformers:ID_OR_PATH")
READ_STRATEGIES = Option("strategies", list, ["union_norm"], "context strategies: union_norm, union_freq or concat")
READ_KS = Option("ks", list, [1, 3, 5], "top-k passages merged into one context, one reading per k")
TUNE_KS = Option("ks", list, [3, 5], "cutoffs whose mean EM the union_freq grid search maximises")
TUNE_ALPHAS = Option("alphas", list, [round(a / 10, 1) for a in range(11)],
                     "alpha grid; beta = 1 - alpha (only their ratio orders hints)")
# The adaptive diversification margin's grid search (inferqa.tune.diversify.tune_margin, `inferqa tune-diversify`).
TUNE_METRIC = Option("metric", str, "hit@10", "measure whose mean picks the margin (ties: the smaller margin)")
TUNE_MEASURES = Option("measures", list, ["hit@1", "hit@10", "mrr", "ndcg@10"], "measures of the margin grid")
TUNE_PER_GROUP = Option("diversify", int, 1, "at most N passages of one hint-group in the head of a diversified "
                        "query", min=1)
TUNE_SHARES = Option("shares", list, [i / 10 for i in range(11)], "shares of the split's queries to diversify, "
                     "each in [0, 1]; their margins are the grid")
UNION_ALPHA = Option("alpha", float, 0.6, "weight of 1/rank of the passage", min=0)
UNION_BETA = Option("beta", float, 0.4, "weight of 1/position of the hint in its passage", min=0)
LABEL_MATCH = Option("label_match", str, "exact", "QUIT release labels: exact (the authors' rule: a labeller's "
                    "answer is in answers, case-sensitive) or normalized (our SQuAD-style normalised match); "
                    "recorded in meta.json", choices=("exact", "normalized"))
# The LLM answer judge (GPT-Eval style) of labelling, reading and evaluate-answers.
JUDGE_SAMPLES = Option("samples", int, 3, "votes of the LLM judge; the majority decides", min=1)
JUDGE_TEMPERATURE = Option("temperature", float, 0.7, "sampling temperature of the LLM judge (0: one greedy vote)",
                           min=0)
