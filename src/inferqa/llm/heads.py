"""Where a prompt's blocks end: cuts fixed by its own content, shared by prompts that share text.

A prompt is evaluated as its *head* (a chat's messages but the last, or a plain prompt's
text up to its last blank line: the instruction and few-shot demonstrations), then each
line after it (a hint) as a block of its own, then its *tail*, always evaluated afresh as
its last position gives the first answer token's logits. A prompt without a head is one block.
The cuts depend on the prompt alone, never on the batch or on what was evaluated before, so
a greedy answer does not depend on batching and reuse; a backend that keeps the longest
block prefix and meets prompts in `trie_order` evaluates every node of the hints' trie once.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from .base import Message

T = TypeVar("T")


def common_prefix_len(seqs: Sequence[Sequence[Any]]) -> int:
    """Length of the longest prefix every sequence shares (tokens, or blocks of tokens)."""
    n = min((len(s) for s in seqs), default=0)
    return next((i for i in range(n) if any(s[i] != seqs[0][i] for s in seqs[1:])), n)


def chat_head(messages: Sequence[Message]) -> list[Message]:
    return [dict(m) for m in messages[:-1]]


def completion_head_end(text: str) -> int:
    """Characters of `text` in its head: up to and including its last blank line."""
    blank = text.rfind("\n\n")
    return blank + 2 if blank != -1 else 0


def chat_head_end(text: str, head_text: str) -> int:
    """Characters of a rendered chat `text` in its head: the head's own rendering, when the
    full rendering starts with it (a template may render a head differently alone); else 0."""
    return len(head_text) if head_text and text.startswith(head_text) else 0


def block_ends(text: str, head_end: int) -> list[int]:
    """Character offsets where the blocks of `text` end, the tail's end (len(text)) left out:
    the head's end, then the end of every line after it. [] without a head (one block)."""
    if head_end <= 0:
        return []
    ends = [head_end]
    i = text.find("\n", head_end)
    while i != -1 and i + 1 < len(text):
        ends.append(i + 1)
        i = text.find("\n", i + 1)
    return ends


def trie_order(items: Sequence[T], key: Callable[[T], Any]) -> list[int]:
    """Indices of `items` sorted (stably) by `key`, a tuple of lines per item (or of groups,
    then lines): lexicographic order is a depth-first walk of the trie of their lines."""
    return sorted(range(len(items)), key=lambda i: key(items[i]))


def text_lines(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n"))
