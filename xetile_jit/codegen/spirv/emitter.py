"""LLVM IR -> SPIR-V: walks an in-memory `llvmlite.ir.Module` (typed pointers) and writes a SPIR-V binary.

The output is an OpenCL kernel module (Addresses + Kernel, Physical64, OpenCL memory model, version 1.2, or
1.3 when a GroupNonUniform instruction is used) with kernel-style unstructured control flow. Functions with
the `spir_kernel` calling convention become `OpEntryPoint Kernel`; LLVM address spaces 0/1/2/3/4 map to the
storage classes Function/CrossWorkgroup/UniformConstant/Workgroup/Generic. Capabilities and extensions are
declared from what the module uses. Declared functions (no body) are either SPIR-V built-ins mapped by the
emitter (names starting with `__spirv_`, below) or imports (`LinkageAttributes "<name>" Import`), which is
how the Intel DPAS and block-read builtins are called on GPU targets. A defined function with LLVM's `noinline`
attribute gets `FunctionControl DontInline`, one with `alwaysinline` gets `Inline`; the OpenCL CPU compiler honours
both.

Calls of an llvmlite `ir.InlineAsm` become SPV_INTEL_inline_assembly: one `OpAsmTargetINTEL`
("spirv64-unknown-unknown"), one `OpAsmINTEL` per distinct (type, text, constraints) decorated `SideEffectsINTEL`
when it returns void or is marked `side_effect`, and an `OpAsmCallINTEL` per call. This is how the 2D block
store and prefetch reach the Intel GPU compiler (the text is vISA). `OpAsmTargetINTEL` is written without a result
type, as the Khronos translator inside IGC reads it; spirv-tools expects one, so spirv-val rejects such modules.

Built-in naming convention (what the LLVM lowering declares and calls):

* `i64 __spirv_BuiltIn<Name>(i32 dim)` for the 3-component built-ins GlobalInvocationId, WorkgroupId,
  LocalInvocationId, NumWorkgroups, WorkgroupSize, GlobalSize;
  `i32 __spirv_BuiltIn<Name>()` for SubgroupLocalInvocationId, SubgroupId, SubgroupSize, NumSubgroups.
  Each becomes an Input variable with BuiltIn and Constant decorations, an OpLoad and, for the vector
  ones, a component extract (the variable's type follows the declared return type).
* `__spirv_ocl_<name>(...)`: the OpenCL.std extended instruction `<name>` (`spec.OPENCL_STD`), e.g.
  `float __spirv_ocl_exp(float)`, `i32 __spirv_ocl_s_max(i32, i32)`; vectors work as in OpenCL C.
* `T __spirv_SubgroupShuffleINTEL(T value, i32 lane)`: OpSubgroupShuffleINTEL (SPV_INTEL_subgroups).
* `T __spirv_GroupNonUniformBroadcast(T value, i32 lane)`: OpGroupNonUniformBroadcast in Subgroup scope
  (SPIR-V 1.3; `lane` must be a constant before SPIR-V 1.5, use the shuffle for a dynamic lane).
* `T __spirv_GroupBroadcast(T value, i32 lane)`: OpGroupBroadcast in Subgroup scope (the Groups capability):
  every lane of the sub-group executes it with the same `lane`, which need not be a constant.
* `T __spirv_GroupNonUniform<Op>(i32 operation, T value[, i32 cluster_size])` for the arithmetic ops of
  `GROUP_ARITHMETIC` (IAdd, FAdd, ..., FMax, BitwiseXor): OpGroupNonUniform<Op> in Subgroup scope, `operation` the
  GroupOperation literal (a constant: Reduce, or ClusteredReduce with a constant `cluster_size`, which takes the
  GroupNonUniformClustered capability); SPIR-V 1.3.
* `void __spirv_ControlBarrier(i32 execution_scope, i32 memory_scope, i32 semantics)`: OpControlBarrier;
  the three arguments must be constants (a workgroup barrier over SLM is `(2, 2, 0x110)`).
* `void __spirv_MemoryBarrier(i32 memory_scope, i32 semantics)`: OpMemoryBarrier (a fence); constant arguments.
* `void __spirv_Subgroup2DBlock{Load,LoadTransform,LoadTranspose,Store,Prefetch}INTEL(...)`: the
  SPV_INTEL_2d_block_io instruction, operands in its order (the four shape operands i32 constants).
* `D __spirv_SubgroupMatrixMultiplyAccumulateINTEL(i32 k, A a, B b, D c, i32 operands)`: the
  SPV_INTEL_subgroup_matrix_multiply_accumulate instruction; `k` an i32 constant, `operands` the literal mask.
  LLVM has one signature per function name, so overloads carry a suffix: `__spirv_<Name>.<anything>`.
* `T* __spirv_CacheControl{Load,Store}INTEL.<c0>_<c1>(T* p)`: `p` as an OpInBoundsPtrAccessChain of element 0
  decorated (SPV_INTEL_cache_controls) CacheControl{Load,Store}INTEL with control c0 at cache level 0 (L1) and c1
  at level 1 (L3), each through a decoration group (SpirvModule.group_decorate); a memory instruction through the
  result takes those controls.

A back edge (a branch to the loop's header, conditional where the header is its own latch) carrying `!llvm.loop`
metadata with hints of _LOOP_CONTROLS (e.g. `llvm.loop.unroll.disable`) gives its loop's header an `OpLoopMerge`
naming the loop's one exit block as merge block, the back edge's block as continue target and those controls
(DontUnroll, Unroll): how OpenCL SPIR-V passes loop hints to the driver, as the Khronos translator writes them.
Only loops with a single exit block take hints.

Anything the emitter cannot translate raises NotImplementedError naming the instruction or type.
"""
from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from . import spec
from .module import SpirvModule, is_bool, splat

