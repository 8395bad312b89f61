"""Deprecated alias of `inferqa.tune.diversify` (renamed by role); goes in the next release."""

from ._deprecated import moved

moved(__name__, "inferqa.tune.diversify")
