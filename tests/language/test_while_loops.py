"""Data-dependent loops and compare-and-swap: `while` on a scalar computed in the kernel (scf.while), and
`xetile.atomic_cas`, alone and as the spin lock of a mutex every workgroup of a grid takes.

Each kernel runs in the numpy interpreter on the XeTile IR (checked against numpy), at every lowered level of both CPU
targets and as their SPIR-V on opencl:cpu (checked against the XeTile IR's result bit for bit: fuzz/levels.run_levels),
and builds for xe-hpc and xe2 (SPIR-V that spirv-val accepts; ocloc's ISA where it is installed)."""
import numpy as np
import pytest

import xetile_jit as xetile
from every_level import run_everywhere
from spirv_tools import disassemble, validate
from xetile_jit.compiler.pipeline import lower
from xetile_jit.ir.core import walk
from xetile_jit.ir.core_ops import BarrierOp, SubgroupIdOp, WhileOp
from xetile_jit.errors import CompilationError
from xetile_jit.ir.parser import parse_func
from xetile_jit.ir.printer import print_func
from xetile_jit.target.targets import get_target
from xetile_jit.toolchain import ocloc
from xetile_jit.transforms.xegpu.barriers import control_operands, subgroup_dependent

ROWS = xetile.Layout(sg_layout=[2, 1], sg_data=[4, 16])   # an 8 x 16 block: two subgroups of four rows


# ---- a per-row iteration count read from memory -------------------------------------------------------------
@xetile.kernel
def halvings(counts, x, y):
    """Workgroup p's 8 rows of x halve (rounding down) and add 1, counts[p] times: a while loop on a scalar read
    from memory, carrying the counter and the tile's value."""
    p = xetile.program_id(0)
    v = xetile.load_tile(xetile.init_tile(x, [p * 8, 0], [8, 16], layout=ROWS))
    i = 0
    while i < counts[p]:
        v = v // 2 + 1
        i += 1
    xetile.store_tile(xetile.init_tile(y, [p * 8, 0], [8, 16], layout=ROWS), v)


def expected_halvings(counts, x):
    out = x.copy()
    for p, count in enumerate(counts):
        for _ in range(count):
            out[p * 8:(p + 1) * 8] = out[p * 8:(p + 1) * 8] // 2 + 1
    return out


def test_while_on_a_count_read_from_memory(rng):
    counts = np.array([0, 3, 1, 7], np.int32)
    x = rng.integers(0, 1000, (32, 16), dtype=np.int32)  # // truncates as in C: no negative values here
    out = run_everywhere(halvings, {"counts": counts, "x": x, "y": np.zeros_like(x)}, (4,))
    np.testing.assert_array_equal(out["y"], expected_halvings(counts, x))
    assert out["y"][0:8].tolist() == x[0:8].tolist()  # a count of 0 runs no iteration


@xetile.kernel
def first_power_above(limits, out):
    """The first power of two above limits[p]: the condition reads the value the loop changes."""
    p = xetile.program_id(0)
    power = 1
    while power <= limits[p]:
        power = power * 2
    xetile.store_tile(xetile.init_tile(out, [p, 0], [1, 16]), xetile.full([1, 16], power, xetile.int32))


def test_while_condition_on_a_carried_value():
    limits = np.array([0, 1, 5, 64, 1000], np.int32)
    out = run_everywhere(first_power_above, {"limits": limits, "out": np.zeros((5, 16), np.int32)}, (5,))
    assert out["out"][:, 0].tolist() == [1, 2, 8, 128, 1024]


@xetile.kernel
def collatz_steps(starts, steps):
    """The Collatz steps from starts[p] down to 1: the start a 1-D tile's sum (a one-element vector, which Triton's
    `tl.sum` makes a scalar), read by `while` and `if` alike."""
    p = xetile.program_id(0)
    n = xetile.tile_reduce("add", xetile.load_tile(xetile.init_tile(starts, [p], [1])), [0])
    count = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        count += 1
    xetile.store_tile(xetile.init_tile(steps, [p, 0], [1, 16]), xetile.full([1, 16], count, xetile.int32))


def test_if_and_while_take_a_one_element_vector():
    starts = np.array([1, 6, 7, 27], np.int32)
    out = run_everywhere(collatz_steps, {"starts": starts, "steps": np.zeros((4, 16), np.int32)}, (4,))
    assert out["steps"][:, 0].tolist() == [0, 8, 16, 111]