BUILTIN_PREFIX = "__spirv_"

_LOOP_CONTROLS = {"llvm.loop.unroll.disable": spec.LoopControlDontUnroll,
                  "llvm.loop.unroll.enable": spec.LoopControlUnroll}

_ARITHMETIC = {
    "add": spec.OpIAdd, "sub": spec.OpISub, "mul": spec.OpIMul, "sdiv": spec.OpSDiv, "udiv": spec.OpUDiv,
    "srem": spec.OpSRem, "urem": spec.OpUMod, "fadd": spec.OpFAdd, "fsub": spec.OpFSub, "fmul": spec.OpFMul,
    "fdiv": spec.OpFDiv, "frem": spec.OpFRem, "fneg": spec.OpFNegate, "and": spec.OpBitwiseAnd,
    "or": spec.OpBitwiseOr, "xor": spec.OpBitwiseXor, "shl": spec.OpShiftLeftLogical,
    "lshr": spec.OpShiftRightLogical, "ashr": spec.OpShiftRightArithmetic,
}
# SPIR-V has a separate bool type: i1 logic uses the logical opcodes
_BOOL_ARITHMETIC = {"and": spec.OpLogicalAnd, "or": spec.OpLogicalOr, "xor": spec.OpLogicalNotEqual}

_ICMP = {
    "eq": spec.OpIEqual, "ne": spec.OpINotEqual, "ugt": spec.OpUGreaterThan, "sgt": spec.OpSGreaterThan,
    "uge": spec.OpUGreaterThanEqual, "sge": spec.OpSGreaterThanEqual, "ult": spec.OpULessThan,
    "slt": spec.OpSLessThan, "ule": spec.OpULessThanEqual, "sle": spec.OpSLessThanEqual,
}
_BOOL_ICMP = {"eq": spec.OpLogicalEqual, "ne": spec.OpLogicalNotEqual}
_FCMP = {
    "oeq": spec.OpFOrdEqual, "ueq": spec.OpFUnordEqual, "one": spec.OpFOrdNotEqual,
    "une": spec.OpFUnordNotEqual, "olt": spec.OpFOrdLessThan, "ult": spec.OpFUnordLessThan,
    "ogt": spec.OpFOrdGreaterThan, "ugt": spec.OpFUnordGreaterThan, "ole": spec.OpFOrdLessThanEqual,
    "ule": spec.OpFUnordLessThanEqual, "oge": spec.OpFOrdGreaterThanEqual,
    "uge": spec.OpFUnordGreaterThanEqual, "ord": spec.OpOrdered, "uno": spec.OpUnordered,
}

