"""Result records of an experiment: what the tables and the report are made from."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import read_json, write_json

# Settings, as the paper names them.
PIPELINE = "pipeline"
ORACLE_RETRIEVER = "oracle retriever"
ORACLE_RERANKER = "oracle reranker"
OPTIMAL = "optimal"
ORACLE = "oracle"  # the retriever/reranker name used for the oracles


@dataclass(frozen=True)
class RankingResult:
    """Metrics of one ranked run; `reranker` is None for a first-stage run."""

    setting: str
    retriever: str
    reranker: str | None
    metrics: dict[str, float]
    questions: int
    stage: str = ""  # the stage folder name it was computed from
    ci: dict[str, list[float]] = field(default_factory=dict)  # metric -> 95 % bootstrap [low, high]
    hit_curve: list[float] = field(default_factory=list)  # hit@1, hit@2, ... (the report's curve)


@dataclass(frozen=True)
class ReaderResult:
    setting: str
    retriever: str
    reranker: str | None
    reader: str
    strategy: str
    k: int
    em: float
    questions: int
    stage: str = ""
    ci: list[float] | None = None  # 95 % bootstrap [low, high] of the EM


def run_label(r: "RankingResult | ReaderResult") -> str:
    """How tables, plots, tests and the explorer name a ranked run."""
    if r.setting == OPTIMAL:
        return OPTIMAL
    if r.setting == ORACLE_RERANKER:
        return f"{r.retriever} → oracle reranker"
    if r.setting == ORACLE_RETRIEVER:
        return f"oracle retriever → {r.reranker}"
    return r.retriever if not r.reranker else f"{r.retriever} → {r.reranker}"


@dataclass
class ExperimentResults:
    name: str
    ranking: list[RankingResult] = field(default_factory=list)
    reader: list[ReaderResult] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    environment: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    tests: list[dict[str, Any]] = field(default_factory=list)  # paired tests (experiments.comparisons)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ExperimentResults":
        try:
            return cls(
                name=d["name"],
                ranking=[RankingResult(**r) for r in d.get("ranking", [])],
                reader=[ReaderResult(**r) for r in d.get("reader", [])],
                config=d.get("config", {}),
                environment=d.get("environment", {}),
                timings=d.get("timings", {}),
                tests=d.get("tests", []),
            )
        except (KeyError, TypeError) as exc:
            raise InputError(f"not an experiment results record ({exc})", field="results") from None

    def save(self, path: str | os.PathLike) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ExperimentResults":
        try:
            return cls.from_dict(read_json(path))
        except InputError as exc:
            raise InputError(exc.message, file=Path(path), field=exc.field) from None
