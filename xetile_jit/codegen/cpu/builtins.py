"""The Xe builtins of the "vector" ABI (the `cpu` target, docs/DESIGN.md §3; `vector_definitions(cpu)`, which
codegen/backends.py gives its lowering): the call ABI and lane layouts of codegen/xe/builtins.py, defined for a CPU's
vector units instead of bit for bit.

* 2D block load / store: one sub-group-uniform test whether the whole block lies inside its surface. Inside, each
  component is a plain per-lane memory op (a load or store of the lane's packed word, or of its parts for VNNI),
  which the OpenCL CPU compiler turns into vector loads and stores across the lanes; no per-element bounds
  selects. On the border path the block goes through the bit-exact emulation (codegen/xe/emulation.py), so padding reads
  and dropped writes are as on the hardware; that path is a function the driver does not inline (`_out_of_line`),
  while the load or store itself is always inlined (`_inlined`).
* Prefetch: a no-op, as in the emulation.
* DPAS: the emulation's (codegen/xe/dpas_emulation.py, a loop over k), so both CPU targets give the same bits; the lowering
  writes it inline in the kernel.
  Measured alternatives (1024 f16 tutorial GEMM, docs/performance.md "CPU notes"): an earlier loop over k that picked
  B's word out of a vector by the variable index and carried the sums as one vector ran 6x slower (the driver kept
  those lane after lane in memory); one sub-group broadcast of A's whole column vector per lane instead of a
  shuffle per component ran at the same speed and built 3x slower.
"""
from __future__ import annotations

from functools import partial

from llvmlite import ir

from ..llvm.core import I32, I64, counted_loop
from ..xe import builtins as X
from ..xe import emulation as E
from ..xe.dpas_emulation import emulate_dpas
from ..xe.llvm_helpers import ROLLED, i32, lane_id, lane_index
from ...target.cpu_features import CpuFeatures


def _whole_block_inside(b: ir.IRBuilder, surface: E.Surface, msg: X.Block2DBuiltin) -> ir.Value:
    """i1, the same on every lane: every element of the message's block(s) lies inside the surface. Compared
    without multiplying the coordinates (they may be near the i32 limits, xe_emulation.Surface.element)."""
    size = msg.bits // 8
    width = surface.width if size == 1 else b.udiv(surface.width, i32(size))
    cols = msg.cols * msg.blocks
    zero = i32(0)
    return b.and_(b.and_(b.icmp_signed(">=", surface.x, zero), b.icmp_signed(">=", surface.y, zero)),
                  b.and_(b.icmp_signed("<=", surface.x, b.sub(width, i32(cols))),
                         b.icmp_signed("<=", surface.y, b.sub(surface.height, i32(msg.rows)))))