_CASTS = {
    "zext": spec.OpUConvert, "sext": spec.OpSConvert, "trunc": spec.OpUConvert, "fpext": spec.OpFConvert,
    "fptrunc": spec.OpFConvert, "sitofp": spec.OpConvertSToF, "uitofp": spec.OpConvertUToF,
    "fptosi": spec.OpConvertFToS, "fptoui": spec.OpConvertFToU, "bitcast": spec.OpBitcast,
    "ptrtoint": spec.OpConvertPtrToU, "inttoptr": spec.OpConvertUToPtr,
}
# casts from i1 have no SPIR-V conversion (bool is not a number): select between these values and 0
_FROM_BOOL = {"zext": 1, "uitofp": 1, "sext": -1, "sitofp": -1}

_ATOMIC_RMW = {
    "xchg": spec.OpAtomicExchange, "add": spec.OpAtomicIAdd, "sub": spec.OpAtomicISub, "and": spec.OpAtomicAnd,
    "or": spec.OpAtomicOr, "xor": spec.OpAtomicXor, "max": spec.OpAtomicSMax, "min": spec.OpAtomicSMin,
    "umax": spec.OpAtomicUMax, "umin": spec.OpAtomicUMin,
}


@dataclass(frozen=True)
class _SpirvOp:
    """A `__spirv_<Name>` built-in that is one SPIR-V instruction taking the call's arguments as ids."""
    opcode: int
    capability: int | None = None
    extension: str | None = None
    version: int = spec.VERSION_1_2
    scope: int | None = None  # an execution scope constant put before the arguments
    has_result: bool = True
    literals: int = 0  # how many trailing arguments (integer constants) are literal operands, not ids
    group_operation: bool = False  # the first argument (an integer constant) is a GroupOperation literal


GROUP_ARITHMETIC = ("IAdd", "FAdd", "IMul", "FMul", "SMin", "UMin", "FMin", "SMax", "UMax", "FMax", "BitwiseAnd",
                    "BitwiseOr", "BitwiseXor")
_SPIRV_OPS = {
    "SubgroupShuffleINTEL": _SpirvOp(spec.OpSubgroupShuffleINTEL, spec.CapabilitySubgroupShuffleINTEL,
                                     "SPV_INTEL_subgroups"),
    "GroupBroadcast": _SpirvOp(spec.OpGroupBroadcast, spec.CapabilityGroups, scope=spec.ScopeSubgroup),
    "GroupNonUniformBroadcast": _SpirvOp(spec.OpGroupNonUniformBroadcast, spec.CapabilityGroupNonUniformBallot,
                                         version=spec.VERSION_1_3, scope=spec.ScopeSubgroup),
    **{f"GroupNonUniform{name}": _SpirvOp(getattr(spec, f"OpGroupNonUniform{name}"),
                                          spec.CapabilityGroupNonUniformArithmetic, version=spec.VERSION_1_3,
                                          scope=spec.ScopeSubgroup, group_operation=True)
       for name in GROUP_ARITHMETIC},
    "ControlBarrier": _SpirvOp(spec.OpControlBarrier, has_result=False),
    "MemoryBarrier": _SpirvOp(spec.OpMemoryBarrier, has_result=False),
    **{f"Subgroup2DBlock{name}INTEL": _SpirvOp(getattr(spec, f"OpSubgroup2DBlock{name}INTEL"),
                                               getattr(spec, f"CapabilitySubgroup2DBlock{capability}INTEL"),
                                               spec.BLOCK_IO_EXTENSION, has_result=False)
       for name, capability in [("Load", "IO"), ("LoadTransform", "Transform"), ("LoadTranspose", "Transpose"),
                                ("Store", "IO"), ("Prefetch", "IO")]},
    "SubgroupMatrixMultiplyAccumulateINTEL": _SpirvOp(spec.OpSubgroupMatrixMultiplyAccumulateINTEL,
                                                      spec.CapabilitySubgroupMatrixMultiplyAccumulateINTEL,
                                                      spec.MATRIX_MULTIPLY_EXTENSION, literals=1),
}


def emit_spirv(module: ir.Module, subgroup_size: int | None = None) -> bytes:
    """The SPIR-V binary of `module`; every kernel gets `SubgroupSize subgroup_size` when it is given."""
    spv = SpirvModule(subgroup_size)
    for value in module.global_values:
        if isinstance(value, ir.GlobalVariable):
            spv.global_variable(value)
    for fn in module.functions:
        if not fn.is_declaration:
            _FunctionEmitter(spv, fn).emit()
        elif not fn.name.startswith(BUILTIN_PREFIX):
            spv.import_function(fn)
    return spv.binary()


