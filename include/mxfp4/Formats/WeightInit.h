//===- WeightInit.h - a model's initial weights, without LLVM ---*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The generator of a model's initial weights, in standard C++ only: the CPU
// trainer (lib/API/Trainer.cpp) and the CUDA runtime (runtime/, which
// draws the weights of runs too large to carry them) both draw through it,
// so a run starts from the same bits on either.
//
// The generator is counter based: SplitMix64's mix of (seed, stream,
// counter) is a pure function, so any element can be drawn without drawing
// the ones before it. Element j of parameter i is a Box-Muller draw from
// the uniforms of streams 2i + 0x1000 and 2i + 0x1001 at counter j / 2:
// the cosine for even j, the sine for odd j, times the standard deviation,
// rounded once to float.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_WEIGHTINIT_H
#define MXFP4_FORMATS_WEIGHTINIT_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mlir::mxfp4 {

/// SplitMix64's output function of (`a`, `b`, `c`) chained: the
/// counter-based hash behind initial weights and the CPU trainer's batch
/// offsets.
uint64_t mixCounter(uint64_t a, uint64_t b, uint64_t c);

/// How a parameter starts.
enum class WeightInit {
  /// N(0, stddev): the matrices.
  Normal,
  /// All ones: the RMSNorm gains.
  Ones,
};

/// The `elements` initial values of parameter `index` (in the model's
/// argument order) for `seed`, drawn as the file comment says.
std::vector<float> drawInitialWeights(WeightInit init, uint64_t seed,
                                      uint64_t index, size_t elements,
                                      double stddev);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_WEIGHTINIT_H
