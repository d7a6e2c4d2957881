"""What a trace read: the globals, closure cells and module attributes a kernel and the
kernels it inlines looked up, each with a stable form of its value, so the compile caches can tell when a
compiled kernel is stale.

An inlined kernel is reached through one of these reads, and a kernel's form holds the hash of its source, so
editing a helper kernel (recursively) or a module-level constant changes a form. `Reads` records them while
tracing; `resolve` finds them again for a kernel loaded from the disk cache, starting from the launched kernel
and following the kernels its reads lead to. A `LiveRead` re-reads its value with one lookup, so a cache hit
checks it without tracing or hashing any source: the same immutable object (`is`) costs no form at all. A list,
dict or other mutable value can change in place and stay the same object, so its form is made again at each check.
"""
from __future__ import annotations

import dataclasses
import functools
import keyword
import operator
import sys
import types
from dataclasses import dataclass

import numpy as np

from ..errors import CompilationError
from ..runtime.cache import stable_repr

MISSING = object()  # a name that is no longer there
STALE = "<stale>"   # the form of a value that is no longer there or has none
CELL_CONTENTS = operator.attrgetter("cell_contents")
MUTABLE = object()  # what a LiveRead keeps of a value that may change in place: no read value is it
IMMUTABLE = (type(None), bool, int, float, complex, str, bytes, np.generic, np.dtype, type, types.ModuleType,
             types.FunctionType, types.BuiltinFunctionType)


@dataclass(frozen=True)
class Dependency:
    kind: str   # "global", "closure" (both of the reading kernel `owner`), or "attribute" (of the module `owner`)
    owner: str  # a kernel's qualified name (qualified_name), or a module's name
    name: str
    form: str   # value_form of the value the trace read

    def to_json(self) -> list[str]:
        return [self.kind, self.owner, self.name, self.form]


def qualified_name(fn) -> str:
    return f"{fn.__module__}.{fn.__qualname__}"


def value_form(value) -> str:
    """A text that changes when `value` changes in a way a trace could see, the same in every process."""
    if getattr(value, "__xetile_kernel__", False):
        return f"kernel {qualified_name(value.fn)} {value.source_hash}"
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type)):
        return f"callable {getattr(value, '__module__', '')}.{value.__qualname__}"
    return stable_repr(value)  # data: a TypeError when it has no stable form


