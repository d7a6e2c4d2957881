"""Driver build seconds of every tutorial kernel, per target, beside xetile_jit's own compile.

    python bench/bench_build.py [--targets cpu xe-emulated] [--tutorials 01 03 ...] [--timeout 600]
                                [--json out.json] [--png out.png]
    python bench/bench_build.py --log timing.log [--worst 20]

`--log` reads the XETILE_TIMING lines of another run instead, e.g. of the test suite's
(`XETILE_TIMING=$PWD/timing.log python -m pytest -n 2 tests`: the lines appended to that file), and prints its slowest
driver builds.

Each tutorial runs as its own script (`python tutorials/<file>`) in a fresh process for each target, with
XETILE_TARGET set to it, XETILE_CACHE_DIR a new temporary directory (so every kernel is traced, lowered and built
by the OpenCL CPU driver anew, its native binary included) and XETILE_TIMING=1; each compile of a kernel is one row:
`driver_s` is its `driver build (opencl:cpu:0, <target>)` stage, the OpenCL CPU runtime compiling our SPIR-V to
native code, and `ours_s` the sum of its other compile stages (trace, the lowering passes, the LLVM IR, the SPIR-V).
A kernel compiled more than once (several specializations or autotuning configs) has a row per compile, numbered in the
order they ran; a compile with no driver build (a GPU target's, for a tutorial's code statistics, or an autotuner's
trace) is left out. Rows of the targets are matched by tutorial, kernel and number. The header gives the machine
and its load average before and after the runs: the driver builds on the cores the other jobs of a shared machine
use, so compare two versions in the same run of the machine (PYTHONPATH selects the xetile_jit a child imports).
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

from bench_first_launch import TUTORIALS
from common import ROOT, machine

STAGE = re.compile(r"^xetile timing: (\S+): (.+) ([0-9.]+) ms$", re.MULTILINE)
NOT_COMPILE = ("disk cache lookup", "first launch")  # stages timed that are neither our compile nor the driver's
DRIVER = "driver build"
DRIVER_TARGET = re.compile(r"\(([^,)]+), ([^)]+)\)$")  # `driver build (<device>, <target>)`


def compiles(stderr: str) -> list[dict]:
    """Each compile the XETILE_TIMING lines of `stderr` show, in order: {"kernel", "ours_s", "driver_s"}, and the
    target its driver build names ("built_for"). A compile starts at its kernel's `trace` stage; its driver build is
    the next one of the same kernel."""
    rows, open_rows = [], {}
    for kernel, stage, ms in STAGE.findall(stderr):
        seconds = float(ms) / 1e3
        if stage == "trace":
            open_rows[kernel] = {"kernel": kernel, "ours_s": 0.0, "driver_s": None}
            rows.append(open_rows[kernel])
        if kernel not in open_rows or stage.startswith(NOT_COMPILE):
            continue
        if stage.startswith(DRIVER):
            row = open_rows.pop(kernel)
            row["driver_s"] = seconds
            named = DRIVER_TARGET.search(stage)
            if named:
                row["built_for"] = named.group(2)
        else:
            open_rows[kernel]["ours_s"] += seconds
    return rows


def run_tutorial(case: str, target: str, timeout: float) -> list[dict]:
    """The compiles of tutorial `case` on `target` (module docstring), or one row with the reason it has none."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XETILE_CACHE_DIR=cache, XETILE_TIMING="1", XETILE_TARGET=target, XETILE_QUIET="1")
        try:
            done = subprocess.run([sys.executable, str(ROOT / "tutorials" / TUTORIALS[case])], env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return [{"tutorial": case, "target": target, "error": f"> {timeout:.0f} s"}]
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode
        return [{"tutorial": case, "target": target, "error": f"failed ({last})"}]
    numbered = defaultdict(int)
    rows = []
    for row in compiles(done.stderr):
        if row["driver_s"] is None:
            continue
        numbered[row["kernel"]] += 1
        rows.append({"tutorial": case, "target": target, "number": numbered[row["kernel"]], **row,
                     "ours_s": round(row["ours_s"], 3)})
    return rows


def worst(log: pathlib.Path, count: int) -> list[str]:
    """The `count` slowest driver builds the XETILE_TIMING lines in `log` show, slowest first."""
    built = [row for row in compiles(log.read_text(errors="replace")) if row["driver_s"] is not None]
    built.sort(key=lambda row: -row["driver_s"])
    return [f"{row['driver_s']:8.2f} s  ours {row['ours_s']:5.2f} s  {row['kernel']}"
            + (f" ({row['built_for']})" if "built_for" in row else "") for row in built[:count]]


def table(rows: list[dict], targets: list[str]) -> list[str]:
    """One line per kernel compile: its driver and own seconds on each target (module docstring)."""
    by_key = defaultdict(dict)
    for row in rows:
        key = (row["tutorial"], row.get("kernel", ""), row.get("number", 0))
        by_key[key][row["target"]] = row
    head = f"{'tutorial':<12} {'kernel':<22} {'#':>2}" + "".join(f" {t + ' driver':>20} {'ours':>6}" for t in targets)
    lines = [head]
    for (case, kernel, number), cells in by_key.items():
        line = f"{case:<12} {kernel:<22} {number or '':>2}"
        for target in targets:
            cell = cells.get(target)
            if cell is None or "error" in cell:
                line += f" {cell['error'] if cell else '-':>27}"
            else:
                line += f" {cell['driver_s']:20.2f} {cell['ours_s']:6.2f}"
        lines.append(line)
    return lines


def plot(rows: list[dict], targets: list[str], path: pathlib.Path) -> None:
    import matplotlib.pyplot as plt
    import numpy as np
    built = [r for r in rows if "error" not in r]
    labels = sorted({(r["tutorial"], r["kernel"], r["number"]) for r in built})
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(targets)
    for i, target in enumerate(targets):
        seconds = {(r["tutorial"], r["kernel"], r["number"]): r["driver_s"] for r in built if r["target"] == target}
        ax.bar(np.arange(len(labels)) + i * width, [seconds.get(key, 0) for key in labels], width, label=target)
    ax.axhline(3.0, color="gray", linestyle="--", linewidth=0.8)  # the goal: no driver build over 3 s
    ax.set_xticks(np.arange(len(labels)), [f"{t} {k} {n}" for t, k, n in labels], rotation=80, fontsize=6)
    ax.set_ylabel("driver build (s)")
    ax.set_title("OpenCL CPU driver build of each tutorial kernel (dashed: 3 s)", fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["cpu", "xe-emulated"])
    parser.add_argument("--tutorials", nargs="+", default=[c[len("tutorial-"):] for c in TUTORIALS],
                        help="tutorial numbers (01 ... 12)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", type=pathlib.Path)
    parser.add_argument("--png", type=pathlib.Path)
    parser.add_argument("--log", type=pathlib.Path, help="XETILE_TIMING lines of another run: its slowest builds")
    parser.add_argument("--worst", type=int, default=20)
    args = parser.parse_args()
    if args.log:
        print("\n".join(worst(args.log, args.worst)))
        return
    print(f"{machine()}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    rows = []
    for number in args.tutorials:
        for target in args.targets:
            rows += run_tutorial(f"tutorial-{number}", target, args.timeout)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    print("\n".join(table(rows, args.targets)))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    if args.png:
        plot(rows, args.targets, args.png)


if __name__ == "__main__":
    main()
