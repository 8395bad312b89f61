"""Qrels files given by the user (`evaluate --qrels`, the API): TREC `qid 0 pid label`, plain
or compressed, parsed by `Qrels.load` (the parser a benchmark's own qrels.tsv uses too)."""

from __future__ import annotations

import os

from ..records import Qrels


def open_qrels(path: str | os.PathLike) -> Qrels:
    """The qrels of a TREC qrels file; a malformed or truncated line is one error naming it."""
    return Qrels.load(path)
