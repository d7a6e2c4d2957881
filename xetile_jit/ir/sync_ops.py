"""Memory fences and named barriers (XeGPU RFC: `fence`, `init_nbarrier`, `nbarrier_arrive`, `nbarrier_wait`),
shared by every IR level.

A named barrier is one of a workgroup's hardware barriers that `participants` subgroups meet at: each arrives
(signals, going on at once) and later waits until all participants of that phase have arrived, so producers and
consumers can synchronize without the whole workgroup. The workgroup-level interpreter runs the workgroup's
program in order, so there every access before an arrive is done when a later op runs: arrive and wait are no
ops. The subgroup-level interpreter (threads) keeps a real phase counter per barrier (ir/interpreter.py).
A fence orders the running subgroup's own accesses; numpy memory is sequentially consistent, so it is a no op
in the interpreter and an OpMemoryBarrier in SPIR-V.
"""
from __future__ import annotations

from dataclasses import dataclass

from .core import Operation, Value
from .effects import FENCE, GLOBAL, SLM, Effect
from .types import Type

FENCE_SCOPES = ("workgroup", "gpu")
FENCE_MEMORIES = (GLOBAL, SLM)
NBARRIER_IDS = 32  # named barriers per workgroup on Xe (ids 0..31)


@dataclass(frozen=True)
class NbarrierType(Type):
    def __str__(self) -> str:
        return "!xegpu.nbarrier"


class FenceOp(Operation):
    """xegpu.fence {scope, memory_kind}: this subgroup's `memory` writes before it are seen by `scope` before its
    accesses after it."""

    name = "xegpu.fence"

    def __init__(self, scope: str = "workgroup", memory: str = GLOBAL, loc=None):
        super().__init__(loc=loc)
        self.scope, self.memory = scope, memory

    @property
    def effects(self):
        return (Effect(FENCE, self.memory),) if self.memory in FENCE_MEMORIES else ()

    def verify(self):
        if self.scope not in FENCE_SCOPES:
            raise self.error(f"scope {self.scope!r} must be one of {', '.join(FENCE_SCOPES)}",
                             "fence scope is workgroup or gpu")
        if self.memory not in FENCE_MEMORIES:
            raise self.error(f"memory_kind {self.memory!r} must be one of {', '.join(FENCE_MEMORIES)}",
                             "fence memory_kind is global or slm")

    def format(self, p) -> str:
        return f" {{scope = {self.scope}, memory_kind = {self.memory}}}"

    @classmethod
    def parse(cls, p, name):
        attrs = p.attrs()
        return cls(p.pop(attrs, "scope"), p.pop(attrs, "memory_kind"))

    def interpret(self, interp):
        """Sequentially consistent numpy memory: nothing to order."""


class InitNbarrierOp(Operation):
    """xegpu.init_nbarrier: named barrier `id`, met by `participants` subgroups."""

    name = "xegpu.init_nbarrier"
    effects = ()

    def __init__(self, id: int, participants: int, loc=None):
        super().__init__(result_types=[NbarrierType()], loc=loc)
        self.id, self.participants = id, participants

    def verify(self):
        if not 0 <= self.id < NBARRIER_IDS:
            raise self.error(f"named barrier id {self.id} is not in 0..{NBARRIER_IDS - 1}",
                             f"a workgroup has {NBARRIER_IDS} named barriers")
        if self.participants < 1:
            raise self.error(f"{self.participants} participants; a named barrier needs at least one",
                             "participant_thread_num is at least 1")

    def format(self, p) -> str:
        return f" {self.id}, {self.participants} : i8, i8 -> {self.result.type}"

    @classmethod
    def parse(cls, p, name):
        id = p.int()
        p.expect(",")
        participants = p.int()
        for token in (":", "i8", ",", "i8", "->", "!xegpu.nbarrier"):
            p.expect(token)
        return cls(id, participants)

    def interpret(self, interp):
        return interp.named_barrier(self.id, self.participants)


def check_nbarrier(op: Operation) -> None:
    if not isinstance(op.operands[0].type, NbarrierType):
        raise op.error(f"operand must be a named barrier, got {op.operands[0].type}",
                       f"{op.name} takes an init_nbarrier result")


class NbarrierArriveOp(Operation):
    """xegpu.nbarrier_arrive: signals this subgroup's arrival (its accesses before it are seen after the wait)."""

    name = "xegpu.nbarrier_arrive"
    effects = (Effect(FENCE, GLOBAL), Effect(FENCE, SLM))  # a subset of subgroups: the barrier pass keeps its own

    def __init__(self, nbarrier: Value, loc=None):
        super().__init__([nbarrier], loc=loc)

    def verify(self):
        check_nbarrier(self)

    def format(self, p) -> str:
        return f" {p.name(self.operands[0])} : {self.operands[0].type}"

    @classmethod
    def parse(cls, p, name):
        nbarrier = p.value()
        p.expect(":")
        p.type_of(nbarrier)
        return cls(nbarrier)

    def interpret(self, interp, nbarrier):
        interp.nbarrier_arrive(nbarrier)


class NbarrierWaitOp(NbarrierArriveOp):
    """xegpu.nbarrier_wait: waits until every participant of the phase has arrived."""

    name = "xegpu.nbarrier_wait"

    def interpret(self, interp, nbarrier):
        interp.nbarrier_wait(nbarrier)


SYNC_OPS = (FenceOp, InitNbarrierOp, NbarrierArriveOp, NbarrierWaitOp)