def _element_address(b: ir.IRBuilder, surface: E.Surface, msg: X.Block2DBuiltin, lane: ir.Value, index: ir.Value,
                     part: int, ty: ir.Type) -> ir.Value:
    """The address of element `part` of component `index` on `lane` (its index, i64), inside the surface, as a
    pointer to `ty`: lane 0's address, the same on every lane, moved by the lane's step (E.lane_step). The driver
    vectorizes a load across the lanes where its address steps by the lane's id; an i32 column `x + lane`
    sign-extended (which may wrap) it gathered element by element."""
    (row, col), (rows, cols) = surface.origin(b, msg, index, part), E.lane_step(b, msg, lane)
    size, pitch = ir.Constant(I64, msg.bits // 8), b.sext(surface.pitch, I64)
    origin = b.add(b.mul(b.sext(row, I64), pitch), b.mul(b.sext(col, I64), size))
    step = b.add(b.mul(rows, pitch), b.mul(cols, size))
    return b.bitcast(b.gep(b.gep(surface.base, [origin]), [step]), ir.PointerType(ty, 1))


def fast_load_word(b: ir.IRBuilder, surface: E.Surface, msg: X.Block2DBuiltin, lane: ir.Value,
                   index: ir.Value) -> ir.Value:
    """Component `index` of `lane` (its index, i64: lane_index), read without bounds tests: the lane's packed word
    in one load where its elements are adjacent in memory (plain and transposed layouts), part by part for VNNI."""
    if not msg.vnni:
        return b.load(_element_address(b, surface, msg, lane, index, 0, msg.lane_type))
    word = ir.Constant(msg.lane_type, 0)
    for part in range(msg.per_lane):
        value = b.zext(b.load(_element_address(b, surface, msg, lane, index, part, ir.IntType(msg.bits))),
                       msg.lane_type)
        word = b.or_(word, b.shl(value, ir.Constant(msg.lane_type, part * msg.bits)))
    return word


def fast_store_word(b: ir.IRBuilder, surface: E.Surface, msg: X.Block2DBuiltin, lane: ir.Value, index: ir.Value,
                    word: ir.Value) -> None:
    """Component `index` of `lane` (its index, i64) written without bounds tests."""
    b.store(word, _element_address(b, surface, msg, lane, index, 0, msg.lane_type))


def _out_of_line(fn: ir.Function, returns: ir.Type, args: list[ir.Type]) -> ir.Function:
    """A function the driver does not inline, for a block op's border path: rarely taken, and inlined into each
    block op it was most of the code the OpenCL CPU compiler builds (docs/performance.md "CPU notes"). It takes the
    surface with the block's x and y as two scalars, then `args`, then the caller's lane: with the sub-group local
    id read inside such a function (the load's returning an array), the GEMM tests' border tiles came out wrong
    on opencl:cpu; passed in, they are right. The coordinates as the builtin's <2 x i32> were a vector argument,
    which the driver built lane after lane on the fast path too (four instructions a block)."""
    surface = [*fn.function_type.args[:4], I32, I32]
    border = ir.Function(fn.module, ir.FunctionType(returns, [*surface, *args, I32]), fn.name + "_border")
    border.linkage = "internal"
    border.attributes.add("noinline")
    return border


def _surface(border: ir.Function) -> E.Surface:
    return E.Surface(*border.args[:6])


def _surface_args(fn: ir.Function, surface: E.Surface) -> list[ir.Value]:
    return [*fn.args[:4], surface.x, surface.y]


def _load_border(fn: ir.Function, msg: X.Block2DBuiltin) -> ir.Function:
    """The bit-exact load of one component (an argument), returning it: through a pointer argument the caller's
    private array would escape and stay in memory on the fast path too; returning the lane's whole data (a
    vector or an array), the driver called it lane by lane and assembled the result (twice the code of the
    fused attention's kernel, docs/performance.md "CPU notes")."""
    border = _out_of_line(fn, msg.lane_type, [I32])
    b = ir.IRBuilder(border.append_basic_block("entry"))
    *_, index, lane = border.args
    b.ret(E.emulated_load_word(b, msg, _surface(border), lane, index))
    return border


def _store_border(fn: ir.Function, msg: X.Block2DBuiltin) -> ir.Function:
    border = _out_of_line(fn, fn.function_type.return_type, [msg.data_type])
    b = ir.IRBuilder(border.append_basic_block("entry"))
    *_, data, lane = border.args
    E.emulated_store_loop(b, data, msg, _surface(border), lane)
    b.ret_void()
    return border


def _inlined(fn: ir.Function) -> None:
    """Marks a block op's function for inlining into every caller (SPIR-V `FunctionControl Inline`). The OpenCL
    CPU compiler's inliner left the calls in a tile_mma's loop nested in another loop: it then built the function's
    vector variant, whose every argument is per lane, so the coordinates were no longer uniform and each block became
    gathers and scatters behind a divergent bounds test (2048^3 f32 in a K loop split in chunks: 36 against 135
    GFLOP/s in one loop; inlined, 131; docs/performance.md "CPU notes")."""
    fn.attributes.add("alwaysinline")


def _vector_load(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin, cpu: CpuFeatures) -> None:
    _inlined(fn)
    hints = component_hints(cpu, msg.bits)
    surface, lane = E.Surface.of(b, fn), lane_id(b)
    index64 = lane_index(b)
    with b.if_else(_whole_block_inside(b, surface, msg)) as (inside, border):
        with inside:
            counted_loop(b, msg.components, None, lambda b, index, _: b.store(
                fast_load_word(b, surface, msg, index64, index), b.gep(fn.args[5], [i32(0), index])), hints)
        with border:
            _border_words(b, fn, msg, surface, lane, hints, cpu.stages_border_loads(msg.bits))
    b.ret_void()


def _border_words(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin, surface: E.Surface, lane: ir.Value,
                  hints: tuple[str, ...], staged: bool) -> None:
    """The border path of a block load: every component through `_load_border`, in a loop with the inside path's
    `hints`. `staged` (CpuFeatures.stages_border_loads: the inside loop unrolled, AVX2): the loop is rolled, so a
    block has one call, and fills an array of its own, read back into the block's array by constant indices; the
    block's array is then never indexed by a variable, which would keep it in memory on the inside path too
    (`component_hints`). A call a component, each saving and restoring the caller's vector registers around it,
    was half of the tutorial f32 GEMM's loop over K with AVX2 code: staged, its machine code 24.5 thousand
    instructions against 32.4 and its driver build about an eighth shorter, as fast (docs/performance.md "On the
    AVX2 EPYC")."""
    function, block = _load_border(fn, msg), fn.args[5]
    staged = staged and msg.components > 1
    words = block
    if staged:
        with b.goto_entry_block():
            words = b.alloca(block.type.pointee)
    counted_loop(b, msg.components, None, lambda b, index, _: b.store(
        b.call(function, [*_surface_args(fn, surface), index, lane]), b.gep(words, [i32(0), index])),
        ROLLED if staged else hints)
    if staged:
        for i in range(msg.components):
            b.store(b.load(b.gep(words, [i32(0), i32(i)])), b.gep(block, [i32(0), i32(i)]))


def _vector_store(b: ir.IRBuilder, fn: ir.Function, msg: X.Block2DBuiltin, cpu: CpuFeatures) -> None:
    _inlined(fn)
    hints = component_hints(cpu, msg.bits)
    surface, lane, data, index64 = E.Surface.of(b, fn), lane_id(b), fn.args[5], lane_index(b)

    def component(b, index, _):
        word = b.extract_element(data, index) if msg.components > 1 else data
        fast_store_word(b, surface, msg, index64, index, word)

    with b.if_else(_whole_block_inside(b, surface, msg)) as (inside, border):
        with inside:
            counted_loop(b, msg.components, None, component, hints)
        with border:
            b.call(_store_border(fn, msg), [*_surface_args(fn, surface), data, lane])
    b.ret_void()


def component_hints(cpu: CpuFeatures, bits: int) -> tuple[str, ...]:
    """The hints of the loops over a lane's components of `bits`-bit block loads and stores: none where the ISA is
    AVX-512, or AVX2 for 32-bit blocks (CpuFeatures.unrolls_blocks); else ROLLED (16-bit blocks on AVX2, an unknown
    ISA; llvm_helpers.ROLLED says why). Unrolled, the loaded block is a private array of constant indices that the
    driver keeps in registers (32 zmm, one a component of 16 lanes' f32); a loop on either path, inside the surface
    or on its border, indexes it by a variable and keeps it in memory: tutorial GEMM 1024 f32 49-62 GFLOP/s
    unrolled, 36 with the border loop alone rolled, 21-24 all rolled on the Xeon (docs/performance.md "On the Xeon
    AVX-512"); with AVX2 the border loop, rolled, fills an array of its own (`_border_words`). The register file
    decides it, not the units' width: Zen 4 (AVX-512 on 256-bit units) ran the tutorial GEMMs 4% faster unrolled and
    built them as fast ("GEMM on the `cpu` target"). With AVX2 code, unrolled 32-bit blocks made the tutorial f32
    GEMM about a tenth faster and a 4-row layer norm 4x as fast; unrolled 16-bit ones made the f16 GEMM half as fast
    and its build twice as long (docs/performance.md "GEMM on the `cpu` target"). So a value's default blocks are
    one row where the loops are rolled (Target.one_row_rolled_blocks)."""
    return () if cpu.unrolls_blocks(bits) else ROLLED


def vector_definitions(cpu: CpuFeatures, lane_reads: str) -> X.Definitions:
    """The definitions of the "vector" ABI's builtins for code that runs on `cpu`, in a kernel whose lanes read
    another lane's value as `lane_reads` says (codegen/xe/emulation.py `emulations`)."""
    return {"dpas": partial(emulate_dpas, read=lane_reads), "load": partial(_vector_load, cpu=cpu),
            "store": partial(_vector_store, cpu=cpu), "prefetch": E.emulate_prefetch}
