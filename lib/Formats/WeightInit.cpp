//===- WeightInit.cpp - a model's initial weights, without LLVM -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/WeightInit.h"

#include <cmath>

using namespace mlir::mxfp4;

/// SplitMix64's increment and output function.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A uniform double in (0, 1) from the top 53 bits: never 0, so its
/// logarithm is finite.
static double unitOpen(uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

uint64_t mlir::mxfp4::mixCounter(uint64_t a, uint64_t b, uint64_t c) {
  return mix(mix(mix(a) ^ b) ^ c);
}

std::vector<float>
mlir::mxfp4::drawInitialWeights(WeightInit init, uint64_t seed, uint64_t index,
                                size_t elements, double stddev) {
  std::vector<float> values(elements, 1.0f);
  if (init == WeightInit::Ones)
    return values;
  for (size_t j = 0; j < elements; ++j) {
    uint64_t pair = j / 2;
    double u1 = unitOpen(mixCounter(seed, index * 2 + 0x1000, pair));
    double u2 = unitOpen(mixCounter(seed, index * 2 + 0x1001, pair));
    double radius = std::sqrt(-2.0 * std::log(u1));
    double angle = 2.0 * M_PI * u2;
    double z = j % 2 == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
    values[j] = static_cast<float>(z * stddev);
  }
  return values;
}
