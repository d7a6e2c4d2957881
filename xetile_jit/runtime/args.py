"""Kernel arguments: what each one is (array, scalar, constexpr), its IR type, and the checks of a launch.

Arrays have any rank >= 1. The last two dims have unit stride along one of them: row-major (stride 1 along the
last dim) or column-major views such as `bt.T` (stride 1 along the one before), which `order=[0, 1]` tiles read
(RFC Appendix 1); a 1-D array has unit stride and is one row. A row pitch larger than the width is fine, and the
leading dims (a batch, a head) may have any strides: a tile reads one slice along them. Python ints are i32 (i64
when they do not fit), floats f32, bools i1.

Array arguments (docs/DESIGN.md §1) are numpy arrays, USM arrays (objects with `__sycl_usm_array_interface__`, such as
dpnp arrays: dtype from its typestr, memory order from its strides, which are in elements and None when
C-contiguous), torch tensors (runtime/torch_tensors.py: CPU ones as numpy arrays sharing their memory, XPU ones
zero copy on torch's current stream) and other DLPack producers, imported as numpy arrays (`np.from_dlpack`) when
they live on the host and as USM arrays (`dpnp.tensor.from_dlpack`; dpctl 0.22 moved dpctl.tensor into dpnp) when
they live on a SYCL device. All classify alike. The numpy interpreter runs on host arrays only.

dpnp's arrays (dpnp.ndarray and dpnp.tensor.usm_ndarray) are read by their attributes (shape, strides, dtype, queue,
pointer), never by their `__sycl_usm_array_interface__`: reading it waits for every kernel queued on the array's
queue (dpnp 0.20; 24 ms behind a 1024^3 GEMM), which made a launch that read it, ops.matmul's and every autotuned
kernel's, wait for the kernels before it.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

import dpctl.memory
import numpy as np

from ..errors import LaunchError
from ..ir.types import (ALL_DTYPES, COL_MAJOR, ROW_MAJOR, DType, MemRefType, ScalarType, bool_, dtype_of_numpy, float32,
                        int32, int64)
from ..target.block_io import BLOCK_BASE_ALIGN, broken_surface_rule, surface_rule
from . import torch_tensors

SUPPORTED = ", ".join(d.name for d in ALL_DTYPES)
DLPACK_CPU, DLPACK_ONEAPI = 1, 14  # DLDeviceType kDLCPU, kDLOneAPI
NOT_ARRAYS = frozenset((int, float, bool, str, type(None), DType))  # is_array's types of no array
DPCTL_MEMORY = (dpctl.memory.MemoryUSMDevice, dpctl.memory.MemoryUSMShared, dpctl.memory.MemoryUSMHost)


@dataclass(frozen=True)
class ArraySpec:
    dtype: DType
    order: tuple[int, int]
    block_io_rule: str | None = None  # the first 2D block surface rule its memory breaks (None: it meets them all)
    rank: int = 2
    dense: bool = False  # dense row-major (`dense_row_major`): MemRefType.strided false

    @property
    def block_io(self) -> bool:
        return self.block_io_rule is None

    def surface_rule(self, any_layout: bool = False) -> str | None:
        """The surface rule the memory breaks that block builtins need (target/block_io.py surface_rule)."""
        return surface_rule(self.block_io_rule, any_layout)

    def ir_type(self):
        return MemRefType(self.dtype, self.order, self.block_io, self.rank,
                          within_extents=self.surface_rule(any_layout=True) is None, strided=not self.dense)


@dataclass(frozen=True)
class ScalarSpec:
    dtype: DType

    def ir_type(self):
        return ScalarType(self.dtype)


CONTIGUOUS_COPY = "pass a contiguous copy of it (dpnp.ascontiguousarray(x), a torch tensor's x.contiguous())"


def array_order(name: str, shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> tuple[int, int]:
    """The memory order of an array's last two dims from its strides in bytes (`memory_order`); a LaunchError
    where they have none (a USM array's: a host array's goes as a copy, `copied_contiguous`)."""
    order = memory_order(shape, strides, item)
    if order is not None:
        return order
    if len(shape) == 1:
        raise LaunchError(f"argument '{name}': a 1-D array on a device needs unit stride; got stride {strides[0]} "
                          f"bytes (itemsize {item}); {CONTIGUOUS_COPY}")
    raise LaunchError(f"argument '{name}': an array on a device needs unit stride along one of its last two dims "
                      f"(row- or column-major, no overlap); got strides {strides} for shape {shape} "
                      f"(itemsize {item}); {CONTIGUOUS_COPY}")


def memory_order(shape: tuple[int, ...], strides: tuple[int, ...], item: int) -> tuple[int, int] | None:
    """The memory order a kernel reads an array's last two dims in, from their strides in bytes (a 1-D array is
    one row): one of unit stride, the other at least a whole row or column apart (no overlap). None where there is
    none: a step along the dim of unit stride (`x[::2]`, `a[:, ::2]`), a negative stride, rows that overlap (a
    broadcast's stride of 0)."""
    if len(shape) == 1:
        return ROW_MAJOR if shape[0] <= 1 or strides[0] == item else None
    (rows, cols), (s0, s1) = shape[-2:], strides[-2:]
    if (s1 == item or cols <= 1) and s0 >= cols * item:
        return ROW_MAJOR
    if (s0 == item or rows <= 1) and s1 >= rows * item:
        return COL_MAJOR
    return None


class NotImported:
    """Stands for dpnp's array types until the program imports dpnp: no value is of this type."""


_dpnp_types: list[tuple[type, type]] = []  # filled once dpnp is imported


def dpnp_types() -> tuple[type, type]:
    """(dpnp.ndarray, dpnp.tensor.usm_ndarray) once the program has imported dpnp, else NotImported twice: dpnp is
    optional (the `bench` extra) and takes 0.4 s to import, and a program with dpnp arrays has imported it."""
    if _dpnp_types:
        return _dpnp_types[0]
    if "dpnp" not in sys.modules:
        return NotImported, NotImported
    from dpnp import ndarray
    from dpnp.tensor import usm_ndarray
    _dpnp_types.append((ndarray, usm_ndarray))
    return _dpnp_types[0]


def usm_ndarray_of(value):
    """The dpnp.tensor.usm_ndarray of a dpnp array (itself for a usm_ndarray), else None (module docstring)."""
    dpnp_array, usm_ndarray = dpnp_types()
    kind = type(value)
    if kind is usm_ndarray:
        return value
    return value.get_array() if kind is dpnp_array else None


def usm_interface(value) -> dict | None:
    """The `__sycl_usm_array_interface__` of a USM array that is not dpnp's (module docstring), else None."""
    if isinstance(value, np.ndarray) or usm_ndarray_of(value) is not None:
        return None
    return getattr(value, "__sycl_usm_array_interface__", None)


def is_usm(value) -> bool:
    return usm_ndarray_of(value) is not None or usm_interface(value) is not None


def usm_strides(usm: dict) -> tuple[int, ...]:
    """The strides of a USM array in elements (the interface gives None for a C-contiguous array;
    `canonical_strides`)."""
    if usm.get("strides") is not None:
        return canonical_strides(tuple(usm["shape"]), usm["strides"], 1)
    return c_strides(usm["shape"])


def c_strides(shape) -> tuple[int, ...]:
    """The strides in elements of a C-contiguous array of `shape`."""
    return tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))


