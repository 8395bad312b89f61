"""The options of every stage that calls an LLM (`read`, `rerank`, `tune-union`): its call cache
and where the model runs. Declared once here; `inferqa.scale.llm.llm_opener` applies them.
Also the LLM answer judge's (labelling, reading and `evaluate-answers`)."""

from __future__ import annotations

from pathlib import Path

from ..defaults import NUM_ACTORS
from . import Option

CACHE = Option("cache", Path, None, "SQLite cache of LLM calls (default $INFERQA_LLM_CACHE, $INFERQA_CACHE/llm.sqlite "
               "or ~/.cache/inferqa/llm.sqlite)")
USE_CACHE = Option("use_cache", bool, True, "call the backend for every prompt", flags=("--no-cache",))
BACKEND = Option("backend", str, "local", "local, or ray: run the model on a pool of Ray actors (docs/scaling.md)")
RAY_ADDRESS = Option("ray_address", str, None, "Ray cluster: auto, ray://HEAD:10001 (default: start Ray here)")
LLM_URLS = Option("llm_url", list, None, "with --backend ray and an openai: spec: one server URL per repeat; actors "
                  "take them round-robin", item=str)

CALL_CACHE = (CACHE, USE_CACHE)
# The LLM's call cache and its execution backend: one set, shared by the stages that call an LLM.
LLM_CALLS = (*CALL_CACHE, BACKEND, RAY_ADDRESS, NUM_ACTORS)

# The LLM answer judge (GPT-Eval style) of labelling, reading and evaluate-answers.
JUDGE_SAMPLES = Option("samples", int, 3, "votes of the LLM judge; the majority decides", min=1)
JUDGE_TEMPERATURE = Option("temperature", float, 0.7, "sampling temperature of the LLM judge (0: one greedy vote)",
                           min=0)
