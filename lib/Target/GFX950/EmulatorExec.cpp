//===- EmulatorExec.cpp - execute emulator programs -----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs a Program one workgroup at a time with all threads in lockstep. Pure
// ops compute every thread, active or not: values of inactive threads are
// never observed (results of divergent regions are merged per thread), so
// only side effects (memory, errors) and control flow look at the mask.
//
//===----------------------------------------------------------------------===//

#include "EmulatorImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::gfx950::emu;

namespace {

/// The threads executing a block: on[t] for each thread of the workgroup.
struct Mask {
  const uint8_t *on;
  int64_t count;
};

/// Reads `bytes` (1..8) little-endian bytes.
inline uint64_t readBytes(const uint8_t *p, int64_t bytes) {
  uint64_t v = 0;
  for (int64_t b = 0; b < bytes; ++b)
    v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

inline void writeBytes(uint8_t *p, uint64_t v, int64_t bytes) {
  for (int64_t b = 0; b < bytes; ++b)
    p[b] = static_cast<uint8_t>(v >> (8 * b));
}

/// Returns a + b with wrap-around (offsets computed from garbage indices
/// must not be undefined behavior).
inline int64_t addWrap(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}

/// The outcome of checking one memory access.
enum class Access { InBounds, Dropped };

class Executor {
public:
  Executor(const Program &program, ArrayRef<KernelArg> args,
           const int64_t grid[3], const int64_t block[3], EmulatorStats &stats);
  llvm::Error run();

private:
  llvm::Error runBlock(int32_t block, const Mask &mask);
  llvm::Error exec(const Instr &instr, const Mask &mask);

  uint64_t *data(int32_t slot) { return values[slot].data(); }
  const SlotInfo &slotInfo(int32_t slot) const { return program.slots[slot]; }
  int64_t elems(int32_t slot) const { return program.slots[slot].numElements; }
  bool isActive(const Mask &mask, int64_t t) const {
    return mask.count == threads || mask.on[t];
  }

  /// Error about thread `t` executing `instr`.
  llvm::Error threadError(const Instr &instr, int64_t t,
                          const llvm::Twine &message) const;
  /// Checks an access of `bytes` bytes at byte `offset` of memref slot
  /// `slot` by thread `t`.
  llvm::Expected<Access> checkAccess(const Instr &instr, int32_t slot,
                                     int64_t t, int64_t offset,
                                     int64_t bytes) const;
  /// Returns the byte offset of element `indices` (slots) for thread `t`.
  /// Wraps around instead of overflowing: garbage indices must reach the
  /// bounds check, not undefined behavior.
  int64_t byteOffset(int32_t memSlot, const int32_t *indices,
                     int64_t numIndices, int64_t t) {
    const MemRefInfo &info = slotInfo(memSlot).mem;
    uint64_t linear = 0;
    for (int64_t d = 0; d < numIndices; ++d)
      linear += values[indices[d]][t] * static_cast<uint64_t>(info.strides[d]);
    return static_cast<int64_t>(linear * static_cast<uint64_t>(info.elemBytes));
  }

  llvm::Error execLoad(const Instr &instr, const Mask &mask, bool masked);
  llvm::Error execStore(const Instr &instr, const Mask &mask, bool masked);
  llvm::Error execIntBinary(const Instr &instr, const Mask &mask);
  void execFloatBinary(const Instr &instr);
  llvm::Error execFor(const Instr &instr, const Mask &mask);
  llvm::Error execIf(const Instr &instr, const Mask &mask);
  llvm::Error execDynamicPosition(const Instr &instr, const Mask &mask,
                                  bool insert);
  void execReduction(const Instr &instr);
  llvm::Error execScaledMfma(const Instr &instr, const Mask &mask);
  llvm::Error execMfma(const Instr &instr, const Mask &mask);
  llvm::Error execShuffle(const Instr &instr, const Mask &mask);
  llvm::Error execGatherToLds(const Instr &instr, const Mask &mask);
  /// Counts active threads of wave `wave`; errors if only part of it is.
  llvm::Expected<int64_t> checkWave(const Instr &instr, const Mask &mask,
                                    int64_t wave);
  /// Copies slot `from` into slot `to` for the threads of `mask`.
  void copyMasked(int32_t from, int32_t to, const Mask &mask);

  const Program &program;
  int64_t threads;
  int64_t blockDim[3], gridDim[3], blockId[3] = {0, 0, 0};
  std::vector<std::vector<uint64_t>> values;
  std::vector<MemView> views;
  std::vector<std::unique_ptr<Buffer>> ldsBuffers;
  EmulatorStats &stats;
};

} // namespace

Executor::Executor(const Program &program, ArrayRef<KernelArg> args,
                   const int64_t grid[3], const int64_t block[3],
                   EmulatorStats &stats)
    : program(program), threads(block[0] * block[1] * block[2]), stats(stats) {
  for (int d = 0; d < 3; ++d) {
    blockDim[d] = block[d];
    gridDim[d] = grid[d];
  }
  values.resize(program.slots.size());
  views.resize(program.slots.size());
  for (size_t s = 0; s < program.slots.size(); ++s)
    if (program.slots[s].kind != ElemKind::MemRef)
      values[s].assign(threads * program.slots[s].numElements, 0);
  for (const ConstantInit &constant : program.constants) {
    uint64_t *dst = data(constant.slot);
    int64_t n = static_cast<int64_t>(constant.values.size());
    for (int64_t t = 0; t < threads; ++t)
      std::copy(constant.values.begin(), constant.values.end(), dst + t * n);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    int32_t slot = program.argSlots[i];
    if (args[i].isMemRef)
      views[slot] = args[i].view;
    else
      std::fill(values[slot].begin(), values[slot].end(), args[i].bits);
  }
  for (int32_t slot : program.ldsSlots) {
    auto buffer = std::make_unique<Buffer>();
    const MemRefInfo &info = slotInfo(slot).mem;
    buffer->allocate(info.numElements * info.elemBytes, 0xCD);
    buffer->name = "LDS";
    MemView &view = views[slot];
    view.buffer = buffer.get();
    view.sizeBytes = buffer->size;
    ldsBuffers.push_back(std::move(buffer));
  }
}

llvm::Error Executor::run() {
  std::vector<uint8_t> all(threads, 1);
  Mask full{all.data(), threads};
  for (int64_t z = 0; z < gridDim[2]; ++z) {
    for (int64_t y = 0; y < gridDim[1]; ++y) {
      for (int64_t x = 0; x < gridDim[0]; ++x) {
        blockId[0] = x;
        blockId[1] = y;
        blockId[2] = z;
        // LDS is not zeroed on hardware: poison it so that reads of
        // never-written bytes show up.
        for (auto &buffer : ldsBuffers)
          std::fill(buffer->data, buffer->data + buffer->size, 0xCD);
        if (llvm::Error error = runBlock(0, full))
          return error;
        ++stats.workgroups;
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error Executor::threadError(const Instr &instr, int64_t t,
                                  const llvm::Twine &message) const {
  return opError(instr.op, message + " (workgroup (" + llvm::Twine(blockId[0]) +
                               ", " + llvm::Twine(blockId[1]) + ", " +
                               llvm::Twine(blockId[2]) + "), thread " +
                               llvm::Twine(t) + ", wave " +
                               llvm::Twine(t / kWaveSize) + " lane " +
                               llvm::Twine(t % kWaveSize) + ")");
}

llvm::Expected<Access> Executor::checkAccess(const Instr &instr, int32_t slot,
                                             int64_t t, int64_t offset,
                                             int64_t bytes) const {
  const MemView &view = views[slot];
  if (!view.buffer)
    return threadError(instr, t, "memref has no buffer");
  if (view.buffer->freed)
    return threadError(instr, t, "access to deallocated memory");
  // Comparisons are arranged so that no sum can overflow.
  int64_t allocation = view.buffer->size - view.byteOffset;
  if (view.boundsChecked) {
    // Buffer offsets are unsigned: negative ones are out of range too.
    if (offset < 0 || offset > view.validBytes - bytes)
      return Access::Dropped;
    if (offset > allocation - bytes)
      return threadError(instr, t,
                         "buffer access at byte offset " + llvm::Twine(offset) +
                             " is inside validBytes but beyond the " +
                             llvm::Twine(allocation) + "-byte allocation");
    return Access::InBounds;
  }
  if (offset < 0 || offset > view.sizeBytes - bytes) {
    const char *space =
        slotInfo(slot).mem.space == MemSpace::Workgroup ? "LDS" : "global";
    return threadError(instr, t,
                       llvm::formatv("out-of-bounds {0} access: {1} bytes at "
                                     "byte offset {2} of a {3}-byte memref",
                                     space, bytes, offset, view.sizeBytes)
                           .str());
  }
  return Access::InBounds;
}

llvm::Error Executor::runBlock(int32_t block, const Mask &mask) {
  for (const Instr &instr : program.blocks[block].instrs)
    if (llvm::Error error = exec(instr, mask))
      return error;
  return llvm::Error::success();
}

void Executor::copyMasked(int32_t from, int32_t to, const Mask &mask) {
  if (from == to)
    return;
  int64_t n = elems(to);
  if (mask.count == threads) {
    std::copy(values[from].begin(), values[from].end(), values[to].begin());
    return;
  }
  const uint64_t *src = data(from);
  uint64_t *dst = data(to);
  for (int64_t t = 0; t < threads; ++t)
    if (mask.on[t])
      std::copy(src + t * n, src + (t + 1) * n, dst + t * n);
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

/// The float ops on one type T (float or double).
template <typename T> static T applyFloatOp(FloatOp op, T a, T b) {
  switch (op) {
  case FloatOp::Add:
    return a + b;
  case FloatOp::Sub:
    return a - b;
  case FloatOp::Mul:
    return a * b;
  case FloatOp::Div:
    return a / b;
  case FloatOp::Rem:
    return std::fmod(a, b);
  case FloatOp::Maximum:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
    if (a == b)
      return std::signbit(a) ? b : a;
    return a > b ? a : b;
  case FloatOp::Minimum:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<T>::quiet_NaN();
    if (a == b)
      return std::signbit(a) ? a : b;
    return a < b ? a : b;
  case FloatOp::MaxNum:
    if (std::isnan(a))
      return b;
    if (std::isnan(b))
      return a;
    if (a == b)
      return std::signbit(a) ? b : a;
    return a > b ? a : b;
  case FloatOp::MinNum:
    if (std::isnan(a))
      return b;
    if (std::isnan(b))
      return a;
    if (a == b)
      return std::signbit(a) ? a : b;
    return a < b ? a : b;
  case FloatOp::Pow:
    return std::pow(a, b);
  }
  return a;
}

/// The math functions on one type T (float or double).
template <typename T> static T applyMath(FloatUnaryOp op, T x) {
  switch (op) {
  case FloatUnaryOp::Exp:
    return std::exp(x);
  case FloatUnaryOp::Exp2:
    return std::exp2(x);
  case FloatUnaryOp::Log:
    return std::log(x);
  case FloatUnaryOp::Log2:
    return std::log2(x);
  case FloatUnaryOp::Sqrt:
    return std::sqrt(x);
  case FloatUnaryOp::Rsqrt:
    return T(1) / std::sqrt(x);
  case FloatUnaryOp::Cos:
    return std::cos(x);
  case FloatUnaryOp::Sin:
    return std::sin(x);
  case FloatUnaryOp::Tanh:
    return std::tanh(x);
  case FloatUnaryOp::Erf:
    return std::erf(x);
  case FloatUnaryOp::Floor:
    return std::floor(x);
  case FloatUnaryOp::Ceil:
    return std::ceil(x);
  case FloatUnaryOp::Trunc:
    return std::trunc(x);
  case FloatUnaryOp::RoundEven:
    return std::nearbyint(x);
  case FloatUnaryOp::Neg:
  case FloatUnaryOp::Abs:
    break;
  }
  return x;
}

/// Applies `op` to elements of `kind`, rounding once to `kind`.
static uint64_t applyFloatBits(FloatOp op, ElemKind kind, uint64_t a,
                               uint64_t b) {
  if (kind == ElemKind::F32)
    return floatBits(applyFloatOp<float>(op, bitsToFloat(a), bitsToFloat(b)));
  return fromDouble(
      kind, applyFloatOp<double>(op, toDouble(kind, a), toDouble(kind, b)));
}

static bool compareFloat(arith::CmpFPredicate predicate, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (predicate) {
  case arith::CmpFPredicate::AlwaysFalse:
    return false;
  case arith::CmpFPredicate::OEQ:
    return !unordered && a == b;
  case arith::CmpFPredicate::OGT:
    return !unordered && a > b;
  case arith::CmpFPredicate::OGE:
    return !unordered && a >= b;
  case arith::CmpFPredicate::OLT:
    return !unordered && a < b;
  case arith::CmpFPredicate::OLE:
    return !unordered && a <= b;
  case arith::CmpFPredicate::ONE:
    return !unordered && a != b;
  case arith::CmpFPredicate::ORD:
    return !unordered;
  case arith::CmpFPredicate::UEQ:
    return unordered || a == b;
  case arith::CmpFPredicate::UGT:
    return unordered || a > b;
  case arith::CmpFPredicate::UGE:
    return unordered || a >= b;
  case arith::CmpFPredicate::ULT:
    return unordered || a < b;
  case arith::CmpFPredicate::ULE:
    return unordered || a <= b;
  case arith::CmpFPredicate::UNE:
    return unordered || a != b;
  case arith::CmpFPredicate::UNO:
    return unordered;
  case arith::CmpFPredicate::AlwaysTrue:
    return true;
  }
  return false;
}

static bool compareInt(arith::CmpIPredicate predicate, uint64_t a, uint64_t b,
                       unsigned bits) {
  int64_t sa = signExtend(a, bits), sb = signExtend(b, bits);
  switch (predicate) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return sa < sb;
  case arith::CmpIPredicate::sle:
    return sa <= sb;
  case arith::CmpIPredicate::sgt:
    return sa > sb;
  case arith::CmpIPredicate::sge:
    return sa >= sb;
  case arith::CmpIPredicate::ult:
    return a < b;
  case arith::CmpIPredicate::ule:
    return a <= b;
  case arith::CmpIPredicate::ugt:
    return a > b;
  case arith::CmpIPredicate::uge:
    return a >= b;
  }
  return false;
}

/// Single-rounding fused multiply-add on `kind`.
static uint64_t fmaBits(ElemKind kind, uint64_t a, uint64_t b, uint64_t c) {
  switch (kind) {
  case ElemKind::F32:
    return floatBits(std::fma(bitsToFloat(a), bitsToFloat(b), bitsToFloat(c)));
  case ElemKind::F64:
    return fromDouble(kind, std::fma(toDouble(kind, a), toDouble(kind, b),
                                     toDouble(kind, c)));
  default: {
    // The product of two 16-bit floats plus a third is not exact in double
    // in general, so use APFloat's fused operation.
    const llvm::fltSemantics &semantics = kind == ElemKind::F16
                                              ? llvm::APFloat::IEEEhalf()
                                              : llvm::APFloat::BFloat();
    llvm::APFloat x(semantics, llvm::APInt(16, a));
    llvm::APFloat y(semantics, llvm::APInt(16, b));
    llvm::APFloat z(semantics, llvm::APInt(16, c));
    x.fusedMultiplyAdd(y, z, llvm::APFloat::rmNearestTiesToEven);
    return x.bitcastToAPInt().getZExtValue();
  }
  }
}

llvm::Error Executor::exec(const Instr &instr, const Mask &mask) {
  switch (instr.opc) {
  case Opc::ThreadId: {
    uint64_t *out = data(instr.out[0]);
    for (int64_t t = 0; t < threads; ++t) {
      int64_t x = t % blockDim[0];
      int64_t y = (t / blockDim[0]) % blockDim[1];
      int64_t z = t / (blockDim[0] * blockDim[1]);
      out[t] = instr.sub == 0 ? x : (instr.sub == 1 ? y : z);
    }
    return llvm::Error::success();
  }
  case Opc::BlockId:
    std::fill(values[instr.out[0]].begin(), values[instr.out[0]].end(),
              static_cast<uint64_t>(blockId[instr.sub]));
    return llvm::Error::success();
  case Opc::LaneId: {
    uint64_t *out = data(instr.out[0]);
    for (int64_t t = 0; t < threads; ++t)
      out[t] = t % kWaveSize;
    return llvm::Error::success();
  }
  case Opc::Barrier:
    if (mask.count != threads)
      return opError(
          instr.op,
          "barrier executed by only " + llvm::Twine(mask.count) + " of the " +
              llvm::Twine(threads) + " threads of the workgroup (workgroup (" +
              llvm::Twine(blockId[0]) + ", " + llvm::Twine(blockId[1]) + ", " +
              llvm::Twine(blockId[2]) + "))");
    return llvm::Error::success();
  case Opc::NoOp:
    return llvm::Error::success();
  case Opc::IntBinary:
    return execIntBinary(instr, mask);
  case Opc::CmpI: {
    const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]);
    uint64_t *out = data(instr.out[0]);
    unsigned bits = slotInfo(instr.in[0]).bits;
    auto predicate = static_cast<arith::CmpIPredicate>(instr.sub);
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i)
      out[i] = compareInt(predicate, a[i], b[i], bits);
    return llvm::Error::success();
  }
  case Opc::Select: {
    const uint64_t *c = data(instr.in[0]), *a = data(instr.in[1]),
                   *b = data(instr.in[2]);
    uint64_t *out = data(instr.out[0]);
    int64_t n = elems(instr.out[0]);
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t e = 0; e < n; ++e) {
        int64_t i = t * n + e;
        bool pick = instr.imm0 ? c[t] : c[i];
        out[i] = pick ? a[i] : b[i];
      }
    return llvm::Error::success();
  }
  case Opc::IntCast: {
    const uint64_t *a = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    unsigned from = slotInfo(instr.in[0]).bits,
             to = slotInfo(instr.out[0]).bits;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i)
      out[i] =
          instr.sub
              ? truncBits(static_cast<uint64_t>(signExtend(a[i], from)), to)
              : truncBits(a[i], to);
    return llvm::Error::success();
  }
  case Opc::FloatBinary:
    execFloatBinary(instr);
    return llvm::Error::success();
  case Opc::FloatUnary: {
    const uint64_t *a = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    uint64_t sign = uint64_t(1) << (slotInfo(instr.in[0]).bits - 1);
    int64_t total = threads * elems(instr.out[0]);
    auto op = static_cast<FloatUnaryOp>(instr.sub);
    if (op != FloatUnaryOp::Neg && op != FloatUnaryOp::Abs) {
      ElemKind kind = slotInfo(instr.in[0]).kind;
      for (int64_t i = 0; i < total; ++i)
        out[i] = kind == ElemKind::F32
                     ? floatBits(applyMath<float>(op, bitsToFloat(a[i])))
                     : fromDouble(kind,
                                  applyMath<double>(op, toDouble(kind, a[i])));
      return llvm::Error::success();
    }
    bool negate = op == FloatUnaryOp::Neg;
    for (int64_t i = 0; i < total; ++i)
      out[i] = negate ? a[i] ^ sign : a[i] & ~sign;
    return llvm::Error::success();
  }
  case Opc::CmpF: {
    const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]);
    uint64_t *out = data(instr.out[0]);
    ElemKind kind = slotInfo(instr.in[0]).kind;
    auto predicate = static_cast<arith::CmpFPredicate>(instr.sub);
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i)
      out[i] =
          compareFloat(predicate, toDouble(kind, a[i]), toDouble(kind, b[i]));
    return llvm::Error::success();
  }
  case Opc::Bitcast:
    std::copy(values[instr.in[0]].begin(), values[instr.in[0]].end(),
              values[instr.out[0]].begin());
    return llvm::Error::success();
  case Opc::FloatConvert: {
    const uint64_t *a = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    ElemKind from = slotInfo(instr.in[0]).kind,
             to = slotInfo(instr.out[0]).kind;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i)
      out[i] = fromDouble(to, toDouble(from, a[i]));
    return llvm::Error::success();
  }
  case Opc::IntToFloat: {
    const uint64_t *a = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    unsigned bits = slotInfo(instr.in[0]).bits;
    ElemKind to = slotInfo(instr.out[0]).kind;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i) {
      if (to == ElemKind::F32)
        out[i] =
            floatBits(instr.sub ? static_cast<float>(signExtend(a[i], bits))
                                : static_cast<float>(a[i]));
      else
        out[i] = fromDouble(
            to, instr.sub ? static_cast<double>(signExtend(a[i], bits))
                          : static_cast<double>(a[i]));
    }
    return llvm::Error::success();
  }
  case Opc::FloatToInt: {
    const uint64_t *a = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    ElemKind from = slotInfo(instr.in[0]).kind;
    unsigned bits = slotInfo(instr.out[0]).bits;
    // Out-of-range results are poison in MLIR; saturate (NaN -> 0).
    double lo = instr.sub ? -std::ldexp(1.0, bits - 1) : 0.0;
    double hi =
        instr.sub ? std::ldexp(1.0, bits - 1) - 1 : std::ldexp(1.0, bits) - 1;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i) {
      double v = std::trunc(toDouble(from, a[i]));
      if (std::isnan(v))
        v = 0;
      v = std::min(std::max(v, lo), hi);
      uint64_t r;
      if (instr.sub)
        r = static_cast<uint64_t>(v >= 9.2233720368547758e18
                                      ? std::numeric_limits<int64_t>::max()
                                      : static_cast<int64_t>(v));
      else
        r = v >= 1.8446744073709552e19 ? ~uint64_t(0)
                                       : static_cast<uint64_t>(v);
      out[i] = truncBits(r, bits);
    }
    return llvm::Error::success();
  }
  case Opc::MulUIExtended: {
    const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]);
    uint64_t *low = data(instr.out[0]), *high = data(instr.out[1]);
    unsigned bits = slotInfo(instr.in[0]).bits;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i) {
      unsigned __int128 p = static_cast<unsigned __int128>(a[i]) *
                            static_cast<unsigned __int128>(b[i]);
      low[i] = truncBits(static_cast<uint64_t>(p), bits);
      high[i] = truncBits(static_cast<uint64_t>(p >> bits), bits);
    }
    return llvm::Error::success();
  }
  case Opc::Fma: {
    const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]),
                   *c = data(instr.in[2]);
    uint64_t *out = data(instr.out[0]);
    ElemKind kind = slotInfo(instr.out[0]).kind;
    int64_t total = threads * elems(instr.out[0]);
    for (int64_t i = 0; i < total; ++i)
      out[i] = fmaBits(kind, a[i], b[i], c[i]);
    return llvm::Error::success();
  }
  case Opc::Permute: {
    SmallVector<const uint64_t *, 4> inputs;
    SmallVector<int64_t, 4> counts;
    for (int32_t slot : instr.in) {
      inputs.push_back(data(slot));
      counts.push_back(elems(slot));
    }
    uint64_t *out = data(instr.out[0]);
    int64_t n = elems(instr.out[0]);
    const int32_t *srcInput = instr.permuteInput.data();
    const int64_t *srcElem = instr.permuteElem.data();
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t i = 0; i < n; ++i) {
        int32_t k = srcInput[i];
        out[t * n + i] = inputs[k][t * counts[k] + srcElem[i]];
      }
    return llvm::Error::success();
  }
  case Opc::ExtractDyn:
    return execDynamicPosition(instr, mask, /*insert=*/false);
  case Opc::InsertDyn:
    return execDynamicPosition(instr, mask, /*insert=*/true);
  case Opc::ToElements: {
    const uint64_t *src = data(instr.in[0]);
    int64_t n = elems(instr.in[0]);
    for (size_t j = 0; j < instr.out.size(); ++j) {
      uint64_t *out = data(instr.out[j]);
      for (int64_t t = 0; t < threads; ++t)
        out[t] = src[t * n + j];
    }
    return llvm::Error::success();
  }
  case Opc::VecBitcast: {
    const uint64_t *src = data(instr.in[0]);
    uint64_t *out = data(instr.out[0]);
    int64_t nIn = elems(instr.in[0]), nOut = elems(instr.out[0]);
    unsigned wIn = slotInfo(instr.in[0]).bits,
             wOut = slotInfo(instr.out[0]).bits;
    // The lanes' elements form one little-endian bit string: element 0 in
    // the lowest bits (so FP4 element 2j is the low nibble of byte j).
    for (int64_t t = 0; t < threads; ++t) {
      const uint64_t *s = src + t * nIn;
      uint64_t *d = out + t * nOut;
      for (int64_t e = 0; e < nOut; ++e) {
        uint64_t v = 0;
        unsigned have = 0;
        int64_t pos = e * wOut;
        while (have < wOut) {
          int64_t idx = pos / wIn;
          unsigned off = static_cast<unsigned>(pos % wIn);
          unsigned take = std::min<unsigned>(wIn - off, wOut - have);
          uint64_t chunk = truncBits(s[idx] >> off, take);
          v |= chunk << have;
          have += take;
          pos += take;
        }
        d[e] = v;
      }
    }
    return llvm::Error::success();
  }
  case Opc::Reduction:
    execReduction(instr);
    return llvm::Error::success();
  case Opc::CreateMask: {
    uint64_t *out = data(instr.out[0]);
    const SlotInfo &info = slotInfo(instr.out[0]);
    int64_t n = info.numElements;
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t i = 0; i < n; ++i) {
        int64_t rest = i;
        bool on = true;
        for (int64_t d = static_cast<int64_t>(info.shape.size()) - 1; d >= 0;
             --d) {
          int64_t index = rest % info.shape[d];
          rest /= info.shape[d];
          on &= index < static_cast<int64_t>(values[instr.in[d]][t]);
        }
        out[t * n + i] = on;
      }
    return llvm::Error::success();
  }
  case Opc::Load:
    return execLoad(instr, mask, /*masked=*/false);
  case Opc::MaskedLoad:
    return execLoad(instr, mask, /*masked=*/true);
  case Opc::Store:
    return execStore(instr, mask, /*masked=*/false);
  case Opc::MaskedStore:
    return execStore(instr, mask, /*masked=*/true);
  case Opc::ViewCopy:
    views[instr.out[0]] = views[instr.in[0]];
    return llvm::Error::success();
  case Opc::FatRawBufferCast: {
    MemView view = views[instr.in[0]];
    int64_t validBytes = view.sizeBytes;
    if (instr.imm0) {
      // validBytes is a wave-uniform SGPR value on hardware.
      const uint64_t *vb = data(instr.in[1]);
      bool first = true;
      for (int64_t t = 0; t < threads; ++t) {
        if (!isActive(mask, t))
          continue;
        int64_t v = static_cast<int64_t>(vb[t]);
        if (v < 0)
          return threadError(instr, t, "negative validBytes " + llvm::Twine(v));
        if (!first && v != validBytes)
          return threadError(instr, t, "validBytes is not uniform");
        validBytes = v;
        first = false;
      }
    }
    view.boundsChecked = instr.imm1;
    view.validBytes = validBytes;
    views[instr.out[0]] = view;
    return llvm::Error::success();
  }
  case Opc::For:
    return execFor(instr, mask);
  case Opc::If:
    return execIf(instr, mask);
  case Opc::ScaledMfma:
    return execScaledMfma(instr, mask);
  case Opc::Mfma:
    return execMfma(instr, mask);
  case Opc::Shuffle:
    return execShuffle(instr, mask);
  case Opc::GatherToLds:
    return execGatherToLds(instr, mask);
  case Opc::PackedScaledTrunc: {
    const uint64_t *src = data(instr.in[0]), *scale = data(instr.in[1]);
    const uint64_t *existing = instr.imm1 ? data(instr.in[2]) : nullptr;
    uint64_t *out = data(instr.out[0]);
    ElemKind kind = slotInfo(instr.in[0]).kind;
    int64_t nSrc = elems(instr.in[0]);
    for (int64_t t = 0; t < threads; ++t) {
      uint64_t *d = out + t * 8;
      for (int64_t e = 0; e < 8; ++e)
        d[e] = existing ? existing[t * 8 + e] : 0;
      unsigned exponent = static_cast<unsigned>((scale[t] >> 23) & 0xFF);
      for (int64_t j = 0; j < 2; ++j) {
        double x = j < nSrc ? toDouble(kind, src[t * nSrc + j]) : 0.0;
        d[2 * instr.imm0 + j] = quantizeE2M1(x, exponent);
      }
    }
    return llvm::Error::success();
  }
  case Opc::ScaledExtPacked: {
    const uint64_t *src = data(instr.in[0]), *scale = data(instr.in[1]);
    uint64_t *out = data(instr.out[0]);
    ElemKind to = slotInfo(instr.out[0]).kind;
    int64_t nSrc = elems(instr.in[0]);
    for (int64_t t = 0; t < threads; ++t) {
      double factor =
          scaleFromExponent(static_cast<unsigned>((scale[t] >> 23) & 0xFF));
      for (int64_t j = 0; j < 2; ++j) {
        int64_t e = 2 * instr.imm0 + j;
        unsigned code = e < nSrc ? static_cast<unsigned>(src[t * nSrc + e]) : 0;
        out[t * 2 + j] = fromDouble(to, decodeE2M1(code) * factor);
      }
    }
    return llvm::Error::success();
  }
  }
  return opError(instr.op, "internal error: unknown instruction");
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

