"""One registry for every plugin kind, with declared, typed, checked options (docs/plugins.md).

`@plugin(KIND, NAME, Option(...), ...)` declares a class (created with its options) or a function
(returned with them bound); `create(KIND, NAME, **options)` checks the options first, the same
way for the CLI, YAML files and Python. A plugin's module is imported only when its name is asked
for: the module named like it, then every module of the kind's packages, then the modules listed
under the `inferqa.plugins` entry point group; plugin modules import heavy libraries lazily.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import math
import os
import pkgutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from .errors import InputError
from .option_values import parse_bool, parse_scalar
from .text import close_matches, did_you_mean

# kind -> packages whose modules hold its built-in plugins
KINDS: dict[str, tuple[str, ...]] = {
    "retriever": ("inferqa.retrieve",),
    "reranker": ("inferqa.reranking",),
    "llm": ("inferqa.llm",),
    "context": ("inferqa.reading",),
    "leak-judge": ("inferqa.construct",),
    "answer-judge": ("inferqa.reading",),
    "fusion": ("inferqa.retrieve",),
    "hint-group": ("inferqa.hints",),
    "fine-tuner": ("inferqa.experiments",),
    "oracle": ("inferqa.formats", "inferqa.reranking"),
    "data-format": ("inferqa.data",),
    "run-format": ("inferqa.formats",),
    "sheet-format": ("inferqa.formats",),
    "export": ("inferqa.exports",),
}
ENTRY_POINTS = "inferqa.plugins"
NULL_WORDS = ("null", "none")
# An LLM is always `llm`, other weights always `model`: a mix-up gets the other name suggested.
_OTHER_NAME = {"model": "llm", "llm": "model"}


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Option:
    """One declared option. `type` is a type or a tuple of types: text is converted by the first
    one (a null word: None where allowed), other values must be instances of one of them.
    `nullable` defaults to whether the default is None; None where it is not allowed: the default."""

    name: str
    type: type | tuple[type, ...] = str
    default: Any = None
    help: str = ""
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    min_open: bool = False  # min itself is not allowed: (min, max]
    nullable: bool | None = None
    # How a stage's command line spells it (`inferqa.stage`): its flags (default --NAME with
    # dashes; a bool whose flag starts with --no- sets False), a positional argument, the
    # metavar, and the type of a list's items as written on the command line.
    flags: tuple[str, ...] = ()
    positional: bool = False
    metavar: str | None = None
    item: type | None = None
    # A further check of a converted value that no type or range can say (a torch device): it
    # raises InputError; its message is given under this option's name.
    validate: Callable[[Any], Any] | None = None

    @property
    def types(self) -> tuple[type, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    @property
    def allows_none(self) -> bool:
        return self.default is None if self.nullable is None else self.nullable

    def with_default(self, default: Any) -> "Option":
        return replace(self, default=default)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def cli_flags(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.name.replace("_", "-"),)

    @property
    def item_type(self) -> type:
        """A list option's item type: declared, else its default's first item's, else text."""
        if self.item is not None:
            return self.item
        default = self.default if isinstance(self.default, (list, tuple)) else ()
        return type(default[0]) if default else str

    def accepts(self) -> str:
        """What this option takes, in words: 'an integer ≥ 1', 'one of sum, mean', ..."""
        if self.choices is not None:
            text = "one of " + ", ".join(map(str, self.choices))
        else:
            text = " or ".join(_TYPE_WORDS.get(t) or f"an {t.__name__} instance" for t in self.types)
            if self.min is not None and self.max is not None:
                text += f" in {'(' if self.min_open else '['}{_num(self.min)}, {_num(self.max)}]"
            elif self.min is not None:
                text += f" {'>' if self.min_open else '≥'} {_num(self.min)}"
            elif self.max is not None:
                text += f" ≤ {_num(self.max)}"
        return text + (" or null" if self.allows_none else "")

    def check(self, value: Any, owner: str, *, text: bool = True) -> Any:
        """The value converted and checked; InputError naming `owner` and the option otherwise.
        `text=False` (a stage's Python or YAML value): text is converted only to a path."""
        bad = self._bad(owner)
        if isinstance(value, str) and str not in self.types and not (text or Path in self.types):
            raise bad(f"{value!r} (text)")
        if isinstance(value, str) and value.strip().lower() in NULL_WORDS and text:
            if self.allows_none:
                return None
            if str not in self.types:
                raise bad(repr(value))
        if value is None:
            if self.allows_none:
                return None
            if self.default is REQUIRED:
                raise bad("None")
            return self.default
        value = self._convert(value, bad)
        if (self.choices is not None and value not in self.choices
                or self.min is not None and (value < self.min or self.min_open and value == self.min)
                or self.max is not None and value > self.max):
            raise bad(repr(value))
        if self.validate is not None:
            try:
                self.validate(value)
            except InputError as exc:
                raise InputError(f"{owner}: option {self.name!r}: {exc.message}") from None
        return value

    def _bad(self, owner: str) -> Callable[[str], InputError]:
        return lambda got: InputError(f"{owner}: option {self.name!r} takes {self.accepts()}, not {got}")

    def parse(self, text: str, owner: str) -> Any:
        """Command-line text as this option's type (a null word: None), unchecked: the stage
        checks it as it checks every value."""
        if text.strip().lower() in NULL_WORDS and self.allows_none:
            return None
        return self._convert(text, self._bad(owner))

    def _convert(self, value: Any, bad: Callable[[str], InputError]) -> Any:
        if isinstance(value, str) and str not in self.types:
            return _from_text(self.types[0], value.strip(), bad)
        for t in self.types:
            if t is float and isinstance(value, (int, float)) and not isinstance(value, bool):
                if not math.isfinite(value):
                    raise bad(repr(value))
                return float(value)
            if t is int and isinstance(value, bool):
                continue
            if t is object or isinstance(value, t):
                return value
            if t is Path and isinstance(value, os.PathLike):
                return Path(value)
        raise bad(f"{value!r} ({type(value).__name__})")