def copied_contiguous(array: np.ndarray) -> bool:
    """Whether a numpy array goes to the device as a C-contiguous copy (runtime/memory.py): one whose last two dims
    have no memory order a kernel reads (`memory_order`: a slice's step along the dim of unit stride, a negative
    stride, a broadcast), or with a stride of no whole number of elements (`as_strided`), which no kernel argument
    (strides in elements) can give. A leading dim's stride, a negative one too, is a slice step the kernel takes as
    it is."""
    if array.flags.c_contiguous:  # the launch hot path
        return False
    item = array.itemsize
    return any(s % item for s in array.strides) or \
        memory_order(array.shape, canonical_strides(array.shape, array.strides, item), item) is None


def import_dlpack(name: str, value):
    """A DLPack producer as a numpy array (on the host) or a USM array (on a SYCL device), sharing its memory."""
    device_type = value.__dlpack_device__()[0]
    if device_type == DLPACK_CPU:
        return np.from_dlpack(value)
    if device_type != DLPACK_ONEAPI:
        raise LaunchError(f"argument '{name}': DLPack device type {device_type} is neither the host ({DLPACK_CPU}) "
                          f"nor a SYCL device ({DLPACK_ONEAPI})")
    try:
        from dpnp.tensor import from_dlpack
    except ImportError:
        raise LaunchError(f"argument '{name}': a DLPack array on a SYCL device needs dpnp (pip install dpnp)") from None
    return from_dlpack(value)


