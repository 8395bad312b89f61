"""Measure names: one table of measure families and their parameters, and the parser.

A measure is a family, parameters and a cutoff, written as ir_measures writes them:
`nDCG@10`, `nDCG(gain=exp)@10`, `nDCG(gains={0:0,1:1,2:3})@10`, `P(rel=2)@5`, `RR(rel=2)`,
`nDCG(judged_only=True)@10`, `AP`, `Judged@10`. A name is read without regard to letter
case, and the spellings of ranx (`ndcg@10`, `ndcg_burges@10`, `hit_rate@10`, `hits@10`,
`mrr@10`, `recall@100`, `precision@5`, `map@100`, `r-precision`, a relevance level written
`precision@5-l2`) and trec_eval (`ndcg_cut.10` or `ndcg_cut_10`, `recip_rank`, `P.5`,
`recall.100`, `map_cut.100`, `success.10`) are other spellings of the same families, meaning
what they mean in those tools; a trec_eval name that means several cutoffs without one
(`ndcg_cut`, `map_cut`) is refused rather than read as the whole list.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..errors import InputError
from ..defaults import MIN_LABEL
from ..text import close_matches, did_you_mean


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "count" (a whole number >= 1), "choice", "flag" (true or false), "gains" ({label: gain})
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    def read(self, text: str, measure: str) -> Any:
        value = text.strip().lower()
        bad = lambda what: InputError(f"metric {measure!r}: {self.name} must be {what}", field="metrics")  # noqa: E731
        if self.kind == "count":
            if not value.isdigit() or int(value) < 1:
                raise bad("a whole number >= 1")
            return int(value)
        if self.kind == "flag":
            if value not in ("true", "false"):
                raise bad("True or False")
            return value == "true"
        if self.kind == "gains":
            return _gains(value, bad)
        if value not in self.choices:
            raise bad(" or ".join(self.choices))
        return value

    def show(self, value: Any) -> str:
        if self.kind == "gains":
            return "{" + ",".join(f"{label}:{g:g}" for label, g in value) + "}"
        return str(value)


def _gains(text: str, bad: Any) -> tuple[tuple[int, float], ...]:
    """`{0:0,1:1,2:3}` as ((label, gain), ...), sorted, a label that gains itself left out (as
    ir_measures writes it: an unlisted label gains its own value)."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        raise bad("a mapping of labels to gains, e.g. {0:0,1:1,2:3}")
    out = {}
    for pair in filter(None, (p.strip() for p in inner[1:-1].split(","))):
        label, colon, gain = pair.partition(":")
        try:
            if not colon:
                raise ValueError
            out[int(label)] = float(gain)
        except ValueError:
            raise bad("a mapping of labels to gains, e.g. {0:0,1:1,2:3}") from None
        if not math.isfinite(out[int(label)]):
            raise bad("a mapping of labels to finite gains")
    return tuple(sorted((label, g) for label, g in out.items() if g != label))


PARAMS = {p.name: p for p in (
    # The default relevance level is the call's min_label, itself MIN_LABEL unless given.
    Param("rel", "count", MIN_LABEL.default, "lowest label that counts as relevant"),
    Param("gain", "choice", "lin", "nDCG's gain: the label (lin) or 2^label - 1 (exp)", ("lin", "exp")),
    Param("gains", "gains", None, "nDCG's gain of each label, as ir_measures' gains= (unlisted: the label)"),
    Param("judged_only", "flag", False, "rank only the judged passages (unjudged ones removed first), trec_eval -J"),
)}


@dataclass(frozen=True)
class Family:
    name: str  # as ir_measures spells it: the canonical name
    cutoff: str  # "required", "optional" (none: the whole list) or "none"
    params: tuple[str, ...]
    means: str