_TYPE_WORDS = {str: "text", int: "an integer", float: "a number", bool: "true or false",
               dict: "a mapping", list: "a list", object: "any value", Path: "a path"}


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _from_text(t: type, text: str, bad: Callable[[str], InputError]) -> Any:
    value: Any = None
    try:
        if t is bool:
            value = parse_bool(text)
        elif t is int:
            value = int(text)
        elif t is float:
            value = float(text)
        elif t is Path and text:
            value = Path(text)
        elif t in (dict, list):
            value = json.loads(text)
    except ValueError:
        pass
    if value is None or not isinstance(value, t) or t is float and not math.isfinite(value):
        raise bad(repr(text))
    return value


@dataclass
class Plugin:
    kind: str
    name: str
    factory: Callable[..., Any]
    options: dict[str, Option]
    help: str = ""
    # Undeclared options are passed on as they are (e.g. server-specific request fields);
    # one that is a near-miss of a declared option is still refused as a typo.
    extra: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return f"{self.kind} {self.name!r}"

    def settings(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Every option's value: the given ones checked and converted, the rest defaults."""
        return checked_options(self.title, self.options, options, extra=self.extra)

    def create(self, *args: Any, **options: Any) -> Any:
        settings = self.settings(options)
        if inspect.isclass(self.factory):
            return self.factory(*args, **settings)
        return functools.partial(self.factory, *args, **settings)

    def describe(self) -> list[str]:
        """One line per option: name, what it takes, default, help."""
        lines = []
        for opt in self.options.values():
            default = "" if opt.default is REQUIRED else f" (default {opt.default!r})"
            lines.append(f"{opt.name}: {opt.accepts()}{default}" + (f" - {opt.help}" if opt.help else ""))
        if self.extra:
            lines.append("other KEY=VALUE options are passed on as they are")
        return lines


def checked_options(owner: str, declared: Mapping[str, Option], given: Mapping[str, Any], *,
                    extra: bool = False, text: bool = True) -> dict[str, Any]:
    """Every declared option's value (plugins' and stages'): the given ones checked (a key's dashes
    read as underscores), the rest defaults. An unknown key is an InputError naming the closest
    match, unless `extra` passes undeclared keys on; `text=False`: see `Option.check`."""
    out: dict[str, Any] = {}
    for key, value in given.items():
        name = str(key).replace("-", "_")
        opt = declared.get(name)
        if opt is not None:
            out[name] = opt.check(value, owner, text=text)
            continue
        close = close_matches(name, declared) or [n for n in (_OTHER_NAME.get(name),) if n in declared]
        if extra and not close:
            out[name] = parse_scalar(value) if isinstance(value, str) else value
            continue
        raise InputError(f"{owner} has no option {key!r}{did_you_mean(name, matches=close)}; "
                         f"its options: {', '.join(declared) or 'none'}")
    for name, opt in declared.items():
        if name not in out:
            if opt.default is REQUIRED:
                raise InputError(f"{owner} needs option {name!r} ({opt.accepts()})")
            out[name] = opt.default
    return out


_PLUGINS: dict[str, dict[str, Plugin]] = {kind: {} for kind in KINDS}
_SCANNED: set[str] = set()
_BROKEN: dict[str, dict[str, str]] = {kind: {} for kind in KINDS}  # kind -> module -> import error


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InputError(f"unknown plugin kind {kind!r} (kinds: {', '.join(KINDS)})")


def plugin(kind: str, name: str, *options: Option, help: str | None = None, extra: bool = False,
           **meta: Any) -> Callable[[Any], Any]:
    """Register the decorated class or function as plugin NAME of KIND with these options."""
    _check_kind(kind)
    if len({o.name for o in options}) != len(options):
        raise ValueError(f"{kind} {name!r}: an option is declared twice")

    def deco(obj: Any) -> Any:
        old = _PLUGINS[kind].get(name)
        if old is not None and qualified_name(old.factory) != qualified_name(obj):
            raise ValueError(f"{kind} {name!r} is registered twice "
                             f"({qualified_name(old.factory)}, {qualified_name(obj)})")
        doc = help if help is not None else _first_sentence(inspect.getdoc(obj) or "")
        _PLUGINS[kind][name] = Plugin(kind, name, obj, {o.name: o for o in options}, doc, extra, dict(meta))
        if inspect.isclass(obj) and "name" not in obj.__dict__:
            obj.name = name
        return obj

    return deco


def _first_sentence(doc: str) -> str:
    para = " ".join(doc.split("\n\n")[0].split())
    head, dot, _ = para.partition(". ")
    return head + "." if dot else para


def qualified_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _import(module: str, kind: str) -> None:
    try:
        importlib.import_module(module)
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == module:
            return
        _BROKEN[kind][module] = f"{type(exc).__name__}: {exc}"


def _scan(kind: str) -> None:
    if kind in _SCANNED:
        return
    for package in KINDS[kind]:
        for info in pkgutil.iter_modules(getattr(importlib.import_module(package), "__path__", [])):
            _import(f"{package}.{info.name}", kind)
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINTS):
            _import(ep.value.split(":")[0], kind)
    except Exception as exc:  # noqa: BLE001 - broken third-party metadata must not hide built-ins
        _BROKEN[kind][ENTRY_POINTS] = str(exc)
    _SCANNED.add(kind)


