"""Deprecated alias of `inferqa.evaluation.stored_metrics` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.evaluation.stored_metrics")
