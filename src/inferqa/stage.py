"""A stage is one typed function: its signature is its declaration (docs/plugins.md, "A new stage").

Each parameter is one option: its name, type (the annotation; `X | None` allows None, `list[X]` a
list of X), default (the signature's), and in its `Opt` (or a shared registry `Option` whose
default must agree) its bounds, help and command-line spelling; one before `*` is positional. The
docstring's first paragraph is the command's help, the rest its description. Calling the function,
`inferqa <command>` and an experiment file's step all take `Stage.run`: the values checked
(`registry.checked_options`), then the output; the body run, its output recorded in the ledger.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import sys
import types
import typing
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from .errors import InputError
from .registry import REQUIRED, Option, checked_options, qualified_name

__all__ = ["Opt", "Stage", "stage", "stage_of", "declared", "REQUIRED"]

OUTPUTS = ("file", "folder", "self-checked folder")  # what `out` may name (`formats.outputs.KINDS`)


def Opt(help: str = "", **declaration: Any) -> Option:
    """A parameter's declaration beyond its type and default (help, bounds, command-line spelling):
    an Option with no name yet, which the signature gives with the type and default."""
    return Option("", help=help, **declaration)


class _Names(dict):
    """Evaluates a module's string annotations: a name imported only for type checkers (a heavy
    class such as Benchmark or Run) reads as `object`, so declaring costs no import."""

    def __missing__(self, name: str) -> Any:
        return getattr(builtins, name, object)


def _resolve(annotation: Any, module_globals: Mapping[str, Any]) -> Any:
    if isinstance(annotation, str):
        return eval(annotation, dict(module_globals), _Names(module_globals))  # noqa: S307 - our own source
    return annotation


def _members(hint: Any, module_globals: Mapping[str, Any]) -> tuple[Any, ...]:
    if isinstance(hint, typing.ForwardRef):
        hint = _resolve(hint.__forward_arg__, module_globals)
    return typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)


def _types(hint: Any, module_globals: Mapping[str, Any]) -> tuple[tuple[type, ...], bool, type | None]:
    """(types, None allowed, list item type) of a resolved annotation."""
    members = _members(hint, module_globals)
    out: list[type] = []
    item = None
    for m in [m for m in members if m is not type(None)]:
        origin = typing.get_origin(m)
        if origin in (list, tuple, typing.Sequence) or m in (list, tuple):
            out.append(list)
            args = typing.get_args(m)
            first = _members(args[0], module_globals)[0] if args else None
            item = first if isinstance(first, type) and first is not object else item
        elif origin in (dict, typing.Mapping) or m is dict:
            out.append(dict)
        elif isinstance(m, type) and m is not Any:
            out.append(m)
        else:
            out.append(object)  # Any, or a form that is no class
    return tuple(dict.fromkeys(out)), type(None) in members, item


def _option(param: inspect.Parameter, owner: str, module_globals: Mapping[str, Any]) -> Option:
    hint = _resolve(param.annotation, module_globals)
    if typing.get_origin(hint) is not typing.Annotated:
        raise TypeError(f"stage {owner!r}: parameter {param.name!r} needs Annotated[TYPE, Opt(...)]")
    base, *meta = typing.get_args(hint)
    decl = next((m for m in meta if isinstance(m, Option)), None)
    if decl is None:
        raise TypeError(f"stage {owner!r}: parameter {param.name!r} has no Opt(...)")
    kinds, nullable, item = _types(base, module_globals)
    default = REQUIRED if param.default is inspect.Parameter.empty else param.default
    if decl.name:  # a shared declaration: its default is the signature's
        if decl.default is not REQUIRED and decl.default != default:
            raise TypeError(f"stage {owner!r}: {param.name!r} defaults to {default!r}, its declaration to "
                            f"{decl.default!r}")
        nullable = nullable or None
    elif nullable == (default is None):  # an Opt: nullable left unset where its default says the same
        nullable = None
    return replace(decl, name=param.name, type=kinds[0] if len(kinds) == 1 else kinds, default=default,
                   nullable=decl.nullable if decl.nullable is not None else nullable,
                   positional=param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, item=decl.item or item)


@dataclass(frozen=True)
class Stage:
    """A stage as its function declares it: the command's words, help, options and output kind."""

    name: str
    function: Callable[..., Any]
    options: tuple[Option, ...]
    help: str = ""
    description: str = ""
    # What option `out`, when declared, names: a "file" or a "folder" (replaced without
    # --overwrite only when this command wrote it last), or a "self-checked folder" whose
    # stage applies its own rule to an existing one (build, finetune, download).
    output: str = "file"
    by_name: dict[str, Option] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.output not in OUTPUTS:
            raise ValueError(f"stage {self.name!r}: output must be one of {OUTPUTS}, not {self.output!r}")
        object.__setattr__(self, "by_name", {o.name: o for o in self.options})
        if "out" in self.by_name and "overwrite" not in self.by_name and self.output != "self-checked folder":
            raise TypeError(f"stage {self.name!r} writes --out: it declares overwrite too")

    def option(self, name: str) -> Option:
        return self.by_name[name]

    def default(self, name: str) -> Any:
        return self.by_name[name].default

    def settings(self, values: Mapping[str, Any] | None = None, /, **given: Any) -> dict[str, Any]:
        """Every option's value: those given checked (a Python or YAML value must have the
        declared type; a path may be text), the rest defaults; None means not given."""
        merged = {k: v for k, v in {**(values or {}), **given}.items() if v is not None}
        return checked_options(self.name, self.by_name, merged, text=False)

    def run(self, values: Mapping[str, Any] | None = None, /, **given: Any) -> Any:
        """Check the values, then the output; run the body; record the output it wrote."""
        return self.execute(self.settings(values, **given))

    def compute(self, values: Mapping[str, Any] | None = None, /, **given: Any) -> Any:
        """Check the values as `run` does, then run the body with no output guard and no ledger: for a
        caller that owns the output folder (the experiment runner's stage store)."""
        return self.function(**self.settings(values, **given))

    def execute(self, settings: dict[str, Any]) -> Any:
        """Run the body on `settings` as `settings()` returned them: the output checked first,
        recorded after. An LLM call `cache` is a "store": commands add to it, none replaces it."""
        kinds = {"out": self.output, "cache": "store"}
        paths = {name: (settings[name], kind) for name, kind in kinds.items() if settings.get(name) is not None}
        if not paths:
            return self.function(**settings)
        from .formats import outputs

        for path, kind in paths.values():
            outputs.guard(path, command=self.name, overwrite=bool(settings.get("overwrite")), kind=kind)
        before = {name: outputs.stamp(path) for name, (path, _) in paths.items()}
        result = self.function(**settings)
        for name, (path, kind) in paths.items():
            outputs.record(path, command=self.name, kind=kind, before=before[name])
        return result


