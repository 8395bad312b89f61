"""Deprecated alias of `inferqa.read.answer_scoring` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.read.answer_scoring")
