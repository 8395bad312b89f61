"""Each stage of the pipeline declared once: its options, their defaults and checks, one entry point.

A stage module here (`inferqa.stages.diagnose`, ...) declares one `Stage`: its `Option`s
(type, default, range, help; the command line's spelling) and the dotted path of its entry
point, a function of one argument, the stage's `Settings`:

    MONOTONICITY = Stage("diagnose monotonicity", "Evidence monotonicity of a retriever.",
                         entry="inferqa.diagnose.monotonicity:run",
                         options=(Option("bench", Path, REQUIRED, "benchmark folder", flags=("--bench",)),
                                  Option("split", str, "test", "questions diagnosed"), ...))

    settings = MONOTONICITY.settings(bench="bench", split="dev")   # checked, defaults filled
    report = MONOTONICITY.run(settings)                             # or MONOTONICITY.run(bench=...)

The command line (`inferqa.cli.stage_command`) makes each option a flag and calls `run`, the
experiment file reads its keys into the same settings, and the Python API's functions take
their defaults from the declaration (`Stage.default`). A default and its range are therefore
written once, in the stage's module here, and checked by `registry.checked_options`, the
one check every plugin option goes through too.

A stage's output (its `out` option; `Stage.output` says whether it names a file or a folder)
is checked by `formats.outputs.guard` before the entry point runs and recorded in its folder's
ledger after: no command replaces a file it did not write, or one a benchmark owns, and
`OVERWRITE` (added to every stage with such an output that does not declare it) lets it
replace a file it did not write.

These modules import only the registry, the shared defaults and the LLM interface, so the
command line can read every declaration at start-up without importing any stage's code.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from ..errors import InputError
from ..registry import REQUIRED, Option, checked_options

__all__ = ["Stage", "Settings", "Option", "REQUIRED", "OVERWRITE"]

# The one --overwrite: replace an existing output this command did not write (a file a
# benchmark owns never). Build and finetune declare it with their folder's words.
OVERWRITE = Option("overwrite", bool, False, "replace an existing --out that this command did not write (a file a "
                   "benchmark owns never)")
OUTPUTS = ("file", "folder", "self-checked folder")  # what `out` may name (`formats.outputs.KINDS`)


class Settings(Mapping[str, Any]):
    """A stage's option values, checked and complete: read as attributes or as a mapping."""

    def __init__(self, stage: "Stage", values: Mapping[str, Any]):
        self._stage = stage
        self._values = dict(values)

    @property
    def stage(self) -> "Stage":
        return self._stage

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"{self._stage.name} has no option {name!r}") from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def replace(self, **changes: Any) -> "Settings":
        """These settings with `changes`, checked again."""
        return self._stage.settings({**self._values, **changes})

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Settings[{self._stage.name}]({inner})"


@dataclass(frozen=True)
class Stage:
    """One stage: its name (the command's words), one line of help, its options, and the
    entry point `module:function` called with the stage's Settings."""

    name: str
    help: str
    entry: str
    options: tuple[Option, ...] = ()
    description: str = ""  # the command's --help after the first line
    # What option `out`, when declared, names: a "file" or a "folder" (replaced without
    # --overwrite only when this command wrote it last), or a "self-checked folder" whose
    # stage applies its own rule to an existing one (build, finetune, download).
    output: str = "file"
    by_name: dict[str, Option] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.output not in OUTPUTS:
            raise ValueError(f"stage {self.name!r}: output must be one of {OUTPUTS}, not {self.output!r}")
        names = [o.name for o in self.options]
        if "out" in names and "overwrite" not in names and self.output != "self-checked folder":
            object.__setattr__(self, "options", (*self.options, OVERWRITE))
            names.append(OVERWRITE.name)
        if len(set(names)) != len(names):
            raise ValueError(f"stage {self.name!r}: an option is declared twice")
        object.__setattr__(self, "by_name", {o.name: o for o in self.options})

    def option(self, name: str) -> Option:
        return self.by_name[name]

    def default(self, name: str) -> Any:
        """The declared default of option `name` (for a Python signature that shows it)."""
        return self.by_name[name].default

    def settings(self, values: Mapping[str, Any] | None = None, /, **given: Any) -> Settings:
        """The stage's Settings from `values` and keyword values: each checked and converted
        as declared, None meaning not given (the default), an unknown name an InputError
        with the closest declared one."""
        merged = {k: v for k, v in {**(values or {}), **given}.items() if v is not None}
        return Settings(self, checked_options(self.name, self.by_name, merged))

    def entry_point(self) -> Callable[[Settings], Any]:
        module, _, func = self.entry.partition(":")
        return getattr(importlib.import_module(module), func)

    def run(self, settings: Settings | Mapping[str, Any] | None = None, /, **given: Any) -> Any:
        """Run the stage: `settings`, or the values given, are checked first (nothing is
        imported before they are), then its output (`formats.outputs.guard`); the output it
        wrote is recorded in its folder's ledger."""
        if not isinstance(settings, Settings) or given:
            settings = self.settings(dict(settings or {}), **given)
        elif settings.stage is not self:
            raise InputError(f"settings of {settings.stage.name!r} given to {self.name!r}")
        paths = {name: (settings.get(name), kind) for name, kind in self.output_paths().items()
                 if settings.get(name) is not None}
        if not paths:
            return self.entry_point()(settings)
        from ..formats import outputs

        for path, kind in paths.values():
            outputs.guard(path, command=self.entry, overwrite=bool(settings.get("overwrite")), kind=kind)
        before = {name: outputs.stamp(path) for name, (path, _) in paths.items()}
        result = self.entry_point()(settings)
        for name, (path, kind) in paths.items():
            outputs.record(path, command=self.entry, kind=kind, before=before[name])
        return result

    def output_paths(self) -> dict[str, str]:
        """The options that name a path this stage writes, with what each names (`output`;
        an LLM call cache is a "store": commands add to it, none replaces it)."""
        kinds = {"out": self.output, "cache": "store"}
        return {name: kinds[name] for name in kinds if name in self.by_name}