def successors(block: ir.Block) -> list[ir.Block]:
    """The blocks `block` branches to (none before it has a terminator: the emitter then names what it lacks)."""
    terminator = block.terminator
    return [] if terminator is None else [operand for operand in terminator.operands if isinstance(operand, ir.Block)]


def loop_merges(fn: ir.Function) -> dict[ir.Block, tuple[ir.Block, ir.Block, int]]:
    """OpLoopMerge's operands (merge block, continue target, loop control) by loop header, for the loops whose back
    edge carries hints (the module docstring). The loop is the header and the blocks that reach the back edge's
    block without passing through the header."""
    latches = {block: block.terminator.metadata["llvm.loop"] for block in fn.blocks
               if block.terminator is not None and "llvm.loop" in block.terminator.metadata}
    if not latches:  # most functions: no predecessor map to build
        return {}
    predecessors: dict[ir.Block, list[ir.Block]] = {block: [] for block in fn.blocks}
    for block in fn.blocks:
        for successor in successors(block):
            predecessors[successor].append(block)
    order = {block: position for position, block in enumerate(fn.blocks)}
    merges = {}
    for latch, hints in latches.items():
        # the back edge's target: blocks come in dominance order, so the header is at or before its latch (the latch
        # itself in a one-block loop, whose conditional branch also leaves it)
        header, = (block for block in successors(latch) if order[block] <= order[latch])
        loop, pending = {header}, [latch]
        while pending:
            block = pending.pop()
            if block not in loop:
                loop.add(block)
                pending += predecessors[block]
        exits = {successor for block in loop for successor in successors(block)} - loop
        if len(exits) != 1:
            raise NotImplementedError(f"SPIR-V emitter: loop hints on a loop with {len(exits)} exit blocks")
        merges[header] = (*exits, latch, loop_control(hints))
    return merges


def loop_control(loop_id: ir.MDValue) -> int:
    """The LoopControl bits of an `!llvm.loop` node: its first operand is the node itself, each other one a hint."""
    control = 0
    for hint in loop_id.operands[1:]:
        name = hint.operands[0].string
        if name not in _LOOP_CONTROLS:
            raise NotImplementedError(f"SPIR-V emitter: loop hint {name}")
        control |= _LOOP_CONTROLS[name]
    return control


