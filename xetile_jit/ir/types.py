"""IR types: element dtypes, scalars, vectors, XeTile tiles and the memrefs of array arguments.

Printed as in the XeTile RFC: `vector<64x32xf16>`, `!xetile.tile<64x32xf16, #xetile.tile_attr<order = [0, 1]>>`.
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .attrs import Layout, format_list


@dataclass(frozen=True)
class DType:
    name: str       # the public name: xetile.float16
    mlir: str       # how the IR prints it: f16
    kind: str       # "f" float, "i" signed int, "u" unsigned int, "b" bool
    bits: int
    np_dtype: np.dtype

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def __repr__(self) -> str:
        return f"xetile.{self.name}"

    def __str__(self) -> str:
        return self.mlir


float16 = DType("float16", "f16", "f", 16, np.dtype(np.float16))
bfloat16 = DType("bfloat16", "bf16", "f", 16, np.dtype(ml_dtypes.bfloat16))
float32 = DType("float32", "f32", "f", 32, np.dtype(np.float32))
# FP8 (OCP formats, as ml_dtypes has them): e4m3fn has no infinities and one NaN per sign (0x7f, 0xff); e5m2 is
# the upper byte of an f16. Arithmetic and tile_mma compute them in f32 (DPAS without FP8: in f16, exactly)
float8_e4m3fn = DType("float8_e4m3fn", "f8E4M3FN", "f", 8, np.dtype(ml_dtypes.float8_e4m3fn))
float8_e5m2 = DType("float8_e5m2", "f8E5M2", "f", 8, np.dtype(ml_dtypes.float8_e5m2))
int8 = DType("int8", "i8", "i", 8, np.dtype(np.int8))
uint8 = DType("uint8", "ui8", "u", 8, np.dtype(np.uint8))
int16 = DType("int16", "i16", "i", 16, np.dtype(np.int16))
int32 = DType("int32", "i32", "i", 32, np.dtype(np.int32))
int64 = DType("int64", "i64", "i", 64, np.dtype(np.int64))
uint16 = DType("uint16", "ui16", "u", 16, np.dtype(np.uint16))
uint32 = DType("uint32", "ui32", "u", 32, np.dtype(np.uint32))
uint64 = DType("uint64", "ui64", "u", 64, np.dtype(np.uint64))
bool_ = DType("bool", "i1", "b", 1, np.dtype(np.bool_))

index_dtype = DType("index", "index", "i", 64, np.dtype(np.int64))

FLOAT8_DTYPES = (float8_e4m3fn, float8_e5m2)
ALL_DTYPES = (float16, bfloat16, float32, *FLOAT8_DTYPES, int8, uint8, int16, uint16, int32, uint32, int64, uint64, bool_)
_BY_NUMPY = {d.np_dtype: d for d in ALL_DTYPES}


def dtype_of_numpy(np_dtype) -> DType | None:
    return _BY_NUMPY.get(np.dtype(np_dtype))


class Type:
    """Base of IR types; subclasses are frozen dataclasses so types compare by value."""

    addresses_memory = False  # a memory effect (ir/effects.py) may name an operand of this type


@dataclass(frozen=True)
class ScalarType(Type):
    dtype: DType

    def __str__(self) -> str:
        return self.dtype.mlir


@dataclass(frozen=True)
class IndexType(Type):
    """Tile offsets. Interpreted as 64-bit integers."""

    @property
    def dtype(self) -> DType:
        return index_dtype

    def __str__(self) -> str:
        return "index"


@dataclass(frozen=True)
class VectorType(Type):
    shape: tuple[int, ...]
    dtype: DType

    def __str__(self) -> str:
        return f"vector<{'x'.join(map(str, self.shape))}x{self.dtype.mlir}>"


ROW_MAJOR = (1, 0)
COL_MAJOR = (0, 1)


@dataclass(frozen=True)
class TileType(Type):
    """A 1-D or 2-D block of a base array (over its last dims). `order` lists dims fastest-changing first (RFC:
    order attribute)."""

    shape: tuple[int, ...]
    dtype: DType
    order: tuple[int, ...] = ROW_MAJOR
    layout: Layout | None = None
    addresses_memory = True
    scatter = False  # a #scatter tile (ir/scatter_ops.py): element offsets, not a block

    def attr_text(self) -> str:
        fields = []
        if self.layout is not None:
            fields.append(f"wg = {self.layout}")
        if self.order != ROW_MAJOR:
            fields.append(f"order = {format_list(self.order)}")
        return f"#xetile.tile_attr<{', '.join(fields)}>" if fields else ""

    def __str__(self) -> str:
        attr = self.attr_text()
        body = f"{'x'.join(map(str, self.shape))}x{self.dtype.mlir}"
        return f"!xetile.tile<{body}, {attr}>" if attr else f"!xetile.tile<{body}>"


@dataclass(frozen=True)
class MemRefType(Type):
    """An array argument of dynamic shape and any `rank` >= 1; `order` is the memory layout of its last two dims
    (row- or column-major; a 1-D array is one row). `block_io`: its memory, and every slice along its leading
    dims, meets the surface rules of 2D block messages (alignment, pitch, width), checked at launch;
    `within_extents`: it meets those a target's builtins need where they take any layout (at most 2**29 rows and
    row bytes: target/block_io.py LAYOUT_FREE_RULES, the `cpu` target's); `strided`: its strides may be other than
    a dense row-major array's (false, known at launch: element k of its row-major order is k elements past the
    first, so a gather's offset addresses memory with no division by its sizes)."""

    dtype: DType
    order: tuple[int, ...] = ROW_MAJOR
    block_io: bool = True
    rank: int = 2
    within_extents: bool = True
    strided: bool = True
    addresses_memory = True
    memory_space = "global"  # the XeGPU RFC's memory_space of descriptors on it

    def __str__(self) -> str:
        inner = ["1"] if self.rank == 1 else ["?", "1"] if self.order == ROW_MAJOR else ["1", "?"]
        strides = ["?"] * (self.rank - len(inner)) + inner
        return f"memref<{'?x' * self.rank}{self.dtype.mlir}, strided<[{', '.join(strides)}]>>"


@dataclass(frozen=True)
class SlmMemRefType(MemRefType):
    """A statically shaped row-major buffer in shared local memory (address space 3), printed with the XeTile
    RFC's memory space: `memref<32x64xf16, slm>`."""

    shape: tuple[int, ...] = ()
    memory_space = "slm"

    def __str__(self) -> str:
        return f"memref<{'x'.join(map(str, self.shape))}x{self.dtype.mlir}, slm>"


i1 = ScalarType(bool_)
i32 = ScalarType(int32)
index = IndexType()