llvm::Error Executor::execIntBinary(const Instr &instr, const Mask &mask) {
  const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]);
  uint64_t *out = data(instr.out[0]);
  unsigned bits = slotInfo(instr.in[0]).bits;
  int64_t n = elems(instr.out[0]);
  auto op = static_cast<IntOp>(instr.sub);
  auto tr = [bits](uint64_t v) { return truncBits(v, bits); };
  auto sx = [bits](uint64_t v) { return signExtend(v, bits); };
  switch (op) {
  case IntOp::Add:
  case IntOp::Sub:
  case IntOp::Mul:
  case IntOp::And:
  case IntOp::Or:
  case IntOp::Xor:
  case IntOp::MinS:
  case IntOp::MaxS:
  case IntOp::MinU:
  case IntOp::MaxU:
  case IntOp::Shl:
  case IntOp::ShrU:
  case IntOp::ShrS: {
    int64_t total = threads * n;
    for (int64_t i = 0; i < total; ++i) {
      uint64_t x = a[i], y = b[i], r = 0;
      switch (op) {
      case IntOp::Add:
        r = x + y;
        break;
      case IntOp::Sub:
        r = x - y;
        break;
      case IntOp::Mul:
        r = x * y;
        break;
      case IntOp::And:
        r = x & y;
        break;
      case IntOp::Or:
        r = x | y;
        break;
      case IntOp::Xor:
        r = x ^ y;
        break;
      case IntOp::MinS:
        r = sx(x) < sx(y) ? x : y;
        break;
      case IntOp::MaxS:
        r = sx(x) > sx(y) ? x : y;
        break;
      case IntOp::MinU:
        r = x < y ? x : y;
        break;
      case IntOp::MaxU:
        r = x > y ? x : y;
        break;
      // Shifts by >= the width are poison in MLIR; they give 0 here.
      case IntOp::Shl:
        r = y >= bits ? 0 : x << y;
        break;
      case IntOp::ShrU:
        r = y >= bits ? 0 : x >> y;
        break;
      case IntOp::ShrS:
        r = static_cast<uint64_t>(sx(x) >> (y >= bits ? bits - 1 : y));
        break;
      default:
        break;
      }
      out[i] = tr(r);
    }
    return llvm::Error::success();
  }
  default:
    break;
  }
  // Divisions: a zero divisor in an active thread is a kernel bug.
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t e = 0; e < n; ++e) {
      int64_t i = t * n + e;
      uint64_t x = a[i], y = b[i];
      if (y == 0) {
        if (isActive(mask, t))
          return threadError(instr, t, "integer division by zero");
        out[i] = 0;
        continue;
      }
      int64_t sxv = sx(x), syv = sx(y);
      uint64_t r = 0;
      switch (op) {
      case IntOp::DivU:
        r = x / y;
        break;
      case IntOp::RemU:
        r = x % y;
        break;
      case IntOp::CeilDivU:
        r = x / y + (x % y != 0);
        break;
      case IntOp::DivS:
      case IntOp::CeilDivS:
      case IntOp::FloorDivS:
      case IntOp::RemS: {
        if (syv == -1) {
          // Avoid INT_MIN / -1 overflow: the quotient wraps, remainder is 0.
          r = op == IntOp::RemS ? 0 : static_cast<uint64_t>(0) - x;
          break;
        }
        int64_t q = sxv / syv, rem = sxv % syv;
        if (op == IntOp::RemS)
          r = static_cast<uint64_t>(rem);
        else if (op == IntOp::DivS)
          r = static_cast<uint64_t>(q);
        else if (op == IntOp::CeilDivS)
          r = static_cast<uint64_t>(q + (rem != 0 && ((rem > 0) == (syv > 0))));
        else
          r = static_cast<uint64_t>(q - (rem != 0 && ((rem < 0) != (syv < 0))));
        break;
      }
      default:
        break;
      }
      out[i] = tr(r);
    }
  }
  return llvm::Error::success();
}

