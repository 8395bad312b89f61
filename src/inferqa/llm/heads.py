"""Where a prompt's blocks end: cuts fixed by its own content, shared by prompts that share text.

Reader and labeller prompts put the instruction and the few-shot demonstrations first (the
*head*: a chat's messages but the last, or a plain prompt's text up to its last blank
line), then the context one line (hint) per line, then the question and the template's
tail. A prompt is evaluated as its head, then each line after the head, each line a
block of its own; the last block (the *tail*) is always evaluated afresh, since its last
position gives the first answer token's logits. A prompt without a head is one block.

Because the cuts depend on the prompt alone (never on the batch around it or on what was
evaluated before), every block's KV entries are computed from the same chunk at the same
position whatever is reused, which keeps a greedy answer independent of batching and reuse.
The passages of one question form a trie of their hints: passage "h3 h1 h4" is passage
"h3 h1" plus one line, so a backend that keeps the longest block prefix in context and
meets prompts in depth-first order (`trie_order`) evaluates every trie node once.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from .base import Message

T = TypeVar("T")


def common_prefix_len(seqs: Sequence[Sequence[Any]]) -> int:
    """Length of the longest prefix every sequence shares (tokens, or blocks of tokens)."""
    if not seqs:
        return 0
    n = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs[1:]):
            return i
    return n


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
    then lines). Lexicographic order keeps every set of keys sharing a prefix contiguous, so
    it is a depth-first walk of the trie of their lines: consecutive prompts share the
    longest prefixes, and each trie node is entered once."""
    return sorted(range(len(items)), key=lambda i: key(items[i]))


def text_lines(text: str) -> tuple[str, ...]:
    return tuple(text.split("\n"))
