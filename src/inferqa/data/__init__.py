"""Question sources: WikiHint, TriviaHG (both schemas), the QUIT release, generic JSONL/CSV.

`load_questions(path, fmt="auto")` returns validated `Question`s with cleaned text
(mojibake repaired, citation markers removed, whitespace collapsed). Bad input raises
`InputError` naming the file, the record and the field.

A source's format is that of the `data-format` plugin (built-in or registered) whose
declared `suffixes` hold the ending of what the file holds (`.csv`, `.tsv`, `.jsonl`), else
whose `looks_like` test the first record of its JSON passes (a plugin's `claim_order`, default
0, orders the tests; the generic format, which takes any object with a question, is tried last).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import registry
from ..errors import InputError
from ..io import check_file, content_suffix, first_jsonl_value, iter_jsonl, read_json
from ..records import Question
from ..registry import plugin
from . import generic, quit, triviahg, wikihint

FORMAT = "data-format"
GENERIC, CSV = "jsonl", "csv"


# The data formats (`inferqa plugins data-format`, or `auto`): (path, its parsed JSON or None) -> questions.
def _json_format(source: Any) -> Callable[[Path, Any], list[Question]]:
    def parse(path: Path, data: Any) -> list[Question]:
        return source.parse(read_json(path) if data is None else data, path)
    return parse


for _name, _source, _help in (
        ("wikihint", wikihint, "WikiHint JSON"), ("triviahg", triviahg, "TriviaHG JSON (both schemas)"),
        ("quit", quit, "the QUIT release's train/dev/test JSON (passages rebuilt from the hints)")):
    plugin(FORMAT, _name, looks_like=_source.looks_like, help=_help)(_json_format(_source))


@plugin(FORMAT, GENERIC, suffixes=(".jsonl",), looks_like=generic.looks_like, claim_order=1,
        help="generic JSONL, or a JSON array of the same objects")
def _jsonl(path: Path, data: Any) -> list[Question]:
    if content_suffix(path) == ".json":
        data = read_json(path) if data is None else data
        if not isinstance(data, list):
            raise InputError("expected a JSON array of question objects", file=path)
        return generic.parse_records(enumerate(data), path)
    return generic.parse_records(((f"line {n}", obj) for n, obj in iter_jsonl(path)), path)


@plugin(FORMAT, CSV, suffixes=(".csv", ".tsv"), help="generic CSV or TSV (id, question, answers, hint_1, ...)")
def _csv(path: Path, data: Any) -> list[Question]:
    return generic.parse_csv(path)


DEMO_FILE = "demo_questions.jsonl"


def demo_path() -> Path:
    """The embedded demo questions (generic JSONL) shipped inside the package."""
    return Path(str(resources.files("inferqa.data").joinpath("demo", DEMO_FILE)))


def sniff(path: Path, data: Any = None) -> tuple[str, Any]:
    """(the format of `path`, from its ending and the shape of its first record (see the module's
    docstring); its parsed JSON: `data`, read here where the file's ending claims no format)."""
    by_name = registry.claimed(FORMAT, "suffixes", content_suffix(path))
    if by_name == GENERIC and quit.looks_like_corpus(first_jsonl_value(path)):
        raise InputError("this is a QUIT corpus.jsonl (id/contents/title); pass the release's "
                         "train/dev/test JSON instead: passages are rebuilt from their hints", file=path)
    if by_name:
        return by_name, data
    if data is None:
        data = read_json(path)
    if isinstance(data, list) and not data:
        raise InputError("no questions in file (an empty JSON array)", file=path)
    first = data[0] if isinstance(data, list) else data
    by_shape = registry.claimed(FORMAT, "looks_like", first)
    if by_shape:
        return by_shape, data
    raise InputError("unknown format: not WikiHint, TriviaHG, QUIT or generic JSONL/CSV "
                     "(pass --format to choose one)", file=path, record=0 if isinstance(data, list) else None)


AUTO = "auto"  # the source format told from the file itself (`sniff`)


def load_questions(path: str | os.PathLike, fmt: str = AUTO) -> list[Question]:
    """Read one source file into validated questions (ids unique within the file); `fmt` "auto"
    sniffs the format through the `data-format` registry (plugins included)."""
    path = Path(path)
    if fmt != AUTO and fmt not in registry.available(FORMAT):
        raise InputError(f"unknown format {fmt!r} (choose from auto, {', '.join(registry.available(FORMAT))})",
                         file=path, field="format")
    check_file(path)
    data = None
    if fmt == AUTO:
        fmt, data = sniff(path)
    return registry.create(FORMAT, fmt)(path, data)


def load_sources(paths: "Sequence[str | os.PathLike]", fmt: str = AUTO,
                 origins: "dict[str, str | os.PathLike] | None" = None) -> list[Question]:
    """The questions of several source files, in order; a question id may occur once in all.
    `origins`, when given, receives each question id's source path."""
    questions, seen = [], {} if origins is None else origins
    for path in paths:
        for q in load_questions(path, fmt):
            if q.id in seen:
                raise InputError(f"duplicate question id {q.id!r} (also in {seen[q.id]})", file=path,
                                 record=q.id, field="id")
            seen[q.id] = path
            questions.append(q)
    return questions


__all__ = ["demo_path", "load_questions", "load_sources", "sniff"]