def as_array(name: str, value):
    """An array argument as a numpy array or a USM array: torch tensors as runtime/torch_tensors.py launches them,
    DLPack producers imported, the others as they are."""
    if isinstance(value, np.ndarray) or is_usm(value):
        return value
    if torch_tensors.is_tensor(value):
        return torch_tensors.as_array(value)
    return import_dlpack(name, value)


class UsmView:
    """Memory of a USM array known by its `__sycl_usm_array_interface__` alone, viewed by another interface (a
    transpose); keeps the array it views alive."""

    def __init__(self, interface: dict, owner):
        self.__sycl_usm_array_interface__, self.owner = interface, owner


def transposed(value):
    """The transpose of a 2-D array as a view of the same memory: the array kind's own `.T` (numpy, dpnp, torch),
    a UsmView of an array known by its USM interface alone; a DLPack producer's as `as_array` takes it."""
    if not hasattr(value, "T") and usm_interface(value) is None:
        value = as_array("array", value)
    if hasattr(value, "T"):
        return value.T
    usm = usm_interface(value)
    return UsmView(dict(usm, shape=tuple(usm["shape"])[::-1], strides=usm_strides(usm)[::-1]), value)


def is_array(value) -> bool:
    if type(value) in NOT_ARRAYS:  # a launch's sizes, flags and constexprs: no test of an array kind each
        return False
    return isinstance(value, np.ndarray) or is_usm(value) or hasattr(value, "__dlpack__") or \
        torch_tensors.is_tensor(value)


def array_layout(array) -> tuple[tuple[int, ...], tuple[int, ...], np.dtype]:
    """Shape, strides in bytes (`canonical_strides`) and dtype of a numpy or USM array, as the kernel sees it
    (copied_contiguous)."""
    if isinstance(array, np.ndarray):
        if copied_contiguous(array):
            return array.shape, tuple(s * array.itemsize for s in c_strides(array.shape)), array.dtype
        return array.shape, canonical_strides(array.shape, array.strides, array.itemsize), array.dtype
    dpnp_array = usm_ndarray_of(array)
    if dpnp_array is not None:  # strides in elements
        dtype = dpnp_array.dtype
        strides = canonical_strides(dpnp_array.shape, dpnp_array.strides, 1)
        return dpnp_array.shape, tuple(s * dtype.itemsize for s in strides), dtype
    usm = usm_interface(array)
    dtype = np.dtype(usm["typestr"])
    return tuple(usm["shape"]), tuple(s * dtype.itemsize for s in usm_strides(usm)), dtype


def canonical_strides(shape, strides, unit: int) -> tuple[int, ...]:
    """`strides` (in bytes, `unit` the itemsize, or in elements, `unit` 1) with each dim of extent 1 given at least
    the stride C order would give it: the next dim's stride times its extent, `unit` for the last. No index moves
    along such a dim, and numpy (`w[None]`) and dpnp (`reshape`) leave a stride of 0 there, which made a row of N
    elements read as a column-major array of one row, whose blocks no 2D message addresses (4-6x slower on the `cpu`
    target); a larger stride (one row of a pitched array) stays, as the pitch its blocks were read with."""
    if 1 not in shape:
        return tuple(strides)
    canonical = list(strides)
    for d in reversed(range(len(shape))):
        if shape[d] == 1:
            canonical[d] = max(canonical[d], canonical[d + 1] * shape[d + 1] if d + 1 < len(shape) else unit)
    return tuple(canonical)


def dtype_and_order(name: str, shape, strides, np_dtype: np.dtype) -> tuple[DType, tuple[int, int]]:
    """The dtype and memory order of an array of `array_layout` (shape, strides, np_dtype), checked as a launch
    checks them (LaunchError)."""
    if len(shape) < 1:
        raise LaunchError(f"argument '{name}': expected an array of rank >= 1, got a 0-d array")
    dtype = dtype_of_numpy(np_dtype)
    if dtype is None:
        raise LaunchError(f"argument '{name}': dtype {np_dtype} is not supported (supported: {SUPPORTED})")
    return dtype, array_order(name, shape, strides, np_dtype.itemsize)


def classify_array(name: str, array) -> ArraySpec:
    shape, strides, np_dtype = array_layout(array)
    dtype, order = dtype_and_order(name, shape, strides, np_dtype)
    return ArraySpec(dtype, order, block_io_rule(array, shape, strides, order, np_dtype.itemsize), len(shape),
                     dense_row_major(shape, strides, np_dtype.itemsize))


