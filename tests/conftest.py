"""Shared test fixtures. Stage-specific fixtures live in each stage's test files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INFERQA_SHARED", REPO.parent / "shared"))
WIKIHINT = SHARED / "data" / "wikihint" / "test.json"
TRIVIAHG = SHARED / "data" / "triviahg" / "validation.json"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def need_shared(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"shared data file {path} is absent (tests read ../shared/data; it is never copied into the repo)")
    return path


@pytest.fixture
def wikihint_file() -> Path:
    return need_shared(WIKIHINT)


@pytest.fixture
def triviahg_file() -> Path:
    return need_shared(TRIVIAHG)
