"""The SPIR-V module being written: id allocation, the logical sections (capabilities, extensions, imports,
entry points, decorations, types and constants, functions), the types, constants, built-in variables and imports
each declared once, and the capabilities and extensions the instructions used require. `emitter.py` walks the
LLVM functions into it."""
from __future__ import annotations

import struct

from llvmlite import ir

from ...target.targets import VECTOR_SIZES
from ..scalar_bits import FLOAT_BITS, scalar_bits
from . import spec

KERNEL_CALLING_CONVENTION = "spir_kernel"
FUNCTION_CONTROLS = {"noinline": spec.FunctionControlDontInline, "alwaysinline": spec.FunctionControlInline}

_FLOAT_FORMAT = {16: "<e", 32: "<f", 64: "<d"}


def _string_words(text: str) -> list[int]:
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _instruction(opcode: int, operands) -> list[int]:
    words = []
    for operand in operands:
        words.extend(_string_words(operand) if isinstance(operand, str) else [operand])
    return [(len(words) + 1) << 16 | opcode, *words]


def is_bool(ty: ir.Type) -> bool:
    """i1 or a vector of i1: SPIR-V's bool, which has its own opcodes."""
    scalar = ty.element if isinstance(ty, ir.VectorType) else ty
    return isinstance(scalar, ir.IntType) and scalar.width == 1


