"""The numpy interpreter's checking mode (XETILE_INTERPRET_CHECK=1, or the launch option `check=True`): before an op
touches memory, its footprint is checked against a shadow of every array argument and SLM buffer, and three kinds
of kernel bug become an InterpretCheckError naming the op, the kernel and its source line:

- a data race: two subgroups of a workgroup (or two lanes of one scatter) access an element, one of them writing,
  and no barrier orders the two. Order is tracked with a vector clock per subgroup: a gpu.barrier joins all of
  them; a named barrier's arrive publishes the arriving subgroup's clock into its phase and the wait joins the
  phase's. A fence orders only the fencing subgroup's own accesses, so it orders nothing here. Atomics do not
  race with atomics, but do with plain accesses. The subgroups that share a piece of one store (a layout that
  wraps) write the same values unordered by design, so two writes race only when different ops make them.
  Workgroup-level IR runs the whole workgroup in one program (every subgroup at once, in program order), so only
  a scatter's lanes can race there. Races between workgroups (which no barrier orders) are out of scope: a
  workgroup's accesses count as ordered after the last one's.
- a read of an SLM element that nothing wrote: SLM starts poisoned (NaN for floats) and the read is reported
  before it computes with the poison.
- an access outside an array that no padding rule covers. The language bounds-checks every access against the
  tile's base: a block tile's out-of-bounds part reads padding and is not written, a gather or scatter lane (or
  atomic) outside its array reads padding or is dropped, an element read outside reads 0; none of these is
  reported. What no rule covers is a base the kernel made itself: a `base_shape`/`base_strides` view
  (memref.reinterpret_cast) is bounds-checked against its own sizes, which nothing checks against the array's
  memory, so an element of the view past the array is reported at the op that accesses it.

In checking mode a workgroup's subgroup threads take turns: one runs at a time, up to a barrier or a named barrier's
wait, where it lets the next one run (OpenCL's CPU device schedules subgroups so too). The checks then need no
lock of their own. Whether two accesses race does not depend on the schedule (only barriers order them); which of
a race and a read of unwritten SLM is found first may.

Shadow per memory element: the last plain write (subgroup, clock, op), and per subgroup the clock and op of its
last plain read and of its last atomic. A workgroup's clocks start past every clock of the workgroups before it,
so their records count as ordered before it without clearing the shadow.
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ..errors import InterpretCheckError
from .effects import READ, WRITE
from .scatter_ops import ScatterRef
from .xetile_ops import TileRef

NO_CLOCK = -1
DOING = {READ: "reads", WRITE: "writes", "atomic": "atomically updates"}


def checking_enabled(option: bool | None) -> bool:
    """The `check` launch option when given, else XETILE_INTERPRET_CHECK=1."""
    return os.environ.get("XETILE_INTERPRET_CHECK") == "1" if option is None else bool(option)


def describe(op) -> str:
    """`op name at file:line (source text)`."""
    if op.loc is None:
        return op.name
    source = op.loc.source()
    return f"{op.name} at {op.loc}" + (f" ({source})" if source else "")


@dataclass
class Region:
    """One array argument or SLM buffer and its shadow (module docstring), element by element of its bytes."""
    name: str
    array: np.ndarray  # as the kernel got it: its shape and strides name an element in a report
    subgroups: int
    slm: bool = False
    start: int = field(init=False)
    end: int = field(init=False)

    def __post_init__(self):
        self.start, self.end = byte_bounds(self.array)
        self.size = (self.end - self.start) // self.array.itemsize
        self.written = np.zeros(self.size, bool) if self.slm else None
        if self.subgroups > 1:  # the order of accesses; one program (the workgroup level) orders its own
            self.writer = np.full(self.size, NO_CLOCK, np.int32)  # the subgroup of the last plain write
            self.write_clock = np.full(self.size, NO_CLOCK, np.int64)
            self.write_op = np.zeros(self.size, np.int32)
        self.reads = self.atomics = None  # (clocks, ops), each (subgroups, size): made at the first of each

    def per_subgroup(self) -> tuple[np.ndarray, np.ndarray]:
        shape = (self.subgroups, self.size)
        return np.full(shape, NO_CLOCK, np.int64), np.zeros(shape, np.int32)

    def contains(self, view: np.ndarray) -> bool:
        """Whether every element of `view` lies in the region's memory (not so for a view past the array)."""
        start, end = byte_bounds(view)
        return self.start <= start and end <= self.end

    def element(self, index: int) -> str:
        """Element `index` of the shadow as an index of the array (its strides are not negative)."""
        offset, strides = index * self.array.itemsize + self.start - data_address(self.array), self.array.strides
        position = [0] * len(strides)
        for dim in sorted(range(len(strides)), key=lambda d: -strides[d]):
            if strides[dim]:
                position[dim], offset = divmod(offset, strides[dim])
        return f"[{', '.join(map(str, position))}]"


