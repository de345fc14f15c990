//===- Attention.h - attention composites to fused launches -----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the fused-attention conversions of every target share: the shape of
// an attention, the launches a target emits for it, and the driver that
// finds the bufferized calls of the causal-attention composites
// (mxfp4/Dialect/MXFP4/Transforms/Composites.h), replaces the calls a
// target covers by its launches and outlines those into named kernels of
// the kernel module. Calls a target does not cover stay calls, for the
// inliner (the composite's decomposition).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_ATTENTIONCOMMON_ATTENTION_H
#define MXFP4_CONVERSION_ATTENTIONCOMMON_ATTENTION_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

#include <string>

namespace mlir::mxfp4 {

/// Shapes of one attention, token-major (the projections' layout): q and o
/// [batch, seq, kvHeads * groups, headDim] (query head h = kv * groups + g
/// uses KV head kv), k and v [batch, seq, kvHeads, headDim], lse [batch,
/// kvHeads * groups, seq]; buffers with the identity layout, f32 or bf16
/// (lse f32). The kernels walk "heads" = batch * kvHeads of stacked query
/// rows, row r = g * seq + s, so that one block's query rows share K and V.
struct AttentionShape {
  int64_t batch, kvHeads, groups, seq, headDim;
  int64_t heads() const { return batch * kvHeads; }
};

/// A kernel block's stacked head (of batch * kvHeads) and its parts.
struct AttentionHead {
  Value head, batchIndex, kvHead;
};

/// The indices of element `col` of stacked row `row0 + r` of `head` in
/// `buffer`, token-major [batch, seq, n, d]: n = kvHeads * groups (q, o, dO
/// and dq) or n = kvHeads (k, v, dk and dv, whose rows are < seq). `row0`
/// and `row0 + r` lie in one group (a tile's rows: seq is a multiple of
/// 64), so the group and position are computed once a tile.
SmallVector<Value> attentionRowAt(kernels::KernelBuilder &kb,
                                  const AttentionShape &shape,
                                  const AttentionHead &head, Value buffer,
                                  Value row0, Value r, Value col);

/// The indices of stacked row `row`'s value of `head` in `buffer`: lse
/// [batch, heads, seq], or delta [heads, groups * seq] (the backward's
/// own).
SmallVector<Value> attentionValueAt(kernels::KernelBuilder &kb,
                                    const AttentionShape &shape,
                                    const AttentionHead &head, Value buffer,
                                    Value row);

/// How many heads a section of a causal kernel's grid holds. A launch's
/// grid is (section, blocks of a head, heads / section), which the hardware
/// dispatches x first: within a section every head's block i starts before
/// any head's block i + 1, and the kernels number their blocks longest walk
/// first. One head a section, the last heads' long walks start last and
/// leave a tail; all heads in one, blocks of many heads run at once and
/// their tiles stop sharing the cache. Returns the fewest heads (a divisor
/// of shape.heads()) whose work, once their section is dispatched, still
/// gives each of the GPU's `slots` resident blocks the longest block's walk.
/// A head's blocks walk `rows` query rows each, every key up to their
/// diagonal (forward, dq), or, with `keyBlocks`, `rows` keys each, every
/// stacked query row that sees them (dk, dv); `stepRows` keys or rows a
/// step.
int64_t sectionHeads(const AttentionShape &shape, bool keyBlocks, int64_t rows,
                     int64_t stepRows, int64_t slots);

/// An emitted launch: what it computes (the kernel name's role, e.g.
/// "fwd", "bwd_dq") and the attributes its outlined kernel gets (what a
/// target's code generator must be told, e.g. occupancy hints).
struct AttentionLaunch {
  gpu::LaunchOp launch;
  std::string role;
  NamedAttrList kernelAttributes;
};

/// A target's fused-attention kernels.
class AttentionEmitter {
public:
  virtual ~AttentionEmitter();

  /// True if the target's kernels cover `shape` (of a forward call, or of a
  /// backward call where `backward`).
  virtual bool isSupported(const AttentionShape &shape,
                           bool backward) const = 0;

  /// Launches computing o and lse from q, k, v (buffers the driver
  /// allocated), at the builder's insertion point.
  virtual SmallVector<AttentionLaunch>
  emitForward(OpBuilder &b, Location loc, const AttentionShape &shape, Value q,
              Value k, Value v, Value o, Value lse) = 0;

  /// Launches computing dq, dk, dv from q, k, v, o, lse and dO. Called only
  /// for shapes isSupported(shape, /*backward=*/true) accepts.
  virtual SmallVector<AttentionLaunch>
  emitBackward(OpBuilder &b, Location loc, const AttentionShape &shape,
               Value q, Value k, Value v, Value o, Value lse, Value dO,
               Value dq, Value dk, Value dv) = 0;
};

/// The attention shape of the operand and result types of a composite call,
/// if they fit AttentionShape: q [B, S, H, D], k and v [B, S, KVH, D] (H a
/// multiple of KVH), and (backward) o and dO as q, lse [B, H, S]; static,
/// identity-layout buffers, f32 or bf16 (mxfp4-round-attention-io) but for
/// lse, which is f32.
std::optional<AttentionShape> matchAttentionShape(TypeRange operands,
                                                  TypeRange results,
                                                  bool backward);

/// The kernel name of `launch` for `shape`:
/// `attention_<role>_b<batch>_s<seq>_kv<kvHeads>x<groups>_d<headDim>`,
/// then `typeSuffix` (see convertAttentionComposites).
std::string attentionKernelName(const AttentionLaunch &launch,
                                const AttentionShape &shape,
                                StringRef typeSuffix);

/// Replaces every call in `module` of a causal-attention composite that
/// `emitter` covers by fresh result buffers and the emitter's launches,
/// outlined into kernels of `gpu.module @mxfp4_kernels` (made if missing);
/// a kernel is emitted once per name and shared by the layers. Kernels
/// whose buffers are not all f32 carry a suffix of one letter a buffer,
/// operands then results (f for f32, h for bf16). Composites left without
/// calls are erased when private.
void convertAttentionComposites(ModuleOp module, AttentionEmitter &emitter);

} // namespace mlir::mxfp4

#endif // MXFP4_CONVERSION_ATTENTIONCOMMON_ATTENTION_H