void Executor::execFloatBinary(const Instr &instr) {
  const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]);
  uint64_t *out = data(instr.out[0]);
  ElemKind kind = slotInfo(instr.out[0]).kind;
  auto op = static_cast<FloatOp>(instr.sub);
  int64_t total = threads * elems(instr.out[0]);
  if (kind == ElemKind::F32 && op == FloatOp::Add) {
    for (int64_t i = 0; i < total; ++i)
      out[i] = floatBits(bitsToFloat(a[i]) + bitsToFloat(b[i]));
    return;
  }
  if (kind == ElemKind::F32 && op == FloatOp::Mul) {
    for (int64_t i = 0; i < total; ++i)
      out[i] = floatBits(bitsToFloat(a[i]) * bitsToFloat(b[i]));
    return;
  }
  for (int64_t i = 0; i < total; ++i)
    out[i] = applyFloatBits(op, kind, a[i], b[i]);
}

void Executor::execReduction(const Instr &instr) {
  const uint64_t *src = data(instr.in[0]);
  const uint64_t *acc = instr.in.size() > 1 ? data(instr.in[1]) : nullptr;
  uint64_t *out = data(instr.out[0]);
  const SlotInfo &info = slotInfo(instr.in[0]);
  int64_t n = info.numElements;
  unsigned bits = info.bits;
  auto op = static_cast<ReduceOp>(instr.sub);
  auto combine = [&](uint64_t x, uint64_t y) -> uint64_t {
    if (info.kind != ElemKind::Int) {
      FloatOp fop = FloatOp::Add;
      switch (op) {
      case ReduceOp::Add:
        fop = FloatOp::Add;
        break;
      case ReduceOp::Mul:
        fop = FloatOp::Mul;
        break;
      case ReduceOp::MinNumF:
        fop = FloatOp::MinNum;
        break;
      case ReduceOp::MaxNumF:
        fop = FloatOp::MaxNum;
        break;
      case ReduceOp::MinimumF:
        fop = FloatOp::Minimum;
        break;
      case ReduceOp::MaximumF:
        fop = FloatOp::Maximum;
        break;
      default:
        break;
      }
      return applyFloatBits(fop, info.kind, x, y);
    }
    int64_t sx = signExtend(x, bits), sy = signExtend(y, bits);
    switch (op) {
    case ReduceOp::Add:
      return truncBits(x + y, bits);
    case ReduceOp::Mul:
      return truncBits(x * y, bits);
    case ReduceOp::MinUI:
      return std::min(x, y);
    case ReduceOp::MaxUI:
      return std::max(x, y);
    case ReduceOp::MinSI:
      return sx < sy ? x : y;
    case ReduceOp::MaxSI:
      return sx > sy ? x : y;
    case ReduceOp::And:
      return x & y;
    case ReduceOp::Or:
      return x | y;
    case ReduceOp::Xor:
      return x ^ y;
    default:
      return x;
    }
  };
  for (int64_t t = 0; t < threads; ++t) {
    const uint64_t *s = src + t * n;
    // In element order, starting from the accumulator if there is one.
    uint64_t r = acc ? combine(acc[t], s[0]) : s[0];
    for (int64_t e = 1; e < n; ++e)
      r = combine(r, s[e]);
    out[t] = r;
  }
}

