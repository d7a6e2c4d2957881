"""SPIR-V numbers the emitter uses: opcodes, enumerants, capabilities and the OpenCL.std extended set.

Plain constants and tables taken from the SPIR-V 1.3 unified specification, the OpenCL.std 1.0 extended
instruction set, SPV_INTEL_subgroups and SPV_INTEL_inline_assembly. Only what the emitter emits is listed.
"""
from __future__ import annotations

MAGIC = 0x07230203
GENERATOR = 0  # no registered generator id
VERSION_1_2 = 0x00010200
VERSION_1_3 = 0x00010300

# --- opcodes --------------------------------------------------------------------------------------
OpUndef = 1
OpName = 5
OpExtension = 10
OpExtInstImport = 11
OpExtInst = 12
OpMemoryModel = 14
OpEntryPoint = 15
OpExecutionMode = 16
OpCapability = 17
OpTypeVoid = 19
OpTypeBool = 20
OpTypeInt = 21
OpTypeFloat = 22
OpTypeVector = 23
OpTypeArray = 28
OpTypeStruct = 30
OpTypePointer = 32
OpTypeFunction = 33
OpConstantTrue = 41
OpConstantFalse = 42
OpConstant = 43
OpConstantComposite = 44
OpConstantNull = 46
OpFunction = 54
OpFunctionParameter = 55
OpFunctionEnd = 56
OpFunctionCall = 57
OpVariable = 59
OpLoad = 61
OpStore = 62
OpPtrAccessChain = 67
OpInBoundsPtrAccessChain = 70
OpDecorate = 71
OpDecorationGroup = 73
OpGroupDecorate = 74
OpVectorExtractDynamic = 77
OpVectorInsertDynamic = 78
OpVectorShuffle = 79
OpCompositeConstruct = 80
OpCompositeExtract = 81
OpCompositeInsert = 82
OpConvertFToU = 109
OpConvertFToS = 110
OpConvertSToF = 111
OpConvertUToF = 112
OpUConvert = 113
OpSConvert = 114
OpFConvert = 115
OpConvertPtrToU = 117
OpConvertUToPtr = 120
OpPtrCastToGeneric = 121
OpGenericCastToPtr = 122
OpBitcast = 124
OpFNegate = 127
OpIAdd = 128
OpFAdd = 129
OpISub = 130
OpFSub = 131
OpIMul = 132
OpFMul = 133
OpUDiv = 134
OpSDiv = 135
OpFDiv = 136
OpUMod = 137
OpSRem = 138
OpFRem = 140
OpOrdered = 162
OpUnordered = 163
OpLogicalEqual = 164
OpLogicalNotEqual = 165
OpLogicalOr = 166
OpLogicalAnd = 167
OpSelect = 169
OpIEqual = 170
OpINotEqual = 171
OpUGreaterThan = 172
OpSGreaterThan = 173
OpUGreaterThanEqual = 174
OpSGreaterThanEqual = 175
OpULessThan = 176
OpSLessThan = 177
OpULessThanEqual = 178
OpSLessThanEqual = 179
OpFOrdEqual = 180
OpFUnordEqual = 181
OpFOrdNotEqual = 182
OpFUnordNotEqual = 183
OpFOrdLessThan = 184
OpFUnordLessThan = 185
OpFOrdGreaterThan = 186
OpFUnordGreaterThan = 187
OpFOrdLessThanEqual = 188
OpFUnordLessThanEqual = 189
OpFOrdGreaterThanEqual = 190
OpFUnordGreaterThanEqual = 191
OpShiftRightLogical = 194
OpShiftRightArithmetic = 195
OpShiftLeftLogical = 196
OpBitwiseOr = 197
OpBitwiseXor = 198
OpBitwiseAnd = 199
OpControlBarrier = 224
OpMemoryBarrier = 225
OpAtomicExchange = 229
OpAtomicCompareExchange = 230
OpAtomicIAdd = 234
OpAtomicISub = 235
OpAtomicSMin = 236
OpAtomicUMin = 237
OpAtomicSMax = 238
OpAtomicUMax = 239
OpAtomicAnd = 240
OpAtomicOr = 241
OpAtomicXor = 242
OpPhi = 245
OpLoopMerge = 246
OpLabel = 248
OpBranch = 249
OpBranchConditional = 250
OpReturn = 253
OpReturnValue = 254
OpUnreachable = 255
OpGroupBroadcast = 263
OpGroupNonUniformBroadcast = 337
# GroupNonUniform arithmetic, each `Scope, GroupOperation (literal), Value[, ClusterSize]`
OpGroupNonUniformIAdd = 349
OpGroupNonUniformFAdd = 350
OpGroupNonUniformIMul = 351
OpGroupNonUniformFMul = 352
OpGroupNonUniformSMin = 353
OpGroupNonUniformUMin = 354
OpGroupNonUniformFMin = 355
OpGroupNonUniformSMax = 356
OpGroupNonUniformUMax = 357
OpGroupNonUniformFMax = 358
OpGroupNonUniformBitwiseAnd = 359
OpGroupNonUniformBitwiseOr = 360
OpGroupNonUniformBitwiseXor = 361
OpSubgroupShuffleINTEL = 5571
OpAsmTargetINTEL = 5609  # SPV_INTEL_inline_assembly; encoded without a result type (see emitter)
OpAsmINTEL = 5610
OpAsmCallINTEL = 5611
OpSubgroup2DBlockLoadINTEL = 6231  # SPV_INTEL_2d_block_io
OpSubgroup2DBlockLoadTransformINTEL = 6232
OpSubgroup2DBlockLoadTransposeINTEL = 6233
OpSubgroup2DBlockPrefetchINTEL = 6234
OpSubgroup2DBlockStoreINTEL = 6235
OpSubgroupMatrixMultiplyAccumulateINTEL = 6237  # SPV_INTEL_subgroup_matrix_multiply_accumulate

