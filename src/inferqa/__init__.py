"""inferqa: a toolkit for Inferential Question Answering (QUIT-style benchmarks)."""

__version__ = "0.1.0"
