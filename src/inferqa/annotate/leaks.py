"""Re-run the leakage filter on an already-built benchmark when answers become new aliases.

What the leak policy means after the passages exist (and have ids, runs and caches):
  drop-hint      the passages holding the leaking hint leave corpus.jsonl, qrels.tsv and
                 labels.jsonl; the hint stays in questions.jsonl so that every other
                 passage keeps its id, and its index goes to the question's
                 `metadata.dropped_hints`. A question left with no usable hint is dropped.
  drop-question  the question leaves questions.jsonl and splits.json, its passages every
                 passage file.
  flag           nothing is removed; the leak is recorded in meta.json only.
The policy comes from meta.json's `options.leak_policy` (as `inferqa build` wrote it)
unless overridden; the builder's `none`, or no policy at all, means flag.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ..errors import InputError
from ..records import parse_passage_id
from .state import VerificationState

FLAG, DROP_HINT, DROP_QUESTION = "flag", "drop-hint", "drop-question"
LEAK_ACTIONS = (FLAG, DROP_HINT, DROP_QUESTION)


@dataclass(frozen=True)
class LeakFinding:
    qid: str
    hint: int
    alias: str


@dataclass
class DropPlan:
    questions: set[str] = field(default_factory=set)
    hints: dict[str, set[int]] = field(default_factory=dict)

    @property
    def any(self) -> bool:
        return bool(self.questions or self.hints)

    def drops(self, pid: str) -> bool:
        try:
            qid, order = parse_passage_id(pid)
        except ValueError:
            return False
        return qid in self.questions or bool(self.hints.get(qid, set()) & set(order))


def leak_action_of(meta: dict, override: str | None = None) -> str:
    """`override`, else the build's `options.leak_policy` (its `none` means flag), else flag."""
    value = override or (meta.get("options") or {}).get("leak_policy") or meta.get("leak_policy") or FLAG
    action = str(value).replace("_", "-").lower()
    action = FLAG if action == "none" else action
    if action not in LEAK_ACTIONS:
        raise InputError(f"unknown leak policy {value!r} (use {', '.join(LEAK_ACTIONS)})", field="leak_policy")
    return action


def find_leaks(raw_questions: dict[str, dict], new_aliases: Iterable[tuple[str, str]], state: VerificationState,
               judge: Any = None) -> list[LeakFinding]:
    """Hints (not dropped yet) that the judge says reveal one of the newly added aliases."""
    if judge is None:
        from ..construct.leakage import StringLeakJudge

        judge = StringLeakJudge()
    where: list[LeakFinding] = []
    items: list[tuple[str, list[str]]] = []
    for qid, alias in new_aliases:
        q = raw_questions[qid]
        gone = state.dropped_hint_indices(qid) | set((q.get("metadata") or {}).get("dropped_hints", []))
        for i, hint in enumerate(q.get("hints", [])):
            if i not in gone:
                where.append(LeakFinding(qid, i, alias))
                items.append((hint["text"], [alias]))
    verdicts = judge.leaks_many(items) if hasattr(judge, "leaks_many") else [judge.leaks(h, a) for h, a in items]
    return [f for f, leaked in zip(where, verdicts) if leaked]


def plan_drops(leaks: list[LeakFinding], action: str, raw_questions: dict[str, dict],
               state: VerificationState) -> DropPlan:
    """Record the leaks in `state` (and drop_hints in question metadata) and say what to remove."""
    plan = DropPlan()
    for f in leaks:
        record = {"qid": f.qid, "hint": f.hint, "alias": f.alias}
        if action == FLAG:
            state.flagged_leaks.append(record)
        elif action == DROP_QUESTION:
            plan.questions.add(f.qid)
            state.dropped_questions.append(record)
        else:
            plan.hints.setdefault(f.qid, set()).add(f.hint)
            state.dropped_hints.append(record)
    for qid, hints in plan.hints.items():
        meta = raw_questions[qid].get("metadata") or {}
        raw_questions[qid]["metadata"] = meta
        meta["dropped_hints"] = sorted(set(meta.get("dropped_hints", [])) | hints)
        if len(meta["dropped_hints"]) >= len(raw_questions[qid].get("hints", [])) and qid not in plan.questions:
            plan.questions.add(qid)
            state.dropped_questions.append({"qid": qid, "hint": None, "alias": None})
    return plan