//===----------------------------------------------------------------------===//
// Vectors with dynamic positions
//===----------------------------------------------------------------------===//

llvm::Error Executor::execDynamicPosition(const Instr &instr, const Mask &mask,
                                          bool insert) {
  // extract: in = {source, dynamic...}; insert: in = {value, dest, dynamic...}
  int32_t vectorSlot = insert ? instr.in[1] : instr.in[0];
  size_t firstDynamic = insert ? 2 : 1;
  ArrayRef<int64_t> shape = slotInfo(vectorSlot).shape;
  size_t numPositions = instr.permuteElem.size();
  int64_t inner = 1;
  for (size_t d = numPositions; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t nVector = elems(vectorSlot);
  const uint64_t *vec = data(vectorSlot);
  uint64_t *out = data(instr.out[0]);
  const uint64_t *value = insert ? data(instr.in[0]) : nullptr;
  if (insert)
    std::copy(values[vectorSlot].begin(), values[vectorSlot].end(),
              values[instr.out[0]].begin());
  for (int64_t t = 0; t < threads; ++t) {
    int64_t linear = 0;
    size_t dynamic = firstDynamic;
    bool valid = true;
    for (size_t d = 0; d < numPositions; ++d) {
      int64_t p = instr.permuteElem[d];
      if (p < 0)
        p = static_cast<int64_t>(values[instr.in[dynamic++]][t]);
      if (p < 0 || p >= shape[d]) {
        if (isActive(mask, t))
          return threadError(instr, t,
                             "vector position " + llvm::Twine(p) +
                                 " out of range 0.." +
                                 llvm::Twine(shape[d] - 1));
        valid = false;
        p = 0;
      }
      linear = linear * shape[d] + p;
    }
    int64_t base = linear * inner;
    if (insert) {
      if (valid)
        for (int64_t i = 0; i < inner; ++i)
          out[t * nVector + base + i] = value[t * inner + i];
    } else {
      for (int64_t i = 0; i < inner; ++i)
        out[t * inner + i] = vec[t * nVector + base + i];
    }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

llvm::Error Executor::execLoad(const Instr &instr, const Mask &mask,
                               bool masked) {
  int32_t memSlot = instr.in[0];
  const MemRefInfo &info = slotInfo(memSlot).mem;
  int64_t numIndices = static_cast<int64_t>(info.shape.size());
  const int32_t *indices = instr.in.data() + 1;
  const uint64_t *maskBits = masked ? data(instr.in[1 + numIndices]) : nullptr;
  const uint64_t *passThru = masked ? data(instr.in[2 + numIndices]) : nullptr;
  uint64_t *out = data(instr.out[0]);
  int64_t n = elems(instr.out[0]);
  int64_t eb = info.elemBytes;
  unsigned bits = slotInfo(instr.out[0]).bits;
  const MemView &view = views[memSlot];
  for (int64_t t = 0; t < threads; ++t) {
    if (!isActive(mask, t))
      continue;
    int64_t offset = byteOffset(memSlot, indices, numIndices, t);
    uint64_t *d = out + t * n;
    int64_t limit = view.boundsChecked ? view.validBytes : view.sizeBytes;
    bool wholeInBounds = !masked && view.buffer && !view.buffer->freed &&
                         offset >= 0 && offset <= limit - n * eb &&
                         offset <= view.buffer->size - view.byteOffset - n * eb;
    if (wholeInBounds) {
      const uint8_t *p = view.buffer->data + view.byteOffset + offset;
      for (int64_t e = 0; e < n; ++e)
        d[e] = truncBits(readBytes(p + e * eb, eb), bits);
      continue;
    }
    for (int64_t e = 0; e < n; ++e) {
      if (masked && !maskBits[t * n + e]) {
        d[e] = passThru[t * n + e];
        continue;
      }
      llvm::Expected<Access> access =
          checkAccess(instr, memSlot, t, addWrap(offset, e * eb), eb);
      if (!access)
        return access.takeError();
      if (*access == Access::Dropped) {
        d[e] = 0;
        continue;
      }
      d[e] = truncBits(
          readBytes(view.buffer->data + view.byteOffset + offset + e * eb, eb),
          bits);
    }
  }
  return llvm::Error::success();
}

llvm::Error Executor::execStore(const Instr &instr, const Mask &mask,
                                bool masked) {
  int32_t memSlot = instr.in[0];
  const MemRefInfo &info = slotInfo(memSlot).mem;
  int64_t numIndices = static_cast<int64_t>(info.shape.size());
  const int32_t *indices = instr.in.data() + 1;
  const uint64_t *maskBits = masked ? data(instr.in[1 + numIndices]) : nullptr;
  int32_t valueSlot = instr.in.back();
  const uint64_t *value = data(valueSlot);
  int64_t n = elems(valueSlot);
  int64_t eb = info.elemBytes;
  const MemView &view = views[memSlot];
  for (int64_t t = 0; t < threads; ++t) {
    if (!isActive(mask, t))
      continue;
    int64_t offset = byteOffset(memSlot, indices, numIndices, t);
    const uint64_t *v = value + t * n;
    for (int64_t e = 0; e < n; ++e) {
      if (masked && !maskBits[t * n + e])
        continue;
      llvm::Expected<Access> access =
          checkAccess(instr, memSlot, t, addWrap(offset, e * eb), eb);
      if (!access)
        return access.takeError();
      if (*access == Access::Dropped)
        continue;
      writeBytes(view.buffer->data + view.byteOffset + offset + e * eb, v[e],
                 eb);
    }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

llvm::Error Executor::execFor(const Instr &instr, const Mask &mask) {
  const ProgBlock &body = program.blocks[instr.block0];
  unsigned bits = slotInfo(instr.in[0]).bits;
  bool isUnsigned = instr.imm0 != 0;
  const uint64_t *ub = data(instr.in[1]), *step = data(instr.in[2]);
  size_t numIter = body.args.size() - 1;
  int32_t ivSlot = body.args[0];
  // Initial values.
  std::copy(values[instr.in[0]].begin(), values[instr.in[0]].end(),
            values[ivSlot].begin());
  for (size_t k = 0; k < numIter; ++k)
    copyMasked(instr.in[3 + k], body.args[1 + k], mask);
  for (int64_t t = 0; t < threads; ++t) {
    if (!isActive(mask, t))
      continue;
    if (isUnsigned ? step[t] == 0 : signExtend(step[t], bits) <= 0)
      return threadError(instr, t,
                         "scf.for step " +
                             llvm::Twine(signExtend(step[t], bits)) +
                             " is not positive");
  }
  // A yield that reads another iteration argument needs a snapshot.
  bool needsTemp = false;
  for (size_t k = 0; k < numIter; ++k)
    for (size_t j = 0; j < numIter; ++j)
      if (j != k && body.yields[k] == body.args[1 + j])
        needsTemp = true;
  std::vector<std::vector<uint64_t>> temps(needsTemp ? numIter : 0);
  std::vector<uint8_t> live(threads);
  for (int64_t t = 0; t < threads; ++t)
    live[t] = isActive(mask, t);
  uint64_t *iv = data(ivSlot);
  while (true) {
    int64_t count = 0;
    for (int64_t t = 0; t < threads; ++t) {
      if (!live[t])
        continue;
      bool inRange = isUnsigned
                         ? iv[t] < ub[t]
                         : signExtend(iv[t], bits) < signExtend(ub[t], bits);
      live[t] = inRange;
      count += inRange;
    }
    if (count == 0)
      break;
    Mask iterMask{live.data(), count};
    if (llvm::Error error = runBlock(instr.block0, iterMask))
      return error;
    if (needsTemp) {
      for (size_t k = 0; k < numIter; ++k)
        temps[k] = values[body.yields[k]];
      for (size_t k = 0; k < numIter; ++k) {
        int64_t n = elems(body.args[1 + k]);
        uint64_t *dst = data(body.args[1 + k]);
        for (int64_t t = 0; t < threads; ++t)
          if (live[t])
            std::copy(temps[k].begin() + t * n, temps[k].begin() + (t + 1) * n,
                      dst + t * n);
      }
    } else {
      for (size_t k = 0; k < numIter; ++k)
        copyMasked(body.yields[k], body.args[1 + k], iterMask);
    }
    for (int64_t t = 0; t < threads; ++t) {
      if (!live[t])
        continue;
      uint64_t next = truncBits(iv[t] + step[t], bits);
      // Stop a thread whose induction variable would wrap around.
      bool wrapped = isUnsigned
                         ? next < iv[t]
                         : signExtend(next, bits) < signExtend(iv[t], bits);
      iv[t] = next;
      if (wrapped)
        live[t] = 0;
    }
  }
  for (size_t k = 0; k < numIter; ++k)
    copyMasked(body.args[1 + k], instr.out[k], mask);
  return llvm::Error::success();
}

llvm::Error Executor::execIf(const Instr &instr, const Mask &mask) {
  const uint64_t *cond = data(instr.in[0]);
  std::vector<uint8_t> thenOn(threads), elseOn(threads);
  int64_t thenCount = 0, elseCount = 0;
  for (int64_t t = 0; t < threads; ++t) {
    bool active = isActive(mask, t);
    thenOn[t] = active && (cond[t] & 1);
    elseOn[t] = active && !(cond[t] & 1);
    thenCount += thenOn[t];
    elseCount += elseOn[t];
  }
  auto runBranch = [&](int32_t block, std::vector<uint8_t> &on,
                       int64_t count) -> llvm::Error {
    if (block < 0 || count == 0)
      return llvm::Error::success();
    Mask branchMask{on.data(), count};
    if (llvm::Error error = runBlock(block, branchMask))
      return error;
    const ProgBlock &b = program.blocks[block];
    for (size_t k = 0; k < instr.out.size(); ++k)
      copyMasked(b.yields[k], instr.out[k], branchMask);
    return llvm::Error::success();
  };
  if (llvm::Error error = runBranch(instr.block0, thenOn, thenCount))
    return error;
  return runBranch(instr.block1, elseOn, elseCount);
}

//===----------------------------------------------------------------------===//
// Wave-level ops
//===----------------------------------------------------------------------===//

llvm::Expected<int64_t> Executor::checkWave(const Instr &instr,
                                            const Mask &mask, int64_t wave) {
  int64_t first = wave * kWaveSize;
  int64_t active = 0;
  for (int64_t t = first; t < std::min(first + kWaveSize, threads); ++t)
    active += isActive(mask, t);
  if (active != 0 && active != kWaveSize)
    return opError(instr.op,
                   "wave-level op executed by only " + llvm::Twine(active) +
                       " of the 64 lanes of wave " + llvm::Twine(wave) +
                       " (workgroup (" + llvm::Twine(blockId[0]) + ", " +
                       llvm::Twine(blockId[1]) + ", " +
                       llvm::Twine(blockId[2]) + "))");
  return active;
}

llvm::Error Executor::execScaledMfma(const Instr &instr, const Mask &mask) {
  auto shape = static_cast<MfmaShape>(instr.sub);
  int64_t regs = getGeometry(shape).accRegisters;
  const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]),
                 *c = data(instr.in[2]), *sa = data(instr.in[3]),
                 *sb = data(instr.in[4]);
  uint64_t *d = data(instr.out[0]);
  uint8_t aCodes[kWaveSize * 32], bCodes[kWaveSize * 32];
  uint8_t aScales[kWaveSize], bScales[kWaveSize];
  uint32_t acc[kWaveSize * 16];
  int64_t waves = (threads + kWaveSize - 1) / kWaveSize;
  for (int64_t wave = 0; wave < waves; ++wave) {
    llvm::Expected<int64_t> active = checkWave(instr, mask, wave);
    if (!active)
      return active.takeError();
    if (*active == 0)
      continue;
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      int64_t t = wave * kWaveSize + lane;
      for (int64_t e = 0; e < 32; ++e) {
        aCodes[lane * 32 + e] = static_cast<uint8_t>(a[t * 32 + e]);
        bCodes[lane * 32 + e] = static_cast<uint8_t>(b[t * 32 + e]);
      }
      aScales[lane] =
          static_cast<uint8_t>(instr.imm0 < 0 ? sa[t] : sa[t * 4 + instr.imm0]);
      bScales[lane] =
          static_cast<uint8_t>(instr.imm1 < 0 ? sb[t] : sb[t * 4 + instr.imm1]);
      for (int64_t r = 0; r < regs; ++r)
        acc[lane * regs + r] = static_cast<uint32_t>(c[t * regs + r]);
    }
    computeScaledMfma(shape, aCodes, bCodes, aScales, bScales, acc);
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      int64_t t = wave * kWaveSize + lane;
      for (int64_t r = 0; r < regs; ++r)
        d[t * regs + r] = acc[lane * regs + r];
    }
    ++stats.mfmas;
  }
  return llvm::Error::success();
}

llvm::Error Executor::execMfma(const Instr &instr, const Mask &mask) {
  auto shape = static_cast<Bf16MfmaShape>(instr.sub);
  Bf16MfmaGeometry g = getGeometry(shape);
  int64_t regs = g.accRegisters, n = g.elementsPerLane;
  const uint64_t *a = data(instr.in[0]), *b = data(instr.in[1]),
                 *c = data(instr.in[2]);
  uint64_t *d = data(instr.out[0]);
  uint16_t aBits[kWaveSize * 8], bBits[kWaveSize * 8];
  uint32_t acc[kWaveSize * 16];
  int64_t waves = (threads + kWaveSize - 1) / kWaveSize;
  for (int64_t wave = 0; wave < waves; ++wave) {
    llvm::Expected<int64_t> active = checkWave(instr, mask, wave);
    if (!active)
      return active.takeError();
    if (*active == 0)
      continue;
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      int64_t t = wave * kWaveSize + lane;
      for (int64_t e = 0; e < n; ++e) {
        aBits[lane * n + e] = static_cast<uint16_t>(a[t * n + e]);
        bBits[lane * n + e] = static_cast<uint16_t>(b[t * n + e]);
      }
      for (int64_t r = 0; r < regs; ++r)
        acc[lane * regs + r] = static_cast<uint32_t>(c[t * regs + r]);
    }
    computeBf16Mfma(shape, aBits, bBits, acc);
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      int64_t t = wave * kWaveSize + lane;
      for (int64_t r = 0; r < regs; ++r)
        d[t * regs + r] = acc[lane * regs + r];
    }
    ++stats.mfmas;
  }
  return llvm::Error::success();
}