def data_address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def footprint(view: np.ndarray, index: tuple) -> np.ndarray:
    """Byte addresses of view[index], `index` a tuple of integer arrays broadcast together."""
    address = np.int64(data_address(view))
    for ix, stride in zip(index, view.strides):
        address = address + np.asarray(ix, np.int64) * stride
    return np.ravel(address)


def tile_index(tile: TileRef, valid) -> tuple | None:
    """The index into tile.base of the elements a block access touches (its in-bounds part, `valid`'s block)."""
    window = (tile if valid is None else TileRef(tile.base, tile.offsets, tuple(valid))).window()
    if window is None:
        return None
    spans = [np.arange(s.start, s.stop) for s in window[0]]
    return tuple(span.reshape([-1 if k == i else 1 for k in range(len(spans))]) for i, span in enumerate(spans))


@dataclass
class Access:
    op: object
    kind: str  # READ, WRITE or "atomic"
    operands: list  # the op's, as the interpreter has them
    ref: object  # the one that addresses memory: a TileRef, a ScatterRef or an array (memref.load)

    @property
    def view(self) -> np.ndarray:
        return self.ref if isinstance(self.ref, np.ndarray) else self.ref.base

    @property
    def scattered(self) -> bool:
        """Through a scatter tile, whose lanes may share an element."""
        return isinstance(self.ref, ScatterRef)


class LaunchCheck:
    """One launch's shadow of its array arguments, the ops that touched them and the clock the next workgroup
    starts at."""

    def __init__(self, func, args, subgroups: int):
        self.kernel = func.sym_name
        self.subgroups = subgroups
        names = [a.name_hint or f"argument {i}" for i, a in enumerate(func.args)]
        self.arrays = [Region(f"array '{name}'", value, subgroups)
                       for name, value in zip(names, args) if isinstance(value, np.ndarray) and value.size]
        self.ops: list = []
        self.op_ids: dict = {}
        self.next_clock = 1  # records of clock 0 and less (none) are ordered before everything

    def workgroup(self) -> "WorkgroupCheck":
        return WorkgroupCheck(self)

    def op_id(self, op) -> int:
        found = self.op_ids.get(op)
        if found is None:
            found = self.op_ids[op] = len(self.ops)
            self.ops.append(op)
        return found


