"""The diversification step's options, shared by `retrieve`, `rerank`, `tune-diversify` and the
experiment file (`inferqa.retrieve.diversify` applies them)."""

from __future__ import annotations

from ..parameters import (GROUPING, MARGIN, DIVERSIFY_OPTIONS as OPTIONS, PER_GROUP, SHARE)  # noqa: F401 - re-exported until the stage moves

from . import REQUIRED, Option