def dense_row_major(shape, strides, item: int) -> bool:
    """Whether an array of `shape` and byte `strides` is laid out as C order lays it out (a dim of one element may
    have any stride: no index moves along it), so that element k of its row-major order is k elements past its
    first."""
    expected = item
    for n, stride in zip(reversed(shape), reversed(strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


def block_io_rule(array, shape, strides, order, item: int) -> str | None:
    """The first 2D block surface rule (target/block_io.py) the array's memory, as the kernel sees it, breaks (None:
    messages can address it). numpy arrays are taken in place only when aligned or where the kernel's builtins read
    any base (memory.py `in_place`), else staged at the start of a new allocation, so only USM arrays can be
    misaligned for a kernel whose builtins need the alignment."""
    if len(shape) == 1:  # one row
        shape, strides = (1, *shape), (shape[0] * item, *strides)
    rows, cols = shape[-2:] if order == ROW_MAJOR else shape[-2:][::-1]
    pitch = strides[-2] if order == ROW_MAJOR else strides[-1]
    address = usm_address(array, item)
    aligned = address is None or address % BLOCK_BASE_ALIGN == 0
    return broken_surface_rule(rows, cols * item, pitch, item, aligned, strides[:-2])


def usm_address(array, item: int) -> int | None:
    """The address of a USM array's first element (None for a numpy array)."""
    dpnp_array = usm_ndarray_of(array)
    if dpnp_array is not None:
        return dpnp_array._pointer
    usm = usm_interface(array)
    return None if usm is None else usm["data"][0] + (usm.get("offset") or 0) * item


INT32_RANGE = range(-2**31, 2**31)  # the Python ints a scalar argument passes as i32 (scalar_dtype)


def scalar_dtype(name: str, x) -> DType:
    if isinstance(x, np.generic):
        dtype = dtype_of_numpy(x.dtype)
        if dtype is not None:
            return dtype
        if x.dtype.kind == "f":
            return float32
        raise LaunchError(f"argument '{name}': scalar dtype {x.dtype} is not supported (supported: {SUPPORTED})")
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        if x in INT32_RANGE:
            return int32
        if -2**63 <= x < 2**63:
            return int64
        raise LaunchError(f"argument '{name}': integer {x} does not fit in 64 bits")
    return float32


def classify(name: str, value):
    if isinstance(value, (bool, int, float, np.generic)):
        return ScalarSpec(scalar_dtype(name, value))
    if is_array(value):
        return classify_array(name, as_array(name, value))
    raise LaunchError(f"argument '{name}': expected a numpy array or a number, got {type(value).__name__} "
                      "(USM arrays such as dpnp arrays and DLPack producers are arrays too)")


def python_scalar(value):
    """A numpy integer, float or bool as the Python number it holds, so it counts wherever a Python one does
    (grid sizes, tile shapes, offsets, constexprs); anything else as it is."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value


def read_only(value) -> bool:
    """Whether an array argument refuses writes: numpy spells the flag `writeable`, dpnp and dpctl's
    usm_ndarray `writable`; any other USM array says so in its interface's `data`, (address, read-only), but for
    dpctl's memory objects, which say read-only of memory they write themselves (dpctl 0.22)."""
    flags = getattr(value, "flags", None)
    if flags is None:
        usm = None if isinstance(value, DPCTL_MEMORY) else usm_interface(value)
        return usm is not None and bool(usm["data"][1])
    writable = getattr(flags, "writable", None)  # dpnp's spelling first: its arrays launch asynchronously (hot)
    return not (getattr(flags, "writeable", True) if writable is None else writable)


def runtime_value(spec, value):
    """What the interpreter receives: a host array (written in place) or a typed numpy scalar."""
    if isinstance(spec, ArraySpec):
        return host_array(value)
    return spec.dtype.np_dtype.type(value)


def host_array(value) -> np.ndarray:
    """An array argument in host memory, shared with the argument; device memory is a LaunchError."""
    if isinstance(value, np.ndarray):
        return value
    if torch_tensors.is_tensor(value) and value.device.type == "cpu":
        return torch_tensors.host_view(value)
    if usm_interface(value) is not None or value.__dlpack_device__()[0] != DLPACK_CPU:
        raise LaunchError(f"the numpy interpreter runs on host arrays, not on device memory ({type(value).__name__}); "
                          "launch on a SYCL device or pass numpy arrays")
    return np.from_dlpack(value)
