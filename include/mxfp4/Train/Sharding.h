//===- Sharding.h - ZeRO-1's flat layout, without LLVM ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// How data-parallel training (ZeRO-1) lays the parameters out, in standard
// C++ only: the compiler builds each rank's optimizer step for one shard of
// this layout (`mxfp4-run compile --ranks=N`) and the runtimes (runtime/,
// which cannot link LLVM) keep the weights, gradients and moments in it.
//
// Every parameter, flattened, starts at a multiple of kShardAlignment
// elements (256 bytes of f32: any kernel's alignment), in the order of the
// step's arguments; the padding between them holds zeros, which AdamW
// leaves at zero. The whole is cut into `ranks` shards of `shard` elements
// (a multiple of kShardAlignment), rank r owning [r * shard, (r + 1) *
// shard): it keeps the AdamW moments of that piece alone, updates it and
// all-gathers the weights. Weight decay applies to the parameters of rank
// 2 or more (matrices) and not to vectors (norm gains), the Llama step's
// two groups.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_SHARDING_H
#define MXFP4_TRAIN_SHARDING_H

#include <cstdint>
#include <vector>

namespace mlir::mxfp4 {

/// Elements a parameter's offset and a shard's length are multiples of.
constexpr int64_t kShardAlignment = 64;

struct ShardLayout {
  /// Each parameter's first element in the flat layout.
  std::vector<int64_t> offsets;
  /// Each parameter's elements.
  std::vector<int64_t> sizes;
  /// Whether each parameter gets weight decay.
  std::vector<bool> decay;
  /// The elements of one rank's shard, and of all `ranks` together
  /// (ranks * shard, at least the last parameter's end).
  int64_t shard = 0, total = 0, ranks = 1;
};

/// The layout of parameters of `shapes` over `ranks` ranks (at least 1).
inline ShardLayout
getShardLayout(const std::vector<std::vector<int64_t>> &shapes, int64_t ranks) {
  auto roundUp = [](int64_t x) {
    return (x + kShardAlignment - 1) / kShardAlignment * kShardAlignment;
  };
  ShardLayout layout;
  layout.ranks = ranks;
  int64_t end = 0;
  for (const std::vector<int64_t> &shape : shapes) {
    int64_t elements = 1;
    for (int64_t d : shape)
      elements *= d;
    layout.offsets.push_back(end);
    layout.sizes.push_back(elements);
    layout.decay.push_back(shape.size() >= 2);
    end = roundUp(end + elements);
  }
  layout.shard = roundUp((end + ranks - 1) / ranks);
  layout.total = layout.shard * ranks;
  return layout;
}

/// Rank `rank`'s weight-decay mask: 1 where its shard holds an element of a
/// parameter with weight decay, else 0 (vectors and padding).
inline std::vector<float> getShardDecayMask(const ShardLayout &layout,
                                            int64_t rank) {
  std::vector<float> mask(size_t(layout.shard), 0.0f);
  int64_t first = rank * layout.shard, last = first + layout.shard;
  for (size_t i = 0; i < layout.offsets.size(); ++i) {
    if (!layout.decay[i])
      continue;
    int64_t from = layout.offsets[i] > first ? layout.offsets[i] : first;
    int64_t to = layout.offsets[i] + layout.sizes[i];
    to = to < last ? to : last;
    for (int64_t e = from; e < to; ++e)
      mask[size_t(e - first)] = 1.0f;
  }
  return mask;
}

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_SHARDING_H
