"""Deprecated alias of `inferqa.read.oracle_reader` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.read.oracle_reader")
