"""The target's 2D block IO (docs/reference/xe_builtins.md §6): the messages it has (`BlockIO`: block sizes, array
lengths, VNNI and transposed loads) and the surfaces they address (the surface rules: base alignment, pitch unit,
row width, extents), which decide whether an array's memory can be read and written by 2D block messages or goes
the element path. The launch classifies each array argument by them (runtime/args.py); the lowering relies on the
extents they guarantee (codegen/llvm/lowering.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

# ---- the messages

TRANSPOSE_LANES = 16  # a transposed message gives lane i rows i, i + 16, ... (codegen/xe/builtins.py's layouts)


@dataclass(frozen=True)
class BlockIO:
    """The 2D block messages a target has (docs/reference/xe_builtins.md §6): a block is at most `max_width_bytes` wide
    (width x element size x array length), at most `max_load_rows` high for loads and prefetches and
    `max_store_rows` for stores; `array_lengths` per element size in bits; VNNI-transform loads for the
    `vnni_bits` sizes, transposed loads for `transpose_bits`, at most `max_transpose_width_bytes` wide (d32: 8
    dwords, §Limits); a block of data narrower than `start_bytes` starts on
    a multiple of `start_bytes` (the hardware's 4; 1 where the builtins are defined for a CPU, which reads any
    address). `any_layout`: the builtins address memory of any base alignment, pitch and row width (a CPU's), so
    only the surface rules of LAYOUT_FREE_RULES decide between them and the element path (surface_rule)."""

    max_width_bytes: int = 64
    min_width_bytes: int = 4
    max_load_rows: int = 32
    max_store_rows: int = 8
    array_lengths: dict = field(default_factory=lambda: {8: (1, 2, 4), 16: (1, 2, 4), 32: (1, 2), 64: (1,)},
                                hash=False)
    vnni_bits: tuple[int, ...] = (8, 16)
    transpose_bits: tuple[int, ...] = (32,)
    max_transpose_width_bytes: int = 32
    start_bytes: int = 4
    any_layout: bool = False

    def load_rule(self, bits: int, rows: int, cols: int, blocks: int = 1, vnni: bool = False,
                  transpose: bool = False) -> str | None:
        """Why a load of `blocks` blocks of rows x cols `bits`-bit elements is not a message here (None: it is)."""
        if blocks not in self.array_lengths.get(bits, ()):
            return f"{bits}-bit block loads take {self.array_lengths.get(bits, ())} blocks, not {blocks}"
        if vnni and bits not in self.vnni_bits:
            return f"VNNI-transform loads are for {self.vnni_bits}-bit data"
        if transpose and (bits not in self.transpose_bits or blocks != 1):
            return f"transposed loads are single blocks of {self.transpose_bits}-bit data"
        if transpose and cols * bits // 8 > self.max_transpose_width_bytes:
            return f"a transposed block load is at most {self.max_transpose_width_bytes} bytes wide"
        if transpose and rows % TRANSPOSE_LANES:
            return f"a transposed block load here is a multiple of {TRANSPOSE_LANES} rows (its lane layouts)"
        if rows > self.max_load_rows:
            return f"a 2D block load is at most {self.max_load_rows} rows high, not {rows}"
        return self.width_rule(bits, cols * blocks)

    def load_shapes(self, bits: int, piece, block, vnni: bool = False) -> list[tuple[int, int]]:
        """The load messages of `blocks` side-by-side blocks of rows x block[1] elements that tile `piece` (a
        multiple of `block`), as (rows, blocks), largest first: rows a multiple of block[0] dividing the piece's,
        the array's columns dividing the piece's, the message legal here."""
        shapes = [(rows, blocks) for rows in range(block[0], min(piece[0], self.max_load_rows) + 1, block[0])
                  for blocks in self.array_lengths.get(bits, ())
                  if piece[0] % rows == 0 and piece[1] % (blocks * block[1]) == 0
                  and self.load_rule(bits, rows, block[1], blocks, vnni) is None]
        return sorted(shapes, key=lambda shape: (shape[0] * shape[1], shape[0]), reverse=True)

    def store_rule(self, bits: int, rows: int, cols: int) -> str | None:
        if rows > self.max_store_rows:
            return f"a 2D block store is at most {self.max_store_rows} rows high, not {rows}"
        return self.width_rule(bits, cols)

    def width_rule(self, bits: int, cols: int) -> str | None:
        width = cols * bits // 8
        if not self.min_width_bytes <= width <= self.max_width_bytes:
            return (f"a 2D block is {self.min_width_bytes} to {self.max_width_bytes} bytes wide (array length "
                    f"included), not {width}")
        return None


# ---- the surfaces (docs/reference/xe_builtins.md §6, "Surface"): base alignment, pitch unit, width limits. A memory
# row is a row of a row-major array, a column of a column-major one. The rules are named without the array's
# numbers: the name is part of the cache key. The first three hold on every target with block builtins
# (LAYOUT_FREE_RULES: extents whose i32 coordinates the index-width rule of codegen/llvm/lowering.py keeps exact or
# outside the surface, 2**29 where the builtins are our own, the `cpu` target's, and a pitch their i32 operand
# holds); the others are the hardware's. (Rows never overlap: the launch refuses such arrays.)
BLOCK_BASE_ALIGN, BLOCK_PITCH_UNIT, BLOCK_MIN_WIDTH, BLOCK_MAX_EXTENT = 64, 16, 64, 2**24
ANY_LAYOUT_MAX_EXTENT = 2**29
BUILTIN_EXTENT_RULE = "a memory row is at most 2**29 bytes wide"
BUILTIN_HEIGHT_RULE = "there are at most 2**29 memory rows"
BUILTIN_PITCH_RULE = "the pitch between memory rows is at most 2**29 bytes"
EXTENT_RULE = "a memory row is at most 2**24 bytes wide"
HEIGHT_RULE = "there are at most 2**24 memory rows"
BASE_RULE = f"the base address is {BLOCK_BASE_ALIGN}-byte aligned"
WIDTH_RULE = f"a memory row is at least {BLOCK_MIN_WIDTH} bytes wide, in whole 4-byte units"
PITCH_RULE = f"the pitch between memory rows is a multiple of {BLOCK_PITCH_UNIT} bytes"
SLICE_RULE = f"the strides of the leading dims are multiples of {BLOCK_BASE_ALIGN} bytes (each slice is aligned)"
LAYOUT_FREE_RULES = (BUILTIN_EXTENT_RULE, BUILTIN_HEIGHT_RULE, BUILTIN_PITCH_RULE)


def broken_surface_rule(rows: int, width: int, pitch: int, item: int, aligned: bool, leading_strides) -> str | None:
    """The first surface rule a memory of `rows` memory rows of `width` bytes, `pitch` bytes apart, of `item`-byte
    elements, breaks (None: messages can address it); `aligned`: its base is BLOCK_BASE_ALIGN-byte aligned;
    `leading_strides`: the byte strides of the dims before the last two (each slice is a surface of its own).
    LAYOUT_FREE_RULES come first (surface_rule)."""
    rules = ((width <= ANY_LAYOUT_MAX_EXTENT, BUILTIN_EXTENT_RULE),
             (rows <= ANY_LAYOUT_MAX_EXTENT, BUILTIN_HEIGHT_RULE),
             (pitch <= ANY_LAYOUT_MAX_EXTENT, BUILTIN_PITCH_RULE),
             (width <= BLOCK_MAX_EXTENT, EXTENT_RULE), (rows <= BLOCK_MAX_EXTENT, HEIGHT_RULE), (aligned, BASE_RULE),
             (BLOCK_MIN_WIDTH <= width and width % max(4, item) == 0, WIDTH_RULE),
             (pitch % BLOCK_PITCH_UNIT == 0, PITCH_RULE),
             (all(s % BLOCK_BASE_ALIGN == 0 for s in leading_strides), SLICE_RULE))
    return next((rule for holds, rule in rules if not holds), None)


def surface_rule(broken: str | None, any_layout: bool = False) -> str | None:
    """Of the surface rule a memory breaks (`broken`, broken_surface_rule's), the one block builtins need: every rule
    on Xe; where they address any base, pitch and width (`any_layout`, BlockIO.any_layout: the `cpu` target's),
    only LAYOUT_FREE_RULES. None: the builtins address that memory."""
    if any_layout and broken not in LAYOUT_FREE_RULES:
        return None
    return broken
