"""The package's layers (pyproject.toml [tool.importlinter]): `lint-imports` keeps every contract, and no module of
xetile_jit imports, however indirectly and from inside a function too, a module that imports it back."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent


def test_lint_imports_keeps_every_contract():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint_imports, "import-linter is not installed (pip install -e '.[test]')"
    # this checkout's package, not one the environment has installed elsewhere
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def import_cycles(graph) -> list[list[str]]:
    """Every import of a module whose target imports the module back (the chain closing the cycle)."""
    cycles = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back:
                cycles.append([module, *back])
    return cycles


def test_no_import_cycle_between_modules():
    assert Path(importlib.util.find_spec("xetile_jit").origin).parent == ROOT / "xetile_jit"  # this checkout's
    # an import only for type annotations (under TYPE_CHECKING) never runs, so it closes no cycle
    graph = grimp.build_graph("xetile_jit", cache_dir=None, exclude_type_checking_imports=True)
    assert len(graph.modules) > 100
    assert import_cycles(graph) == []


def test_a_cycle_is_found():
    """The check itself: two modules that import each other through a third are a cycle."""
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    assert import_cycles(graph) == [["p.a", "p.b", "p.c", "p.a"], ["p.b", "p.c", "p.a", "p.b"],
                                  ["p.c", "p.a", "p.b", "p.c"]]