def stage(name: str, *, output: str = "file") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated function as stage NAME (the command's words); see the module doc."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        module_globals = vars(sys.modules[fn.__module__])
        options = tuple(_option(p, name, module_globals) for p in inspect.signature(fn).parameters.values())
        head, _, rest = inspect.cleandoc(fn.__doc__ or "").partition("\n\n")
        description = "\n\n".join(" ".join(part.split()) for part in rest.split("\n\n") if part.strip())
        declared = Stage(name, fn, options, " ".join(head.split()), description, output)
        old = _DECLARED.get(name)
        if old is not None and qualified_name(old.function) != qualified_name(fn):
            raise ValueError(f"stage {name!r} is declared twice: {qualified_name(old.function)}, {qualified_name(fn)}")
        _DECLARED[name] = declared
        positional = [o.name for o in options if o.positional]

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            if len(args) > len(positional):
                raise InputError(f"{name} takes {len(positional)} positional value(s) "
                                 f"({', '.join(positional) or 'none'}); give the others by name")
            given = dict(zip(positional, args))
            twice = sorted(set(given) & set(kwargs))
            if twice:
                raise InputError(f"{name}: option {twice[0]!r} given twice")
            return declared.run({**given, **kwargs})

        call.stage = declared  # type: ignore[attr-defined]
        return call

    return deco


_DECLARED: dict[str, Stage] = {}


def declared() -> dict[str, Stage]:
    """Every stage declared so far, by name (`import inferqa.cli` declares them all)."""
    return dict(_DECLARED)


def stage_of(fn: Any) -> Stage:
    """The Stage a decorated function declares."""
    declared = getattr(fn, "stage", None)
    if not isinstance(declared, Stage):
        raise TypeError(f"{fn!r} is not a stage function (decorate it with @stage)")
    return declared

