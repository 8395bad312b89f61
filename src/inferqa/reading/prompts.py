"""The reader protocol: instruction, five few-shot demonstrations, then context + question.

The demonstrations are our own. Like QUIT's questions, none of them has its answer
written in its hints: the answer has to be inferred. The instruction and the
demonstrations come first and never change, so every prompt shares one long prefix
(reused as KV state by the llama-cpp backend and by servers with prefix caching).
"""

from __future__ import annotations

from typing import Sequence

from ..evaluation.exact_match import NO_ANSWER
from ..llm.base import Message
from .context import format_context

INSTRUCTION = (
    "You answer riddle-like questions from hints. The hints describe the answer without "
    "naming it. Reply with the answer only: a short name, word or number, no explanation. "
    f"If the hints are not enough to tell the answer, reply {NO_ANSWER}."
)

DEMONSTRATIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("It is the fourth planet from the Sun.",
      "Iron oxide dust gives its surface a rusty colour.",
      "Two small moons, Phobos and Deimos, circle it."),
     "Which planet do these hints describe?", "Mars"),
    (("It usually has 88 black and white keys.",
      "Pressing a key makes a felt hammer strike a string.",
      "Chopin wrote nearly all of his music for it."),
     "Which musical instrument is this?", "Piano"),
    (("He was born in Stratford-upon-Avon.",
      "His company performed at the Globe Theatre in London.",
      "Macbeth and Othello are among his tragedies."),
     "Who wrote the play about the Danish prince Hamlet?", "William Shakespeare"),
    (("It is the largest animal living on land.",
      "It drinks and greets its herd with its trunk.",
      "Poachers hunt it for the ivory of its tusks."),
     "Which animal is described?", "Elephant"),
    (("The river Tiber flows through its capital.",
      "On a map its mainland looks like a boot.",
      "Pizza and risotto come from its kitchens."),
     "Which country is this?", "Italy"),
)


def user_turn(question: str, context_lines: Sequence[str]) -> str:
    return f"Hints:\n{format_context(context_lines)}\nQuestion: {question}"


def chat_messages(question: str, context_lines: Sequence[str]) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": INSTRUCTION}]
    for hints, q, a in DEMONSTRATIONS:
        messages.append({"role": "user", "content": user_turn(q, hints)})
        messages.append({"role": "assistant", "content": a})
    messages.append({"role": "user", "content": user_turn(question, context_lines)})
    return messages


def completion_prompt(question: str, context_lines: Sequence[str]) -> str:
    """The same protocol as plain text, for base models; generation stops at the newline."""
    parts = [INSTRUCTION, ""]
    for hints, q, a in DEMONSTRATIONS:
        parts += [user_turn(q, hints), f"Answer: {a}", ""]
    parts += [user_turn(question, context_lines), "Answer:"]
    return "\n".join(parts)


COMPLETION_STOP = ("\n",)
