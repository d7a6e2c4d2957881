"""Where a script's kernels spend their time on the OpenCL CPU device: `perf` samples attributed to the driver's code.

    python bench/profile_cpu.py [--top 20] [--out DIR] script.py [script args ...]

The OpenCL CPU runtime compiles kernels into anonymous executable memory, which `perf report` cannot read. So the
script runs in a child process under `perf record`; when it ends, the child copies every anonymous executable mapping
of its own memory to DIR (`<start address>.bin`), and each sample that landed in one is attributed to the instruction
at its address in that copy's disassembly (`objdump`): the instructions the CPU ran, not a rebuild of the driver's
assembly dump. For each mapping with samples the report gives its share of the script's samples, the innermost loops
(a backward jump's range holding no other) by size, with their samples, the share outside them, and the hottest
instructions. A sample lands on an instruction waiting to retire, often the one after a long-latency one.

Needs `perf` (linux-perf) and `objdump` (binutils); XETILE_CACHE_DIR and the CL_CONFIG_* variables pass through.
"""
import argparse
import collections
import ctypes
import os
import pathlib
import re
import runpy
import subprocess
import sys
import tempfile
from dataclasses import dataclass

INSTRUCTION = re.compile(r"\s*([0-9a-f]+):\s+(.*)")
JUMP = re.compile(r"j\w+\s+0x([0-9a-f]+)")
JIT_DSO = re.compile(r"perf-\d+\.map")
LARGEST_MAPPING = 64 << 20


@dataclass
class Instruction:
    address: int
    text: str
    samples: int = 0


def dump_jit_code(directory: pathlib.Path) -> None:
    """Copy each anonymous executable mapping of this process to `directory`/<start address in hex>.bin."""
    directory.mkdir(parents=True, exist_ok=True)
    for line in pathlib.Path("/proc/self/maps").read_text().splitlines():
        fields = line.split()
        if "x" not in fields[1] or len(fields) > 5:  # not executable, or backed by a file
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        if end - start <= LARGEST_MAPPING:
            (directory / f"{start:x}.bin").write_bytes(ctypes.string_at(start, end - start))


def jit_samples(perf_script: str) -> collections.Counter:
    """The sampled addresses (`perf script -F ip,dso` lines) inside JIT code, counted."""
    counts = collections.Counter()
    for line in perf_script.splitlines():
        fields = line.split()
        if len(fields) == 2 and JIT_DSO.search(fields[1]):
            counts[int(fields[0], 16)] += 1
    return counts


def disassembly(objdump: str, samples: collections.Counter) -> list[Instruction]:
    """The instructions of `objdump -D` output, each with its samples."""
    result = []
    for line in objdump.splitlines():
        match = INSTRUCTION.match(line)
        if match:
            address = int(match.group(1), 16)
            result.append(Instruction(address, match.group(2).strip(), samples.get(address, 0)))
    return result


def innermost_loops(code: list[Instruction]) -> list[range]:
    """The index ranges of `code` between a backward jump's target and the jump, holding no other such range."""
    index = {ins.address: i for i, ins in enumerate(code)}
    loops = []
    for i, ins in enumerate(code):
        match = JUMP.match(ins.text)
        target = int(match.group(1), 16) if match else None
        if target is not None and target <= ins.address and target in index:
            loops.append(range(index[target], i + 1))
    return [loop for loop in loops
            if not any(other != loop and loop.start <= other.start and other.stop <= loop.stop for other in loops)]


def report(code: list[Instruction], total: int, top: int) -> list[str]:
    """The lines of one mapping's report: its samples, its loops by size, the rest, the hottest instructions."""
    samples = sum(ins.samples for ins in code)
    lines = [f"{samples} of {total} samples ({samples / total:.1%}) in this code"]
    by_size, count, inside = collections.Counter(), collections.Counter(), set()
    for loop in sorted(innermost_loops(code), key=len):  # an instruction of two overlapping loops counts once
        by_size[len(loop)] += sum(code[i].samples for i in loop if i not in inside)
        count[len(loop)] += 1
        inside.update(loop)
    for size, n in by_size.most_common():
        if n:
            lines.append(f"  loops of {size} instructions (x{count[size]}): {n} samples, {n / samples:.1%}")
    outside = sum(ins.samples for i, ins in enumerate(code) if i not in inside)
    lines.append(f"  outside those loops: {outside} samples, {outside / samples:.1%}")
    lines += [f"  {ins.samples:7d}  {ins.address:x}  {ins.text}"
              for ins in sorted(code, key=lambda ins: -ins.samples)[:top] if ins.samples]
    return lines


def profile(script: list[str], out: pathlib.Path, top: int) -> None:
    data = out / "perf.data"
    subprocess.run(["perf", "record", "-q", "-o", str(data), sys.executable, __file__, "--child", str(out), *script],
                   check=True)
    listing = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,dso"], capture_output=True, text=True,
                             check=True).stdout
    samples = jit_samples(listing)
    total = sum(samples.values())
    print(f"{total} samples in JIT code")
    for dump in sorted(out.glob("*.bin")):
        start = int(dump.stem, 16)
        mine = collections.Counter({a: n for a, n in samples.items() if start <= a < start + dump.stat().st_size})
        if not mine:
            continue
        objdump = subprocess.run(["objdump", "-D", "-b", "binary", "-mi386:x86-64", f"--adjust-vma={start:#x}",
                                  "--no-show-raw-insn", str(dump)], capture_output=True, text=True, check=True).stdout
        print(f"\n{dump.name}:")
        print("\n".join(report(disassembly(objdump, mine), total, top)))


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        out, script = pathlib.Path(sys.argv[2]), sys.argv[3:]
        sys.argv = script
        try:
            runpy.run_path(script[0], run_name="__main__")
        finally:
            dump_jit_code(out)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=20, help="the hottest instructions to list per mapping")
    parser.add_argument("--out", help="where the code copies and perf.data go (default: a new temporary directory)")
    parser.add_argument("script", nargs=argparse.REMAINDER, help="the script and its arguments")
    args = parser.parse_args()
    if not args.script:
        parser.error("give a script to run")
    out = pathlib.Path(args.out or tempfile.mkdtemp(prefix="profile_cpu_"))
    os.makedirs(out, exist_ok=True)
    profile(args.script, out, args.top)


if __name__ == "__main__":
    main()