_J = "judged_only"
FAMILIES = {f.name: f for f in (
    Family("Success", "required", ("rel", _J), "1 if a relevant passage is in the top k"),
    Family("Hits", "required", ("rel",), "relevant passages in the top k (a count)"),
    Family("R", "required", ("rel", _J), "relevant in the top k / all relevant"),
    Family("P", "required", ("rel", _J), "relevant in the top k / k"),
    Family("RR", "optional", ("rel", _J), "1 / rank of the first relevant passage (within the top k)"),
    Family("AP", "optional", ("rel", _J), "average precision (within the top k)"),
    Family("nDCG", "optional", ("rel", "gain", "gains", _J), "normalised discounted cumulative gain"),
    Family("Rprec", "none", ("rel", _J), "precision at rank R, R = the number of relevant passages"),
    Family("Judged", "required", (), "judged passages in the top k / passages ranked there"),
)}
# trec_eval names that mean several cutoffs when given none (its defaults 5, 10, ..., 1000).
CUTOFF_LISTS = ("ndcg_cut", "map_cut")

# Every spelling, in lower case -> (family, parameters the spelling fixes).
SPELLINGS: dict[str, tuple[str, dict[str, Any]]] = {
    **{s: ("Success", {}) for s in ("success", "hit", "hit_rate")},
    "hits": ("Hits", {}),
    **{s: ("R", {}) for s in ("r", "recall")},
    **{s: ("P", {}) for s in ("p", "precision")},
    **{s: ("RR", {}) for s in ("rr", "mrr", "recip_rank")},
    **{s: ("AP", {}) for s in ("ap", "map", "map_cut")},
    **{s: ("nDCG", {}) for s in ("ndcg", "ndcg_cut")},
    **{s: ("nDCG", {"gain": "exp"}) for s in ("ndcg_exp", "ndcg_burges")},
    **{s: ("Rprec", {}) for s in ("rprec", "r-precision", "r_precision")},
    "judged": ("Judged", {}),
}

# family, (parameters), @k or trec_eval's _k or .k, ranx's relevance level -lN
_NAME = re.compile(r"^([A-Za-z][A-Za-z_\-]*?)(?:\(([^()]*)\))?(?:@(\d+)|[_.](\d+))?(?:-l(\d+))?$")
_OUTER_COMMA = re.compile(r",(?![^{]*\})")  # a comma not inside {...}


@dataclass(frozen=True)
class Measure:
    """One measure as asked for: `spelled` is the name the result is keyed by."""

    family: str
    cutoff: int | None
    given: tuple[tuple[str, Any], ...]  # parameters fixed by the name
    spelled: str

    @property
    def name(self) -> str:
        return self.spelled

    @property
    def k(self) -> int | None:
        return self.cutoff

    def params(self, min_label: int = MIN_LABEL.default, defaults: Mapping[str, Any] = {}) -> dict[str, Any]:
        """Every parameter of the family: given, else the provider's default, else the table's
        (rel: the call's `min_label`)."""
        given = dict(self.given)
        return {p: given.get(p, defaults.get(p, min_label if p == "rel" else PARAMS[p].default))
                for p in FAMILIES[self.family].params}

    def canonical(self, min_label: int = MIN_LABEL.default, defaults: Mapping[str, Any] = {}) -> str:
        """The resolved measure, every parameter that differs from the table's default written out."""
        shown = [f"{p}={PARAMS[p].show(v)}" for p, v in self.params(min_label, defaults).items()
                 if v != PARAMS[p].default]
        return self.family + (f"({','.join(shown)})" if shown else "") + ("" if self.cutoff is None else f"@{self.cutoff}")


def known_names() -> list[str]:
    return sorted(SPELLINGS)


# Measures of ir_measures that inferqa does not compute: a near spelling of ours is another measure.
ELSEWHERE = {m.lower() for m in (
    "AP_IA", "Accuracy", "BPM", "Bpref", "Compat", "ERR", "ERR_IA", "INSQ", "INST", "IPrec", "MAP_IA", "NERR8",
    "NERR9", "NERR10", "NERR11", "NRBP", "NumQ", "NumRel", "NumRelRet", "NumRet", "P_IA", "RBP", "SDCG", "SetAP",
    "SetF", "SetP", "SetR", "SetRelP", "StRecall", "alpha_DCG", "alpha_nDCG", "infAP", "nERR_IA", "nNRBP")}


