"""Where the benchmark scripts find the real hint data: the folder named by INFERQA_SHARED
(default: `shared/` beside the repository) holds `data/wikihint/test.json`,
`data/triviahg/validation.json`, ... as their authors distribute them. The data is never
copied into the repository."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INFERQA_SHARED", REPO.parent / "shared"))
WIKIHINT = SHARED / "data" / "wikihint" / "test.json"
TRIVIAHG = SHARED / "data" / "triviahg" / "validation.json"