# --- enumerants -----------------------------------------------------------------------------------
AddressingPhysical64 = 2
MemoryModelOpenCL = 2
ExecutionModelKernel = 6
ExecutionModeSubgroupSize = 35
FunctionControlNone = 0
FunctionControlInline = 0x1
FunctionControlDontInline = 0x2
LoopControlDontUnroll = 0x2
LoopControlUnroll = 0x1
MemoryAccessAligned = 0x2

DecorationBuiltIn = 11
DecorationConstant = 22
DecorationFuncParamAttr = 38
FunctionParameterAttributeByVal = 2  # the FuncParamAttr literal
DecorationLinkageAttributes = 41
DecorationAlignment = 44
DecorationSideEffectsINTEL = 5608
DecorationCacheControlLoadINTEL = 6442
DecorationCacheControlStoreINTEL = 6443
LinkageTypeImport = 1

StorageClassFunction = 7
StorageClassInput = 1

# LLVM SPIR address space -> SPIR-V storage class (OpenCL private, global, constant, local, generic)
STORAGE_CLASS = {0: StorageClassFunction, 1: 5, 2: 0, 3: 4, 4: 8}
StorageClassWorkgroup = STORAGE_CLASS[3]
StorageClassGeneric = STORAGE_CLASS[4]

ScopeDevice = 1
ScopeWorkgroup = 2
ScopeSubgroup = 3

GroupOperationReduce = 0
GroupOperationClusteredReduce = 3

# LLVM atomic ordering -> memory semantics ordering bits
SEMANTICS_ORDERING = {"monotonic": 0x0, "unordered": 0x0, "acquire": 0x2, "release": 0x4, "acq_rel": 0x8,
                      "seq_cst": 0x10}
# storage class -> memory semantics bit naming that memory (needed with any non-relaxed ordering)
SEMANTICS_STORAGE = {STORAGE_CLASS[1]: 0x200, STORAGE_CLASS[3]: 0x100}

