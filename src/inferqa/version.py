"""The package version, in a module that imports nothing: any module may read it (`inferqa.__version__`
re-exports it) without importing the package root and, through it, the rest of the package."""

__version__ = "0.2.0"
