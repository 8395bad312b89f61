"""Run files of every `run-format` plugin (built in: `trec`, `rankify`, a rerank's `checkpoint`;
plain or compressed), read and written in one place.

A file's format is the one whose declared `suffixes` hold its name's ending (before
.gz/.zst/.zsd), else the one whose `first_bytes` hold its first non-blank byte (Rankify
JSON: `[`), else TREC. Every problem is an InputError naming file, record and field; with
`strict=False` (the doctor) those a file can be read past go to the run's `findings`.
"""

from __future__ import annotations

import math
import numbers
import os
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from .. import registry
from ..errors import InputError, optional_import, warn
from ..io import STDIN, check_file, first_byte, inner_suffix
from .findings import Findings

if TYPE_CHECKING:
    from .benchmark import Benchmark

TREC, RANKIFY = "trec", "rankify"
Titles = dict  # qid -> the `title` of each passage of its ranking, as a Rankify source gave them (None: none)
RANKED_KEYS = ("reranked_ctxs", "ctxs")  # a reranker's output holds both; its own ranking wins
OPTIMAL = "optimal"


def score_problem(score: Any) -> str | None:
    """Why `score` cannot rank a passage ('is not a number', 'is NaN', 'is infinite'), or None:
    the one check of a run's scores, in files and objects alike."""
    if isinstance(score, bool) or not isinstance(score, numbers.Real):
        return "is not a number"
    if math.isnan(score):
        return "is NaN"
    return "is infinite" if math.isinf(score) else None


class Ranking(list):
    """One question's ranking: a list of (passage id, score), best first, that a passage id
    also indexes as ranx and pytrec_eval users do: `ranking[pid]` is its score (the first
    occurrence), `pid in ranking` whether it is ranked."""

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for pid, score in self:
                if pid == key:
                    return score
            raise KeyError(key)
        return super().__getitem__(key)

    def __contains__(self, item: Any) -> bool:
        if isinstance(item, str):
            return any(pid == item for pid, _ in self)
        return super().__contains__(item)


