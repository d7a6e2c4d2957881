"""Op traits: what an op does to memory. Every op class declares `effects`, a tuple of `Effect`; an op
with none is pure. The barrier pass, `written_arrays` (hence the host copy-back) and the verifier read these,
so a new memory op is ordered and copied back by declaring its effects, with no list to extend.
"""
from __future__ import annotations

from dataclasses import dataclass

# kinds: what the op does
READ, WRITE = "read", "write"
PREFETCH = "prefetch"  # a cache hint: no effect on any value, never ordered
SYNC = "sync"  # orders the accesses before it against those after it (a barrier)
ALLOC = "alloc"  # gives the op's result fresh memory
FENCE = "fence"  # orders this subgroup's own accesses to a memory (xegpu.fence, named barriers); waits for no one
KINDS = (READ, WRITE, PREFETCH, SYNC, ALLOC, FENCE)
# memories: where
GLOBAL, SLM = "global", "slm"
ADDRESSED = "addressed"  # whichever memory the descriptor operand addresses (global array or SLM buffer)
MEMORIES = (GLOBAL, SLM, ADDRESSED)


@dataclass(frozen=True)
class Effect:
    kind: str
    memory: str
    operand: int | None = None  # the operand (tile, tensor descriptor or memref) that says which memory

    def __post_init__(self):
        if self.kind not in KINDS or self.memory not in MEMORIES:
            raise ValueError(f"effect ({self.kind}, {self.memory}): kinds are {KINDS}, memories {MEMORIES}")


def reads(operand: int, memory: str = ADDRESSED) -> Effect:
    return Effect(READ, memory, operand)


def writes(operand: int, memory: str = ADDRESSED) -> Effect:
    return Effect(WRITE, memory, operand)


def memory_accesses(op) -> list[tuple[Effect, object]]:
    """The reads and writes of `op`, each with the operand value that designates the memory."""
    return [(e, op.operands[e.operand]) for e in op.effects if e.kind in (READ, WRITE)]


def synchronizes(op) -> bool:
    return any(e.kind == SYNC for e in op.effects)


def check_effects(op) -> None:
    """Verifier rule: the op's class declares its effects, and each names an operand that addresses memory."""
    if op.effects is None:
        raise op.error(f"op {type(op).__name__} declares no memory effects",
                       "every op declares its memory effects (effects = () when pure)")
    for effect in op.effects:
        if effect.operand is None:
            continue
        if not 0 <= effect.operand < len(op.operands):
            raise op.error(f"{effect.kind} effect names operand {effect.operand} of {len(op.operands)}",
                           "a memory effect names an operand of the op")
        t = op.operands[effect.operand].type
        if not getattr(t, "addresses_memory", False):
            raise op.error(f"{effect.kind} effect names operand {effect.operand} of type {t}, which addresses no "
                           "memory", "a memory effect names a tile, descriptor or memref operand")
