"""LLM labelling of benchmarks: answerability labels, the parametric test, hint convergence."""

from .convergence import fill_convergence, hint_convergence, propose_candidates
from .labelling import MODES, label_benchmark, representative
from .parametric import apply_parametric_split, parametric_test, split_by_parametric

__all__ = ["label_benchmark", "representative", "MODES", "parametric_test", "split_by_parametric",
           "apply_parametric_split", "fill_convergence", "hint_convergence", "propose_candidates"]
