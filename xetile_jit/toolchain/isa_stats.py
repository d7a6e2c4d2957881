"""What Intel's compiler made of a kernel, read from the ISA text `ocloc.gpu_build` gives (both compiler stacks
print each send with a `// wr:..., rd:N; <message>` comment): the 2D block messages with their kind and size,
the DPAS instructions, the scratch (spill and fill) messages. Tests and benchmarks count these; they are the "counts,
not hopes" of the GPU code. `summary` is what a compile keeps as `asm["isa_stats"]` (JSON): the whole kernel's
counts, each innermost loop's, the register file size and the spilled bytes."""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass

_SEND = re.compile(r"^\s*(?:\(\W*f\d+\.\d+\)\s*)?sends?c?\.\w+\s+\(\d+\|M\d+\)\s+(\S+)\s.*//.*rd:(\d+);\s*"
                   r"(load|store)_block2d\.\w+\.(d\d+\w*)")


@dataclass(frozen=True)
class BlockMessage:
    """One 2D block send: "load", "prefetch" (a load into the null register) or "store"; the data type of the
    message (d16, d16v: VNNI transform, d32t: transposed, ...) and the GRFs a load returns."""
    kind: str
    data: str
    grfs: int


def block_messages(isa: str) -> list[BlockMessage]:
    messages = []
    for line in isa.splitlines():
        match = _SEND.match(line)
        if match:
            destination, grfs, kind, data = match.groups()
            if kind == "load" and destination.startswith("null"):
                kind = "prefetch"
            messages.append(BlockMessage(kind, data, int(grfs)))
    return messages


def dpas_count(isa: str) -> int:
    return len(re.findall(r"^\s*(?:\(\W*f\d+\.\d+\)\s*)?dpas\.", isa, re.MULTILINE))


@dataclass(frozen=True)
class Counts:
    """The instructions of a stretch of ISA: DPAS, 2D block messages by kind, other sends, and everything else
    that executes (ALU, moves, branches; `sync` and `nop` scheduling marks excluded)."""
    dpas: int
    loads: int
    prefetches: int
    stores: int
    other_sends: int  # scratch messages included
    scratch: int  # spill and fill messages
    other: int
    messages: dict  # "load d16v rd8" -> count: the 2D block messages by kind, data type and GRFs a load returns

    @property
    def other_per_dpas(self) -> float:
        return self.other / self.dpas if self.dpas else float("inf")


# a spill or fill: the 2022 stack and xe-hpc print "hword scratch block read/write", xe2 and later an LSC message on
# the scratch surface, whose state an address register holds ("store.ugm.d32x64t.a32.ss[a0.2][A-0xEE00]")
_SCRATCH = re.compile(r"scratch|\.ss\[a0\.\d+\]")
_LABEL = re.compile(r"^\s*(L\d+):\s*$")
_JUMP = re.compile(r"\b(?:jmpi|goto|while)\b.*\b(L\d+)\b")
_MARK = re.compile(r"^\s*(?:\([^)]*\)\s*)?(?:sync|nop|illegal)\b")


def spills(isa: str) -> int:
    """The spill and fill messages of `isa`, on either stack and every target."""
    return counts(isa.splitlines()).scratch


def counts(lines: list[str]) -> Counts:
    text = "\n".join(lines)
    messages = block_messages(text)
    kinds = [m.kind for m in messages]
    instructions = [line for line in lines if line.strip() and not line.strip().startswith("//")
                    and not _LABEL.match(line) and not _MARK.match(line)]
    sends = [line for line in instructions if re.search(r"\bsends?c?\.", line)]
    dpas = dpas_count(text)
    scratch = sum(bool(_SCRATCH.search(line.split("//")[-1])) for line in sends)
    shapes = Counter(f"{m.kind} {m.data} rd{m.grfs}" if m.kind == "load" else f"{m.kind} {m.data}" for m in messages)
    return Counts(dpas, kinds.count("load"), kinds.count("prefetch"), kinds.count("store"),
                  len(sends) - len(messages), scratch, len(instructions) - len(sends) - dpas, dict(sorted(shapes.items())))


def innermost_loops(isa: str) -> list[Counts]:
    """The counts of each innermost loop body: from a label to the backward jump to it, holding no other
    backward jump's target."""
    lines = isa.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := _LABEL.match(line))}
    loops = sorted((labels[m.group(1)], i) for i, line in enumerate(lines)
                   if (m := _JUMP.search(line)) and labels.get(m.group(1), i) < i)
    innermost = [(s, e) for s, e in loops if not any(s < s2 and e2 < e for s2, e2 in loops)]
    return [counts(lines[s:e + 1]) for s, e in innermost]


def summary(isa: str, grf_count: int, spill_bytes: int | None, block_io_fallback: dict[str, str],
            slm_bytes: int) -> str:
    """`asm["isa_stats"]`: JSON of the kernel's counts ("kernel"), each innermost loop's ("loops"), the GRFs per
    thread ("grf_count"), the spilled bytes per thread ("spill_bytes"; null where the compiler does not say: then
    "scratch" counts the spill messages), the shared local memory bytes per workgroup ("slm_bytes": alloc_slm
    buffers and layout conversions, as the compiler allocated them) and the arrays 2D block messages cannot address,
    with their rules ("block_io_fallback")."""
    return json.dumps({"grf_count": grf_count, "spill_bytes": spill_bytes, "slm_bytes": slm_bytes,
                       "kernel": asdict(counts(isa.splitlines())),
                       "loops": [asdict(loop) for loop in innermost_loops(isa)],
                       "block_io_fallback": block_io_fallback}, indent=1)


def format_summary(text: str) -> str:
    """`summary` as a table for people (python -m xetile_jit compile --stats)."""
    stats = json.loads(text)
    spill = "unknown" if stats["spill_bytes"] is None else f"{stats['spill_bytes']} B"
    lines = [f"GRFs per thread: {stats['grf_count']}; spilled: {spill}; SLM per workgroup: {stats['slm_bytes']} B",
             f"{'where':<10} {'dpas':>5} {'loads':>5} {'pref':>5} {'stores':>6} {'sends':>5} {'scratch':>7} "
             f"{'other':>6}  2D block messages"]
    for name, c in [("kernel", stats["kernel"])] + [(f"loop {i}", loop) for i, loop in enumerate(stats["loops"], 1)]:
        shapes = ", ".join(f"{n} x {shape}" for shape, n in c["messages"].items())
        lines.append(f"{name:<10} {c['dpas']:>5} {c['loads']:>5} {c['prefetches']:>5} {c['stores']:>6} "
                     f"{c['other_sends']:>5} {c['scratch']:>7} {c['other']:>6}  {shapes}")
    return "\n".join(lines)


def one_line(text: str) -> str:
    """`summary` in one line: the kernel's and its first innermost loop's counts, GRFs and spills (the tutorials
    print it)."""
    stats = json.loads(text)
    spill = "unknown" if stats["spill_bytes"] is None else f"{stats['spill_bytes']} B"
    parts = [f"kernel {brief(stats['kernel'])}"] + [f"main loop {brief(loop)}" for loop in stats["loops"][:1]]
    fallback = f"; element loads for {', '.join(stats['block_io_fallback'])}" if stats["block_io_fallback"] else ""
    return f"{'; '.join(parts)}; {stats['grf_count']} GRFs, spilled {spill}{fallback}"


def brief(c: dict) -> str:
    return (f"{c['dpas']} dpas, {c['loads']} 2D loads, {c['prefetches']} prefetches, {c['stores']} 2D stores, "
            f"{c['other_sends']} other sends, {c['other']} other")