def immutable(value) -> bool:
    """Whether `value` cannot change in place, so that reading the same object again reads the same form: scalars,
    strings, types, modules, functions, kernels, and tuples and frozen dataclasses of these."""
    if isinstance(value, IMMUTABLE) or getattr(value, "__xetile_kernel__", False):
        return True
    if isinstance(value, tuple):
        return all(map(immutable, value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and value.__dataclass_params__.frozen:
        return all(immutable(getattr(value, f.name)) for f in dataclasses.fields(value))
    return False


def current_form(value) -> str:
    if value is MISSING:
        return STALE
    try:
        return value_form(value)
    except TypeError:
        return STALE


class LiveRead:
    """A read the trace made from `source` (a kernel's globals, a closure cell or a module), with how to read it again
    now; `value` is the value read when it is immutable, else MUTABLE (the module docstring)."""
    __slots__ = ("dependency", "source", "read", "value")

    def __init__(self, dependency: Dependency, source, value):
        self.dependency, self.source = dependency, source
        self.read = reader(dependency.kind, source, dependency.name)
        self.value = value if immutable(value) else MUTABLE


class Rereads:
    """The reads a compiled kernel checks at each launch (all_unchanged). Those of immutable values are read again
    and compared by identity with the values read in one generated expression (`same`): after a kernel that
    streamed tens of MB, the launch path runs with cold caches and costs 3-5x its time in a loop (docs/performance.md
    "Launch overhead"), so a check touches as few objects as it can."""

    def __init__(self, live: list[LiveRead]):
        self.live = live
        self.same = identity_check([r for r in live if r.value is not MUTABLE])
        self.mutable = tuple(r for r in live if r.value is MUTABLE)


# each kind of read as Python reads it, on a source held in `source`
READ_EXPRESSIONS = {"global": "{source}[{name!r}]", "closure": "{source}.cell_contents",
                    "attribute": "{source}.{name}"}


def identity_check(reads: list[LiveRead]):
    """A function telling whether each of `reads` reads the same object again: `source[name] is value and ...`,
    generated with the sources and values as its defaults (local names, no getter or loop). Like the reads
    themselves, it raises KeyError, AttributeError or ValueError where a name is gone or a closure cell is empty."""
    defaults, sources, tests = {}, {}, []
    for i, r in enumerate(reads):
        source = sources.setdefault(id(r.source), f"_s{len(sources)}")
        defaults[source], defaults[f"_v{i}"] = r.source, r.value
        name = r.dependency.name
        read = (READ_EXPRESSIONS[r.dependency.kind] if r.dependency.kind != "attribute" or is_attribute_name(name)
                else "getattr({source}, {name!r})")
        tests.append(f"{read.format(source=source, name=name)} is _v{i}")
    namespace = dict(defaults)
    exec(f"def same({', '.join(f'{n}={n}' for n in defaults)}):\n"  # noqa: S102 - built from the reads alone
         f"    return {' and '.join(tests) or 'True'}", namespace)
    return namespace["same"]


def is_attribute_name(name: str) -> bool:
    """Whether `source.name` is Python: a name that is not a keyword."""
    return name.isidentifier() and not keyword.iskeyword(name)


def all_unchanged(reads: Rereads) -> bool:
    """Whether each read reads the same object, or a value of the same form, again. Every launch calls it: the
    immutable reads' identities first (Rereads.same), then the mutable reads' forms; a value no longer the same
    object, or no longer there, has every read checked by its form."""
    try:
        same = reads.same()
    except (KeyError, AttributeError, ValueError):  # a name gone, an empty cell
        same = False
    if not same:
        return all_forms_unchanged(reads.live)
    return not reads.mutable or all_forms_unchanged(reads.mutable)


def all_forms_unchanged(reads) -> bool:
    """Whether each read reads the same object, or a value of the same form, again (a closure cell emptied by `del`
    reads nothing: a change)."""
    try:
        for r in reads:
            value = r.read()
            if value is not r.value and current_form(value) != r.dependency.form:
                return False
    except ValueError:
        return False
    return True


def source_of(kind: str, owner, name: str):
    """What `name` is read from: `owner` is the reading kernel's Function (its globals, or its closure cell of
    `name`), or a module."""
    if kind == "global":
        return owner.globals
    return owner.closure[name] if kind == "closure" else owner


def reader(kind: str, source, name: str):
    """How to read `name` from `source` (source_of) again: a partial of a builtin, no Python frame a read."""
    if kind == "global":
        return functools.partial(source.get, name, MISSING)
    if kind == "closure":
        return functools.partial(CELL_CONTENTS, source)
    return functools.partial(getattr, source, name, MISSING)


class Reads:
    """The reads of one trace, in the order it made them (a kernel is read before its own reads)."""

    def __init__(self):
        self.live: dict[tuple, LiveRead] = {}

    def record(self, kind: str, owner, name: str, value, loc=None) -> None:
        owner_name = owner.__name__ if kind == "attribute" else qualified_name(owner.fn)
        if (kind, owner_name, name) in self.live:
            return
        try:
            form = value_form(value)
        except TypeError:
            raise CompilationError(
                f"the kernel reads {kind} '{name}', a {type(value).__name__}, which has no stable form for the "
                "compile cache; a kernel may read numbers, strings, None, dtypes, Layouts, tuples, lists and dicts "
                "of these, modules, functions and kernels (pass anything else as an argument)", loc) from None
        dependency = Dependency(kind, owner_name, name, form)
        self.live[kind, owner_name, name] = LiveRead(dependency, source_of(kind, owner, name), value)

    def rereads(self) -> Rereads:
        return Rereads(list(self.live.values()))

    @property
    def dependencies(self) -> tuple[Dependency, ...]:
        return tuple(r.dependency for r in self.live.values())


def resolve(root, dependencies) -> Rereads | None:
    """The reads of a cached compile of kernel `root`, read again now; None when any has changed."""
    owners = {qualified_name(root.fn): root.function}
    live = []
    for dep in dependencies:
        owner = sys.modules.get(dep.owner) if dep.kind == "attribute" else owners.get(dep.owner)
        if owner is None or (dep.kind == "closure" and dep.name not in owner.closure):
            return None
        source = source_of(dep.kind, owner, dep.name)
        value = reader(dep.kind, source, dep.name)()
        if current_form(value) != dep.form:
            return None
        if getattr(value, "__xetile_kernel__", False):
            owners[qualified_name(value.fn)] = value.function
        live.append(LiveRead(dep, source, value))
    return Rereads(live)