def _unknown(name: str, base: str) -> InputError:
    rest = name[len(base):] if name.startswith(base) else ""  # the parameters and cutoff, kept
    hint = did_you_mean(base, matches=[c + rest for c in close_matches(base.lower(), SPELLINGS, 3)],
                        quote=False, form="; {}")
    if base.lower() in ELSEWHERE:
        hint = f"; {base} is an ir_measures measure inferqa does not compute (score the run with ir_measures)"
    return InputError(f"unknown metric {name!r}{hint} (known: {', '.join(known_names())}; e.g. nDCG@10, "
                      "nDCG(gain=exp)@10, P(rel=2)@5, RR, Judged@10, ndcg_cut.10)", field="metrics")


def parse_measure(name: Any) -> Measure:
    """`"nDCG(gain=exp)@10"`, `"p@5"`, `"RR(rel=2)"`, `"ndcg_cut_10"`, or an ir_measures measure
    object (read through its str); keyed as spelled."""
    if isinstance(name, Measure):
        return name
    spelled = str(name).strip()
    m = _NAME.match(spelled.replace(" ", ""))
    if not m:
        raise _unknown(spelled, spelled)
    base, args, k = m.group(1), m.group(2), m.group(3) or m.group(4)
    if base.lower() not in SPELLINGS:
        raise _unknown(spelled, base)
    family_name, fixed = SPELLINGS[base.lower()]
    family = FAMILIES[family_name]
    given = dict(fixed)
    if m.group(5) is not None:
        args = ",".join(filter(None, [args, f"rel={m.group(5)}"]))
    for arg in _OUTER_COMMA.split(args or ""):
        if not arg.strip():
            continue
        key, eq, value = arg.partition("=")
        key = key.strip().lower()
        if not eq or key not in family.params:
            raise InputError(f"metric {spelled!r}: {family_name} takes "
                             + (", ".join(f"{p}=" for p in family.params) or "no parameter"), field="metrics")
        given[key] = PARAMS[key].read(value, spelled)
    if "gains" in given and "gain" in given and given["gain"] != fixed.get("gain"):
        raise InputError(f"metric {spelled!r}: give gain= or gains=, not both", field="metrics")
    if "gains" in given:
        given.pop("gain", None)  # gains= names every label's gain (ndcg_exp(gains=...) is that nDCG)
        if not given["gains"]:  # every label gains itself: gain=lin
            given["gain"] = given.pop("gains") or "lin"
    if k is None and base.lower() in CUTOFF_LISTS:
        raise InputError(f"metric {spelled!r} is trec_eval's {family_name} at several cutoffs: give one, e.g. "
                         f"{base}.10", field="metrics")
    if k is None and family.cutoff == "required":
        raise InputError(f"metric {spelled!r} needs a cutoff, e.g. {base}@10", field="metrics")
    if k is not None and family.cutoff == "none":
        raise InputError(f"metric {spelled!r} takes no cutoff", field="metrics")
    if k is not None and int(k) < 1:
        raise InputError(f"metric {spelled!r}: cutoff must be at least 1", field="metrics")
    return Measure(family_name, None if k is None else int(k), tuple(sorted(given.items())), spelled)


def metric_names(metrics: Any) -> list[Any]:
    """What `evaluate`/`compare` take as `metrics`: one name (`"RR"`), a comma-separated string,
    an ir_measures measure, or a sequence of them."""
    if isinstance(metrics, str):
        return [m.strip() for m in re.split(r",(?![^()]*\))", metrics) if m.strip()]  # not inside (...)
    if not isinstance(metrics, Iterable):
        return [metrics]
    return [name for m in metrics for name in (metric_names(m) if isinstance(m, str) else [m])]
