"""Deterministic, seeded train/dev/test splits: fractions, counts, the source's own splits, or
per-source roles (`SourceRoles`: one benchmark from several hint files, each source's questions
sent to named splits, some left out)."""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import InputError, warn
from ..records import Question
from ..parameters import BUILD_SPLIT as SPLIT

SPLIT_NAMES = {1: ("test",), 2: ("train", "test"), 3: ("train", "dev", "test")}
SOURCE = "source"


def parse_split(spec: "str | Sequence[float] | Mapping | SourceRoles | None"
                ) -> "tuple[float, ...] | str | SourceRoles":
    """`"0.7,0.1,0.2"` (fractions summing to 1), `"5000,862,1539"` (counts), `"source"`, or
    per-source roles: a `.json`/`.yaml` roles file, a mapping or `SourceRoles` (`read_roles`);
    None is SPLIT's default."""
    if spec is None:
        spec = SPLIT.default
    if isinstance(spec, SourceRoles):
        return spec
    if isinstance(spec, Mapping) or (isinstance(spec, (str, os.PathLike)) and _is_roles_file(spec)):
        return read_roles(spec)
    if isinstance(spec, str):
        if spec.strip() == SOURCE:
            return SOURCE
        try:
            values = tuple(float(x) for x in spec.split(","))
        except ValueError:
            raise InputError(f"--split {spec!r}: expected numbers separated by commas, or 'source'",
                             field="split") from None
    else:
        values = tuple(float(x) for x in spec)
    if not 1 <= len(values) <= 3:
        raise InputError(f"--split {spec!r}: expected 1 to 3 finite non-negative values", field="split")
    _check_sizes(values, f"--split {spec!r}")
    return values


def _check_sizes(values: Sequence[Any], what: str, file: Any = None) -> None:
    """Finite non-negative numbers: fractions summing to 1, or whole counts."""
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0
                         for v in values):
        raise InputError(f"{what}: expected finite non-negative numbers", file=file, field="split")
    is_counts = all(v == int(v) for v in values) and sum(values) > 1
    if not is_counts and abs(sum(values) - 1.0) > 1e-6:
        raise InputError(f"{what}: fractions must sum to 1 (or give whole counts)", file=file, field="split")


def make_splits(questions: Sequence[Question], spec: tuple[float, ...] | str, seed: int) -> dict[str, list[str]]:
    """Shuffle question ids with `seed` and cut them; counts that fall short of the question
    total leave the remainder in a split named `rest` (per-source roles: `SourceRoles.splits`)."""
    if spec == SOURCE:
        out: dict[str, list[str]] = {}
        for q in questions:
            name = q.metadata.get("split")
            if not name:
                raise InputError("--split source: question has no split in its source", record=q.id, field="split")
            out.setdefault(str(name), []).append(q.id)
        return out
    return _cut([q.id for q in questions], SPLIT_NAMES[len(spec)], spec, seed)


def _cut(qids: Sequence[str], names: Sequence[str], spec: Sequence[float], seed: int) -> dict[str, list[str]]:
    """`qids` shuffled with `seed`, cut into `names` by fractions or counts (`make_splits`)."""
    order = list(qids)
    random.Random(seed).shuffle(order)
    n = len(order)
    is_counts = all(v == int(v) for v in spec) and sum(spec) > 1
    if is_counts:
        sizes = [int(v) for v in spec]
        if sum(sizes) > n:
            raise InputError(f"--split counts add up to {sum(sizes)} but only {n} questions were kept",
                             field="split")
    else:
        # Cut at rounded cumulative fractions, so the sizes always add up to n.
        cuts = [0] + [min(n, round(sum(spec[:i + 1]) * n)) for i in range(len(spec) - 1)] + [n]
        sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    out, start = {}, 0
    for name, size, part in zip(names, sizes, spec):
        out[name] = order[start:start + size]
        start += size
        if size == 0 and part > 0:  # asked for, but too few questions to hold one
            warn(f"split {name!r} is empty: {part:g} of {n} question(s) rounds to none; a command "
                          f"that needs it will refuse (give more questions or a larger share)")
    if start < n:
        out["rest"] = order[start:]
    return out


# -- per-source roles ---------------------------------------------------------------------------
ROLE_KEYS = ("sources", "leave_out", "seed")


