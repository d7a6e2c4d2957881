"""The documentation keeps up with the code: every public name is in docs/api.md, and README.md stays short."""
from __future__ import annotations

import inspect
import pathlib
import re

import numpy as np
import pytest

import xetile_jit as xetile
from xetile_jit import __main__ as cli
from xetile_jit import errors, testing
from xetile_jit.jit.autotune import Autotuner
from xetile_jit.language import dsl, random, scatter

ROOT = pathlib.Path(__file__).resolve().parent.parent
API = (ROOT / "docs" / "api.md").read_text()
README_MAX_LINES = 300


@xetile.kernel
def copy_kernel(x, y, B: xetile.constexpr):
    xetile.store_tile(xetile.init_tile(y, [0, 0], [B, B]), xetile.load_tile(xetile.init_tile(x, [0, 0], [B, B])))


def documented(name: str) -> bool:
    """`name` appears in docs/api.md as code: `name`, `xetile.name(...)`, `obj.name`, `python -m xetile_jit name`."""
    return re.search(rf"`(?:[\w.]*\.|python -m xetile_jit )?{re.escape(name)}(?![\w-])", API) is not None


def public(names) -> list[str]:
    return sorted(n for n in names if not n.startswith("_"))


def dsl_names() -> list[str]:
    """Every function a kernel may call as `xetile.<name>` (marked by language/semantic.py's `builtin`)."""
    return public(n for m in (dsl, scatter, random) for n, v in vars(m).items()
                  if getattr(v, "__xetile_builtin__", False))


def defined_in(module) -> list[str]:
    """The classes and functions `module` defines itself (not those it imports)."""
    return public(n for n, v in vars(module).items()
                  if (inspect.isfunction(v) or inspect.isclass(v)) and v.__module__ == module.__name__)


def exceptions(module) -> list[str]:
    return public(n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, BaseException))


def object_attributes(obj) -> list[str]:
    return public({*vars(obj), *vars(type(obj))})


def cli_commands() -> list[str]:
    commands = next(a for a in cli.parser()._actions if a.dest == "command")
    return sorted(commands.choices)


def kernel_objects() -> list[object]:
    x = np.zeros((8, 8), np.float32)
    compiled = copy_kernel.warmup(x, x.copy(), B=8, target="numpy")
    tuned = xetile.autotune(configs=[xetile.Config(B=8)], key=[])(copy_kernel)
    return [copy_kernel, compiled, tuned, xetile.Config(B=8)]


PUBLIC = {
    "__all__": lambda: list(xetile.__all__),
    "in-kernel functions": dsl_names,
    "xetile.ops": lambda: list(xetile.ops.__all__),
    "xetile.testing": lambda: defined_in(testing),
    "xetile.torch": lambda: (pytest.importorskip("torch"), defined_in(xetile.torch) + ["SCHEMA_TYPES"])[1],
    "exceptions and warnings": lambda: exceptions(errors) + exceptions(testing),
    "command line": cli_commands,
    "kernel objects": lambda: sorted({n for obj in kernel_objects() for n in object_attributes(obj)}),
}


@pytest.mark.parametrize("group", sorted(PUBLIC))
def test_public_names_are_in_api_md(group):
    names = PUBLIC[group]()
    assert names, f"found no {group}: the walk itself is broken"
    missing = [n for n in names if not documented(n)]
    assert not missing, f"docs/api.md does not mention these {group}: {missing}"


def test_the_walks_see_the_known_names():
    """The walks find what they are meant to (a walk that finds nothing would make the test above pass)."""
    assert {"load_tile", "tile_mma", "rand", "load_gather"} <= set(dsl_names())
    assert {"warmup", "cache", "asm", "best_config", "trials"} <= set(PUBLIC["kernel objects"]())
    assert {"devices", "install-gpu-compiler", "compile"} == set(cli_commands())
    assert isinstance(kernel_objects()[2], Autotuner)


def test_documented_rejects_an_unknown_name():
    assert not documented("no_such_public_name")
    assert documented("tile_mma")


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES}: move detail to docs/"


# a reference from the code to a part of the docs: docs/guide.md "Fast math", docs/performance.md "Rows."
DOCS_REFERENCE = re.compile(r'docs/(guide|performance)\.md "([^"]+)"')


def docs_references() -> dict[tuple[str, str], str]:
    """Each (doc, part) the package, tests, benches and tutorials refer to, with a file that does."""
    found = {}
    for folder in ("xetile_jit", "tests", "bench", "tutorials"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for doc, part in DOCS_REFERENCE.findall(path.read_text()):
                part = re.sub(r"\s*\n\s*(#\s*)?", " ", part).rstrip(".")  # wrapped over comment lines
                found.setdefault((doc, part), str(path.relative_to(ROOT)))
    return found


def parts_of(text: str) -> list[str]:
    """The headings of a markdown text without their numbers ("4.11 Fast math" -> "Fast math"), and the names of its
    labelled paragraphs (a line starting `*Rows*`)."""
    headings = [re.sub(r"^#+\s+(\d+(\.\d+)*\.?\s+)?", "", line) for line in text.splitlines() if line.startswith("#")]
    return headings + re.findall(r"^\*([^*]+)\*", text, re.MULTILINE)


def test_the_code_refers_to_parts_the_docs_have():
    """A reference names a heading (or the start of one: "Progress" for "Progress of slow work") or a labelled
    paragraph of its doc, so that moving or renaming a part shows where the code still points at it."""
    references = docs_references()
    assert ("performance", "Driver builds") in references and ("guide", "Fast math") in references
    parts = {doc: parts_of((ROOT / "docs" / f"{doc}.md").read_text()) for doc in ("guide", "performance")}
    dangling = {f'docs/{doc}.md "{part}"': where for (doc, part), where in references.items()
                if not any(p == part or p.startswith(part + " ") for p in parts[doc])}
    assert not dangling, f"references to no part of the docs (reference: a file making it): {dangling}"
