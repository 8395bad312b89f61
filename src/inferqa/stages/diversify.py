"""The diversification step's options, shared by `retrieve`, `rerank`, `tune-diversify` and the
experiment file (`inferqa.retrieve.diversify` applies them)."""

from __future__ import annotations

from ..defaults import HINT_GROUPING
from . import REQUIRED, Option

PER_GROUP = Option("diversify", int, REQUIRED, "at most N passages of one hint-group in the head; the rest "
                   "follow in order", min=1)
GROUPING = Option("diversify_by", str, HINT_GROUPING, "the hint-groups: set (the same hint texts) or linked (joined by "
                  "shared hint texts: a question's whole family of passages); `inferqa plugins hint-group`")
MARGIN = Option("diversify_margin", float, None, "adaptive: diversify a query only when its top hint-group's "
                 "score leads the next group's best score by less than this (unset: every query)", min=0.0)
SHARE = Option("diversify_share", float, None, "adaptive: diversify only this share of the queries, those "
                "whose top hint-group leads the next by least (ties by qid; unset: every query)", min=0.0, max=1.0)
OPTIONS = (PER_GROUP, GROUPING, MARGIN, SHARE)
