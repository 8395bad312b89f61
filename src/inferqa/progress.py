"""Progress bars shared by the stages: a tqdm counter for batched work, rich's track for loops."""

from __future__ import annotations

from typing import Any, Iterable, Sequence


def counter(total: int | None, desc: str, unit: str, enabled: bool, **options: Any):
    """A tqdm bar to `update(n)` by hand (batched LLM or encoder calls). It stays on screen
    when closed: a finished bar shows its final count (a removed one leaves the last line
    drawn, which in a log is often 0 %)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, **options)


def track(items: Sequence, desc: str, enabled: bool, **options: Any) -> Iterable:
    """Iterate `items` with a rich progress bar, or plainly when disabled."""
    if not enabled:
        return items
    from rich.progress import track as rich_track

    return rich_track(items, description=desc, **options)
