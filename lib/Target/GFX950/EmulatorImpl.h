//===- EmulatorImpl.h - gfx950 emulator internals ---------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Shared between the emulator's translation (EmulatorCompile.cpp), execution
// (EmulatorExec.cpp), numerics (EmulatorNumerics.cpp) and host driver
// (Emulator.cpp). A `gpu.func` becomes a Program: value slots plus blocks of
// pre-decoded instructions. At run time every non-memref slot is a contiguous
// array of threads x elements 64-bit bit patterns (thread-major), so an op
// runs as one loop over the workgroup with no per-lane lookups.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_TARGET_GFX950_EMULATORIMPL_H
#define MXFP4_LIB_TARGET_GFX950_EMULATORIMPL_H

#include "mxfp4/Target/GFX950/Emulator.h"
#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir::mxfp4::gfx950::emu {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Formats `loc` as "file:line:col" when it has a file location.
std::string formatLocation(Location loc);

/// Returns the printed form of a type or attribute.
template <typename T> std::string printed(const T &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os);
  return text;
}

/// Returns "<loc>: gfx950 emulator: <message>".
llvm::Error makeError(Location loc, const llvm::Twine &message);

/// Returns "<loc>: gfx950 emulator: '<op name>': <message>".
llvm::Error opError(Operation *op, const llvm::Twine &message);

//===----------------------------------------------------------------------===//
// Element kinds and numerics
//===----------------------------------------------------------------------===//

/// How the bits of an element are interpreted.
enum class ElemKind : uint8_t {
  Int, // signless integer or index, `bits` wide
  F16,
  BF16,
  F32,
  F64,
  F8E8M0, // f8E8M0FNU
  F4E2M1, // f4E2M1FN
  /// Other small floats (f8E4M3FN, f6...): only moved and bitcast.
  OtherFloat,
  MemRef,
};

/// Whether arithmetic is supported on `kind` (f16, bf16, f32, f64).
bool isArithFloat(ElemKind kind);

/// Returns `v` truncated to `bits` bits.
inline uint64_t truncBits(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : v & ((uint64_t(1) << bits) - 1);
}

/// Returns `v` (`bits` wide) sign-extended to 64 bits.
inline int64_t signExtend(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return static_cast<int64_t>(v);
  unsigned shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

/// Returns the value of the `kind` element with bit pattern `bits` (exact).
double toDouble(ElemKind kind, uint64_t bits);

/// Rounds `value` to `kind` with round-to-nearest-even (for F8E8M0: the
/// exponent field, as arith.truncf's upstream expansion does). Not for F4E2M1
/// or OtherFloat.
uint64_t fromDouble(ElemKind kind, double value);

/// Returns the bits of `value` as f32.
uint32_t floatBits(float value);
float bitsToFloat(uint32_t bits);

/// Returns the E2M1 value of the 4-bit `code`.
double decodeE2M1(unsigned code);

/// Returns the E2M1 code of `value` / 2^(scaleExponent - 127) (see
/// Emulator.h for the rounding, saturation, sign and NaN rules).
unsigned quantizeE2M1(double value, unsigned scaleExponent);

/// Returns 2^(scaleExponent - 127) for an E8M0 byte or an f32 exponent field
/// (0 means 2^-127; 255 gives NaN).
double scaleFromExponent(unsigned scaleExponent);

/// Computes one FP4 x FP4 scaled MFMA of a wave. `aCodes`/`bCodes` are the
/// 64 lanes' 32 E2M1 codes each (lane-major), `aScales`/`bScales` the 64
/// lanes' scale bytes, `acc` the 64 lanes' accumulators as f32 bits
/// (lane-major, accRegisters each) and receives D.
void computeScaledMfma(MfmaShape shape, const uint8_t *aCodes,
                       const uint8_t *bCodes, const uint8_t *aScales,
                       const uint8_t *bScales, uint32_t *acc);

/// Computes one bf16 x bf16 -> f32 MFMA of a wave. `a`/`b` are the 64 lanes'
/// 8 bf16 bit patterns each (lane-major), `acc` the 64 lanes' accumulators as
/// f32 bits (lane-major, accRegisters each) and receives D (Emulator.h has
/// the accumulation order).
void computeBf16Mfma(Bf16MfmaShape shape, const uint16_t *a, const uint16_t *b,
                     uint32_t *acc);

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

/// Where a memref lives.
enum class MemSpace : uint8_t { Global, Workgroup, FatRawBuffer };

/// Static facts about a memref slot (identity layout, static shape).
struct MemRefInfo {
  int64_t elemBytes = 0;
  int64_t numElements = 0;
  llvm::SmallVector<int64_t, 4> shape, strides;
  MemSpace space = MemSpace::Global;
};

/// A value slot.
struct SlotInfo {
  ElemKind kind = ElemKind::Int;
  /// Element width in bits (index: 64).
  unsigned bits = 0;
  /// Elements per thread: 1 for scalars.
  int64_t numElements = 1;
  /// Vector shape; empty for scalars.
  llvm::SmallVector<int64_t, 2> shape;
  Type type;
  MemRefInfo mem;
};

/// Instruction opcodes. Sub-kinds (binary op, predicate, reduction kind) are
/// in Instr::sub.
enum class Opc : uint8_t {
  ThreadId,
  BlockId,
  LaneId,
  Barrier,
  NoOp,
  IntBinary,
  CmpI,
  Select,
  IntCast,
  FloatBinary,
  FloatUnary,
  CmpF,
  Bitcast,
  FloatConvert,
  IntToFloat,
  FloatToInt,
  MulUIExtended,
  Fma,
  Permute,
  ExtractDyn,
  InsertDyn,
  ToElements,
  VecBitcast,
  Reduction,
  CreateMask,
  Load,
  Store,
  MaskedLoad,
  MaskedStore,
  ViewCopy,
  FatRawBufferCast,
  For,
  If,
  ScaledMfma,
  Mfma,
  Shuffle,
  GatherToLds,
  PackedScaledTrunc,
  ScaledExtPacked,
};

/// Integer binary sub-ops.
enum class IntOp : uint8_t {
  Add,
  Sub,
  Mul,
  DivU,
  DivS,
  RemU,
  RemS,
  CeilDivU,
  CeilDivS,
  FloorDivS,
  And,
  Or,
  Xor,
  Shl,
  ShrU,
  ShrS,
  MinS,
  MaxS,
  MinU,
  MaxU,
};

/// Float binary sub-ops.
enum class FloatOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Maximum,
  Minimum,
  MaxNum,
  MinNum,
  Pow,
};

