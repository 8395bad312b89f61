"""The defaults several stages share, each written once; every signature, plugin option,
experiment-file key and command-line flag that takes one reads it from here.

A stage's own options are declared with its stage (`inferqa.stages.<stage>`) and a plugin's
with its plugin; these are the ones that low layers (retrieve, rerank, scale, the experiment
file) need alike.
"""

from __future__ import annotations

from .models import MINILM, SMOLLM2
from .registry import Option

# Relevant = label >= min_label: for every metric, the oracles and fine-tuning's positives.
MIN_LABEL = Option("min_label", int, 1, "lowest label counted as relevant", min=1)

# The sentence-transformers model of every encoder (dense and clue retrieval, the embedding
# leak judge, fine-tuning's starting weights): the bundled MiniLM, which loads offline.
DEFAULT_ENCODER = MINILM
# The LLM of every stage that asks one (reader, labeller, leak judge, LLM rerankers, answer judge).
DEFAULT_LLM = SMOLLM2

# Each actor loads its own copy of the model: one fits on any machine, more are asked for.
# Where a model runs: here, or on a pool of Ray actors (`inferqa.scale`).
BACKEND = Option("backend", str, "local", "local, or ray: run the model on a pool of Ray actors (docs/scaling.md)")
NUM_ACTORS = Option("num_actors", int, 1, "Ray actors (with --backend ray), each with its own copy of the model",
                    min=1)
# The hint-group of diversification (`inferqa.hints`): passages with the same hint texts.
HINT_GROUPING = "set"
# The oracle retriever's shuffle seed (`inferqa oracle --kind retriever`).
ORACLE_SEED = Option("seed", int, 0, "shuffle seed of the oracle retriever")
# The seed of the paired tests' resamples and sign flips (`inferqa compare`, the experiment's tables).
TEST_SEED = 0