class _FunctionEmitter:
    """Emits one function body into the definitions section, one handler per LLVM instruction kind."""

    def __init__(self, spv: SpirvModule, fn: ir.Function):
        self.spv, self.fn = spv, fn
        self.code = spv.definitions
        self.loop_merges = loop_merges(fn)

    def emit(self) -> None:
        self.spv.function_header(self.code, self.fn)
        for index, block in enumerate(self.fn.blocks):
            self.spv.emit(self.code, spec.OpLabel, self.spv.value_id(block))
            instructions = block.instructions
            if index == 0:  # SPIR-V wants every Function variable at the start of the entry block
                for alloca in (i for i in instructions if isinstance(i, ir.AllocaInstr)):
                    self._alloca(alloca)
                instructions = [i for i in instructions if not isinstance(i, ir.AllocaInstr)]
            for instr in instructions:
                if instr is block.terminator and block in self.loop_merges:
                    merge, latch, control = self.loop_merges[block]
                    self.spv.emit(self.code, spec.OpLoopMerge, *self._ids([merge, latch]), control)
                self.instruction(instr)
        self.spv.emit(self.code, spec.OpFunctionEnd)

    def instruction(self, instr: ir.Instruction) -> None:
        handler = _DISPATCH.get(instr.opname)
        if handler is None:
            raise NotImplementedError(f"SPIR-V emitter: LLVM instruction '{instr.opname}' is not supported")
        handler(self, instr)

    # --- helpers -------------------------------------------------------------------------------------
    def _ids(self, values) -> list[int]:
        return [self.spv.value_id(v) for v in values]

    def _result(self, instr: ir.Instruction, opcode: int, *operands) -> None:
        """An instruction defining the value of `instr`."""
        self.spv.emit(self.code, opcode, self.spv.type_id(instr.type), self.spv.value_id(instr), *operands)

    def _temp(self, ty: ir.Type, opcode: int, *operands) -> int:
        """An instruction defining an intermediate value with no LLVM counterpart."""
        result = self.spv.new_id()
        self.spv.emit(self.code, opcode, self.spv.type_id(ty), result, *operands)
        return result

    def _extract(self, instr: ir.Instruction, vector: int, index: ir.Value) -> None:
        if isinstance(index, ir.Constant):
            self._result(instr, spec.OpCompositeExtract, vector, index.constant)
        else:
            self._result(instr, spec.OpVectorExtractDynamic, vector, self.spv.value_id(index))

    def _atomic_operands(self, ptr: ir.Value, *orderings: str) -> list[int]:
        """Pointer, scope and one memory-semantics id per ordering: Workgroup scope for SLM, else Device."""
        storage = self.spv.storage_class(ptr.type)
        if ptr.type.pointee in (ir.IntType(64), ir.DoubleType()):
            self.spv.require(spec.CapabilityInt64Atomics)
        scope = spec.ScopeWorkgroup if storage == spec.StorageClassWorkgroup else spec.ScopeDevice
        semantics = []
        for ordering in orderings:
            bits = spec.SEMANTICS_ORDERING[ordering]
            semantics.append(self.spv.i32(bits | (spec.SEMANTICS_STORAGE.get(storage, 0) if bits else 0)))
        return [self.spv.value_id(ptr), self.spv.i32(scope), *semantics]

    # --- handlers --------------------------------------------------------------------------------------
    def _arithmetic(self, instr):
        table = _BOOL_ARITHMETIC if is_bool(instr.type) else _ARITHMETIC
        if instr.opname not in table:
            raise NotImplementedError(f"SPIR-V emitter: LLVM instruction '{instr.opname}' on {instr.type}")
        self._result(instr, table[instr.opname], *self._ids(instr.operands))

    def _cast(self, instr):
        source = instr.operands[0]
        if is_bool(source.type) and instr.opname in _FROM_BOOL:
            one, zero = splat(instr.type, _FROM_BOOL[instr.opname]), splat(instr.type, 0)
            self._result(instr, spec.OpSelect, *self._ids([source, one, zero]))
        elif is_bool(instr.type) and instr.opname == "trunc":  # i1 trunc keeps the lowest bit
            low = self._temp(source.type, spec.OpBitwiseAnd, *self._ids([source, splat(source.type, 1)]))
            self._result(instr, spec.OpINotEqual, low, self.spv.value_id(splat(source.type, 0)))
        else:
            self._result(instr, _CASTS[instr.opname], self.spv.value_id(source))

    def _addrspacecast(self, instr):
        source = instr.operands[0]
        if instr.type.addrspace == 4:
            opcode = spec.OpPtrCastToGeneric
        elif source.type.addrspace == 4:
            opcode = spec.OpGenericCastToPtr
        else:
            raise NotImplementedError(f"SPIR-V emitter: addrspacecast {source.type} to {instr.type}")
        self.spv.storage_class(instr.type)  # declares GenericPointer
        self._result(instr, opcode, self.spv.value_id(source))

    def _icmp(self, instr):
        operand_type = instr.operands[0].type
        if isinstance(operand_type, ir.PointerType):
            raise NotImplementedError("SPIR-V emitter: icmp on pointers")
        opcode = (_BOOL_ICMP if is_bool(operand_type) else _ICMP).get(instr.op)
        if opcode is None:
            raise NotImplementedError(f"SPIR-V emitter: icmp {instr.op} on {operand_type}")
        self._result(instr, opcode, *self._ids(instr.operands))

    def _fcmp(self, instr):
        if instr.op not in _FCMP:
            raise NotImplementedError(f"SPIR-V emitter: fcmp {instr.op}")
        self._result(instr, _FCMP[instr.op], *self._ids(instr.operands))

    def _select(self, instr):
        cond, *values = self._ids(instr.operands)
        if isinstance(instr.type, ir.VectorType) and not isinstance(instr.operands[0].type, ir.VectorType):
            # before SPIR-V 1.4 a vector select needs a vector condition
            cond = self._temp(ir.VectorType(ir.IntType(1), instr.type.count), spec.OpCompositeConstruct,
                              *[cond] * instr.type.count)
        self._result(instr, spec.OpSelect, cond, *values)

    def _gep(self, instr):
        opcode = spec.OpInBoundsPtrAccessChain if instr.inbounds else spec.OpPtrAccessChain
        self._result(instr, opcode, *self._ids(instr.operands))

    def _load(self, instr):
        aligned = (spec.MemoryAccessAligned, instr.align) if instr.align else ()
        self._result(instr, spec.OpLoad, self.spv.value_id(instr.operands[0]), *aligned)

    def _store(self, instr):
        aligned = (spec.MemoryAccessAligned, instr.align) if instr.align else ()
        value, ptr = self._ids(instr.operands)
        self.spv.emit(self.code, spec.OpStore, ptr, value, *aligned)

    def _alloca(self, instr):
        if instr.operands:
            raise NotImplementedError("SPIR-V emitter: alloca with an element count (use an array type)")
        self._result(instr, spec.OpVariable, spec.StorageClassFunction)

    def _alloca_outside_entry(self, instr):
        raise NotImplementedError("SPIR-V emitter: alloca outside the entry block")

    def _branch(self, instr):
        if len(instr.operands) == 1:
            self.spv.emit(self.code, spec.OpBranch, *self._ids(instr.operands))
        else:
            self.spv.emit(self.code, spec.OpBranchConditional, *self._ids(instr.operands))

    def _ret(self, instr):
        if instr.operands:
            self.spv.emit(self.code, spec.OpReturnValue, *self._ids(instr.operands))
        else:
            self.spv.emit(self.code, spec.OpReturn)

    def _unreachable(self, instr):
        self.spv.emit(self.code, spec.OpUnreachable)

    def _phi(self, instr):
        pairs = [i for value, block in instr.incomings for i in self._ids([value, block])]
        self._result(instr, spec.OpPhi, *pairs)

    def _extractelement(self, instr):
        vector, index = instr.operands
        self._extract(instr, self.spv.value_id(vector), index)

    def _insertelement(self, instr):
        vector, value, index = instr.operands
        if isinstance(index, ir.Constant):
            self._result(instr, spec.OpCompositeInsert, *self._ids([value, vector]), index.constant)
        else:
            self._result(instr, spec.OpVectorInsertDynamic, *self._ids([vector, value, index]))

    def _shufflevector(self, instr):
        first, second, mask = instr.operands
        if second is ir.Undefined:  # llvmlite's bare undef: the mask only selects from the first vector
            second = first
        # an undef mask element is the literal 0xFFFFFFFF ("no component")
        components = [0xFFFFFFFF if c.constant is ir.Undefined else c.constant for c in mask.constant]
        self._result(instr, spec.OpVectorShuffle, *self._ids([first, second]), *components)

    def _extractvalue(self, instr):
        self._result(instr, spec.OpCompositeExtract, self.spv.value_id(instr.aggregate), *instr.indices)

    def _atomicrmw(self, instr):
        if instr.operation not in _ATOMIC_RMW:
            raise NotImplementedError(f"SPIR-V emitter: atomicrmw {instr.operation}")
        ptr, value = instr.operands
        self._result(instr, _ATOMIC_RMW[instr.operation], *self._atomic_operands(ptr, instr.ordering),
                     self.spv.value_id(value))

    def _cmpxchg(self, instr):
        """LLVM's {old, success} pair is rebuilt as a struct so extractvalue works unchanged."""
        ptr, expected, new = instr.operands
        old_type = expected.type
        operands = self._atomic_operands(ptr, instr.ordering, instr.failordering)
        old = self._temp(old_type, spec.OpAtomicCompareExchange, *operands, *self._ids([new, expected]))
        ok = self._temp(ir.IntType(1), spec.OpIEqual, old, self.spv.value_id(expected))
        self._result(instr, spec.OpCompositeConstruct, old, ok)

    def _call(self, instr):
        callee = instr.callee
        if isinstance(callee, ir.InlineAsm):
            self._result(instr, spec.OpAsmCallINTEL, self.spv.asm_id(callee), *self._ids(instr.args))
            return
        if not isinstance(callee, ir.Function):
            raise NotImplementedError(f"SPIR-V emitter: call of {callee} (indirect calls)")
        if callee.is_declaration and callee.name.startswith(BUILTIN_PREFIX):
            self._builtin(instr, callee.name[len(BUILTIN_PREFIX):])
        else:
            self._result(instr, spec.OpFunctionCall, *self._ids([callee, *instr.args]))

    def _builtin(self, instr, name: str):
        if name.startswith("BuiltIn"):
            self._builtin_variable(instr, name[len("BuiltIn"):])
        elif name.startswith("ocl_"):
            self._opencl_std(instr, name[len("ocl_"):])
        elif name.startswith("CacheControl"):
            self._cache_control(instr, name)
        elif (op := _SPIRV_OPS.get(name.split(".")[0])) is not None:  # ".suffix": an overload
            self._spirv_op(instr, op)
        else:
            raise NotImplementedError(f"SPIR-V emitter: unknown built-in {BUILTIN_PREFIX}{name}")

    def _builtin_variable(self, instr, name: str):
        var, value_type = self.spv.builtin_variable(name, instr.type)
        if isinstance(value_type, ir.VectorType):
            self._extract(instr, self._temp(value_type, spec.OpLoad, var), instr.args[0])
        else:
            self._result(instr, spec.OpLoad, var)

    def _opencl_std(self, instr, name: str):
        if name not in spec.OPENCL_STD:
            raise NotImplementedError(f"SPIR-V emitter: OpenCL.std instruction {name}")
        self._result(instr, spec.OpExtInst, self.spv.opencl_std_id(), spec.OPENCL_STD[name],
                     *self._ids(instr.args))

    def _cache_control(self, instr, name: str):
        kind, controls = name.split(".")
        decoration = {"CacheControlLoadINTEL": spec.DecorationCacheControlLoadINTEL,
                      "CacheControlStoreINTEL": spec.DecorationCacheControlStoreINTEL}.get(kind)
        if decoration is None:
            raise NotImplementedError(f"SPIR-V emitter: unknown built-in {BUILTIN_PREFIX}{name}")
        self.spv.require(spec.CapabilityCacheControlsINTEL, spec.CACHE_CONTROLS_EXTENSION)
        self._result(instr, spec.OpInBoundsPtrAccessChain, self.spv.value_id(instr.args[0]), self.spv.i32(0))
        for level, control in enumerate(controls.split("_")):
            self.spv.group_decorate(self.spv.value_id(instr), decoration, level, int(control))

    def _spirv_op(self, instr, op: _SpirvOp):
        self.spv.require(op.capability, op.extension, op.version)
        args = list(instr.args)
        leading = [int(args.pop(0).constant)] if op.group_operation else []
        if leading == [spec.GroupOperationClusteredReduce]:
            self.spv.require(spec.CapabilityGroupNonUniformClustered)
        ids = args[:len(args) - op.literals]
        literals = [int(arg.constant) for arg in args[len(ids):]]
        operands = ([] if op.scope is None else [self.spv.i32(op.scope)]) + leading + self._ids(ids) + literals
        if op.has_result:
            self._result(instr, op.opcode, *operands)
        else:
            self.spv.emit(self.code, op.opcode, *operands)


