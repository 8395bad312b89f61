"""`inferqa plugins [KIND] [NAME]` (declared in `inferqa.stages.plugins`): the lines it returns, printed."""

from __future__ import annotations

from ..stages.plugins import PLUGINS
from .output import show_lines
from .stage_command import stage_command

stage_command(PLUGINS, show_lines)
