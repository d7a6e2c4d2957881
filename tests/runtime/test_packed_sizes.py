"""The packing of a launch's array sizes into one by-value argument (runtime/packed_sizes.py), and that kernels of
the CPU targets take them so."""
from __future__ import annotations

import numpy as np

import xetile_jit as xetile
from xetile_jit.ir.types import ROW_MAJOR, float32, int32
from xetile_jit.runtime.args import ArraySpec, ScalarSpec
from xetile_jit.runtime.memory import size_args
from xetile_jit.runtime import packed_sizes
from xetile_jit.runtime.packed_sizes import AS_GIVEN, SizePacking


def test_the_pointers_and_scalars_stay_in_order_and_every_arrays_sizes_follow_as_one_argument():
    packing = SizePacking.of([ArraySpec(float32, ROW_MAJOR), ScalarSpec(int32), ArraySpec(float32, ROW_MAJOR, rank=1)])
    assert (packing.kept, packing.sizes) == ((0, 5, 6), (1, 2, 3, 4, 7, 8))
    pointers = ["x", "n", "w"]

    def args(rows):
        return [pointers[0], *size_args((rows, 64), (64, 1)), pointers[1], pointers[2], *size_args((64,), (1,))]
    first, again = packing(args(8)), packing(args(8))
    assert first[:3] == pointers and len(first) == 4
    assert again[3] is first[3]  # a plan's packing makes its RawKernelArg once


def test_each_plan_packs_its_own_shapes(usm_kind):
    """Arrays of another shape are another plan with its own packed sizes; other arrays of the same shape launch
    with the plan's."""
    scaled_rows.cache.clear()
    w = usm_kind.asarray(np.linspace(-1, 1, 32))
    for batches in (3, 2, 3):
        x = np.arange(batches * 4 * 32, dtype=np.float32).reshape(batches, 4, 32) - batches
        y = usm_kind.asarray(np.zeros((batches * 4, 32)))
        scaled_rows[(batches,)](usm_kind.asarray(x), w, y, 2.0, target="cpu")
        expected = (x * np.linspace(-1, 1, 32, dtype=np.float32) * np.float32(2.0)).reshape(-1, 32)
        np.testing.assert_array_equal(usm_kind.asnumpy(y), expected)
    assert len(scaled_rows.cache.plans) == 2
    assert all(plan.pack.packed is not None for plan in scaled_rows.cache.plans.values())


def test_a_kernel_without_arrays_passes_its_scalars_as_they_are():
    packing = SizePacking.of([ScalarSpec(int32), ScalarSpec(float32)])
    assert packing(["n", "s"]) == ["n", "s"] == packing.parts((["n"], ["s"]))


def test_the_arguments_parts_pack_as_their_flat_list_does(monkeypatch):
    """A launch whose every argument has its part (launch_plan's binder) packs from the parts themselves: the same
    pointers, scalars and bytes as from the flat list a launch without them makes."""
    monkeypatch.setattr(packed_sizes.dpctl, "RawKernelArg", lambda data: ("raw", data))
    specs = [ArraySpec(float32, ROW_MAJOR), ScalarSpec(int32), ArraySpec(float32, ROW_MAJOR, rank=1)]
    parts = (["x", *size_args((8, 64), (64, 1))], ["n"], ["w", *size_args((64,), (1,))])
    flat = SizePacking.of(specs)([item for part in parts for item in part])
    assert SizePacking.of(specs).parts(parts) == flat
    assert flat == ["x", "n", "w", ("raw", np.array([8, 64, 64, 1, 64, 1], np.int64).tobytes())]
    assert AS_GIVEN.parts(parts) == [item for part in parts for item in part]


@xetile.kernel
def scaled_rows(x, w, y, scale):
    """y[b] = x[b] * w * scale for each b of a 3-D x: arrays of ranks 3, 1 and 2 and a scalar in one launch."""
    b = xetile.program_id(0)
    rows = xetile.load_tile(xetile.init_tile(x, [b, 0, 0], [4, 32]))
    weight = xetile.broadcast_to(xetile.load_tile(xetile.init_tile(w, [0], [32])).reshape([1, 32]), [4, 32])
    xetile.store_tile(xetile.init_tile(y, [b * 4, 0], [4, 32]), rows * weight * scale)


def test_arrays_of_every_rank_launch_with_their_sizes_packed():
    x = np.arange(3 * 4 * 32, dtype=np.float32).reshape(3, 4, 32)
    w = np.linspace(-1, 1, 32, dtype=np.float32)
    y = np.zeros((12, 32), np.float32)
    compiled = scaled_rows.warmup(x, w, y, 2.0, target="cpu")
    assert compiled.artifact.packed_sizes and 'byval' in compiled.asm["llir"]
    scaled_rows[(3,)](x, w, y, 2.0, target="cpu")
    np.testing.assert_array_equal(y, (x * w * np.float32(2.0)).reshape(12, 32))
