"""What earlier verification rounds left in meta.json under `label_verification`.

    verdicts           {qid: {normalised answer: "accept" | "reject"}}, the latest per answer
    added_aliases      {qid: [alias text, ...]}, aliases that accepted answers added
    dropped_questions  [{"qid", "hint", "alias"}], questions removed for a leak
    dropped_hints      [{"qid", "hint", "alias"}], hints whose passages were removed
    flagged_leaks      [{"qid", "hint", "alias"}], leaks recorded but not acted on
    rounds             [{"annotator", "timestamp", "sheet", "sheet_sha256", ...counts}]
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..text import normalize_answer

META_KEY = "label_verification"


@dataclass
class VerificationState:
    verdicts: dict[str, dict[str, str]] = field(default_factory=dict)
    added_aliases: dict[str, list[str]] = field(default_factory=dict)
    dropped_questions: list[dict[str, Any]] = field(default_factory=list)
    dropped_hints: list[dict[str, Any]] = field(default_factory=list)
    flagged_leaks: list[dict[str, Any]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_meta(cls, meta: dict) -> "VerificationState":
        d = copy.deepcopy(meta.get(META_KEY) or {})
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def added_keys(self, qid: str) -> set[str]:
        return {normalize_answer(a) for a in self.added_aliases.get(qid, [])}

    def original_gold_keys(self, qid: str, answers: list[str]) -> set[str]:
        """The gold aliases the benchmark was built with (before any accepted answer was added)."""
        added = self.added_keys(qid)
        return {k for k in (normalize_answer(a) for a in answers) if k and k not in added}

    def dropped_qids(self) -> set[str]:
        return {d["qid"] for d in self.dropped_questions}

    def dropped_hint_indices(self, qid: str) -> set[int]:
        return {d["hint"] for d in self.dropped_hints if d["qid"] == qid}
