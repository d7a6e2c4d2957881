"""Golden tests of each pass, as MLIR's lit tests pin theirs: a file in golden/ holds a `// RUN: <pass> [key=value
...]` line, comments, the input function, a `// -----` line and the exact printed output of that one pass on it
(options: `target=<name>`, the cpu target by default, and the pass's own, e.g. `distance=1`). The runner parses the
input, runs the pass, verifies and prints the result. XETILE_UPDATE_GOLDEN=1 rewrites the expected outputs from what
the passes print now (then read the diff: the expectation must be what the pass should do)."""
from __future__ import annotations

import difflib
import os
import pathlib

import pytest

from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func
from xetile_jit.ir.verifier import verify
from xetile_jit.target.targets import get_target
from xetile_jit.transforms.xegpu.barriers import insert_barriers
from xetile_jit.transforms.xegpu.blocking import block
from xetile_jit.transforms.xegpu.exchange_buffers import share_exchange_buffers
from xetile_jit.transforms.xegpu.exchange_stores import hoist_exchange_stores
from xetile_jit.transforms.xegpu.lane_distribution import distribute_lanes
from xetile_jit.transforms.xegpu.lane_gather_folding import fold_lane_gathers
from xetile_jit.transforms.xegpu.needless_barriers import drop_needless_barriers
from xetile_jit.transforms.xegpu.wg_to_sg import wg_to_sg
from xetile_jit.transforms.xetile.contract_float_math import contract_float_math
from xetile_jit.transforms.xetile.relax_float_math import relax_float_math
from xetile_jit.transforms.xetile.layout_completion import complete_layouts
from xetile_jit.transforms.xetile.layout_propagation import propagate_layouts
from xetile_jit.transforms.xetile.prefetch_insertion import insert_prefetch
from xetile_jit.transforms.xetile.rank2 import as_rank2
from xetile_jit.transforms.xetile.to_xegpu import xetile_to_xegpu

GOLDEN = pathlib.Path(__file__).with_name("golden")
SEPARATOR = "// -----\n"
RUN = "// RUN: "

# Every pass compiler/pipeline.py's stages run: name -> pass(func, target, options)
PASSES = {
    "as-rank2": lambda func, target, options: as_rank2(func),
    "contract-float-math": lambda func, target, options: contract_float_math(func),
    "relax-float-math": lambda func, target, options: relax_float_math(func),
    "insert-prefetch": lambda func, target, options: insert_prefetch(func, target, options["distance"]),
    "propagate-layouts": lambda func, target, options: propagate_and_complete(func, target, options),
    "xetile-to-xegpu": lambda func, target, options: xetile_to_xegpu(func),
    "insert-barriers": lambda func, target, options: insert_barriers(func),
    "wg-to-sg": lambda func, target, options: wg_to_sg(func, target),
    "hoist-exchange-stores": lambda func, target, options: hoist_exchange_stores(func),
    "drop-needless-barriers": lambda func, target, options: drop_needless_barriers(func),
    "share-exchange-buffers": lambda func, target, options: share_exchange_buffers(func),
    "block": lambda func, target, options: block(func, target),
    "distribute-lanes": lambda func, target, options: distribute_lanes(func, target),
    "fold-lane-gathers": lambda func, target, options: fold_lane_gathers(func),
}


def propagate_and_complete(func, target, options):
    """Layout propagation, then completion of the classes of values it found sharing a layout: completion reads
    those classes, which the printed IR does not hold, so the two are pinned together."""
    complete_layouts(func, target, propagate_layouts(func, target, options.get("num_subgroups")))
    return func


def run_line(text: str) -> tuple[str, dict]:
    """`// RUN: pass key=value ...` (the file's first line) -> (pass, options); ints as ints."""
    first = text.splitlines()[0]
    assert first.startswith(RUN), f"the first line must be `{RUN}<pass> [key=value ...]`, not {first!r}"
    name, *pairs = first.removeprefix(RUN).split()
    assert name in PASSES, f"unknown pass {name}; passes: {', '.join(PASSES)}"
    options = dict(pair.split("=", 1) for pair in pairs)
    return name, {k: int(v) if v.isdigit() else v for k, v in options.items()}


def run_pass(source: str) -> str:
    """The printed output of the RUN line's pass on the function in `source`, whose input must be in the printer's
    form (so that a printer change shows in the inputs as in the outputs)."""
    name, options = run_line(source)
    target = get_target(options.pop("target", "cpu"))
    func = parse_func(source)
    text = "".join(line for line in source.splitlines(True) if not line.startswith("//"))
    assert print_func(func) + "\n" == text, "the input is not as the printer prints it"
    func = PASSES[name](func, target, options)
    verify(func)
    return print_func(func) + "\n"


FILES = sorted(GOLDEN.glob("*.mlir"))


def mismatch(path: pathlib.Path) -> str | None:
    """What differs between the file's expected output and the pass's, as a diff; None when they agree.
    XETILE_UPDATE_GOLDEN=1 writes the pass's output as the expectation instead."""
    source, separator, expected = path.read_text().partition(SEPARATOR)
    assert separator, f"{path.name}: no `{SEPARATOR.strip()}` line before the expected output"
    actual = run_pass(source)
    if os.environ.get("XETILE_UPDATE_GOLDEN") == "1":
        path.write_text(source + SEPARATOR + actual)
        return None
    if actual == expected:
        return None
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "expected", "actual"))
    return f"{path.name}: the pass prints otherwise (XETILE_UPDATE_GOLDEN=1 rewrites the expectation)\n{diff}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_golden(path):
    message = mismatch(path)
    if message is not None:
        pytest.fail(message, pytrace=False)


def test_a_wrong_expectation_fails_with_a_diff(tmp_path, monkeypatch):
    monkeypatch.delenv("XETILE_UPDATE_GOLDEN", raising=False)
    source, _, expected = (GOLDEN / "insert_barriers.mlir").read_text().partition(SEPARATOR)
    wrong = tmp_path / "insert_barriers.mlir"
    wrong.write_text(source + SEPARATOR + expected.replace("  gpu.barrier\n", ""))
    message = mismatch(wrong)
    assert message.startswith("insert_barriers.mlir: the pass prints otherwise")
    assert "\n+  gpu.barrier\n" in message and message.count("\n+") == 2  # the +++ header and the barrier


def test_every_pass_has_a_golden_file():
    assert {run_line(path.read_text())[0] for path in FILES} == set(PASSES)
