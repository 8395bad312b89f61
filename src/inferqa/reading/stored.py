"""Deprecated alias of `inferqa.reading.oracle_reader` (renamed by role); goes in the next release."""

from .._deprecated import moved

moved(__name__, "inferqa.reading.oracle_reader")