llvm::Error Executor::execShuffle(const Instr &instr, const Mask &mask) {
  // What convert-gpu-to-rocdl emits (ds_bpermute): with l the lane in the
  // wave, end = (l + width) & -width and dst by mode (l ^ offset,
  // l + offset, l - offset, offset), valid = dst < end (signed i32), and the
  // value comes from lane (valid ? dst : l) mod 64 of the same wave.
  auto mode = static_cast<gpu::ShuffleMode>(instr.sub);
  int64_t n = elems(instr.in[0]);
  const uint64_t *value = data(instr.in[0]);
  const uint64_t *offsets = data(instr.in[1]), *widths = data(instr.in[2]);
  uint64_t *result = data(instr.out[0]), *valid = data(instr.out[1]);
  // Results go to a copy: the value slot may be the result slot's source
  // for other lanes.
  std::vector<uint64_t> out(values[instr.out[0]]);
  for (int64_t t = 0; t < threads; ++t) {
    if (!isActive(mask, t))
      continue;
    auto lane = static_cast<int32_t>(t % kWaveSize);
    auto offset = static_cast<uint32_t>(offsets[t]);
    auto width = static_cast<uint32_t>(widths[t]);
    auto end = static_cast<int32_t>((uint32_t(lane) + width) & (0u - width));
    uint32_t dst = 0;
    switch (mode) {
    case gpu::ShuffleMode::XOR:
      dst = uint32_t(lane) ^ offset;
      break;
    case gpu::ShuffleMode::DOWN:
      dst = uint32_t(lane) + offset;
      break;
    case gpu::ShuffleMode::UP:
      dst = uint32_t(lane) - offset;
      break;
    case gpu::ShuffleMode::IDX:
      dst = offset;
      break;
    }
    bool ok = static_cast<int32_t>(dst) < end;
    int64_t source =
        (t - lane) + ((ok ? dst : static_cast<uint32_t>(lane)) % kWaveSize);
    if (source >= threads || !isActive(mask, source))
      return threadError(instr, t,
                         "gpu.shuffle reads lane " +
                             llvm::Twine(source % kWaveSize) +
                             ", which is not executing it");
    std::copy(value + source * n, value + (source + 1) * n,
              out.begin() + t * n);
    valid[t] = ok;
  }
  for (int64_t t = 0; t < threads; ++t)
    if (isActive(mask, t))
      std::copy(out.begin() + t * n, out.begin() + (t + 1) * n, result + t * n);
  return llvm::Error::success();
}

