"""The numpy interpreter: runs IR op by op, workgroups of the grid one after another.

Each op's numpy rule is its `interpret` method; this module only walks blocks and keeps the values.
It is the reference every backend is checked against and the device "numpy". Subgroup-level IR runs each
workgroup's subgroups as threads sharing its SLM buffers, its barrier and its named barriers (real phases, so
a subset of subgroups can meet at one); workgroup-level IR runs the workgroup's program in order, where
barriers have nothing left to order.

Checking mode (ir/checking.py: XETILE_INTERPRET_CHECK=1 or the launch option `check=True`) checks every access to
memory before the op makes it: data races between subgroups, reads of SLM nothing wrote, accesses outside an array.
Off, it costs one test per op.

Grid limit: workgroups run one by one in Python (7 us for an empty one, 22 us for an 8x8 copy), so a
grid of more than `XETILE_INTERPRETER_MAX_WORKGROUPS` workgroups (default 2**20, a minute or more of work) is a
LaunchError before the first one runs: such a grid is almost always one counted in elements rather than
blocks, and would otherwise run for hours. Program ids are generated lazily, never as a list.
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

from ..errors import LaunchError
from .checking import LaunchCheck, WorkgroupCheck, checking_enabled
from .core import Block, FuncOp
from .core_ops import ConditionOp, ReturnOp, YieldOp

DEFAULT_MAX_WORKGROUPS = 2**20
NBARRIER_TIMEOUT = 10  # seconds a subgroup waits at a named barrier before the launch is a deadlock


class Interpreter:
    def __init__(self, func: FuncOp, check: WorkgroupCheck | None = None):
        self.func = func
        self.env: dict = {}
        self.grid = (1, 1, 1)
        self.program_id = (0, 0, 0)
        self.check = check  # the workgroup's checks in checking mode, else None

    def run(self, grid: tuple[int, int, int], args, launch: LaunchCheck | None = None) -> None:
        self.grid = grid
        for program_id in program_ids(grid):
            self.program_id = program_id
            self.env = {}
            self.buffers = {}  # the workgroup's SLM
            self.check = None if launch is None else launch.workgroup()
            self.run_block(self.func.body, args)
            if self.check is not None:
                self.check.finish()

    subgroup_id = None  # the workgroup level has none (SubgroupIdOp says so); a Subgroup has its own
    lanes = None  # the lanes of work-item-level IR, whose per-lane values hold one row per lane (Subgroup)
    checker_id = 0  # who accesses memory for the checks: the whole workgroup here, one subgroup in a Subgroup

    # The workgroup-level rules: one thread runs the workgroup's program in order, so every access before a
    # barrier or a named barrier's arrive is done when the ops after it run.
    def barrier(self) -> None:
        pass

    def named_barrier(self, id: int, participants: int):
        return id

    def nbarrier_arrive(self, nbarrier) -> None:
        pass

    def nbarrier_wait(self, nbarrier) -> None:
        pass

    def shared_buffer(self, op):
        if op not in self.buffers:
            self.buffers[op] = new_buffer(op, self.check)
        return self.buffers[op]

    def run_block(self, block: Block, args) -> list:
        env, check = self.env, self.check
        env.update(zip(block.args, args))
        for op in block.ops:
            operands = [env[v] for v in op.operands]
            if isinstance(op, (YieldOp, ReturnOp, ConditionOp)):
                return operands
            if check is not None and op.effects:
                check.check(self.checker_id, op, operands)
            out = op.interpret(self, *operands)
            if op.regions or len(op.results) > 1:  # region ops return what their region yielded
                env.update(zip(op.results, out))
            elif op.results:
                env[op.results[0]] = out
        return []


class Subgroup(Interpreter):
    """One subgroup of a workgroup running subgroup-level IR; SLM buffers and the barrier are shared."""


    def __init__(self, func: FuncOp, workgroup: "Workgroup", subgroup_id: int, program_id, grid):
        super().__init__(func, workgroup.check)
        self.workgroup = workgroup
        self.subgroup_id = self.checker_id = subgroup_id
        self.program_id = program_id
        self.grid = grid
        self.lanes = func.lanes  # work-item-level IR keeps one row per lane in every per-lane value
        self.lane_id = None if func.lanes is None else np.arange(func.lanes)
        self.phases: dict = {}  # named barrier id -> the phase this subgroup last arrived in

    def barrier(self) -> None:
        if self.check is None:
            self.workgroup.barrier.wait()
        else:
            self.check.barrier(self.subgroup_id, self.workgroup.barrier.wait)

    def shared_buffer(self, op):
        return self.workgroup.buffer(op)

    def named_barrier(self, id: int, participants: int):
        return self.workgroup.named_barrier(id, participants)

    def nbarrier_arrive(self, nbarrier: "NamedBarrier") -> None:
        self.phases[nbarrier.id] = nbarrier.arrive(None if self.check is None else
                                                   self.check.release(self.subgroup_id))

    def nbarrier_wait(self, nbarrier: "NamedBarrier") -> None:
        """Waits for the phase this subgroup arrived in (a wait without an arrive: the phase under way)."""
        phase = self.phases.pop(nbarrier.id, None)
        if self.check is None:
            nbarrier.wait(phase, self.workgroup)
        else:
            phase = self.check.waiting(lambda: nbarrier.wait(phase, self.workgroup))
            self.check.acquire(self.subgroup_id, nbarrier.published.get(phase))


def new_buffer(op, check: WorkgroupCheck | None = None) -> np.ndarray:
    """An SLM buffer; its contents are undefined on the device, zeros here (poison in checking mode)."""
    t = op.result.type
    buffer = np.zeros(t.shape, dtype=t.dtype.np_dtype)
    return buffer if check is None else check.shared_buffer(op, buffer)


class NamedBarrier:
    """A named barrier (XeGPU RFC nbarrier): a phase ends when `participants` subgroups have arrived in it."""

    def __init__(self, id: int, participants: int):
        self.id, self.participants = id, participants
        self.arrived, self.phase = 0, 0
        self.changed = threading.Condition()
        self.published: dict = {}  # checking mode: phase -> the join of its participants' clocks

    def arrive(self, clock=None) -> int:
        """Arrives in the phase under way and returns it; `clock` (checking mode) joins the phase's."""
        with self.changed:
            phase = self.phase
            if clock is not None:
                self.published[phase] = np.maximum(self.published.get(phase, clock), clock)
            self.arrived += 1
            if self.arrived == self.participants:
                self.arrived, self.phase = 0, self.phase + 1
                self.changed.notify_all()
            return phase

    def wait(self, phase: int | None, workgroup: "Workgroup") -> int:
        """Waits until phase `phase` (None: the one under way) has ended; returns it."""
        with self.changed:
            phase = self.phase if phase is None else phase
            if not self.changed.wait_for(lambda: self.phase > phase or workgroup.barrier.broken, NBARRIER_TIMEOUT):
                raise LaunchError(f"named barrier {self.id} waited {NBARRIER_TIMEOUT} s for its {self.participants} "
                                  f"participants ({self.arrived} arrived): fewer subgroups arrive than it counts")
            if self.phase <= phase:
                raise threading.BrokenBarrierError
            return phase


