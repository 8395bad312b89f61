"""Deprecated alias of `inferqa.option_values` (renamed by role); goes in the next release."""

from ._deprecated import moved

moved(__name__, "inferqa.option_values")