class Run(dict):
    """question id -> `Ranking` (passage id, score), best first. Read with `Run.from_file` (or
    `open_run`, which also checks it against a benchmark), written with `to_file`; a run read from
    a file carries its `format`, per question `info`, `findings` and `qids` (the questions to work on)."""

    def __init__(self, *args: Any, tag: str = "inferqa", **kwargs: Any):
        super().__init__()
        self.update(*args, **kwargs)
        self.tag = tag
        self.format: str | None = None
        self.info: list[dict[str, Any]] = []
        self.findings: Findings = Findings()
        self._qids: list[str] | None = None
        self.checked_against: Any = None  # the benchmark path `open_run` checked the ids against
        self.bench_hash: str | None = None  # the content hash of the benchmark the run was made against

    def __setitem__(self, qid: str, ranked: Iterable) -> None:
        super().__setitem__(qid, ranked if type(ranked) is Ranking else Ranking(ranked))

    def update(self, *args: Any, **kwargs: Any) -> None:
        for qid, ranked in dict(*args, **kwargs).items():
            self[qid] = ranked

    def setdefault(self, qid: str, default: Any = None) -> Any:
        if qid not in self:
            self[qid] = [] if default is None else default
        return super().__getitem__(qid)

    def __repr__(self) -> str:
        longest = max((len(r) for r in self.values()), default=0)
        return f"Run(tag={self.tag!r}, {len(self)} questions, at most {longest} passages each)"

    @property
    def qids(self) -> list[str]:
        """The question ids to work on: those set by `open_run` (a split's), else the run's own."""
        return list(self) if self._qids is None else self._qids

    @qids.setter
    def qids(self, qids: Iterable[str] | None) -> None:
        self._qids = None if qids is None else list(qids)

    @classmethod
    def from_file(cls, path: str | os.PathLike, kind: str | None = None, *, bench: "Benchmark | None" = None,
                  split: str | None = None, allow_partial: bool = False, allow_duplicates: bool = False,
                  strict: bool = True, **options: Any) -> "Run":
        """A run file in run format `kind` (None: `sniff`), not checked against a benchmark;
        `bench` and `split` where the format needs them (Rankify JSON: matched by position).
        `options` go to the format's reader (Rankify: `ranking`, `by_position`, `texts`)."""
        if str(path) != STDIN:
            path = check_file(path)
        findings = Findings(strict)
        fmt = kind or sniff(path)
        reader = registry.create("run-format", fmt)
        run, info = reader.read(path, bench, split, findings=findings, allow_partial=allow_partial,
                                allow_duplicates=allow_duplicates, **options)
        run.format, run.info, run.findings = fmt, info, findings
        marked = BENCH_MARK.fullmatch(run.tag or "")  # the tag's benchmark mark moves to `bench_hash`
        if marked:
            run.tag, run.bench_hash = marked[1], marked[2]
        return run

    def to_file(self, path: str | os.PathLike, kind: str | None = None, *, tag: str | None = None,
                against: "Benchmark | None" = None, **context: Any) -> None:
        """The run written by run format `kind` (default: by the path's suffix, else `trec`);
        `context` goes to its writer (Rankify: bench, split). The tag is marked with the content
        hash of the benchmark the run was made `against` (else `bench_hash`), which scoring checks."""
        fmt = kind or run_format_by_name(path) or TREC
        bench = against if against is not None else context.get("bench")
        content_hash = (bench.meta.get("content_hash") if bench is not None else None) or self.bench_hash
        registry.create("run-format", fmt).write(self, path, tag=marked_tag(tag or self.tag, content_hash), **context)

    @property
    def titles(self) -> Titles:
        """qid -> the `title` of each passage of its ranking, as a Rankify file gave them."""
        return {d["qid"]: d["titles"] for d in self.info if "titles" in d}

    @property
    def reranked(self) -> bool:
        """Whether the file was a reranker's output (Rankify `reranked_ctxs`)."""
        return any(d.get("key") == "reranked_ctxs" for d in self.info)

    def derive(self, rankings: dict, tag: str | None = None) -> "Run":
        """A new run of `rankings` that keeps this one's tag (unless given), `format`, `findings`,
        `qids` (those still ranked) and `info`, its per-passage lists following each passage: how
        every run-to-run step (top, only, diversify, fuse, rerank) builds its output."""
        out = Run(rankings, tag=self.tag if tag is None else tag)
        out.format, out.findings, out.bench_hash = self.format, self.findings, self.bench_hash
        out.info = [_realigned(d, self.get(d.get("qid"), []), out.get(d.get("qid"), [])) for d in self.info
                    if d.get("qid") in out]
        if self._qids is not None:
            out.qids = [q for q in self._qids if q in out]
        if self.checked_against is not None:
            seen = {p for ranked in self.values() for p, _ in ranked}
            if all(p in seen for ranked in out.values() for p, _ in ranked):
                out.checked_against = self.checked_against  # no passage the check has not seen
        return out

    def to_ranx(self) -> Any:
        """This run as a `ranx.Run` named by its tag (ranx orders by score: give distinct scores)."""
        ranx = optional_import("ranx", "Run.to_ranx")
        return ranx.Run({q: {p: float(s) for p, s in reversed(r)} for q, r in self.items() if r}, name=self.tag)

    def to_dataframe(self) -> Any:
        """This run as a PyTerrier frame: qid, docno, score, rank (from 0), in list order."""
        pd = optional_import("pandas", "Run.to_dataframe")
        rows = [(q, p, float(s), r) for q, ranked in self.items() for r, (p, s) in enumerate(ranked)]
        return pd.DataFrame(rows, columns=["qid", "docno", "score", "rank"])

    to_pyterrier = to_dataframe

    def top(self, k: int) -> "Run":
        return self.derive({qid: ranked[:k] for qid, ranked in self.items()})

    def only(self, qids: Iterable[str], fill: bool = False) -> "Run":
        """The rankings of `qids`, in that order; with `fill`, a question the run lacks gets an
        empty ranking, else it is left out."""
        return self.derive({q: self.get(q, []) for q in qids if fill or q in self})

    def iter_lines(self) -> Iterator[tuple[str, str, int, float]]:
        for qid, ranked in self.items():
            for rank, (pid, score) in enumerate(ranked, 1):
                yield qid, pid, rank, score


PASSAGE_INFO = ("titles", "texts")  # info lists holding one value per passage of the question's ranking


def _realigned(info: dict[str, Any], before: list, after: list) -> dict[str, Any]:
    """A question's `info` with its `PASSAGE_INFO` lists reordered from ranking `before` to
    `after` (None for a passage `before` lacks)."""
    out = dict(info)
    for key in PASSAGE_INFO:
        values = info.get(key)
        if isinstance(values, list) and len(values) == len(before) and before != after:
            by_pid: dict[str, Any] = {}
            for (pid, _), value in zip(before, values):
                by_pid.setdefault(pid, value)
            out[key] = [by_pid.get(pid) for pid, _ in after]
    return out