/// Float unary sub-ops (bit-level, any float kind with a sign bit).
enum class FloatUnaryOp : uint8_t {
  Neg,
  Abs,
  // math dialect functions, computed with the host's libm in the element's
  // precision (the CPU path's semantics, not the GPU's approximations).
  Exp,
  Exp2,
  Log,
  Log2,
  Sqrt,
  Rsqrt,
  Cos,
  Sin,
  Tanh,
  Erf,
  Floor,
  Ceil,
  Trunc,
  RoundEven,
};

/// Reduction kinds.
enum class ReduceOp : uint8_t {
  Add,
  Mul,
  MinUI,
  MinSI,
  MaxUI,
  MaxSI,
  And,
  Or,
  Xor,
  MinNumF,
  MaxNumF,
  MinimumF,
  MaximumF,
};

/// One pre-decoded operation.
struct Instr {
  Opc opc;
  Operation *op = nullptr;
  /// Sub-kind: IntOp, FloatOp, predicate, ReduceOp, dimension, ...
  int sub = 0;
  /// Operand and result slots.
  llvm::SmallVector<int32_t, 4> in;
  llvm::SmallVector<int32_t, 2> out;
  /// Permute: per result element, the input (permuteInput) and element
  /// (permuteElem) it copies. ExtractDyn/InsertDyn: static positions, with
  /// -1 for dynamic ones (taken from `in` in order).
  std::vector<int32_t> permuteInput;
  std::vector<int64_t> permuteElem;
  /// Small immediates (MFMA scale indices, gather sizes, flags, ...).
  int64_t imm0 = 0, imm1 = 0, imm2 = 0;
  /// Nested blocks (scf.for body; scf.if then/else).
  int32_t block0 = -1, block1 = -1;
};

/// A straight-line list of instructions; `args` are its block arguments and
/// `yields` the operands of its terminator.
struct ProgBlock {
  std::vector<Instr> instrs;
  llvm::SmallVector<int32_t, 4> args;
  llvm::SmallVector<int32_t, 4> yields;
};

/// A constant slot, filled once per launch.
struct ConstantInit {
  int32_t slot;
  /// Per-thread element values.
  std::vector<uint64_t> values;
};

/// A translated gpu.func.
struct Program {
  gpu::GPUFuncOp func;
  std::vector<SlotInfo> slots;
  std::vector<ProgBlock> blocks; // blocks[0] is the body
  llvm::SmallVector<int32_t, 8> argSlots;
  llvm::SmallVector<int32_t, 2> ldsSlots;
  std::vector<ConstantInit> constants;
  int64_t ldsBytes = 0;
};

/// Translates `func`; unsupported ops and types are located errors.
llvm::Expected<std::unique_ptr<Program>> compileKernel(gpu::GPUFuncOp func);

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

/// A byte range the kernels address: a view of caller-owned memory (a
/// launchKernel argument), or of `storage` where the emulator owns it (host
/// function allocations and arguments, globals, LDS).
struct Buffer {
  uint8_t *data = nullptr;
  int64_t size = 0;
  std::vector<uint8_t> storage;
  std::string name;
  bool freed = false;

  /// Makes this buffer own `bytes` bytes filled with `fill`.
  void allocate(int64_t bytes, uint8_t fill) {
    storage.assign(static_cast<size_t>(bytes), fill);
    data = storage.data();
    size = bytes;
  }
  /// Makes this buffer own a copy of `bytes`.
  void assign(llvm::ArrayRef<uint8_t> bytes) {
    storage.assign(bytes.begin(), bytes.end());
    data = storage.data();
    size = static_cast<int64_t>(storage.size());
  }
  llvm::ArrayRef<uint8_t> bytes() const {
    return llvm::ArrayRef<uint8_t>(data, static_cast<size_t>(size));
  }
};

/// The run-time value of a memref slot: a byte range of a buffer.
struct MemView {
  Buffer *buffer = nullptr;
  int64_t byteOffset = 0;
  int64_t sizeBytes = 0;
  /// Fat raw buffer with hardware bounds checking: elements outside
  /// [0, validBytes) load 0 and drop stores.
  bool boundsChecked = false;
  int64_t validBytes = 0;
};

/// A kernel argument at launch: a memref view or scalar bits.
struct KernelArg {
  bool isMemRef = false;
  MemView view;
  uint64_t bits = 0;
};

/// Runs `program` on grid `grid` with workgroups of `block` threads.
llvm::Error runKernel(const Program &program, llvm::ArrayRef<KernelArg> args,
                      const int64_t grid[3], const int64_t block[3],
                      EmulatorStats &stats);

} // namespace mlir::mxfp4::gfx950::emu

#endif // MXFP4_LIB_TARGET_GFX950_EMULATORIMPL_H