# ---- compare-and-swap -----------------------------------------------------------------------------------------
@xetile.kernel
def swap_where_equal(x, cmp, val, old):
    """Each element of x becomes val where it holds cmp; old gets what x held."""
    t = xetile.init_tile(x, [xetile.program_id(0) * 8, 0], [8, 16], layout=ROWS)
    got = xetile.atomic_cas(t, xetile.load_tile(xetile.init_tile(cmp, [xetile.program_id(0) * 8, 0], [8, 16])),
                            xetile.load_tile(xetile.init_tile(val, [xetile.program_id(0) * 8, 0], [8, 16])))
    xetile.store_tile(xetile.init_tile(old, [xetile.program_id(0) * 8, 0], [8, 16]), got)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float32])
def test_atomic_cas_swaps_where_the_old_value_equals(rng, dtype):
    x = rng.integers(0, 4, (16, 16)).astype(dtype)
    cmp = rng.integers(0, 4, (16, 16)).astype(dtype)
    if dtype == np.float32:  # compared bit for bit: -0.0 is not 0.0, a NaN equals the same NaN
        x[0, :4], cmp[0, :4] = [-0.0, np.nan, 0.0, np.nan], [0.0, np.nan, 0.0, 1.0]
    val = (np.arange(256).reshape(16, 16) + 100).astype(dtype)
    out = run_everywhere(swap_where_equal, {"x": x, "cmp": cmp, "val": val, "old": np.zeros_like(x)}, (2,))
    equal = x.view(f"u{x.itemsize}") == cmp.view(f"u{x.itemsize}")
    np.testing.assert_array_equal(out["x"].view(f"u{x.itemsize}"), np.where(equal, val, x).view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(out["old"].view(f"u{x.itemsize}"), x.view(f"u{x.itemsize}"))
    assert 0 < equal.sum() < equal.size


# ---- a spin lock ------------------------------------------------------------------------------------------------
@xetile.kernel
def locked_add(lock, counter):
    """Every workgroup adds its id + 1 to a counter tile under a mutex: a plain load and store, made exclusive by
    spinning on atomic_cas of the 1x1 lock (0: free, 1: taken) and released by an exchange. The workgroup swaps once
    per iteration and all its subgroups see the old value, so they leave the loop together: the lock is contended
    between workgroups only, which run on threads of their own on opencl:cpu."""
    t = xetile.init_tile(lock, [0, 0], [1, 1])
    while xetile.atomic_cas(t, 0, 1) != 0:
        pass
    c = xetile.init_tile(counter, [0, 0], [8, 16], layout=ROWS)
    xetile.store_tile(c, xetile.load_tile(c) + xetile.program_id(0) + 1)
    xetile.atomic_rmw_tile("xchg", 0, t)


SPIN_GROUPS = 96
LOCK_ARGS = (np.zeros((1, 1), np.int32), np.zeros((8, 16), np.int32))


def test_spin_lock_counter_over_a_grid():
    """96 workgroups of two subgroups each: the exact total, 96 * 97 / 2, in every element, the lock free again."""
    out = run_everywhere(locked_add, {"lock": np.zeros((1, 1), np.int32), "counter": np.zeros((8, 16), np.int32)},
                         (SPIN_GROUPS,))
    assert out["lock"][0, 0] == 0
    assert (out["counter"] == SPIN_GROUPS * (SPIN_GROUPS + 1) // 2).all()


BOTH = xetile.Layout(sg_layout=[2, 1], sg_data=[1, 1])  # two subgroups, each holding the one element


@xetile.kernel
def cas_increment(count):
    """count[0, 0] += 1 without a lock: swap in expected + 1 until the swap finds `expected` (no other workgroup
    came between the read and the swap). A loop carrying the swap's old value."""
    t = xetile.init_tile(count, [0, 0], [1, 1], layout=BOTH)
    expected = xetile.atomic_rmw_tile("add", 0, t)  # an atomic read, once for the workgroup
    seen = xetile.atomic_cas(t, expected, expected + 1)
    while seen != expected:
        expected = seen
        seen = xetile.atomic_cas(t, expected, expected + 1)


def test_a_loop_of_compare_and_swap_increments_once_per_workgroup():
    """Each of 16 workgroups of two subgroups adds 1 (swaps that each subgroup made on its own would add 2, or leave
    one subgroup looping after the other has left)."""
    out = run_everywhere(cas_increment, {"count": np.full((1, 1), 5, np.int64)}, (16,))
    assert out["count"][0, 0] == 5 + 16


def test_a_spin_lock_loop_is_the_same_in_every_subgroup():
    """At the subgroup level the swap's old value comes from one SLM element at constant offsets, so the loop's
    condition does not depend on subgroup_id(), and the barriers that hand the value over are in uniform control
    flow."""
    sg = lower(locked_add.warmup(*LOCK_ARGS, target="numpy").func, until="xegpu-sg")["xegpu-sg"]
    loops = [op for op in walk(sg.body) if isinstance(op, WhileOp)]
    assert len(loops) == 1 and any(isinstance(op, BarrierOp) for op in walk(loops[0].before))
    dependent = subgroup_dependent(sg)
    assert not set(control_operands(loops[0])) & dependent
    assert any(isinstance(op, SubgroupIdOp) for op in walk(sg.body)) and dependent  # the owner's test depends on it


# ---- IR: every level prints and parses back ----------------------------------------------------------------------
@pytest.mark.parametrize("kern, args", [
    (halvings, (np.zeros(4, np.int32), np.zeros((32, 16), np.int32), np.zeros((32, 16), np.int32))),
    (locked_add, LOCK_ARGS)])
def test_every_level_round_trips(kern, args):
    func = kern.warmup(*args, target="numpy").func
    for name, level in {"xetile": func, **lower(func)}.items():
        text = print_func(level)
        assert print_func(parse_func(text)) == text, name
    assert "scf.while" in print_func(func) and "scf.condition(" in print_func(func)


def test_the_ir_of_a_spin_lock():
    text = print_func(locked_add.warmup(*LOCK_ARGS, target="numpy").func)
    assert "xetile.atomic_rmw_tile <cas> %" in text
    assert "vector.extract %" in text and "i1 from vector<1x1xi1>" in text


# ---- SPIR-V and GPU builds ----------------------------------------------------------------------------------------
def test_spirv_of_a_spin_lock_validates():
    """The CPU target's module (the GPU targets' carry inline vISA, which spirv-val does not know): a loop of
    branches and phis, the swap an OpAtomicCompareExchange."""
    binary = locked_add.warmup(*LOCK_ARGS, target="cpu").asm["spirv"]
    validate(binary)
    text = disassemble(binary)
    assert "OpAtomicCompareExchange" in text and "OpPhi" in text and "OpBranchConditional" in text


@pytest.mark.parametrize("target", ["xe-hpc", "xe2"])
def test_loops_and_cas_build_for_gpus(target):
    cases = [(halvings, (np.zeros(4, np.int32), np.zeros((32, 16), np.int32), np.zeros((32, 16), np.int32))),
             (locked_add, LOCK_ARGS)]
    for kern, args in cases:
        compiled = kern.warmup(*args, target=target)
        assert compiled.asm["spirv"] and ("cmpxchg" in compiled.asm["llir"]) == (kern is locked_add)
        if ocloc.available(get_target(target)):
            assert compiled.asm["isa"] and "calla" not in compiled.asm["isa"], kern


# ---- what the tracer and verifier refuse --------------------------------------------------------------------------
@xetile.kernel
def while_on_a_tile(x):
    t = xetile.init_tile(x, [0, 0], [8, 16])
    while xetile.load_tile(t) > 0:
        xetile.store_tile(t, xetile.load_tile(t) - 1)


@xetile.kernel
def cas_on_halves(x):
    xetile.atomic_cas(xetile.init_tile(x, [0, 0], [8, 16]), 0, 1)


def test_a_tile_is_no_while_condition():
    with pytest.raises(CompilationError, match="a condition must be a scalar or a one-element vector, the same for "
                                               "the whole workgroup, got vector<8x16xi1>"):
        while_on_a_tile.warmup(np.zeros((8, 16), np.float32), target="numpy")


def test_cas_takes_32_or_64_bit_elements():
    with pytest.raises(CompilationError, match="compare-and-swap on f16: only 32- and 64-bit elements"):
        cas_on_halves.warmup(np.zeros((8, 16), np.float16), target="numpy")


@xetile.kernel
def barrier_in_a_divergent_while(x):
    i = 0
    while i < xetile.subgroup_id():
        xetile.barrier()
        i += 1
    xetile.store_tile(xetile.init_tile(x, [0, 0], [8, 16], layout=ROWS), xetile.full([8, 16], 1.0))


def test_a_barrier_in_a_while_on_subgroup_id_is_refused():
    """Subgroups run different iteration counts there: a barrier inside would wait forever."""
    with pytest.raises(CompilationError, match="a workgroup barrier in a branch or loop on subgroup_id\\(\\) waits "
                                               "forever"):
        barrier_in_a_divergent_while.warmup(np.zeros((8, 16), np.float32), target="cpu")
