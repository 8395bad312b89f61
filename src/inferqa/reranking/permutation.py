"""Listwise plumbing shared by RankGPT-style LLM rerankers and LiT5: sliding windows and
turning a model's free-text ranking ("[2] > [3] > [1]") into a full permutation."""

from __future__ import annotations

import re
from typing import Callable, Sequence

_CHAIN = re.compile(r"\[?\s*\d+\s*\]?(?:\s*(?:>|,|>>|→)\s*\[?\s*\d+\s*\]?)+")
_BRACKETED = re.compile(r"\[\s*(\d+)\s*\]")
_NUMBER = re.compile(r"\d+")


def parse_permutation(text: str, n: int, first_id: int = 1) -> list[int]:
    """A permutation of range(n) read from a model's answer, repaired where needed.

    Ids are numbered from `first_id` in the prompt. The ids are read from the longest
    `a > b > c` chain if there is one (so numbers in prose around it are ignored), else
    from bracketed `[k]` ids, else from any number. Out-of-range ids and repeats are
    dropped (first mention wins); ids the model left out follow in their given order.
    """
    chains = [m.group(0) for m in _CHAIN.finditer(text)]
    if chains:
        source = max(chains, key=lambda c: len(_NUMBER.findall(c)))
        ids = [int(x) for x in _NUMBER.findall(source)]
    elif _BRACKETED.search(text):
        ids = [int(x) for x in _BRACKETED.findall(text)]
    else:
        ids = [int(x) for x in _NUMBER.findall(text)]
    seen: list[int] = []
    for i in ids:
        k = i - first_id
        if 0 <= k < n and k not in seen:
            seen.append(k)
    return seen + [k for k in range(n) if k not in seen]


def sliding_windows(n: int, window: int, step: int) -> list[tuple[int, int]]:
    """[start, end) windows from the bottom of a list of n up to the top (RankGPT order).

    Unlike RankGPT's loop, the last window is clamped to start at 0, so the top of the
    list is always reranked even when (n - window) is not a multiple of `step`.
    """
    if window < 1 or step < 1:
        raise ValueError("window and step must be positive")
    if step > window:
        raise ValueError("step larger than the window would leave passages never compared")
    out, end = [], n
    while end > 0:
        start = max(end - window, 0)
        out.append((start, end))
        if start == 0:
            break
        end -= step
    return out


def listwise_order(n: int, window: int, step: int,
                   permute: Callable[[Sequence[int]], Sequence[int]]) -> list[int]:
    """Final order of range(n) after sliding `permute` over it bottom-up.

    `permute(indices)` receives the current occupants of one window (indices into the
    original list) and returns a permutation of positions 0..len-1 within that window.
    """
    order = list(range(n))
    for start, end in sliding_windows(n, window, step):
        current = order[start:end]
        perm = list(permute(current))
        if sorted(perm) != list(range(len(current))):
            raise ValueError(f"window permutation {perm} is not a permutation of {len(current)} positions")
        order[start:end] = [current[p] for p in perm]
    return order


def order_to_scores(order: Sequence[int]) -> list[float]:
    """Scores that sort into `order`: the first gets n, the last 1."""
    n = len(order)
    scores = [0.0] * n
    for pos, idx in enumerate(order):
        scores[idx] = float(n - pos)
    return scores
