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