class Workgroup:
    def __init__(self, subgroups: int, check: WorkgroupCheck | None = None):
        self.subgroups = subgroups
        self.barrier = threading.Barrier(subgroups)
        self.buffers: dict = {}
        self.named: dict = {}
        self.lock = threading.Lock()
        self.check = check

    def buffer(self, op):
        with self.lock:
            if op not in self.buffers:
                self.buffers[op] = new_buffer(op, self.check)
            return self.buffers[op]

    def named_barrier(self, id: int, participants: int) -> NamedBarrier:
        if participants > self.subgroups:
            raise LaunchError(f"named barrier {id} counts {participants} participants but the workgroup has "
                              f"{self.subgroups} subgroups")
        with self.lock:
            if id not in self.named:
                self.named[id] = NamedBarrier(id, participants)
            if self.named[id].participants != participants:
                raise LaunchError(f"named barrier {id} initialized with {participants} and with "
                                  f"{self.named[id].participants} participants")
            return self.named[id]

    def abort(self) -> None:
        """Wakes every subgroup that waits: one failed."""
        self.barrier.abort()
        for nbarrier in list(self.named.values()):
            with nbarrier.changed:
                nbarrier.changed.notify_all()


class SubgroupInterpreter:
    """Runs subgroup-level IR: each workgroup's subgroups as threads that meet at every gpu.barrier, so
    data exchanged through shared local memory behaves as on the device."""

    def __init__(self, func: FuncOp, subgroups: int):
        self.func = func
        self.subgroups = subgroups

    def run(self, grid: tuple[int, int, int], args, launch: LaunchCheck | None = None) -> None:
        for program_id in program_ids(grid):
            self.run_workgroup(program_id, grid, args, None if launch is None else launch.workgroup())

    def run_workgroup(self, program_id, grid, args, check: WorkgroupCheck | None = None) -> None:
        workgroup = Workgroup(self.subgroups, check)
        errors = []

        def body(sg: int) -> None:
            try:
                with contextlib.nullcontext() if check is None else check.running():
                    Subgroup(self.func, workgroup, sg, program_id, grid).run_block(self.func.body, args)
            except threading.BrokenBarrierError:
                pass  # another subgroup failed; its error is reported
            except Exception as e:  # noqa: BLE001 - re-raised below, in the caller's thread
                errors.append(e)
                workgroup.abort()

        threads = [threading.Thread(target=body, args=(sg,)) for sg in range(self.subgroups)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        if check is not None:
            check.finish()


def program_ids(grid: tuple[int, int, int]):
    """The grid's program ids, x fastest, generated lazily once the grid is within the limit."""
    count, limit = grid[0] * grid[1] * grid[2], max_workgroups()
    if count > limit:
        raise LaunchError(f"grid {grid} is {count} workgroups; the numpy interpreter runs at most {limit}, one "
                          "after another in Python (XETILE_INTERPRETER_MAX_WORKGROUPS raises the limit)")
    return ((x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0]))


def max_workgroups() -> int:
    text = os.environ.get("XETILE_INTERPRETER_MAX_WORKGROUPS", str(DEFAULT_MAX_WORKGROUPS))
    if not text.isdecimal():
        raise LaunchError(f"XETILE_INTERPRETER_MAX_WORKGROUPS must be a non-negative integer, got {text!r}")
    return int(text)


def run_ir(func: FuncOp, grid: tuple[int, int, int], args, check: bool | None = None) -> None:
    """Runs `func` at its level: workgroup-level IR op by op, subgroup-level IR subgroups in lockstep. `check`:
    checking mode (ir/checking.py); None leaves it to XETILE_INTERPRET_CHECK."""
    subgroups = func.num_subgroups
    launch = LaunchCheck(func, args, subgroups or 1) if checking_enabled(check) else None
    if subgroups is None:
        Interpreter(func).run(grid, args, launch)
    else:
        SubgroupInterpreter(func, subgroups).run(grid, args, launch)