def get(kind: str, name: str) -> Plugin:
    """The plugin NAME of KIND, importing its module on first use."""
    _check_kind(kind)
    plugins = _PLUGINS[kind]
    module_name = str(name).replace("-", "_")
    if name not in plugins and module_name.isidentifier():
        for package in KINDS[kind]:
            module = f"{package}.{module_name}"
            _import(module, kind)
            if module in _BROKEN[kind] and name not in plugins:
                raise InputError(f"{kind} {name!r} cannot be loaded: {_BROKEN[kind][module]}")
    if name not in plugins:
        _scan(kind)
    if name not in plugins:
        # `suggest_for`: words a user may mean this plugin by; suggested from, never accepted as names
        words = {w: p.name for p in plugins.values() for w in p.meta.get("suggest_for", ())}
        hint = did_you_mean(name, plugins, aliases=words)
        broken = "".join(f"; {m} failed to import ({e})" for m, e in _BROKEN[kind].items())
        raise InputError(f"unknown {kind} {name!r}{hint}; available: {', '.join(sorted(plugins))}{broken}")
    return plugins[name]


def create(kind: str, name: str, *args: Any, **options: Any) -> Any:
    """Plugin NAME of KIND built with checked options (positional args pass unchecked)."""
    return get(kind, name).create(*args, **options)


def available(kind: str) -> list[str]:
    """Names of every plugin of KIND, built-in and from installed distributions."""
    _check_kind(kind)
    _scan(kind)
    return sorted(_PLUGINS[kind])


def plugins(kind: str) -> list[Plugin]:
    return [_PLUGINS[kind][n] for n in available(kind)]


def claimed(kind: str, key: str, value: Any) -> str | None:
    """The first plugin of KIND whose declared KEY holds VALUE or is a test VALUE passes (None for
    none or an empty VALUE). Plugins are asked in `claim_order` (default 0), then by name."""
    if not value:
        return None
    for p in sorted(plugins(kind), key=lambda p: (p.meta.get("claim_order", 0), p.name)):
        claim = p.meta.get(key) or ()
        if claim(value) if callable(claim) else value in claim:
            return p.name
    return None


def options_of(kind: str, name: str) -> dict[str, Option]:
    return dict(get(kind, name).options)


def describe(kinds: Iterable[str] | None = None, name: str | None = None) -> list[str]:
    """Printable lines: every plugin of the kinds with one line of help, or one plugin's options."""
    lines: list[str] = []
    for kind in kinds or KINDS:  # get and plugins check the kind
        if name is not None:
            p = get(kind, name)
            lines.append(f"{p.title}: {p.help}" if p.help else p.title)
            lines += [f"  {line}" for line in p.describe()] or ["  (no options)"]
            continue
        lines.append(f"{kind}:")
        for p in plugins(kind):
            lines.append(f"  {p.name:<16} {p.help} [{', '.join(p.options) or 'no options'}]")
        lines += [f"  ({m} failed to import: {e})" for m, e in _BROKEN[kind].items()]
    return lines