_DISPATCH = {
    **dict.fromkeys(_ARITHMETIC, _FunctionEmitter._arithmetic),
    **dict.fromkeys(_CASTS, _FunctionEmitter._cast),
    "addrspacecast": _FunctionEmitter._addrspacecast,
    "icmp": _FunctionEmitter._icmp,
    "fcmp": _FunctionEmitter._fcmp,
    "select": _FunctionEmitter._select,
    "getelementptr": _FunctionEmitter._gep,
    "load": _FunctionEmitter._load,
    "store": _FunctionEmitter._store,
    "alloca": _FunctionEmitter._alloca_outside_entry,  # entry-block allocas are emitted before dispatch
    "br": _FunctionEmitter._branch,
    "ret": _FunctionEmitter._ret,
    "ret void": _FunctionEmitter._ret,  # llvmlite's opname for ret_void()
    "unreachable": _FunctionEmitter._unreachable,
    "phi": _FunctionEmitter._phi,
    "extractelement": _FunctionEmitter._extractelement,
    "insertelement": _FunctionEmitter._insertelement,
    "shufflevector": _FunctionEmitter._shufflevector,
    "extractvalue": _FunctionEmitter._extractvalue,
    "atomicrmw": _FunctionEmitter._atomicrmw,
    "cmpxchg": _FunctionEmitter._cmpxchg,
    "call": _FunctionEmitter._call,
}