llvm::Error Executor::execGatherToLds(const Instr &instr, const Mask &mask) {
  int32_t srcSlot = instr.in[0];
  int64_t numSrc = instr.imm0;
  int32_t dstSlot = instr.in[1 + numSrc];
  int64_t numDst = static_cast<int64_t>(instr.in.size()) - 2 - numSrc;
  const int32_t *srcIndices = instr.in.data() + 1;
  const int32_t *dstIndices = instr.in.data() + 2 + numSrc;
  int64_t bytes = instr.imm1, slotBytes = instr.imm2;
  const MemView &src = views[srcSlot];
  MemView &dst = views[dstSlot];
  // Bounds are checked per dword (or per transfer, if smaller).
  int64_t granule = std::min<int64_t>(bytes, 4);
  int64_t waves = (threads + kWaveSize - 1) / kWaveSize;
  for (int64_t wave = 0; wave < waves; ++wave) {
    llvm::Expected<int64_t> active = checkWave(instr, mask, wave);
    if (!active)
      return active.takeError();
    if (*active == 0)
      continue;
    int64_t first = wave * kWaveSize;
    // The LDS destination is wave-uniform: the first lane's indices.
    int64_t base = byteOffset(dstSlot, dstIndices, numDst, first);
    llvm::Expected<Access> dstAccess =
        checkAccess(instr, dstSlot, first, base, kWaveSize * slotBytes);
    if (!dstAccess)
      return dstAccess.takeError();
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      int64_t t = first + lane;
      int64_t offset = byteOffset(srcSlot, srcIndices, numSrc, t);
      uint8_t *out =
          dst.buffer->data + dst.byteOffset + base + lane * slotBytes;
      std::fill(out, out + slotBytes, 0);
      for (int64_t g = 0; g < bytes; g += granule) {
        llvm::Expected<Access> access =
            checkAccess(instr, srcSlot, t, addWrap(offset, g), granule);
        if (!access)
          return access.takeError();
        if (*access == Access::Dropped)
          continue;
        const uint8_t *in = src.buffer->data + src.byteOffset + offset + g;
        std::copy(in, in + granule, out + g);
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error emu::runKernel(const Program &program, ArrayRef<KernelArg> args,
                           const int64_t grid[3], const int64_t block[3],
                           EmulatorStats &stats) {
  Executor executor(program, args, grid, block, stats);
  return executor.run();
}
