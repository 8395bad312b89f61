"""Deprecated alias of `inferqa.reading.answer_scoring` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.reading.answer_scoring")
