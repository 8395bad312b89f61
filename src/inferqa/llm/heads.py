"""Where a prompt's head ends: the part fixed by its own content that prompts share.

Reader and labeller prompts put the instruction and the few-shot demonstrations first. The
head is a chat's messages but the last, or a plain prompt's text up to its last blank
line. Backends evaluate the head as one block and reuse its KV state for every prompt
with the same head; a cut that depends on the prompt alone (never on the batch around
it) keeps a greedy answer independent of batching.
"""

from __future__ import annotations

from typing import Sequence

from .base import Message


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

