"""Deprecated alias of `inferqa.evaluate.stored_metrics` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.evaluate.stored_metrics")
