//===- Kernels.h - target-independent mxfp4 kernel generators ---*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The kernels every GPU target shares: fused Hadamard + quantize and
// dequantize. Each builds one `gpu.func` for fully static shapes; a target
// supplies its memory-access mode and, where it has them, its conversion
// instructions. Kernel arguments are 1-D memrefs in the global address space
// (one pointer each with the bare-pointer calling convention); the data ABI
// is in docs/gfx950.md:
//
//   FP4 values   [rows][cols / 2] bytes, element 2j in the low nibble
//   E8M0 scales  [rows][cols / 32] bytes (canonical), and where a target's
//                GEMM reads another layout (ScaleLayout; gfx950's is
//                pre-shuffled, LaneLayout.h) a copy in that layout
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELS_H
#define MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELS_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"

#include <functional>
#include <optional>

namespace mlir::mxfp4::kernels {

/// Threads per block of the shared kernels.
constexpr int64_t kWorkgroupSize = 256;

/// Converts one block (vector<32xf32>) with round-to-nearest-even into its
/// packed codes (vector<16xi8>) and scale byte (i32). A null converter means
/// the integer formulation of the CPU path (bit-exact on every target).
using BlockConverter = std::function<std::pair<Value, Value>(
    OpBuilder &, Location, Value block, ScaleRule rule)>;

/// Expands one block's packed codes (vector<16xi8>) under its scale byte
/// (i32, not 0 or 255: the caller handles those) into vector<32xf32>. Null
/// means the integer formulation of the CPU path.
using BlockExpander =
    std::function<Value(OpBuilder &, Location, Value codes, Value byte)>;

/// The rotation a quantize kernel applies before quantizing.
struct RotationConfig {
  int64_t size = 0; // 0: none
  HadamardKind kind = HadamardKind::deterministic;
  bool inverse = false;
  bool roundToBF16 = false; // the hadamard's result type is bf16
};

/// One quantization of the source: along rows (each row's columns blocked
/// by 32) or of its transpose (each column's rows blocked).
struct QuantizeJob {
  bool transposed = false;
  RotationConfig rotation;
  ScaleRule rule = ScaleRule::even;
  /// Stochastic rounding with the CPU's Philox words (seed and counter are
  /// kernel arguments).
  bool stochastic = false;
  /// Which outputs the job writes: codes, canonical scales, and scales in
  /// the target's GEMM layout (QuantizeConfig::scaleLayout).
  bool values = true, scales = true, layoutScales = false;
};

/// A layout in which a target's GEMM reads scales, other than the canonical
/// row-major [rows, kBlocks] bytes (gfx950: pre-shuffled for its MFMAs). The
/// quantize kernels write it directly for scales that only GEMMs read, and
/// the host conversion sizes its buffers, so that the layout is the
/// target's alone.
struct ScaleLayout {
  /// The bytes the layout of `rows` x `kBlocks` scales takes.
  std::function<int64_t(int64_t rows, int64_t kBlocks)> getBytes;
  /// Stores `scale` (i8), the scale of (`row`, `kBlock`) of a `rows` x
  /// `kBlocks` matrix, into `buffer`. `valid` is false where (`row`,
  /// `kBlock`) lies outside the matrix, which the layout may pad.
  std::function<void(KernelBuilder &kb, Value buffer, Value scale,
                     Value valid, Value row, Value kBlock, int64_t rows,
                     int64_t kBlocks)>
      emitStore;
  /// What a quantize kernel that writes the layout rounds both of its
  /// source's sizes up to, so that its regions reach the layout's padding
  /// (a job's rows and K may be either of the source's sizes).
  int64_t padTo = 1;

  explicit operator bool() const { return static_cast<bool>(getBytes); }
};

/// An elementwise computation of the source fused into the quantize
/// kernel's read: the source is computed from `inputs` where it is read and
/// never exists in memory (an activation such as SwiGLU, its gradient, a
/// norm's output or the rotary embedding's gradient, whose only consumers
/// are its quantizations).
struct SourceProducer {
  /// The producer's iteration space: the source's elements in row-major
  /// order (the source may be a reshape of it).
  SmallVector<int64_t> loops;
  struct Input {
    /// The element an iteration reads: each result a loop or a constant.
    AffineMap map;
    /// The input's static shape (a row-major buffer) and its element type
    /// (f32 or bf16).
    SmallVector<int64_t> shape;
    Type type;
  };
  SmallVector<Input> inputs;
  /// Builds one source element (of the source type) from one element of
  /// each input, in `inputs` order, at the iteration `loopIndices` (index
  /// values, for `linalg.index`).
  std::function<Value(OpBuilder &, Location, ValueRange inputs,
                      ValueRange loopIndices)>
      compute;
};

/// Quantizes a [rows, cols] source (f32 or bf16) with one or two jobs (at
/// most one per orientation) in one read of the source. Arguments: source
/// (with a producer: its inputs, in order), then per job its outputs in order
/// values, scales, layoutScales (those enabled), then for each job with a
/// random rotation its seed and, for `random_per_step`, its step (i64): the
/// signs are drawn in the kernel; then for each stochastic job its seed and
/// counter (i64).
struct QuantizeConfig {
  int64_t rows, cols;
  Type sourceType;
  SmallVector<QuantizeJob, 2> jobs;
  BoundsMode bounds = BoundsMode::hardware;
  BlockConverter convert;
  /// NVIDIA: read each 32 x 64 region into workgroup memory with 16 lanes a
  /// row before the row phase, instead of each lane reading its own row's
  /// block (measured 1.3-1.5x faster on an H200), and, where the regions
  /// tile the source, gather the outputs there too and write whole rows of
  /// them. gfx950 keeps direct accesses (the staging costs VGPRs and
  /// occupancy there, and no MI355X measurement says it pays).
  bool staged = false;
  std::optional<SourceProducer> producer = std::nullopt;
  /// The layout of the jobs' `layoutScales`.
  ScaleLayout scaleLayout = {};
};
gpu::GPUFuncOp buildQuantizeKernel(OpBuilder &b, Location loc,
                                   gpu::GPUModuleOp module, StringRef name,
                                   const QuantizeConfig &config);
int64_t quantizeWorkgroups(const QuantizeConfig &config);

/// Expands [rows, cols] FP4 values with canonical scales to f32 or bf16.
struct DequantizeConfig {
  int64_t rows, cols;
  Type resultType;
  BoundsMode bounds = BoundsMode::hardware;
  BlockExpander expand;
};
gpu::GPUFuncOp buildDequantizeKernel(OpBuilder &b, Location loc,
                                     gpu::GPUModuleOp module, StringRef name,
                                     const DequantizeConfig &config);
int64_t dequantizeWorkgroups(const DequantizeConfig &config);

} // namespace mlir::mxfp4::kernels

#endif // MXFP4_CONVERSION_MXFP4TOGPUCOMMON_KERNELS_H