def splat(ty: ir.Type, value) -> ir.Constant:
    """`value` as a constant of `ty`, repeated in every component when `ty` is a vector."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)


def _literal_words(ty: ir.Type, value) -> list[int]:
    """The words of a scalar literal, low-order word first (SPIR-V's order for 64-bit values)."""
    if isinstance(ty, ir.IntType):
        width, bits = ty.width, int(value) & ((1 << ty.width) - 1)
    else:
        width = scalar_bits(ty)
        bits = int.from_bytes(struct.pack(_FLOAT_FORMAT[width], value), "little")
    return [bits & 0xFFFFFFFF] + ([bits >> 32] if width > 32 else [])


class SpirvModule:
    """Module-level state: id allocation, the logical sections, cached types/constants, capabilities."""

    def __init__(self, subgroup_size: int | None):
        self.subgroup_size = subgroup_size
        self.bound = 1
        self.version = spec.VERSION_1_2
        # dicts used as ordered sets
        self.capabilities = dict.fromkeys([spec.CapabilityAddresses, spec.CapabilityKernel])
        self.extensions: dict[str, None] = {}
        self.ext_imports: list[int] = []
        self.names: list[int] = []
        self.decorations: list[int] = []
        self.globals: list[int] = []  # types, constants and module-scope variables
        self.declarations: list[int] = []
        self.definitions: list[int] = []
        self.cache: dict[tuple, int] = {}
        self.values: dict[ir.Value, int] = {}
        self.builtin_vars: dict[str, int] = {}
        self.kernels: list[tuple[int, str]] = []
        self.opencl_std: int | None = None

    def new_id(self) -> int:
        self.bound += 1
        return self.bound - 1

    @staticmethod
    def emit(section: list[int], opcode: int, *operands) -> None:
        section.extend(_instruction(opcode, operands))

    def require(self, capability: int | None = None, extension: str | None = None,
                version: int = spec.VERSION_1_2) -> None:
        if capability is not None:
            self.capabilities[capability] = None
        if extension is not None:
            self.extensions[extension] = None
        self.version = max(self.version, version)

    # --- types and constants (cached structurally so each is declared once) -------------------------
    def _cached(self, opcode: int, operands: tuple, result_type: int | None = None) -> int:
        key = (opcode, result_type, operands)
        if key not in self.cache:
            self.cache[key] = result = self.new_id()
            head = (result,) if result_type is None else (result_type, result)
            self.emit(self.globals, opcode, *head, *operands)
        return self.cache[key]

    def type_id(self, ty: ir.Type) -> int:
        if isinstance(ty, ir.VoidType):
            return self._cached(spec.OpTypeVoid, ())
        if isinstance(ty, ir.IntType):
            if ty.width == 1:
                return self._cached(spec.OpTypeBool, ())
            self.require(spec.INT_CAPABILITY.get(ty.width))
            return self._cached(spec.OpTypeInt, (ty.width, 0))  # LLVM integers are signless
        if type(ty) in FLOAT_BITS:
            width = FLOAT_BITS[type(ty)]
            self.require(spec.FLOAT_CAPABILITY.get(width))
            return self._cached(spec.OpTypeFloat, (width,))
        if isinstance(ty, ir.VectorType):
            if ty.count not in VECTOR_SIZES:
                raise NotImplementedError(f"SPIR-V emitter: vector type {ty} (Kernel vectors have 2, 3, 4, 8, 16)")
            self.require(spec.CapabilityVector16 if ty.count > 4 else None)
            return self._cached(spec.OpTypeVector, (self.type_id(ty.element), ty.count))
        if isinstance(ty, ir.ArrayType):
            length = self.constant_id(ir.Constant(ir.IntType(32), ty.count))
            return self._cached(spec.OpTypeArray, (self.type_id(ty.element), length))
        if isinstance(ty, ir.LiteralStructType):
            return self._cached(spec.OpTypeStruct, tuple(self.type_id(e) for e in ty.elements))
        if isinstance(ty, ir.PointerType) and not ty.is_opaque:
            return self.pointer_type_id(self.storage_class(ty), self.type_id(ty.pointee))
        if isinstance(ty, ir.FunctionType):
            return self._cached(spec.OpTypeFunction, (self.type_id(ty.return_type),
                                                      *(self.type_id(a) for a in ty.args)))
        raise NotImplementedError(f"SPIR-V emitter: type {ty}")

    def pointer_type_id(self, storage_class: int, pointee: int) -> int:
        return self._cached(spec.OpTypePointer, (storage_class, pointee))

    def storage_class(self, ptr: ir.PointerType) -> int:
        if ptr.addrspace not in spec.STORAGE_CLASS:
            raise NotImplementedError(f"SPIR-V emitter: address space {ptr.addrspace}")
        storage = spec.STORAGE_CLASS[ptr.addrspace]
        self.require(spec.CapabilityGenericPointer if storage == spec.StorageClassGeneric else None)
        return storage

    def constant_id(self, const: ir.Constant) -> int:
        if isinstance(const, ir.FormattedConstant):
            raise NotImplementedError(f"SPIR-V emitter: constant expression {const.constant}")
        ty, value = const.type, const.constant
        tid = self.type_id(ty)
        if value is ir.Undefined:
            return self._cached(spec.OpUndef, (), tid)
        if value is None:
            return self._cached(spec.OpConstantNull, (), tid)
        if isinstance(ty, (ir.VectorType, ir.ArrayType)):
            parts = [v if isinstance(v, ir.Constant) else ir.Constant(ty.element, v) for v in value]
            if all(p.constant is ir.Undefined for p in parts):
                return self._cached(spec.OpUndef, (), tid)
            return self._cached(spec.OpConstantComposite, tuple(self.constant_id(p) for p in parts), tid)
        if isinstance(ty, ir.IntType) and ty.width == 1:
            return self._cached(spec.OpConstantTrue if value else spec.OpConstantFalse, (), tid)
        return self._cached(spec.OpConstant, tuple(_literal_words(ty, value)), tid)

    def i32(self, value: int) -> int:
        return self.constant_id(ir.Constant(ir.IntType(32), value))

    # --- named values ----------------------------------------------------------------------------------
    def value_id(self, value) -> int:
        """The id of an operand; functions, globals, arguments, instructions and blocks get one lazily,
        so forward references (phis, branches, later functions) need no second pass."""
        if isinstance(value, ir.Constant):
            return self.constant_id(value)
        if not isinstance(value, (ir.Instruction, ir.Argument, ir.Block, ir.Function, ir.GlobalVariable)):
            raise NotImplementedError(f"SPIR-V emitter: operand {value!r}")
        if value not in self.values:
            self.values[value] = self.new_id()
            if value.name and not value.name.startswith("."):  # ".N" is llvmlite's name for unnamed values
                self.emit(self.names, spec.OpName, self.values[value], value.name)
        return self.values[value]

    def decorate(self, target: int, decoration: int, *literals) -> None:
        self.emit(self.decorations, spec.OpDecorate, target, decoration, *literals)

    def group_decorate(self, target: int, decoration: int, *literals) -> None:
        """`decoration` on `target` through a decoration group (one per distinct decoration): spirv-val refuses
        a decoration repeated on an id (CacheControlLoadINTEL once per cache level, as SPV_INTEL_cache_controls
        means it), not one that groups add; the Intel GPU compiler reads both forms alike."""
        key = ("group", decoration, literals)
        if key not in self.cache:
            self.cache[key] = group = self.new_id()
            self.decorate(group, decoration, *literals)
            self.emit(self.decorations, spec.OpDecorationGroup, group)
        self.emit(self.decorations, spec.OpGroupDecorate, self.cache[key], target)

    def global_variable(self, var: ir.GlobalVariable) -> None:
        initializer = () if var.initializer is None else (self.constant_id(var.initializer),)
        self.emit(self.globals, spec.OpVariable, self.type_id(var.type), self.value_id(var),
                  self.storage_class(var.type), *initializer)

    def builtin_variable(self, name: str, scalar: ir.Type) -> tuple[int, ir.Type]:
        """The Input variable of built-in `name` and the type it holds (a 3-vector of `scalar` or `scalar`)."""
        if name not in spec.BUILTIN_VARIABLES:
            raise NotImplementedError(f"SPIR-V emitter: unknown built-in variable {name}")
        builtin, is_vector = spec.BUILTIN_VARIABLES[name]
        value_type = ir.VectorType(scalar, 3) if is_vector else scalar
        if name not in self.builtin_vars:
            self.builtin_vars[name] = var = self.new_id()
            ptr = self.pointer_type_id(spec.StorageClassInput, self.type_id(value_type))
            self.emit(self.globals, spec.OpVariable, ptr, var, spec.StorageClassInput)
            self.decorate(var, spec.DecorationBuiltIn, builtin)
            self.decorate(var, spec.DecorationConstant)
        return self.builtin_vars[name], value_type

    def opencl_std_id(self) -> int:
        if self.opencl_std is None:
            self.opencl_std = self.new_id()
            self.emit(self.ext_imports, spec.OpExtInstImport, self.opencl_std, spec.OPENCL_STD_SET)
        return self.opencl_std

    # --- functions ---------------------------------------------------------------------------------------
    def function_header(self, section: list[int], fn: ir.Function) -> None:
        """OpFunction (DontInline for LLVM's `noinline`, Inline for `alwaysinline`) and its parameters; pointer
        parameters with an `align` attribute get Alignment, with `byval` FuncParamAttr ByVal."""
        fid = self.value_id(fn)
        control = spec.FunctionControlNone
        for attribute, flag in FUNCTION_CONTROLS.items():
            if attribute in fn.attributes:
                control |= flag
        self.emit(section, spec.OpFunction, self.type_id(fn.function_type.return_type), fid, control,
                  self.type_id(fn.function_type))
        for arg in fn.args:
            self.emit(section, spec.OpFunctionParameter, self.type_id(arg.type), self.value_id(arg))
            if arg.attributes.align:
                self.decorate(self.value_id(arg), spec.DecorationAlignment, arg.attributes.align)
            if "byval" in arg.attributes:  # a struct the caller passes by value: its bytes are the argument
                self.decorate(self.value_id(arg), spec.DecorationFuncParamAttr, spec.FunctionParameterAttributeByVal)
        if fn.calling_convention == KERNEL_CALLING_CONVENTION:
            self.kernels.append((fid, fn.name))
            self.require(spec.CapabilitySubgroupDispatch if self.subgroup_size else None)

    def asm_id(self, asm: ir.InlineAsm) -> int:
        """The OpAsmINTEL of `asm` (and the module's OpAsmTargetINTEL), each declared once."""
        self.require(spec.CapabilityAsmINTEL, spec.INLINE_ASSEMBLY_EXTENSION)
        target = self._cached(spec.OpAsmTargetINTEL, (spec.ASM_TARGET,))  # no result type, see the docstring
        result_type = self.type_id(asm.type)
        operands = (self.type_id(asm.function_type), target, asm.asm, asm.constraint)
        is_new = (spec.OpAsmINTEL, result_type, operands) not in self.cache
        result = self._cached(spec.OpAsmINTEL, operands, result_type)
        if is_new and (asm.side_effect or isinstance(asm.type, ir.VoidType)):
            self.decorate(result, spec.DecorationSideEffectsINTEL)
        return result

    def import_function(self, fn: ir.Function) -> None:
        self.function_header(self.declarations, fn)
        self.emit(self.declarations, spec.OpFunctionEnd)
        self.decorate(self.value_id(fn), spec.DecorationLinkageAttributes, fn.name, spec.LinkageTypeImport)
        self.require(spec.CapabilityLinkage)

    def binary(self) -> bytes:
        head: list[int] = []
        for capability in self.capabilities:
            self.emit(head, spec.OpCapability, capability)
        for extension in self.extensions:
            self.emit(head, spec.OpExtension, extension)
        head += self.ext_imports
        self.emit(head, spec.OpMemoryModel, spec.AddressingPhysical64, spec.MemoryModelOpenCL)
        # before SPIR-V 1.4 the interface lists the Input variables only: the built-ins, all of them
        interface = list(self.builtin_vars.values())
        for fid, name in self.kernels:
            self.emit(head, spec.OpEntryPoint, spec.ExecutionModelKernel, fid, name, *interface)
        if self.subgroup_size:
            for fid, _ in self.kernels:
                self.emit(head, spec.OpExecutionMode, fid, spec.ExecutionModeSubgroupSize, self.subgroup_size)
        words = [spec.MAGIC, self.version, spec.GENERATOR, self.bound, 0, *head, *self.names, *self.decorations,
                 *self.globals, *self.declarations, *self.definitions]
        return struct.pack(f"<{len(words)}I", *words)