class WorkgroupCheck:
    """One workgroup's vector clocks, SLM shadows and checks, and the turn its subgroups take (module docstring)."""

    def __init__(self, launch: LaunchCheck):
        self.launch = launch
        n = launch.subgroups
        # row s: the clock of each subgroup's latest access that s has seen ordered before it (none yet of this
        # workgroup: each one's start less one); s's own: its accesses' now
        self.clocks = np.full((n, n), launch.next_clock - 1, np.int64)
        np.fill_diagonal(self.clocks, launch.next_clock)
        self.slm: list[Region] = []
        self.joined: dict = {}  # barrier generation -> the join of the clocks that arrived
        self.generation = [0] * n
        self.turn = threading.Lock()

    @contextlib.contextmanager
    def running(self):
        """A subgroup's run: it holds the turn, but while it waits (`waiting`)."""
        with self.turn:
            yield

    def waiting(self, wait):
        """wait(), letting the other subgroups run meanwhile."""
        self.turn.release()
        try:
            return wait()
        finally:
            self.turn.acquire()

    def finish(self) -> None:
        self.launch.next_clock = int(self.clocks.max()) + 1

    def shared_buffer(self, op, buffer: np.ndarray) -> np.ndarray:
        """Poisons and shadows a new SLM buffer."""
        if buffer.dtype.kind == "f":
            buffer.fill(np.nan)
        self.slm.append(Region(f"the SLM buffer of {describe(op)}", buffer, self.launch.subgroups, slm=True))
        return buffer

    # ---- ordering ------------------------------------------------------------------------------
    def release(self, sg: int) -> np.ndarray:
        """Subgroup `sg`'s clock as it publishes it; its accesses after this are newer."""
        published = self.clocks[sg].copy()
        self.clocks[sg, sg] += 1
        return published

    def acquire(self, sg: int, published) -> None:
        if published is not None:
            np.maximum(self.clocks[sg], published, out=self.clocks[sg])

    def barrier(self, sg: int, wait) -> None:
        """gpu.barrier: every subgroup's accesses before it are ordered before every one's after it."""
        generation = self.generation[sg]
        self.generation[sg] += 1
        published = self.release(sg)
        joined = self.joined.get(generation)
        self.joined[generation] = published if joined is None else np.maximum(joined, published)
        self.waiting(wait)
        self.acquire(sg, self.joined[generation])

    # ---- accesses ------------------------------------------------------------------------------
    def check(self, sg: int, op, operands) -> None:
        for access in accesses(op, operands):
            self.check_access(sg, access)

    def region(self, access: Access) -> Region:
        first = data_address(access.view)
        for region in self.slm + self.launch.arrays:
            if region.start <= first < region.end:
                return region
        raise NotImplementedError(f"checking an access of {describe(access.op)} to memory that is neither an "
                                  "array argument nor an SLM buffer")

    def check_access(self, sg: int, access: Access) -> None:
        if not access.view.size:
            return
        region = self.region(access)
        contained = region.contains(access.view)
        ordered = self.launch.subgroups == 1  # one program (the workgroup level) orders all of its accesses itself
        if contained and ordered and region.written is None and not access.scattered:
            return  # nothing to check: a block access of global memory, or an element read, in one program
        index = touched(access)
        if index is None:
            return
        elements = (footprint(access.view, index) - region.start) // region.array.itemsize
        if not elements.size:
            return
        if not contained:
            self.check_inside(access, region, elements)
        if not ordered:
            self.check_order(sg, access, region, elements)
        if access.kind != WRITE and region.written is not None:
            self.check_written(access, region, elements)
        if access.kind == WRITE and access.scattered:
            self.check_lanes(sg, access, region, elements)
        if access.kind != READ and region.written is not None:
            region.written[elements] = True

    def check_order(self, sg: int, access: Access, region: Region, elements: np.ndarray) -> None:
        """Reports an access of another subgroup to `elements` that races with this one, then records this."""
        now, op = self.clocks[sg, sg], self.launch.op_id(access.op)
        if access.kind != "atomic":  # a plain access races with an unordered atomic of another subgroup
            self.unordered(sg, access, region, elements, region.atomics, "atomically accessed")
        if access.kind != READ:
            self.unordered(sg, access, region, elements, region.reads, "read")
        self.unordered_write(sg, access, region, elements)
        if access.kind == READ:
            region.reads = region.reads or region.per_subgroup()
            region.reads[0][sg, elements], region.reads[1][sg, elements] = now, op
        elif access.kind == "atomic":
            region.atomics = region.atomics or region.per_subgroup()
            region.atomics[0][sg, elements], region.atomics[1][sg, elements] = now, op
        else:
            region.writer[elements], region.write_clock[elements], region.write_op[elements] = sg, now, op

    def unordered(self, sg, access, region, elements, record, what: str) -> None:
        """Reports a record of another subgroup's access to `elements` that is not ordered before `sg`'s now."""
        if record is None:
            return
        clocks = record[0][:, elements]
        racing = clocks > self.clocks[sg][:, None]
        racing[sg] = False
        if racing.any():
            other, at = map(int, np.argwhere(racing)[0])
            self.race(sg, access, region, elements[at], other, self.launch.ops[record[1][other, elements[at]]], what)

    def unordered_write(self, sg, access, region, elements) -> None:
        """The pieces of one store in the subgroups that share them (a layout that wraps) write the same values
        with no order between them (transforms/xegpu/barriers.py): only another op's write races."""
        writers = region.writer[elements]
        racing = (writers >= 0) & (writers != sg)
        if access.kind == WRITE:
            racing &= region.write_op[elements] != self.launch.op_ids[access.op]
        racing[racing] = region.write_clock[elements[racing]] > self.clocks[sg][writers[racing]]
        if racing.any():
            at = int(np.argmax(racing))
            self.race(sg, access, region, elements[at], int(writers[at]),
                      self.launch.ops[region.write_op[elements[at]]], "wrote")

    def check_inside(self, access, region, elements) -> None:
        """An element of a view (memref.reinterpret_cast) past the array's memory: no padding rule covers it."""
        outside = (elements < 0) | (elements >= region.size)
        if outside.any():
            raise InterpretCheckError(
                f"out-of-bounds access in kernel {self.launch.kernel}: {access.op.name} {DOING[access.kind]} element "
                f"{int(elements[np.argmax(outside)])} of {region.name}, which has {region.size}: the "
                f"{list(access.view.shape)} view it goes through (base_shape, base_strides) reaches past the array",
                access.op.loc)

    def check_lanes(self, sg, access, region, elements) -> None:
        """Two lanes of one plain scatter write the same element: which value stays is not defined."""
        unique, counts = np.unique(elements, return_counts=True)
        if (counts > 1).any():
            element = region.element(int(unique[np.argmax(counts > 1)]))
            raise InterpretCheckError(
                f"data race in kernel {self.launch.kernel}: two lanes of {access.op.name}{self.who(sg)} write "
                f"element {element} of {region.name} (which value stays is not defined; an atomic would add both)",
                access.op.loc)

    def check_written(self, access, region, elements) -> None:
        unwritten = ~region.written[elements]
        if unwritten.any():
            element = region.element(int(elements[np.argmax(unwritten)]))
            raise InterpretCheckError(
                f"read of uninitialized shared local memory in kernel {self.launch.kernel}: {access.op.name} "
                f"reads element {element} of {region.name}, which nothing wrote before", access.op.loc)

    def who(self, sg: int) -> str:
        return f" in subgroup {sg}" if self.launch.subgroups > 1 else ""

    def race(self, sg, access, region, element, other, other_op, what: str) -> None:
        raise InterpretCheckError(
            f"data race in kernel {self.launch.kernel}: {access.op.name} in subgroup {sg} {DOING[access.kind]} element "
            f"{region.element(int(element))} of {region.name}, which {describe(other_op)} in subgroup {other} "
            f"{what} with no barrier between them", access.op.loc)