# --- capabilities ---------------------------------------------------------------------------------
CapabilityAddresses = 4
CapabilityLinkage = 5
CapabilityKernel = 6
CapabilityVector16 = 7
CapabilityFloat16 = 9
CapabilityFloat64 = 10
CapabilityInt64 = 11
CapabilityInt64Atomics = 12
CapabilityGroups = 18
CapabilityInt16 = 22
CapabilityGenericPointer = 38
CapabilityInt8 = 39
CapabilitySubgroupDispatch = 58
CapabilityGroupNonUniformArithmetic = 63
CapabilityGroupNonUniformBallot = 64
CapabilityGroupNonUniformClustered = 67
CapabilitySubgroupShuffleINTEL = 5568
CapabilityAsmINTEL = 5606
CapabilitySubgroup2DBlockIOINTEL = 6228
CapabilitySubgroup2DBlockTransformINTEL = 6229
CapabilitySubgroup2DBlockTransposeINTEL = 6230
CapabilitySubgroupMatrixMultiplyAccumulateINTEL = 6236
CapabilityCacheControlsINTEL = 6441

INT_CAPABILITY = {8: CapabilityInt8, 16: CapabilityInt16, 64: CapabilityInt64}
FLOAT_CAPABILITY = {16: CapabilityFloat16, 64: CapabilityFloat64}

# --- built-in variables: name -> (BuiltIn enumerant, is a 3-component vector) -----------------------
BUILTIN_VARIABLES = {
    "NumWorkgroups": (24, True),
    "WorkgroupSize": (25, True),
    "WorkgroupId": (26, True),
    "LocalInvocationId": (27, True),
    "GlobalInvocationId": (28, True),
    "GlobalSize": (31, True),
    "SubgroupSize": (36, False),
    "NumSubgroups": (38, False),
    "SubgroupId": (40, False),
    "SubgroupLocalInvocationId": (41, False),
}

# --- OpenCL.std extended instructions: name -> instruction number ----------------------------------
OPENCL_STD_SET = "OpenCL.std"
OPENCL_STD = {
    "acos": 0, "asin": 3, "atan": 6, "atan2": 7, "ceil": 12, "copysign": 13, "cos": 14, "cosh": 15, "erf": 18,
    "exp": 19, "exp2": 20, "expm1": 22, "fabs": 23, "floor": 25, "fma": 26, "fmax": 27, "fmin": 28, "fmod": 29,
    "log": 37, "log2": 38, "log1p": 40, "mad": 42, "pow": 48, "rint": 53, "round": 55, "rsqrt": 56, "sin": 57,
    "sinh": 59, "sqrt": 61, "tan": 62, "tanh": 63, "trunc": 66, "native_divide": 82, "native_exp": 83,
    "native_exp2": 84, "native_log": 86, "native_log2": 87, "native_recip": 90, "native_rsqrt": 91, "native_sqrt": 93,
    "fclamp": 95, "s_abs": 141, "s_clamp": 149, "u_clamp": 150, "clz": 151, "ctz": 152, "s_max": 156,
    "u_max": 157, "s_min": 158, "u_min": 159, "s_mul_hi": 160, "popcount": 166, "printf": 184, "u_mul_hi": 203,
}

# --- SPV_INTEL_inline_assembly ----------------------------------------------------------------------
INLINE_ASSEMBLY_EXTENSION = "SPV_INTEL_inline_assembly"
BLOCK_IO_EXTENSION = "SPV_INTEL_2d_block_io"
MATRIX_MULTIPLY_EXTENSION = "SPV_INTEL_subgroup_matrix_multiply_accumulate"
CACHE_CONTROLS_EXTENSION = "SPV_INTEL_cache_controls"
ASM_TARGET = "spirv64-unknown-unknown"  # the target string the Khronos translator writes
