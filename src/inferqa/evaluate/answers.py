"""Deprecated alias of `inferqa.evaluate.exact_match` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.evaluate.exact_match")
