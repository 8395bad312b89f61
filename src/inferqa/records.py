"""Typed records passed between the pipeline's stages: questions, hints, passages, labels.

Passage ids follow the QUIT release: `{qid}_{mask}_{perm}`. `mask` has one 0/1 character
per kept hint of the question (position i from the left = hint i, as `inferqa build`
writes it), `perm` spells the hint indices in passage order (`Q_train_44835_10110_320`).
The release's bit order is inferred, not documented, so a mask is also accepted read from
the right; loaders hold one file to one reading. Question ids may hold underscores, so
ids are parsed from the right.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Sequence

LABEL_NONE, LABEL_PARTIAL, LABEL_ANSWERABLE = 0, 1, 2


def answerability_label(correct: Iterable[bool]) -> int:
    """A passage of its own question: 2 if any labeller's answer from it is correct, else 1."""
    return LABEL_ANSWERABLE if any(correct) else LABEL_PARTIAL


@dataclass(frozen=True)
class Hint:
    text: str
    convergence: float | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Hint":
        return cls(text=d["text"], convergence=d.get("convergence"), source=d.get("source"))


@dataclass
class Question:
    id: str
    text: str
    answers: list[str]
    hints: list[Hint]
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "answers": list(self.answers),
                "hints": [h.to_dict() for h in self.hints], "metadata": self.metadata}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Question":
        return cls(id=str(d["id"]), text=d["text"], answers=list(d["answers"]),
                   hints=[Hint.from_dict(h) for h in d.get("hints", [])], metadata=dict(d.get("metadata") or {}))


@dataclass(frozen=True)
class Passage:
    id: str
    qid: str
    order: tuple[int, ...]
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "qid": self.qid}


ID_SCHEME = "qid_mask_perm"
LEFT_TO_RIGHT, RIGHT_TO_LEFT = "left-to-right", "right-to-left"
MASK_BITS = (LEFT_TO_RIGHT, RIGHT_TO_LEFT)


def _digits(indices: Iterable[int]) -> str:
    out = []
    for i in indices:
        if not 0 <= i <= 9:
            raise ValueError(f"hint index {i} does not fit one digit (at most 10 hints per question)")
        out.append(str(i))
    return "".join(out)


def hint_mask(order: Iterable[int], n_hints: int, bits: str = LEFT_TO_RIGHT) -> str:
    """`hint_mask((3, 0, 2), 5) == "10110"`: one 0/1 character per hint, set where used."""
    used = set(order)
    if any(not 0 <= i < n_hints for i in used):
        raise ValueError(f"hint indices {sorted(used)} do not fit a question of {n_hints} hints")
    chars = ["1" if i in used else "0" for i in range(n_hints)]
    if bits == RIGHT_TO_LEFT:
        chars.reverse()
    elif bits != LEFT_TO_RIGHT:
        raise ValueError(f"mask bit order must be one of {', '.join(MASK_BITS)}, not {bits!r}")
    return "".join(chars)


def passage_id(qid: str, order: Sequence[int], n_hints: int, bits: str = LEFT_TO_RIGHT) -> str:
    """`passage_id("Q_train_44835", (3, 2, 0), 5) == "Q_train_44835_10110_320"`."""
    return f"{qid}_{hint_mask(order, n_hints, bits)}_{_digits(order)}"


def mask_readings(mask: str, order: Sequence[int]) -> tuple[str, ...]:
    """The bit orders (of MASK_BITS) under which `mask`'s set bits name exactly the hints of `order`."""
    n = len(mask)
    if not mask or set(mask) - {"0", "1"} or len(set(order)) != len(order) or any(i >= n for i in order):
        return ()
    # hint_mask(order, n, bits) == mask for each bits, without building the strings (a hot path:
    # every corpus line and every run passage is parsed)
    ones = {i for i, c in enumerate(mask) if c == "1"}
    used = set(order)
    return tuple(bits for bits, named in ((LEFT_TO_RIGHT, used), (RIGHT_TO_LEFT, {n - 1 - i for i in used}))
                 if ones == named)


def split_passage_id(pid: str) -> tuple[str, str, str]:
    """(question id, mask, perm) as spelled, without checking that they agree."""
    parts = pid.rsplit("_", 2)
    if len(parts) != 3 or not parts[0] or not parts[1] or not parts[2].isdigit():
        raise ValueError(f"not a passage id of the form qid_mask_perm: {pid!r}")
    return parts[0], parts[1], parts[2]


def question_of(pid: str) -> str | None:
    """The question id of passage id `pid` (`split_passage_id`), None for an id of another form."""
    try:
        return split_passage_id(pid)[0]
    except ValueError:
        return None


def parse_passage_id(pid: str) -> tuple[str, tuple[int, ...]]:
    """Inverse of `passage_id`: (question id, hint order). The mask (as wide as the id spells
    it: one character per hint of the question) must name the perm's hints, read from the left
    or from the right. The one parser of passage ids, with `split_passage_id` under it."""
    qid, mask, perm = split_passage_id(pid)
    order = tuple(int(c) for c in perm)
    if not mask_readings(mask, order):
        raise ValueError(f"passage id {pid!r}: mask {mask!r} does not name the hints of perm {perm!r}")
    return qid, order


def is_old_passage_id(pid: str) -> bool:
    """An id of the scheme before QUIT's (`q7_013_301`: sorted hint indices, then the order)."""
    try:
        _, subset, perm = split_passage_id(pid)
    except ValueError:
        return False
    return subset.isdigit() and "".join(sorted(perm)) == subset and len(set(perm)) == len(perm)
