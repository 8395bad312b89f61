"""Group the labellers' answers per question into the distinct answers a person reviews.

An answer (by its normalised form) is exported when the judge accepted it in at least one passage,
when the judge rejected it everywhere but it is close to a gold alias (contested, see `fuzzy`), or
when a person gave a verdict on it in an earlier round; never when it equals an original gold alias.

`passages` counts every passage where some labeller gave the answer; `decides` counts
those whose label hangs on this answer alone (no other answer in that passage is judged
correct), i.e. the passages a verdict on it can flip between 2 and 1.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from ..records import Question
from ..parameters import MIN_F1
from .fuzzy import closeness
from ..formats.labels import LabelRow, answer_key, resolve_copies
from .state import VerificationState


@dataclass
class Candidate:
    qid: str
    key: str
    forms: Counter = field(default_factory=Counter)  # surface forms as the labellers wrote them
    judged_correct: int = 0
    judged_wrong: int = 0
    passages: set[str] = field(default_factory=set)
    decides: set[str] = field(default_factory=set)
    f1: float = 0.0
    contained: bool = False
    is_gold: bool = False
    previous: str = ""
    min_f1: float = MIN_F1.default

    @property
    def answer(self) -> str:
        """The most frequent surface form (first seen on ties)."""
        return self.forms.most_common(1)[0][0] if self.forms else self.key

    @property
    def judge(self) -> str:
        if self.judged_wrong == 0:
            return "correct"
        return "wrong" if self.judged_correct == 0 else "mixed"

    @property
    def contested(self) -> bool:
        return self.judged_correct == 0 and not self.is_gold and (self.contained or self.f1 >= self.min_f1)

    @property
    def exportable(self) -> bool:
        return not self.is_gold and (self.judged_correct > 0 or self.contested or bool(self.previous))

    @property
    def reason(self) -> str:
        if self.previous and self.judged_correct == 0 and not self.contested:
            return f"reviewed before ({self.previous})"
        if self.judged_correct > 0:
            return "judged correct" if self.judge == "correct" else "judged correct in some passages"
        why = "contains or is contained in a gold alias" if self.contained else f"token F1 {self.f1:.2f} to gold"
        return f"contested: judged wrong, {why}"


def collect_candidates(rows: Iterable[LabelRow], questions: dict[str, Question], state: VerificationState,
                       *, qids: Iterable[str] | None = None,
                       min_f1: float = MIN_F1.default) -> dict[tuple[str, str], Candidate]:
    """(qid, normalised answer) -> Candidate, for every answer any labeller gave."""
    rows = list(rows)
    wanted = set(qids) if qids is not None else None
    source = resolve_copies(rows)
    out: dict[tuple[str, str], Candidate] = {}
    for r in rows:
        if wanted is not None and r.qid not in wanted:
            continue
        src = source[r.pid]
        keys = src.answer_keys()
        for key, ok in keys.items():
            c = out.setdefault((r.qid, key), Candidate(qid=r.qid, key=key, min_f1=min_f1))
            c.passages.add(r.pid)
            if not any(v for k, v in keys.items() if k != key):
                c.decides.add(r.pid)
            if src is not r:
                continue  # copies share the source's judgements; count those once
            for who, ans in r.answers.items():
                if answer_key(ans) == key:
                    c.forms[ans.strip()] += 1
                    if r.correct.get(who, False):
                        c.judged_correct += 1
                    else:
                        c.judged_wrong += 1
    for (qid, key), c in out.items():
        q = questions.get(qid)
        gold = state.original_gold_keys(qid, q.answers) if q else set()
        c.is_gold = key in gold
        c.f1, c.contained = closeness(key, gold | state.added_keys(qid))
        c.previous = state.verdicts.get(qid, {}).get(key, "")
    return out
