"""The options of every stage that calls an LLM (`read`, `rerank`, `tune-union`): its call cache
and where the model runs. Declared once here; `inferqa.scale.llm.llm_opener` applies them.
Also the LLM answer judge's (labelling, reading and `evaluate-answers`)."""

from __future__ import annotations

from ..parameters import (BACKEND, CACHE, CALL_CACHE, JUDGE_SAMPLES, JUDGE_TEMPERATURE, READER_LLM_FLAG as LLM, LLM_CALLS, LLM_URLS, RAY_ADDRESS, USE_CACHE)  # noqa: F401 - re-exported until the stage moves

from pathlib import Path

from . import Option



