"""Moved to `inferqa.formats` (the one reading layer); kept while branches switch their imports."""

from ..formats import OPTIMAL, check_run_ids, open_run  # noqa: F401