class RunFormat:
    """A way of storing runs, registered with `@plugin("run-format", NAME, ...)` on a
    subclass; `suffixes=(".ext", ...)` and `first_bytes=b"..."` declare which files are its."""

    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False) -> tuple[Run, list[dict[str, Any]]]:
        """(the run, its per question `info`); a problem the file can be read past goes to `findings.add`."""
        raise InputError(f"run format {self.name!r} cannot be read", file=path)

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None, **context: Any) -> None:
        """`run` at `path`, atomically (`io.atomic_open`); `context` as the format needs (Rankify: bench, split)."""
        raise InputError(f"run format {self.name!r} cannot be written", file=path)


def run_format_by_name(path: str | os.PathLike) -> str | None:
    """The run format whose declared `suffixes` hold the ending of `path` (before .gz/.zst/.zsd), if any."""
    return registry.claimed("run-format", "suffixes", inner_suffix(path))


def sniff(path: str | os.PathLike) -> str:
    """The run format of a file (see the module's docstring): `rankify`, `trec` or a plugin's."""
    return run_format_by_name(path) or registry.claimed("run-format", "first_bytes", first_byte(path)) or TREC


def checked_score(raw: Any, default: float | None = None, **where: Any) -> float:
    """A passage's score as a float: a number or numeric text (None: `default`, where there is
    one); anything else, NaN and infinities, is an InputError at `where` (file, record, field)."""
    if raw is None and default is not None:
        return default
    bad = InputError(f"score {raw!r} is not a number", **where)
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        raise bad
    try:
        score = float(raw)
    except ValueError:
        raise bad from None
    if problem := score_problem(score):
        raise InputError(f"score {problem}", **where)
    return score


def check_same_questions(runs: list[Run], files: list[Any]) -> None:
    """Refuse runs over different question sets (fusing them would score some questions from
    fewer runs than others), naming the first file that differs."""
    first = set(runs[0])
    for run, file in zip(runs[1:], files[1:]):
        if set(run) != first:
            extra, missing = sorted(set(run) - first), sorted(first - set(run))
            what = (f"{len(missing)} of its questions missing (e.g. {missing[0]})" if missing else
                    f"{len(extra)} questions {files[0]} lacks (e.g. {extra[0]})")
            raise InputError(f"covers other questions than {files[0]}: {what}; give runs of the same questions "
                             "(or --allow-partial)", file=file, field="qid")


# What a run was made against: the first 16 hex digits of the benchmark's content hash after
# the run tag (`bm25@0123456789abcdef`), the TREC column every scorer ignores, so the file
# stays one that trec_eval, ranx and ir_measures read and no other file is written.
SHORT_HASH_DIGITS = 16
BENCH_MARK = re.compile(rf"(.*)@([0-9a-f]{{{SHORT_HASH_DIGITS}}})")
BENCH_HASH_FIELD = "bench_hash"  # the field of an ANSWERS.jsonl row holding the same mark; readers ignore it


def short_hash(content_hash: str) -> str:
    """A benchmark content hash as runs, answers files and warnings show it: its first 16 hex digits."""
    return content_hash[:SHORT_HASH_DIGITS]


class BenchmarkChangedWarning(UserWarning):
    """A run scored against a benchmark rebuilt or relabelled since the run was made."""

    prefix = "inferqa: warning"


def marked_tag(tag: str, content_hash: str | None) -> str:
    """`tag` carrying the benchmark content hash (a mark it had already replaced)."""
    plain = BENCH_MARK.fullmatch(tag)
    tag = plain[1] if plain else tag
    return f"{tag}@{short_hash(content_hash)}" if content_hash else tag


def warn_if_benchmark_changed_since(recorded: str | None, source: Any, bench: "Benchmark") -> str | None:
    """Warn when the content hash `source` (a run or answers file) `recorded` is not `bench`'s own;
    returns `bench`'s (None: it records none)."""
    now = bench.meta.get("content_hash") if isinstance(bench.meta, dict) else None
    if isinstance(recorded, str) and recorded and now and not now.startswith(recorded):
        warn(BenchmarkChangedWarning(
            f"{source} was made against benchmark {short_hash(recorded)}, but {bench.path} is now {short_hash(now)} "
            "(rebuilt or relabelled since): its scores use the new labels"))
    return now
