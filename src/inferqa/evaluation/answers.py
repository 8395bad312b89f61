"""Deprecated alias of `inferqa.evaluation.exact_match` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.evaluation.exact_match")