def accesses(op, operands) -> list[Access]:
    """What `op` reads and writes by its declared effects (ir/effects.py); an operand both read and written is
    an atomic update."""
    kinds: dict = {}
    for effect in op.effects:
        if effect.kind in (READ, WRITE) and effect.operand is not None:
            kinds.setdefault(effect.operand, set()).add(effect.kind)
    return [Access(op, "atomic" if len(both) == 2 else next(iter(both)), operands, operands[position])
            for position, both in kinds.items()]


def touched(access: Access) -> tuple | None:
    """The index into access.view of the elements the access touches (None: none): a block tile's in-bounds part,
    the selected lanes of a scatter inside its base, memref.load's element if inside (it reads 0 elsewhere)."""
    op, operands, ref = access.op, access.operands, access.ref
    valid = getattr(op, "valid", None)
    if isinstance(ref, TileRef):
        return tile_index(ref, valid)
    if isinstance(ref, ScatterRef):
        return ref.where(ref.active(scatter_mask(op, operands), valid))
    indices = tuple(int(i) for i in operands[1:])
    inside = all(0 <= i < n for i, n in zip(indices, ref.shape))
    return tuple(np.array([i]) for i in indices) if inside else None


def scatter_mask(op, operands):
    """The mask operand's value of a scatter op (its last operand, when it has one), as a block."""
    if not getattr(op, "mask", None):
        return None
    block = getattr(op, "block", None)
    return operands[-1] if block is None else block(operands[-1])