@dataclass(frozen=True)
class SourceRoles:
    """Per source file (resolved path), where its questions go: one split name, or split names
    to fractions / counts (cut as `make_splits` cuts: that source's kept questions shuffled with
    the build's seed). Questions of a split in `leave_out` are left out of the benchmark (e.g.
    the train questions of a source whose dev and test questions are queries)."""

    roles: tuple[tuple[str, "str | tuple[tuple[str, float], ...]"], ...]
    leave_out: tuple[str, ...] = ()
    seed: int | None = None  # the roles file's own seed, else the build's
    origin: str | None = None  # the roles file, for messages

    def role_of(self, source: str | os.PathLike) -> "str | tuple[tuple[str, float], ...]":
        key = str(Path(source).resolve())
        for path, role in self.roles:
            if path == key:
                return role
        raise InputError(f"source {str(source)!r} has no role in the roles file", file=self.origin, field="sources")

    def check_sources(self, sources: Sequence[str | os.PathLike]) -> None:
        """Every source has a role and every role names a given source (a typo is an error)."""
        given = {str(Path(s).resolve()) for s in sources}
        for s in sources:
            self.role_of(s)
        for path, _ in self.roles:
            if path not in given:
                raise InputError(f"role for {path!r}, which is not among the sources built from", file=self.origin,
                                 field="sources")

    def splits(self, qids: Sequence[str], source_of: Mapping[str, str],
               seed: int) -> tuple[dict[str, list[str]], list[str]]:
        """(split name -> question ids, the ids left out): each source's questions (`source_of`:
        question id -> source path) cut on their own, in the order of `qids`."""
        seed = self.seed if self.seed is not None else seed
        by_source: dict[str, list[str]] = {}
        for qid in qids:
            if qid not in source_of:
                raise InputError("question is in none of the source files", file=self.origin, record=qid,
                                 field="sources")
            by_source.setdefault(source_of[qid], []).append(qid)
        out: dict[str, list[str]] = {}
        for source, ids in by_source.items():
            role = self.role_of(source)
            parts = ({role: ids} if isinstance(role, str)
                     else _cut(ids, [n for n, _ in role], [v for _, v in role], seed))
            for name, part in parts.items():
                out.setdefault(name, []).extend(part)
        left = [q for name in self.leave_out for q in out.pop(name, [])]
        return out, left

    def to_json(self) -> dict:
        return {"sources": [{"path": p, "split": r if isinstance(r, str) else dict(r)} for p, r in self.roles],
                "leave_out": list(self.leave_out), **({"seed": self.seed} if self.seed is not None else {})}


def _is_roles_file(spec: str | os.PathLike) -> bool:
    return str(spec).lower().endswith((".json", ".yaml", ".yml"))


def read_roles(spec: "str | os.PathLike | Mapping") -> SourceRoles:
    """A roles file (JSON or YAML) or mapping: `{"sources": [{"path": P, "split": NAME or
    {NAME: fraction or count, ...}}, ...], "leave_out": [NAME, ...], "seed": N}`; paths are
    relative to the file's folder (to the working directory for a mapping)."""
    from ..io import read_json, read_yaml

    origin = None
    if not isinstance(spec, Mapping):
        origin = str(spec)
        spec = (read_json if str(spec).lower().endswith(".json") else read_yaml)(spec)
        if not isinstance(spec, Mapping):
            raise InputError("a roles file holds a mapping with 'sources'", file=origin, field="sources")
    unknown = [k for k in spec if k not in ROLE_KEYS]
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (expected {', '.join(ROLE_KEYS)})", file=origin, field=unknown[0])
    base = Path(origin).parent if origin else Path.cwd()
    entries = spec.get("sources")
    if not isinstance(entries, list) or not entries:
        raise InputError("'sources' must be a non-empty list of {path, split}", file=origin, field="sources")
    roles = tuple(_role(e, i, base, origin) for i, e in enumerate(entries))
    leave_out = spec.get("leave_out") or []
    if not isinstance(leave_out, list) or not all(isinstance(n, str) for n in leave_out):
        raise InputError("'leave_out' must be a list of split names", file=origin, field="leave_out")
    seed = spec.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InputError(f"'seed' must be a whole number, got {seed!r}", file=origin, field="seed")
    return SourceRoles(roles, tuple(leave_out), seed, origin)


def _role(entry: Any, i: int, base: Path, origin: str | None) -> tuple[str, Any]:
    where = f"sources[{i}]"
    if not isinstance(entry, Mapping) or set(entry) != {"path", "split"}:
        raise InputError(f"{where} must have exactly 'path' and 'split'", file=origin, field=where)
    role = entry["split"]
    if isinstance(role, Mapping):
        if not role or not all(isinstance(n, str) and n for n in role):
            raise InputError(f"{where}.split: split names must be non-empty strings", file=origin, field=where)
        _check_sizes(list(role.values()), f"{where}.split", origin)
        role = tuple((n, float(v)) for n, v in role.items())
    elif not isinstance(role, str) or not role:
        raise InputError(f"{where}.split must be a split name or {{name: fraction}}", file=origin, field=where)
    return str((base / str(entry["path"])).resolve()), role
