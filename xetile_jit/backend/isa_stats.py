"""What Intel's compiler made of a kernel, read from the ISA text `ocloc.gpu_isa` gives (both compiler stacks
print each send with a `// wr:..., rd:N; <message>` comment): the 2D block messages with their kind and size,
and the DPAS instructions. Tests and benchmarks count these; they are the "counts, not hopes" of the GPU code."""
from __future__ import annotations

import re
from dataclasses import dataclass

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
    other_sends: int
    other: int

    @property
    def other_per_dpas(self) -> float:
        return self.other / self.dpas if self.dpas else float("inf")


_LABEL = re.compile(r"^\s*(L\d+):\s*$")
_JUMP = re.compile(r"\b(?:jmpi|goto|while)\b.*\b(L\d+)\b")
_MARK = re.compile(r"^\s*(?:\([^)]*\)\s*)?(?:sync|nop|illegal)\b")


def counts(lines: list[str]) -> Counts:
    text = "\n".join(lines)
    messages = block_messages(text)
    kinds = [m.kind for m in messages]
    instructions = [line for line in lines if line.strip() and not line.strip().startswith("//")
                    and not _LABEL.match(line) and not _MARK.match(line)]
    sends = [line for line in instructions if re.search(r"\bsends?c?\.", line)]
    dpas = dpas_count(text)
    return Counts(dpas, kinds.count("load"), kinds.count("prefetch"), kinds.count("store"),
                  len(sends) - len(messages), len(instructions) - len(sends) - dpas)


def innermost_loops(isa: str) -> list[Counts]:
    """The counts of each innermost loop body: from a label to the backward jump to it, holding no other
    backward jump's target."""
    lines = isa.splitlines()
    labels = {m.group(1): i for i, line in enumerate(lines) if (m := _LABEL.match(line))}
    loops = sorted((labels[m.group(1)], i) for i, line in enumerate(lines)
                   if (m := _JUMP.search(line)) and labels.get(m.group(1), i) < i)
    innermost = [(s, e) for s, e in loops if not any(s < s2 and e2 < e for s2, e2 in loops)]
    return [counts(lines[s:e + 1]) for s, e in innermost]
