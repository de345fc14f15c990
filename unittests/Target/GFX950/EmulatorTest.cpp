//===- EmulatorTest.cpp - gfx950 kernel emulator --------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Hand-written kernels + host functions run through the emulator and
// compared with naive C++ references: scaled MFMAs fed per amdgpu.md §2
// (and a deliberately wrong lane mapping that must not match), LDS staging
// with gather_to_lds, buffer bounds checks, FP4 conversions, divergence, the
// located errors, and the speed of a 256x256x512 FP4 GEMM.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/Emulator.h"
#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "mlir/Conversion/ArithToAMDGPU/ArithToAMDGPU.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::mxfp4::gfx950;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

class EmulatorTest : public ::testing::Test {
protected:
  EmulatorTest() {
    DialectRegistry registry;
    registry.insert<arith::ArithDialect, vector::VectorDialect,
                    memref::MemRefDialect, scf::SCFDialect, gpu::GPUDialect,
                    amdgpu::AMDGPUDialect, func::FuncDialect, math::MathDialect,
                    ROCDL::ROCDLDialect, ub::UBDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  OwningOpRef<ModuleOp> parse(llvm::StringRef source) {
    ParserConfig config(&context);
    return parseSourceString<ModuleOp>(source, config, "kernel.mlir");
  }

  /// Parses and runs @main; fails the test on errors.
  std::vector<EmulatorBuffer> run(llvm::StringRef source,
                                  llvm::ArrayRef<EmulatorBuffer> args,
                                  EmulatorStats *stats = nullptr) {
    OwningOpRef<ModuleOp> module = parse(source);
    EXPECT_TRUE(module) << "parse failed";
    if (!module)
      return {};
    auto results = emulate(*module, "main", args, stats);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return {};
    }
    return std::move(*results);
  }

  /// Parses and runs @main, expecting an error; returns its message.
  std::string runError(llvm::StringRef source,
                       llvm::ArrayRef<EmulatorBuffer> args) {
    OwningOpRef<ModuleOp> module = parse(source);
    EXPECT_TRUE(module) << "parse failed";
    if (!module)
      return "";
    auto results = emulate(*module, "main", args);
    if (results) {
      ADD_FAILURE() << "expected an error";
      return "";
    }
    return llvm::toString(results.takeError());
  }

  MLIRContext context;
};

template <typename T> EmulatorBuffer toBytes(const std::vector<T> &values) {
  EmulatorBuffer bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <typename T> std::vector<T> fromBytes(const EmulatorBuffer &bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// E2M1 values, written out independently of the emulator.
double e2m1(unsigned code) {
  static const double values[16] = {0,  0.5,  1,  1.5,  2,  3,  4,  6,
                                    -0, -0.5, -1, -1.5, -2, -3, -4, -6};
  return values[code & 15];
}

/// Code of FP4 element (row, k) of a K-contiguous matrix with `rowBytes`
/// bytes per row (even K in the low nibble).
unsigned fp4At(const std::vector<uint8_t> &m, int64_t rowBytes, int64_t row,
               int64_t k) {
  return (m[row * rowBytes + k / 2] >> (4 * (k % 2))) & 15;
}

/// The emulator's documented MFMA model, for one output element: the K
/// blocks of 32 in increasing order, each block's exact scaled dot product
/// rounded to f32 and added in f32. `sa(kb)`/`sb(kb)` give scale bytes.
template <typename ScaleA, typename ScaleB>
float referenceDot(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
                   int64_t rowBytes, int64_t i, int64_t j, int64_t kBlocks,
                   float c, ScaleA sa, ScaleB sb) {
  float acc = c;
  for (int64_t kb = 0; kb < kBlocks; ++kb) {
    double sum = 0;
    for (int64_t e = 0; e < 32; ++e)
      sum += e2m1(fp4At(a, rowBytes, i, 32 * kb + e)) *
             e2m1(fp4At(b, rowBytes, j, 32 * kb + e));
    double scaled = sum * std::ldexp(1.0, int(sa(kb)) - 127) *
                    std::ldexp(1.0, int(sb(kb)) - 127);
    acc = acc + static_cast<float>(scaled);
  }
  return acc;
}

std::vector<uint8_t> randomBytes(std::mt19937 &rng, size_t n, int lo = 0,
                                 int hi = 255) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<uint8_t> v(n);
  for (auto &x : v)
    x = static_cast<uint8_t>(dist(rng));
  return v;
}

//===----------------------------------------------------------------------===//
// Scaled MFMA 16x16x128
//===----------------------------------------------------------------------===//

/// One wave, one 16x16x128 MFMA: lane l loads row l%16, K block l/16 of A and
/// B (amdgpu.md §2.2), the A scale as a scalar f8E8M0FNU, the B scale as byte
/// 2 of a vector<4xf8E8M0FNU>, C from memory in the accumulator layout.
/// ROW and KB are the lane-mapping lines, replaced to inject a bug.
const char *kMfma16 = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @mfma(%A: memref<1024xi8, #gpu.address_space<global>>,
                   %B: memref<1024xi8, #gpu.address_space<global>>,
                   %SA: memref<64xi8, #gpu.address_space<global>>,
                   %SB: memref<256xi8, #gpu.address_space<global>>,
                   %C: memref<256xf32, #gpu.address_space<global>>,
                   %D: memref<256xf32, #gpu.address_space<global>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %lane = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      ROW
      KB
      %r64 = arith.muli %row, %c64 : index
      %k16 = arith.muli %kb, %c16 : index
      %off = arith.addi %r64, %k16 : index
      %a8 = vector.load %A[%off] : memref<1024xi8, #gpu.address_space<global>>, vector<16xi8>
      %b8 = vector.load %B[%off] : memref<1024xi8, #gpu.address_space<global>>, vector<16xi8>
      %a = vector.bitcast %a8 : vector<16xi8> to vector<32xf4E2M1FN>
      %b = vector.bitcast %b8 : vector<16xi8> to vector<32xf4E2M1FN>
      %r4 = arith.muli %row, %c4 : index
      %soff = arith.addi %r4, %kb : index
      %sa8 = memref.load %SA[%soff] : memref<64xi8, #gpu.address_space<global>>
      %sa = arith.bitcast %sa8 : i8 to f8E8M0FNU
      %sboff = arith.muli %soff, %c4 : index
      %sb8 = vector.load %SB[%sboff] : memref<256xi8, #gpu.address_space<global>>, vector<4xi8>
      %sb = vector.bitcast %sb8 : vector<4xi8> to vector<4xf8E8M0FNU>
      %col = arith.remui %lane, %c16 : index
      %group = arith.divui %lane, %c16 : index
      %rowBase = arith.muli %group, %c4 : index
      %i0 = arith.addi %rowBase, %c0 : index
      %i1 = arith.addi %rowBase, %c1 : index
      %i2 = arith.addi %rowBase, %c2 : index
      %i3 = arith.addi %rowBase, %c3 : index
      %o0a = arith.muli %i0, %c16 : index
      %o1a = arith.muli %i1, %c16 : index
      %o2a = arith.muli %i2, %c16 : index
      %o3a = arith.muli %i3, %c16 : index
      %o0 = arith.addi %o0a, %col : index
      %o1 = arith.addi %o1a, %col : index
      %o2 = arith.addi %o2a, %col : index
      %o3 = arith.addi %o3a, %col : index
      %x0 = memref.load %C[%o0] : memref<256xf32, #gpu.address_space<global>>
      %x1 = memref.load %C[%o1] : memref<256xf32, #gpu.address_space<global>>
      %x2 = memref.load %C[%o2] : memref<256xf32, #gpu.address_space<global>>
      %x3 = memref.load %C[%o3] : memref<256xf32, #gpu.address_space<global>>
      %acc = vector.from_elements %x0, %x1, %x2, %x3 : vector<4xf32>
      %d = amdgpu.scaled_mfma 16x16x128 (%sa[0] * %a) * (%sb[2] * %b) + %acc
        : f8E8M0FNU, vector<32xf4E2M1FN>, vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>
      %d0 = vector.extract %d[0] : f32 from vector<4xf32>
      %d1 = vector.extract %d[1] : f32 from vector<4xf32>
      %d2 = vector.extract %d[2] : f32 from vector<4xf32>
      %d3 = vector.extract %d[3] : f32 from vector<4xf32>
      memref.store %d0, %D[%o0] : memref<256xf32, #gpu.address_space<global>>
      memref.store %d1, %D[%o1] : memref<256xf32, #gpu.address_space<global>>
      memref.store %d2, %D[%o2] : memref<256xf32, #gpu.address_space<global>>
      memref.store %d3, %D[%o3] : memref<256xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
  func.func @main(%A: memref<1024xi8>, %B: memref<1024xi8>, %SA: memref<64xi8>,
                  %SB: memref<256xi8>, %C: memref<256xf32>) -> memref<256xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %D = memref.alloc() : memref<256xf32>
    %Ag = memref.memory_space_cast %A : memref<1024xi8> to memref<1024xi8, #gpu.address_space<global>>
    %Bg = memref.memory_space_cast %B : memref<1024xi8> to memref<1024xi8, #gpu.address_space<global>>
    %SAg = memref.memory_space_cast %SA : memref<64xi8> to memref<64xi8, #gpu.address_space<global>>
    %SBg = memref.memory_space_cast %SB : memref<256xi8> to memref<256xi8, #gpu.address_space<global>>
    %Cg = memref.memory_space_cast %C : memref<256xf32> to memref<256xf32, #gpu.address_space<global>>
    %Dg = memref.memory_space_cast %D : memref<256xf32> to memref<256xf32, #gpu.address_space<global>>
    gpu.launch_func @k::@mfma blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
      args(%Ag : memref<1024xi8, #gpu.address_space<global>>, %Bg : memref<1024xi8, #gpu.address_space<global>>,
           %SAg : memref<64xi8, #gpu.address_space<global>>, %SBg : memref<256xi8, #gpu.address_space<global>>,
           %Cg : memref<256xf32, #gpu.address_space<global>>, %Dg : memref<256xf32, #gpu.address_space<global>>)
    return %D : memref<256xf32>
  }
}
)mlir";

std::string withMapping(llvm::StringRef row, llvm::StringRef kb) {
  std::string text = kMfma16;
  text.replace(text.find("ROW"), 3, row.str());
  text.replace(text.find("KB"), 2, kb.str());
  return text;
}

struct Mfma16Inputs {
  std::vector<uint8_t> a, b, sa, sb4, sbNatural;
  std::vector<float> c;
};

Mfma16Inputs makeMfma16Inputs(unsigned seed) {
  std::mt19937 rng(seed);
  Mfma16Inputs in;
  in.a = randomBytes(rng, 1024);
  in.b = randomBytes(rng, 1024);
  in.sa = randomBytes(rng, 64, 120, 134);
  in.sbNatural = randomBytes(rng, 64, 120, 134);
  // Byte 2 of each dword is the real scale; 255 (NaN) elsewhere poisons
  // any wrong byte selection.
  in.sb4.assign(256, 255);
  for (int i = 0; i < 64; ++i)
    in.sb4[i * 4 + 2] = in.sbNatural[i];
  std::normal_distribution<float> normal(0.0f, 4.0f);
  in.c.resize(256);
  for (float &x : in.c)
    x = normal(rng);
  return in;
}

std::vector<float> referenceMfma16(const Mfma16Inputs &in) {
  std::vector<float> d(256);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      d[i * 16 + j] = referenceDot(
          in.a, in.b, 64, i, j, 4, in.c[i * 16 + j],
          [&](int64_t kb) { return in.sa[i * 4 + kb]; },
          [&](int64_t kb) { return in.sbNatural[j * 4 + kb]; });
  return d;
}

TEST_F(EmulatorTest, ScaledMfma16x16x128MatchesReference) {
  Mfma16Inputs in = makeMfma16Inputs(1);
  std::string source = withMapping("%row = arith.remui %lane, %c16 : index",
                                   "%kb = arith.divui %lane, %c16 : index");
  EmulatorStats stats;
  auto results = run(source,
                     {toBytes(in.a), toBytes(in.b), toBytes(in.sa),
                      toBytes(in.sb4), toBytes(in.c)},
                     &stats);
  ASSERT_EQ(results.size(), 1u);
  std::vector<float> d = fromBytes<float>(results[0]);
  std::vector<float> want = referenceMfma16(in);
  int nonZero = 0;
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(bitsOf(d[i]), bitsOf(want[i])) << "element " << i;
    nonZero += d[i] != in.c[i];
  }
  EXPECT_GT(nonZero, 200);
  EXPECT_EQ(stats.launches, 1);
  EXPECT_EQ(stats.workgroups, 1);
  EXPECT_EQ(stats.mfmas, 1);
}

TEST_F(EmulatorTest, ScaledMfmaWrongLaneMappingMismatches) {
  Mfma16Inputs in = makeMfma16Inputs(2);
  // A plausible bug: lanes walk K blocks fastest instead of rows.
  std::string source = withMapping("%row = arith.divui %lane, %c4 : index",
                                   "%kb = arith.remui %lane, %c4 : index");
  auto results = run(source, {toBytes(in.a), toBytes(in.b), toBytes(in.sa),
                              toBytes(in.sb4), toBytes(in.c)});
  ASSERT_EQ(results.size(), 1u);
  std::vector<float> d = fromBytes<float>(results[0]);
  std::vector<float> want = referenceMfma16(in);
  int mismatches = 0;
  for (int i = 0; i < 256; ++i)
    mismatches += bitsOf(d[i]) != bitsOf(want[i]);
  EXPECT_GT(mismatches, 200);
}

//===----------------------------------------------------------------------===//
// Scaled MFMA 32x32x64
//===----------------------------------------------------------------------===//

/// One wave, one 32x32x64 MFMA (amdgpu.md §2.1) with a zero accumulator;
/// the 16 accumulator registers are stored by an scf.for with a dynamic
/// vector.extract: row = 8*(r/4) + 4*(lane/32) + r%4, col = lane%32.
const char *kMfma32 = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @mfma(%A: memref<1024xi8, #gpu.address_space<global>>,
                   %B: memref<1024xi8, #gpu.address_space<global>>,
                   %SA: memref<64xi8, #gpu.address_space<global>>,
                   %SB: memref<64xi8, #gpu.address_space<global>>,
                   %D: memref<1024xf32, #gpu.address_space<global>>) kernel {
      %lane = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %row = arith.remui %lane, %c32 : index
      %kb = arith.divui %lane, %c32 : index
      %r32 = arith.muli %row, %c32 : index
      %k16 = arith.muli %kb, %c16 : index
      %off = arith.addi %r32, %k16 : index
      %a8 = vector.load %A[%off] : memref<1024xi8, #gpu.address_space<global>>, vector<16xi8>
      %b8 = vector.load %B[%off] : memref<1024xi8, #gpu.address_space<global>>, vector<16xi8>
      %a = vector.bitcast %a8 : vector<16xi8> to vector<32xf4E2M1FN>
      %b = vector.bitcast %b8 : vector<16xi8> to vector<32xf4E2M1FN>
      %r2 = arith.muli %row, %c2 : index
      %soff = arith.addi %r2, %kb : index
      %sa8 = memref.load %SA[%soff] : memref<64xi8, #gpu.address_space<global>>
      %sb8 = memref.load %SB[%soff] : memref<64xi8, #gpu.address_space<global>>
      %sa = arith.bitcast %sa8 : i8 to f8E8M0FNU
      %sb = arith.bitcast %sb8 : i8 to f8E8M0FNU
      %zero = arith.constant dense<0.0> : vector<16xf32>
      %d = amdgpu.scaled_mfma 32x32x64 (%sa[0] * %a) * (%sb[0] * %b) + %zero
        : f8E8M0FNU, vector<32xf4E2M1FN>, f8E8M0FNU, vector<32xf4E2M1FN>, vector<16xf32>
      %half = arith.divui %lane, %c32 : index
      %h4 = arith.muli %half, %c4 : index
      scf.for %r = %c0 to %c16 step %c1 {
        %q = arith.divui %r, %c4 : index
        %q8 = arith.muli %q, %c8 : index
        %rm = arith.remui %r, %c4 : index
        %t0 = arith.addi %q8, %h4 : index
        %outRow = arith.addi %t0, %rm : index
        %o32 = arith.muli %outRow, %c32 : index
        %o = arith.addi %o32, %row : index
        %v = vector.extract %d[%r] : f32 from vector<16xf32>
        memref.store %v, %D[%o] : memref<1024xf32, #gpu.address_space<global>>
      }
      gpu.return
    }
  }
  func.func @main(%A: memref<1024xi8>, %B: memref<1024xi8>, %SA: memref<64xi8>,
                  %SB: memref<64xi8>) -> memref<1024xf32> {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %D = memref.alloc() : memref<1024xf32>
    %Ag = memref.memory_space_cast %A : memref<1024xi8> to memref<1024xi8, #gpu.address_space<global>>
    %Bg = memref.memory_space_cast %B : memref<1024xi8> to memref<1024xi8, #gpu.address_space<global>>
    %SAg = memref.memory_space_cast %SA : memref<64xi8> to memref<64xi8, #gpu.address_space<global>>
    %SBg = memref.memory_space_cast %SB : memref<64xi8> to memref<64xi8, #gpu.address_space<global>>
    %Dg = memref.memory_space_cast %D : memref<1024xf32> to memref<1024xf32, #gpu.address_space<global>>
    %c1i = arith.constant 1 : index
    gpu.launch_func @k::@mfma blocks in (%c1i, %c1i, %c1i) threads in (%c64, %c1i, %c1i)
      args(%Ag : memref<1024xi8, #gpu.address_space<global>>, %Bg : memref<1024xi8, #gpu.address_space<global>>,
           %SAg : memref<64xi8, #gpu.address_space<global>>, %SBg : memref<64xi8, #gpu.address_space<global>>,
           %Dg : memref<1024xf32, #gpu.address_space<global>>)
    return %D : memref<1024xf32>
  }
}
)mlir";

TEST_F(EmulatorTest, ScaledMfma32x32x64MatchesReference) {
  std::mt19937 rng(3);
  std::vector<uint8_t> a = randomBytes(rng, 1024), b = randomBytes(rng, 1024);
  std::vector<uint8_t> sa = randomBytes(rng, 64, 118, 136),
                       sb = randomBytes(rng, 64, 118, 136);
  auto results =
      run(kMfma32, {toBytes(a), toBytes(b), toBytes(sa), toBytes(sb)});
  ASSERT_EQ(results.size(), 1u);
  std::vector<float> d = fromBytes<float>(results[0]);
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) {
      float want = referenceDot(
          a, b, 32, i, j, 2, 0.0f, [&](int64_t kb) { return sa[i * 2 + kb]; },
          [&](int64_t kb) { return sb[j * 2 + kb]; });
      ASSERT_EQ(bitsOf(d[i * 32 + j]), bitsOf(want)) << i << "," << j;
    }
}

//===----------------------------------------------------------------------===//
// LDS staging
//===----------------------------------------------------------------------===//

/// Two waves gather 16 bytes per lane into LDS (lane l reads source block
/// (7*l + 3) % 64 of its wave's half), barrier, then every thread reads its
/// 16 bytes back plus 16 never-written bytes. The per-lane LDS index differs
/// between lanes: only the wave's first lane's must count.
const char *kGather = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @gather(%src: memref<2048xi8, #gpu.address_space<global>>,
                     %out: memref<4096xi8, #gpu.address_space<global>>)
        workgroup(%lds: memref<4096xi8, #gpu.address_space<workgroup>>) kernel {
      %tid = gpu.thread_id x
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c7 = arith.constant 7 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %c1024 = arith.constant 1024 : index
      %c2048 = arith.constant 2048 : index
      %wave = arith.divui %tid, %c64 : index
      %lane = arith.remui %tid, %c64 : index
      %l7 = arith.muli %lane, %c7 : index
      %l73 = arith.addi %l7, %c3 : index
      %blk = arith.remui %l73, %c64 : index
      %w64 = arith.muli %wave, %c64 : index
      %sblk = arith.addi %w64, %blk : index
      %soff = arith.muli %sblk, %c16 : index
      %dbase = arith.muli %wave, %c1024 : index
      %odd = arith.remui %lane, %c2 : index
      %junk = arith.muli %odd, %c8 : index
      %doff = arith.addi %dbase, %junk : index
      amdgpu.gather_to_lds %src[%soff], %lds[%doff] : vector<4xi32>, memref<2048xi8, #gpu.address_space<global>>, memref<4096xi8, #gpu.address_space<workgroup>>
      gpu.barrier
      %mine = arith.muli %tid, %c16 : index
      %v = vector.load %lds[%mine] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
      vector.store %v, %out[%mine] : memref<4096xi8, #gpu.address_space<global>>, vector<16xi8>
      %hi = arith.addi %mine, %c2048 : index
      %u = vector.load %lds[%hi] : memref<4096xi8, #gpu.address_space<workgroup>>, vector<16xi8>
      vector.store %u, %out[%hi] : memref<4096xi8, #gpu.address_space<global>>, vector<16xi8>
      gpu.return
    }
  }
  func.func @main(%src: memref<2048xi8>) -> memref<4096xi8> {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %out = memref.alloc() : memref<4096xi8>
    %s = memref.memory_space_cast %src : memref<2048xi8> to memref<2048xi8, #gpu.address_space<global>>
    %o = memref.memory_space_cast %out : memref<4096xi8> to memref<4096xi8, #gpu.address_space<global>>
    gpu.launch_func @k::@gather blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
      args(%s : memref<2048xi8, #gpu.address_space<global>>, %o : memref<4096xi8, #gpu.address_space<global>>)
    return %out : memref<4096xi8>
  }
}
)mlir";

TEST_F(EmulatorTest, GatherToLdsWritesWaveContiguously) {
  std::mt19937 rng(4);
  std::vector<uint8_t> src = randomBytes(rng, 2048);
  auto results = run(kGather, {toBytes(src)});
  ASSERT_EQ(results.size(), 1u);
  const EmulatorBuffer &out = results[0];
  // LDS byte 1024*w + 16*l + i holds source block (7l+3)%64 of wave w.
  for (int t = 0; t < 128; ++t) {
    int ldsOffset = t * 16;
    int wave = ldsOffset / 1024, lane = (ldsOffset % 1024) / 16;
    int block = wave * 64 + (7 * lane + 3) % 64;
    for (int i = 0; i < 16; ++i)
      ASSERT_EQ(out[t * 16 + i], src[block * 16 + i]) << "thread " << t;
  }
  // The upper half of LDS was never written: poison.
  for (int i = 2048; i < 4096; ++i)
    ASSERT_EQ(out[i], 0xCD) << i;
}

//===----------------------------------------------------------------------===//
// Fat raw buffers
//===----------------------------------------------------------------------===//

/// 64 threads load src[t] and src[t + 64] through a buffer with validBytes
/// 100 and store to a buffer over `out` with validBytes 128; a vector load
/// straddles the limit; a gather_to_lds from the buffer zero-fills past it.
const char *kFatRaw = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @fat(%src: memref<64xf32, #gpu.address_space<global>>,
                  %out: memref<64xf32, #gpu.address_space<global>>,
                  %far: memref<64xf32, #gpu.address_space<global>>,
                  %vec: memref<256xf32, #gpu.address_space<global>>,
                  %gat: memref<256xf32, #gpu.address_space<global>>)
        workgroup(%lds: memref<1024xf32, #gpu.address_space<workgroup>>) kernel {
      %tid = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c64 = arith.constant 64 : index
      %c100 = arith.constant 100 : i64
      %c128 = arith.constant 128 : i64
      %fsrc = amdgpu.fat_raw_buffer_cast %src validBytes(%c100) resetOffset
        : memref<64xf32, #gpu.address_space<global>> to memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>
      %fout = amdgpu.fat_raw_buffer_cast %out validBytes(%c128)
        : memref<64xf32, #gpu.address_space<global>> to memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>
      %x = memref.load %fsrc[%tid] : memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>
      memref.store %x, %fout[%tid] : memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>
      %t64 = arith.addi %tid, %c64 : index
      %y = memref.load %fsrc[%t64] : memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>
      memref.store %y, %far[%tid] : memref<64xf32, #gpu.address_space<global>>
      %t4 = arith.muli %tid, %c4 : index
      %v = vector.load %fsrc[%t4] : memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>, vector<4xf32>
      vector.store %v, %vec[%t4] : memref<256xf32, #gpu.address_space<global>>, vector<4xf32>
      amdgpu.gather_to_lds %fsrc[%t4], %lds[%t4] : vector<4xi32>, memref<64xf32, #amdgpu.address_space<fat_raw_buffer>>, memref<1024xf32, #gpu.address_space<workgroup>>
      amdgpu.lds_barrier
      %w = vector.load %lds[%t4] : memref<1024xf32, #gpu.address_space<workgroup>>, vector<4xf32>
      vector.store %w, %gat[%t4] : memref<256xf32, #gpu.address_space<global>>, vector<4xf32>
      gpu.return
    }
  }
  func.func @main(%src: memref<64xf32>) -> (memref<64xf32>, memref<64xf32>, memref<256xf32>, memref<256xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %out = memref.alloc() : memref<64xf32>
    %far = memref.alloc() : memref<64xf32>
    %vec = memref.alloc() : memref<256xf32>
    %gat = memref.alloc() : memref<256xf32>
    %g = memref.memory_space_cast %gat : memref<256xf32> to memref<256xf32, #gpu.address_space<global>>
    %s = memref.memory_space_cast %src : memref<64xf32> to memref<64xf32, #gpu.address_space<global>>
    %o = memref.memory_space_cast %out : memref<64xf32> to memref<64xf32, #gpu.address_space<global>>
    %f = memref.memory_space_cast %far : memref<64xf32> to memref<64xf32, #gpu.address_space<global>>
    %v = memref.memory_space_cast %vec : memref<256xf32> to memref<256xf32, #gpu.address_space<global>>
    gpu.launch_func @k::@fat blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
      args(%s : memref<64xf32, #gpu.address_space<global>>, %o : memref<64xf32, #gpu.address_space<global>>,
           %f : memref<64xf32, #gpu.address_space<global>>, %v : memref<256xf32, #gpu.address_space<global>>,
           %g : memref<256xf32, #gpu.address_space<global>>)
    return %out, %far, %vec, %gat : memref<64xf32>, memref<64xf32>, memref<256xf32>, memref<256xf32>
  }
}
)mlir";

TEST_F(EmulatorTest, FatRawBufferBoundsChecks) {
  std::vector<float> src(64);
  for (int i = 0; i < 64; ++i)
    src[i] = 1.0f + i;
  auto results = run(kFatRaw, {toBytes(src)});
  ASSERT_EQ(results.size(), 4u);
  std::vector<uint32_t> out = fromBytes<uint32_t>(results[0]);
  std::vector<float> far = fromBytes<float>(results[1]);
  std::vector<float> vec = fromBytes<float>(results[2]);
  std::vector<float> gat = fromBytes<float>(results[3]);
  for (int t = 0; t < 64; ++t) {
    // Loads: bytes [4t, 4t+4) valid iff 4t + 4 <= 100.
    float loaded = t < 25 ? src[t] : 0.0f;
    // Stores: dropped past 128 bytes, leaving the alloc's poison.
    if (t < 32)
      EXPECT_EQ(out[t], bitsOf(loaded)) << t;
    else
      EXPECT_EQ(out[t], 0xCDCDCDCDu) << t;
    // Indices past the memref's shape are still bounds-checked loads.
    EXPECT_EQ(far[t], 0.0f);
    // vector.load and gather_to_lds: elements past byte 100 read 0.
    for (int e = 0; e < 4; ++e) {
      int i = 4 * t + e;
      EXPECT_EQ(vec[i], i < 25 ? src[i] : 0.0f) << i;
      EXPECT_EQ(gat[i], i < 25 ? src[i] : 0.0f) << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// FP4 conversions
//===----------------------------------------------------------------------===//

/// packed_scaled_trunc of pairs of 16 inputs with scale 1.0 (and the last
/// pair with scale 2.0), into an existing vector whose other bytes must
/// survive; scaled_ext_packed back to f32 and bf16 with scale 4.0.
const char *kConvert = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @cvt(%in: memref<16xf32, #gpu.address_space<global>>,
                  %codes: memref<12xi8, #gpu.address_space<global>>,
                  %ext: memref<16xf32, #gpu.address_space<global>>,
                  %extbf: memref<16xbf16, #gpu.address_space<global>>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c12 = arith.constant 12 : index
      %one = arith.constant 1.0 : f32
      %two = arith.constant 2.0 : f32
      %four = arith.constant 4.0 : f32
      %x = vector.load %in[%c0] : memref<16xf32, #gpu.address_space<global>>, vector<16xf32>
      %init = arith.constant dense<[1, 2, 3, 4, 5, 6, 7, -8]> : vector<8xi4>
      %e = vector.bitcast %init : vector<8xi4> to vector<8xf4E2M1FN>
      %p0 = vector.extract_strided_slice %x {offsets = [0], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p1 = vector.extract_strided_slice %x {offsets = [2], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p2 = vector.extract_strided_slice %x {offsets = [4], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p3 = vector.extract_strided_slice %x {offsets = [6], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p4 = vector.extract_strided_slice %x {offsets = [8], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p5 = vector.extract_strided_slice %x {offsets = [10], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p6 = vector.extract_strided_slice %x {offsets = [12], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %p7 = vector.extract_strided_slice %x {offsets = [14], sizes = [2], strides = [1]} : vector<16xf32> to vector<2xf32>
      %q0 = amdgpu.packed_scaled_trunc %p0 into %e[0], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %q1 = amdgpu.packed_scaled_trunc %p1 into %q0[1], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %q2 = amdgpu.packed_scaled_trunc %p2 into %q1[2], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %r0 = amdgpu.packed_scaled_trunc %p3 into undef[0], %one : vector<2xf32> to vector<8xf4E2M1FN>
      %r1 = amdgpu.packed_scaled_trunc %p4 into %r0[1], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %r2 = amdgpu.packed_scaled_trunc %p5 into %r1[2], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %r3 = amdgpu.packed_scaled_trunc %p6 into %r2[3], %one : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %s3 = amdgpu.packed_scaled_trunc %p7 into %e[3], %two : vector<2xf32> to vector<8xf4E2M1FN> into vector<8xf4E2M1FN>
      %qb = vector.bitcast %q2 : vector<8xf4E2M1FN> to vector<4xi8>
      %rb = vector.bitcast %r3 : vector<8xf4E2M1FN> to vector<4xi8>
      %sb = vector.bitcast %s3 : vector<8xf4E2M1FN> to vector<4xi8>
      %q3 = vector.extract %sb[3] : i8 from vector<4xi8>
      %qbb = vector.insert %q3, %qb [3] : i8 into vector<4xi8>
      vector.store %qbb, %codes[%c0] : memref<12xi8, #gpu.address_space<global>>, vector<4xi8>
      vector.store %rb, %codes[%c4] : memref<12xi8, #gpu.address_space<global>>, vector<4xi8>
      vector.store %sb, %codes[%c8] : memref<12xi8, #gpu.address_space<global>>, vector<4xi8>
      %y0 = amdgpu.scaled_ext_packed %r3[0], %four : vector<8xf4E2M1FN> to vector<2xf32>
      %y1 = amdgpu.scaled_ext_packed %r3[1], %four : vector<8xf4E2M1FN> to vector<2xf32>
      %y2 = amdgpu.scaled_ext_packed %r3[2], %four : vector<8xf4E2M1FN> to vector<2xf32>
      %y3 = amdgpu.scaled_ext_packed %r3[3], %four : vector<8xf4E2M1FN> to vector<2xf32>
      %z0 = arith.constant dense<0.0> : vector<8xf32>
      %z1 = vector.insert_strided_slice %y0, %z0 {offsets = [0], strides = [1]} : vector<2xf32> into vector<8xf32>
      %z2 = vector.insert_strided_slice %y1, %z1 {offsets = [2], strides = [1]} : vector<2xf32> into vector<8xf32>
      %z3 = vector.insert_strided_slice %y2, %z2 {offsets = [4], strides = [1]} : vector<2xf32> into vector<8xf32>
      %z4 = vector.insert_strided_slice %y3, %z3 {offsets = [6], strides = [1]} : vector<2xf32> into vector<8xf32>
      vector.store %z4, %ext[%c0] : memref<16xf32, #gpu.address_space<global>>, vector<8xf32>
      %b0 = amdgpu.scaled_ext_packed %r3[1], %four : vector<8xf4E2M1FN> to vector<2xbf16>
      vector.store %b0, %extbf[%c0] : memref<16xbf16, #gpu.address_space<global>>, vector<2xbf16>
      gpu.return
    }
  }
  func.func @main(%in: memref<16xf32>) -> (memref<12xi8>, memref<16xf32>, memref<16xbf16>) {
    %c1 = arith.constant 1 : index
    %codes = memref.alloc() : memref<12xi8>
    %ext = memref.alloc() : memref<16xf32>
    %extbf = memref.alloc() : memref<16xbf16>
    %i = memref.memory_space_cast %in : memref<16xf32> to memref<16xf32, #gpu.address_space<global>>
    %c = memref.memory_space_cast %codes : memref<12xi8> to memref<12xi8, #gpu.address_space<global>>
    %e = memref.memory_space_cast %ext : memref<16xf32> to memref<16xf32, #gpu.address_space<global>>
    %b = memref.memory_space_cast %extbf : memref<16xbf16> to memref<16xbf16, #gpu.address_space<global>>
    gpu.launch_func @k::@cvt blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%i : memref<16xf32, #gpu.address_space<global>>, %c : memref<12xi8, #gpu.address_space<global>>,
           %e : memref<16xf32, #gpu.address_space<global>>, %b : memref<16xbf16, #gpu.address_space<global>>)
    return %codes, %ext, %extbf : memref<12xi8>, memref<16xf32>, memref<16xbf16>
  }
}
)mlir";

TEST_F(EmulatorTest, PackedScaledTruncRoundsToNearestEven) {
  std::vector<float> in = {0.25f, 0.75f, 2.5f,  5.0f,   7.0f,  -0.1f,
                           1.25f, 3.5f,  1.75f, -0.26f, -5.0f, 100.0f,
                           -0.0f, 0.3f,  9.0f,  -2.5f};
  auto results = run(kConvert, {toBytes(in)});
  ASSERT_EQ(results.size(), 3u);
  const EmulatorBuffer &codes = results[0];
  auto lo = [](uint8_t b) { return b & 15; };
  auto hi = [](uint8_t b) { return b >> 4; };
  // Byte 0: 0.25 -> 0 (tie to even), 0.75 -> 1.0 (code 2).
  EXPECT_EQ(lo(codes[0]), 0);
  EXPECT_EQ(hi(codes[0]), 2);
  // Byte 1: 2.5 -> 2.0 (code 4, tie to even), 5 -> 4.0 (code 6, tie).
  EXPECT_EQ(lo(codes[1]), 4);
  EXPECT_EQ(hi(codes[1]), 6);
  // Byte 2: 7 -> 6.0 saturated (code 7), -0.1 -> -0 (code 8).
  EXPECT_EQ(lo(codes[2]), 7);
  EXPECT_EQ(hi(codes[2]), 8);
  // Byte 3 comes from the scale-2.0 conversion of (0.3*... ) = (9, -2.5):
  // 9/2 = 4.5 -> 4.0 (code 6), -2.5/2 = -1.25 -> -1.0 (code 10).
  EXPECT_EQ(lo(codes[3]), 6);
  EXPECT_EQ(hi(codes[3]), 10);
  // Bytes 4..7 (into undef): 1.25 -> 1.0 (2), 3.5 -> 4.0 (6); 1.75 -> 2.0
  // (4), -0.26 -> -0.5 (9); -5 -> -4 (14), 100 -> 6 (7); -0 -> 8, 0.3 -> 0.5.
  EXPECT_EQ(codes[4], 2 | 6 << 4);
  EXPECT_EQ(codes[5], 4 | 9 << 4);
  EXPECT_EQ(codes[6], 14 | 7 << 4);
  EXPECT_EQ(codes[7], 8 | 1 << 4);

  // scaled_ext_packed of bytes 4..7 times 4.
  std::vector<float> ext = fromBytes<float>(results[1]);
  std::vector<float> want = {4, 16, 8, -2, -16, 24, -0.0f, 2};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(bitsOf(ext[i]), bitsOf(want[i])) << i;
  std::vector<uint16_t> bf = fromBytes<uint16_t>(results[2]);
  EXPECT_EQ(bf[0], 0x4100); // 8.0
  EXPECT_EQ(bf[1], 0xC000); // -2.0
}

TEST_F(EmulatorTest, PackedScaledTruncKeepsExistingBytes) {
  std::vector<float> in(16, 0.0f);
  in[14] = 1.0f; // 1.0 / 2 = 0.5 -> code 1
  auto results = run(kConvert, {toBytes(in)});
  ASSERT_EQ(results.size(), 3u);
  // %s3 replaced only byte 3 of %e = [1, 2, 3, 4, 5, 6, 7, -8].
  EXPECT_EQ(results[0][8], 0x21);
  EXPECT_EQ(results[0][9], 0x43);
  EXPECT_EQ(results[0][10], 0x65);
  EXPECT_EQ(results[0][11], 0x01);
  // %q2 kept byte 3 of %e (0x87) until the vector.insert replaced it.
  EXPECT_EQ(results[0][3], 0x01);
}

/// The quantize kernel of amdgpu.md §1.8 (one 32-value block per lane,
/// scale = exponent of amax / 4, arith.scaling_truncf), emulated on the IR
/// that `convert-arith-to-amdgpu{chipset=gfx950}` + canonicalize + cse make.
const char *kQuantize = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @quant(%x: memref<2048xf32, #gpu.address_space<global>>,
                    %q: memref<1024xi8, #gpu.address_space<global>>,
                    %s: memref<64xi8, #gpu.address_space<global>>) kernel {
      %tid = gpu.thread_id x
      %c16 = arith.constant 16 : index
      %c32 = arith.constant 32 : index
      %off = arith.muli %tid, %c32 : index
      %v = vector.load %x[%off] : memref<2048xf32, #gpu.address_space<global>>, vector<32xf32>
      %a = math.absf %v : vector<32xf32>
      %amax = vector.reduction <maxnumf>, %a : vector<32xf32> into f32
      %quarter = arith.constant 0.25 : f32
      %t = arith.mulf %amax, %quarter : f32
      %e = arith.truncf %t : f32 to f8E8M0FNU
      %eb = vector.broadcast %e : f8E8M0FNU to vector<32xf8E8M0FNU>
      %r = arith.scaling_truncf %v, %eb : vector<32xf32>, vector<32xf8E8M0FNU> to vector<32xf4E2M1FN>
      %rb = vector.bitcast %r : vector<32xf4E2M1FN> to vector<16xi8>
      %qo = arith.muli %tid, %c16 : index
      vector.store %rb, %q[%qo] : memref<1024xi8, #gpu.address_space<global>>, vector<16xi8>
      %ei = arith.bitcast %e : f8E8M0FNU to i8
      memref.store %ei, %s[%tid] : memref<64xi8, #gpu.address_space<global>>
      gpu.return
    }
  }
  func.func @main(%x: memref<2048xf32>) -> (memref<1024xi8>, memref<64xi8>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %q = memref.alloc() : memref<1024xi8>
    %s = memref.alloc() : memref<64xi8>
    %xg = memref.memory_space_cast %x : memref<2048xf32> to memref<2048xf32, #gpu.address_space<global>>
    %qg = memref.memory_space_cast %q : memref<1024xi8> to memref<1024xi8, #gpu.address_space<global>>
    %sg = memref.memory_space_cast %s : memref<64xi8> to memref<64xi8, #gpu.address_space<global>>
    gpu.launch_func @k::@quant blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
      args(%xg : memref<2048xf32, #gpu.address_space<global>>, %qg : memref<1024xi8, #gpu.address_space<global>>,
           %sg : memref<64xi8, #gpu.address_space<global>>)
    return %q, %s : memref<1024xi8>, memref<64xi8>
  }
}
)mlir";

/// OCP E2M1 round-to-nearest-even with saturation, by exhaustive search.
unsigned referenceE2M1(double x) {
  double a = std::fabs(x);
  unsigned best = 0;
  for (unsigned code = 1; code < 8; ++code) {
    double d = std::fabs(e2m1(code) - a), bestD = std::fabs(e2m1(best) - a);
    if (d < bestD || (d == bestD && code % 2 == 0))
      best = code;
  }
  return best | (std::signbit(x) ? 8 : 0);
}

TEST_F(EmulatorTest, QuantizeKernelAfterArithToAMDGPU) {
  OwningOpRef<ModuleOp> module = parse(kQuantize);
  ASSERT_TRUE(module);
  PassManager pm(&context);
  OpPassManager &gpuModule = pm.nest<gpu::GPUModuleOp>();
  ArithToAMDGPUConversionPassOptions options;
  options.chipset = "gfx950";
  gpuModule.addPass(createArithToAMDGPUConversionPass(options));
  gpuModule.addPass(createCanonicalizerPass());
  gpuModule.addPass(createCSEPass());
  ASSERT_TRUE(succeeded(pm.run(*module)));
  bool hasTrunc = false;
  module->walk([&](amdgpu::PackedScaledTruncOp) { hasTrunc = true; });
  ASSERT_TRUE(hasTrunc);

  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(2048);
  for (float &v : x)
    v = normal(rng);
  // Block 1 holds exact ties at scale 2^0 (amax 6 -> e = floor(log2 1.5)).
  float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, -0.25f};
  for (int i = 0; i < 32; ++i)
    x[32 + i] = i == 0 ? 6.0f : ties[i % 8];
  auto results = emulate(*module, "main", {toBytes(x)});
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  const EmulatorBuffer &q = (*results)[0], &s = (*results)[1];
  for (int block = 0; block < 64; ++block) {
    float amax = 0;
    for (int i = 0; i < 32; ++i)
      amax = std::max(amax, std::fabs(x[block * 32 + i]));
    int scale = (bitsOf(amax * 0.25f) >> 23) & 0xFF;
    ASSERT_EQ(s[block], scale) << block;
    for (int i = 0; i < 32; ++i) {
      unsigned want =
          referenceE2M1(std::ldexp(double(x[block * 32 + i]), 127 - scale));
      unsigned got = (q[block * 16 + i / 2] >> (4 * (i % 2))) & 15;
      ASSERT_EQ(got, want) << "block " << block << " element " << i;
    }
  }
  EXPECT_EQ(s[1], 127);
}

//===----------------------------------------------------------------------===//
// Divergence and arithmetic
//===----------------------------------------------------------------------===//

/// 96 threads (a partial second wave): an scf.if on tid < 20 with results,
/// a nested divergent if that only stores, a loop with per-thread trip count
/// tid % 7 carrying a sum, bf16/E8M0 conversions and a reduction.
const char *kDivergent = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @div(%out: memref<96xi32, #gpu.address_space<global>>,
                  %side: memref<96xi32, #gpu.address_space<global>>,
                  %loop: memref<96xi32, #gpu.address_space<global>>,
                  %conv: memref<8xf32, #gpu.address_space<global>>,
                  %n: i32) kernel {
      %tid = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      %c20 = arith.constant 20 : index
      %t32 = arith.index_cast %tid : index to i32
      %lt = arith.cmpi ult, %tid, %c20 : index
      %r = scf.if %lt -> (i32) {
        %d = arith.muli %t32, %t32 : i32
        scf.yield %d : i32
      } else {
        %m = arith.subi %n, %t32 : i32
        %odd = arith.andi %t32, %n : i32
        %c1i = arith.constant 1 : i32
        %isOdd = arith.cmpi eq, %odd, %c1i : i32
        scf.if %isOdd {
          memref.store %m, %side[%tid] : memref<96xi32, #gpu.address_space<global>>
        }
        scf.yield %m : i32
      }
      memref.store %r, %out[%tid] : memref<96xi32, #gpu.address_space<global>>
      %ub = arith.remui %tid, %c7 : index
      %zero = arith.constant 0 : i32
      %sum = scf.for %i = %c0 to %ub step %c1 iter_args(%s = %zero) -> (i32) {
        %i32 = arith.index_cast %i : index to i32
        %s2 = arith.addi %s, %i32 : i32
        scf.yield %s2 : i32
      }
      memref.store %sum, %loop[%tid] : memref<96xi32, #gpu.address_space<global>>
      %is0 = arith.cmpi eq, %tid, %c0 : index
      scf.if %is0 {
        %x = arith.constant 1.00390625 : f32
        %bf = arith.truncf %x : f32 to bf16
        %xb = arith.extf %bf : bf16 to f32
        memref.store %xb, %conv[%c0] : memref<8xf32, #gpu.address_space<global>>
        %y = arith.constant 1.01171875 : f32
        %bfy = arith.truncf %y : f32 to bf16
        %yb = arith.extf %bfy : bf16 to f32
        memref.store %yb, %conv[%c1] : memref<8xf32, #gpu.address_space<global>>
        %s0 = arith.constant dense<[0, 127, 130, 255]> : vector<4xi8>
        %s8 = arith.bitcast %s0 : vector<4xi8> to vector<4xf8E8M0FNU>
        %sf = arith.extf %s8 : vector<4xf8E8M0FNU> to vector<4xf32>
        %c2 = arith.constant 2 : index
        vector.store %sf, %conv[%c2] : memref<8xf32, #gpu.address_space<global>>, vector<4xf32>
        %amax = arith.constant 7.5 : f32
        %q = arith.mulf %amax, %amax : f32
        %e8 = arith.truncf %q : f32 to f8E8M0FNU
        %e8f = arith.extf %e8 : f8E8M0FNU to f32
        %c6 = arith.constant 6 : index
        memref.store %e8f, %conv[%c6] : memref<8xf32, #gpu.address_space<global>>
        %v = arith.constant dense<[1.0, -3.0, 0x7FC00000, 2.5]> : vector<4xf32>
        %m = vector.reduction <maxnumf>, %v : vector<4xf32> into f32
        %c7b = arith.constant 7 : index
        memref.store %m, %conv[%c7b] : memref<8xf32, #gpu.address_space<global>>
      }
      gpu.return
    }
  }
  func.func @main(%n: i32) -> (memref<96xi32>, memref<96xi32>, memref<96xi32>, memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c96 = arith.constant 96 : index
    %out = memref.alloc() : memref<96xi32>
    %side = memref.alloc() : memref<96xi32>
    %loop = memref.alloc() : memref<96xi32>
    %conv = memref.alloc() : memref<8xf32>
    %o = memref.memory_space_cast %out : memref<96xi32> to memref<96xi32, #gpu.address_space<global>>
    %s = memref.memory_space_cast %side : memref<96xi32> to memref<96xi32, #gpu.address_space<global>>
    %l = memref.memory_space_cast %loop : memref<96xi32> to memref<96xi32, #gpu.address_space<global>>
    %c = memref.memory_space_cast %conv : memref<8xf32> to memref<8xf32, #gpu.address_space<global>>
    gpu.launch_func @k::@div blocks in (%c1, %c1, %c1) threads in (%c96, %c1, %c1)
      args(%o : memref<96xi32, #gpu.address_space<global>>, %s : memref<96xi32, #gpu.address_space<global>>,
           %l : memref<96xi32, #gpu.address_space<global>>, %c : memref<8xf32, #gpu.address_space<global>>, %n : i32)
    return %out, %side, %loop, %conv : memref<96xi32>, memref<96xi32>, memref<96xi32>, memref<8xf32>
  }
}
)mlir";

TEST_F(EmulatorTest, DivergentControlFlow) {
  int32_t n = 1001;
  auto results = run(kDivergent, {toBytes(std::vector<int32_t>{n})});
  ASSERT_EQ(results.size(), 4u);
  std::vector<int32_t> out = fromBytes<int32_t>(results[0]);
  std::vector<uint32_t> side = fromBytes<uint32_t>(results[1]);
  std::vector<int32_t> loop = fromBytes<int32_t>(results[2]);
  for (int t = 0; t < 96; ++t) {
    EXPECT_EQ(out[t], t < 20 ? t * t : n - t) << t;
    bool stored = t >= 20 && (t & n) == 1;
    EXPECT_EQ(side[t], stored ? static_cast<uint32_t>(n - t) : 0xCDCDCDCDu)
        << t;
    int trips = t % 7;
    EXPECT_EQ(loop[t], trips * (trips - 1) / 2) << t;
  }
  std::vector<float> conv = fromBytes<float>(results[3]);
  // 1 + 2^-8 is a bf16 tie: to even (1.0); 1 + 3*2^-8 rounds up to 1+2^-6.
  EXPECT_EQ(conv[0], 1.0f);
  EXPECT_EQ(conv[1], 1.015625f);
  // E8M0 -> f32: 0 -> 2^-127 (a subnormal), 127 -> 1, 130 -> 8, 255 -> NaN.
  EXPECT_EQ(conv[2], std::ldexp(1.0f, -127));
  EXPECT_EQ(conv[3], 1.0f);
  EXPECT_EQ(conv[4], 8.0f);
  EXPECT_TRUE(std::isnan(conv[5]));
  // truncf to E8M0 takes the exponent: 56.25 -> 2^5.
  EXPECT_EQ(conv[6], 32.0f);
  // maxnumf ignores the NaN.
  EXPECT_EQ(conv[7], 2.5f);
}

/// A 2x2 grid of 8x8 workgroups exercising ids, n-D memrefs, LDS reuse per
/// workgroup and assorted vector/arith ops; each thread writes 8 floats.
const char *kSmoke = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @smoke(%in: memref<16xf32, #gpu.address_space<global>>,
                    %out: memref<4x64x8xf32, #gpu.address_space<global>>)
        workgroup(%lds: memref<64xi32, #gpu.address_space<workgroup>>) kernel {
      %tx = gpu.thread_id x
      %ty = gpu.thread_id y
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %c5 = arith.constant 5 : index
      %c8 = arith.constant 8 : index
      %c10 = arith.constant 10 : index
      %c64 = arith.constant 64 : index
      %c100 = arith.constant 100 : index
      %ty8 = arith.muli %ty, %c8 : index
      %t = arith.addi %tx, %ty8 : index
      %by2 = arith.muli %by, %c2 : index
      %wg = arith.addi %bx, %by2 : index
      %by10 = arith.muli %by, %c10 : index
      %bid = arith.addi %bx, %by10 : index
      %ty100 = arith.muli %ty, %c100 : index
      %tid = arith.addi %tx, %ty100 : index
      %bidi = arith.index_cast %bid : index to i32
      %tidi = arith.index_cast %tid : index to i32
      %v0 = arith.sitofp %bidi : i32 to f32
      %v1 = arith.uitofp %tidi : i32 to f32
      %txi = arith.index_cast %tx : index to i32
      %txf = arith.sitofp %txi : i32 to f32
      %bc = vector.broadcast %txf : f32 to vector<4xf32>
      %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
      %h = arith.constant dense<0.5> : vector<4xf32>
      %f = vector.fma %bc, %w, %h : vector<4xf32>
      %v2 = vector.reduction <add>, %f : vector<4xf32> into f32
      %s1 = arith.constant dense<[10.0, 20.0, 30.0, 40.0]> : vector<4xf32>
      %s2 = arith.constant dense<[50.0, 60.0]> : vector<2xf32>
      %sh = vector.shuffle %s1, %s2 [5, 0, 3] : vector<4xf32>, vector<2xf32>
      %v3 = vector.extract %sh[0] : f32 from vector<3xf32>
      %k = arith.remui %tx, %c5 : index
      %m = vector.create_mask %k : vector<4xi1>
      %pass = arith.constant dense<-1.0> : vector<4xf32>
      %ml = vector.maskedload %in[%c0], %m, %pass : memref<16xf32, #gpu.address_space<global>>, vector<4xi1>, vector<4xf32> into vector<4xf32>
      %v4 = vector.reduction <add>, %ml : vector<4xf32> into f32
      %big = arith.constant 4294967295 : i32
      %c1i = arith.constant 1 : i32
      %tx1 = arith.addi %txi, %c1i : i32
      %lo, %hi = arith.mului_extended %big, %tx1 : i32
      %v5 = arith.uitofp %hi : i32 to f32
      %neg = arith.constant -2.7 : f32
      %ni = arith.fptosi %neg : f32 to i32
      %seven = arith.constant 7 : i32
      %small = arith.cmpi ult, %tx, %c4 : index
      %sel = arith.select %small, %ni, %seven : i32
      %v6 = arith.sitofp %sel : i32 to f32
      %t3 = arith.muli %t, %c4 : index
      %t3i = arith.index_cast %t3 : index to i32
      %wgi = arith.index_cast %wg : index to i32
      %val = arith.addi %t3i, %wgi : i32
      %next1 = arith.addi %t, %c1 : index
      %next = arith.remui %next1, %c64 : index
      %old = memref.load %lds[%next] : memref<64xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %val, %lds[%t] : memref<64xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %nv = memref.load %lds[%next] : memref<64xi32, #gpu.address_space<workgroup>>
      %poisoned = arith.constant -842150451 : i32
      %wasPoison = arith.cmpi eq, %old, %poisoned : i32
      %nvs = arith.select %wasPoison, %nv, %poisoned : i32
      %v7 = arith.sitofp %nvs : i32 to f32
      %row = vector.from_elements %v0, %v1, %v2, %v3, %v4, %v5, %v6, %v7 : vector<8xf32>
      %mask7 = vector.constant_mask [7] : vector<8xi1>
      vector.maskedstore %out[%wg, %t, %c0], %mask7, %row : memref<4x64x8xf32, #gpu.address_space<global>>, vector<8xi1>, vector<8xf32>
      %c7 = arith.constant 7 : index
      memref.store %v7, %out[%wg, %t, %c7] : memref<4x64x8xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
  func.func @main(%in: memref<16xf32>) -> memref<4x64x8xf32> {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %out = memref.alloc() : memref<4x64x8xf32>
    %i = memref.memory_space_cast %in : memref<16xf32> to memref<16xf32, #gpu.address_space<global>>
    %o = memref.memory_space_cast %out : memref<4x64x8xf32> to memref<4x64x8xf32, #gpu.address_space<global>>
    gpu.launch_func @k::@smoke blocks in (%c2, %c2, %c1) threads in (%c8, %c8, %c1)
      args(%i : memref<16xf32, #gpu.address_space<global>>, %o : memref<4x64x8xf32, #gpu.address_space<global>>)
    memref.dealloc %out : memref<4x64x8xf32>
    return %out : memref<4x64x8xf32>
  }
}
)mlir";

TEST_F(EmulatorTest, GridIdsLdsAndVectorOps) {
  std::vector<float> in(16);
  for (int i = 0; i < 16; ++i)
    in[i] = i + 1.0f;
  // The host function deallocates its result before returning it.
  EXPECT_NE(runError(kSmoke, {toBytes(in)}).find("returns a deallocated"),
            std::string::npos);
  std::string source = kSmoke;
  source.erase(
      source.find("    memref.dealloc"),
      std::string("    memref.dealloc %out : memref<4x64x8xf32>\n").size());
  EmulatorStats stats;
  auto results = run(source, {toBytes(in)}, &stats);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(stats.workgroups, 4);
  std::vector<float> out = fromBytes<float>(results[0]);
  for (int by = 0; by < 2; ++by)
    for (int bx = 0; bx < 2; ++bx)
      for (int ty = 0; ty < 8; ++ty)
        for (int tx = 0; tx < 8; ++tx) {
          int wg = bx + 2 * by, t = tx + 8 * ty;
          const float *row = &out[(wg * 64 + t) * 8];
          EXPECT_EQ(row[0], bx + 10 * by);
          EXPECT_EQ(row[1], tx + 100 * ty);
          EXPECT_EQ(row[2], tx * 10.0f + 2.0f);
          EXPECT_EQ(row[3], 60.0f);
          int k = tx % 5;
          EXPECT_EQ(row[4], k * (k + 1) / 2.0f - (4 - k)) << tx;
          EXPECT_EQ(row[5], static_cast<float>(tx));
          EXPECT_EQ(row[6], tx < 4 ? -2.0f : 7.0f);
          // LDS is poisoned afresh for each workgroup, then holds 4t + wg.
          EXPECT_EQ(row[7], static_cast<float>(4 * ((t + 1) % 64) + wg));
        }
}

TEST_F(EmulatorTest, LdsAndUncheckedBufferOutOfBoundsAreErrors) {
  std::string kernel = kSmoke;
  kernel.replace(kernel.find("%old = memref.load %lds[%next]"),
                 std::string("%old = memref.load %lds[%next]").size(),
                 "%old = memref.load %lds[%c100]");
  std::vector<float> in(16, 1.0f);
  std::string message = runError(kernel, {toBytes(in)});
  EXPECT_NE(message.find("out-of-bounds LDS access: 4 bytes at byte offset "
                         "400 of a 256-byte memref"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("workgroup (0, 0, 0), thread 0"), std::string::npos)
      << message;

  std::string fat = kFatRaw;
  fat.replace(fat.find("validBytes(%c100) resetOffset"),
              std::string("validBytes(%c100) resetOffset").size(),
              "boundsCheck(false)");
  std::vector<float> src(64, 1.0f);
  message = runError(fat, {toBytes(src)});
  EXPECT_NE(message.find("out-of-bounds global access: 4 bytes at byte offset "
                         "256 of a 256-byte memref"),
            std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

const char *kOutOfBounds = R"mlir(
module attributes {gpu.container_module} {
  gpu.module @k [#rocdl.target<chip = "gfx950", abi = "500">] {
    gpu.func @oob(%out: memref<100xf32, #gpu.address_space<global>>) kernel {
      %tid = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %out[%tid] : memref<100xf32, #gpu.address_space<global>>
      gpu.return
    }
  }
  func.func @main() -> memref<100xf32> {
    %c1 = arith.constant 1 : index
    %c128 = arith.constant 128 : index
    %out = memref.alloc() : memref<100xf32>
    %o = memref.memory_space_cast %out : memref<100xf32> to memref<100xf32, #gpu.address_space<global>>
    gpu.launch_func @k::@oob blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1)
      args(%o : memref<100xf32, #gpu.address_space<global>>)
    return %out : memref<100xf32>
  }
}
)mlir";

TEST_F(EmulatorTest, OutOfBoundsGlobalStoreIsLocatedError) {
  std::string message = runError(kOutOfBounds, {});
  EXPECT_NE(message.find("kernel.mlir:7:7"), std::string::npos) << message;
  EXPECT_NE(message.find("memref.store"), std::string::npos) << message;
  EXPECT_NE(message.find("out-of-bounds global access"), std::string::npos)
      << message;
  EXPECT_NE(message.find("byte offset 400"), std::string::npos) << message;
  EXPECT_NE(message.find("thread 100"), std::string::npos) << message;
  EXPECT_NE(message.find("wave 1 lane 36"), std::string::npos) << message;
}

TEST_F(EmulatorTest, UnsupportedOpsAreLocatedErrors) {
  std::string kernel = kOutOfBounds;
  kernel.replace(kernel.find("%tid = gpu.thread_id x"),
                 std::string("%tid = gpu.thread_id x").size(),
                 "%tid = gpu.block_dim x");
  std::string message = runError(kernel, {});
  EXPECT_NE(message.find("kernel.mlir:5:14: gfx950 emulator: unsupported op "
                         "'gpu.block_dim'"),
            std::string::npos)
      << message;

  std::string host = kOutOfBounds;
  host.replace(host.find("%c128 = arith.constant 128 : index"),
               std::string("%c128 = arith.constant 128 : index").size(),
               "%c128 = arith.addi %c1, %c1 : index");
  message = runError(host, {});
  EXPECT_NE(message.find("kernel.mlir:13:13: gfx950 emulator: unsupported "
                         "host op 'arith.addi'"),
            std::string::npos)
      << message;

  // Wrong argument sizes are reported before anything runs.
  OwningOpRef<ModuleOp> module = parse(kMfma32);
  ASSERT_TRUE(module);
  auto results = emulate(*module, "main", {EmulatorBuffer(3)});
  ASSERT_FALSE(static_cast<bool>(results));
  EXPECT_NE(llvm::toString(results.takeError()).find("expects 4 arguments"),
            std::string::npos);
  results = emulate(*module, "nope", {});
  ASSERT_FALSE(static_cast<bool>(results));
  EXPECT_NE(llvm::toString(results.takeError()).find("no host function"),
            std::string::npos);
}

TEST_F(EmulatorTest, DivergentBarrierAndPartialWaveMfmaAreErrors) {
  std::string kernel = kOutOfBounds;
  kernel.replace(kernel.find("      memref.store %one"), 0,
                 "      %c50 = arith.constant 50 : index\n"
                 "      %lt = arith.cmpi ult, %tid, %c50 : index\n"
                 "      scf.if %lt {\n        gpu.barrier\n      }\n");
  std::string message = runError(kernel, {});
  EXPECT_NE(message.find("barrier executed by only 50 of the 128 threads"),
            std::string::npos)
      << message;

  std::string mfma = kMfma32;
  std::string call = "%dd = amdgpu.scaled_mfma 32x32x64 (%sa[0] * %a) * "
                     "(%sb[0] * %b) + %zero\n"
                     "        : f8E8M0FNU, vector<32xf4E2M1FN>, f8E8M0FNU, "
                     "vector<32xf4E2M1FN>, vector<16xf32>";
  size_t at = mfma.find("%d = amdgpu.scaled_mfma");
  size_t end =
      mfma.find("vector<16xf32>", at) + std::string("vector<16xf32>").size();
  mfma.replace(at, end - at,
               "%c40 = arith.constant 40 : index\n"
               "      %lt = arith.cmpi ult, %lane, %c40 : index\n"
               "      %d = scf.if %lt -> (vector<16xf32>) {\n        " +
                   call +
                   "\n        scf.yield %dd : vector<16xf32>\n"
                   "      } else {\n        scf.yield %zero : vector<16xf32>\n"
                   "      }");
  std::mt19937 rng(5);
  message = runError(mfma, {toBytes(randomBytes(rng, 1024)),
                            toBytes(randomBytes(rng, 1024)),
                            toBytes(randomBytes(rng, 64, 127, 127)),
                            toBytes(randomBytes(rng, 64, 127, 127))});
  EXPECT_NE(message.find("wave-level op executed by only 40 of the 64 lanes"),
            std::string::npos)
      << message;
}

//===----------------------------------------------------------------------===//
// A 256x256x512 FP4 GEMM: 4 waves (2x2), 8x8 16x16x128 MFMAs per wave per K
// step, 4 K steps, scales pre-shuffled (one dword per lane per 2x2 MFMAs).
//===----------------------------------------------------------------------===//

/// Generates the GEMM kernel. A and B are [256][256] bytes (K = 512 FP4),
/// SA and SB the shuffled 16x16x128 scale buffers of [256][16] scales,
/// C [256][256] f32.
std::string makeGemmKernel() {
  std::string s;
  llvm::raw_string_ostream os(s);
  const char *g = "#gpu.address_space<global>";
  os << "module attributes {gpu.container_module} {\n"
     << "gpu.module @k [#rocdl.target<chip = \"gfx950\", abi = \"500\">] {\n"
     << "gpu.func @gemm(%A: memref<65536xi8, " << g
     << ">, %B: memref<65536xi8, " << g << ">, %SA: memref<4096xi8, " << g
     << ">, %SB: memref<4096xi8, " << g << ">, %C: memref<65536xf32, " << g
     << ">) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {\n";
  os << "%tid = gpu.thread_id x\n";
  for (int c = 0; c <= 256; ++c)
    os << llvm::formatv("%c{0} = arith.constant {0} : index\n", c);
  os << "%c512 = arith.constant 512 : index\n";
  os << "%wave = arith.divui %tid, %c64 : index\n"
     << "%lane = arith.remui %tid, %c64 : index\n"
     << "%wm = arith.divui %wave, %c2 : index\n"
     << "%wn = arith.remui %wave, %c2 : index\n"
     << "%row = arith.remui %lane, %c16 : index\n"
     << "%kb = arith.divui %lane, %c16 : index\n"
     << "%kb16 = arith.muli %kb, %c16 : index\n"
     << "%wm128 = arith.muli %wm, %c128 : index\n"
     << "%wn128 = arith.muli %wn, %c128 : index\n"
     << "%aRow0 = arith.addi %wm128, %row : index\n"
     << "%bRow0 = arith.addi %wn128, %row : index\n"
     << "%lane4 = arith.muli %lane, %c4 : index\n"
     << "%zero = arith.constant dense<0.0> : vector<4xf32>\n";
  // Shuffled scale chunk (row/32, kBlock/8) of 256 bytes; kBlocks = 16
  // (padded 16) -> 2 chunks per 32-row band.
  os << "%res:64 = scf.for %ks = %c0 to %c4 step %c1 iter_args(";
  for (int t = 0; t < 64; ++t)
    os << (t ? ", " : "") << "%acc" << t << " = %zero";
  os << ") -> (";
  for (int t = 0; t < 64; ++t)
    os << (t ? ", " : "") << "vector<4xf32>";
  os << ") {\n";
  os << "%k64 = arith.muli %ks, %c64 : index\n"
     << "%kcol = arith.addi %k64, %kb16 : index\n"
     << "%kchunk = arith.divui %ks, %c2 : index\n"
     << "%kchunk256 = arith.muli %kchunk, %c256 : index\n";
  for (int i = 0; i < 8; ++i) {
    os << llvm::formatv("%ar{0} = arith.addi %aRow0, %c{1} : index\n", i,
                        16 * i)
              .str();
    os << llvm::formatv("%ao{0}a = arith.muli %ar{0}, %c256 : index\n"
                        "%ao{0} = arith.addi %ao{0}a, %kcol : index\n"
                        "%a8_{0} = vector.load %A[%ao{0}] : memref<65536xi8, "
                        "{1}>, vector<16xi8>\n"
                        "%a{0} = vector.bitcast %a8_{0} : vector<16xi8> to "
                        "vector<32xf4E2M1FN>\n",
                        i, g)
              .str();
    os << llvm::formatv("%br{0} = arith.addi %bRow0, %c{1} : index\n", i,
                        16 * i)
              .str();
    os << llvm::formatv("%bo{0}a = arith.muli %br{0}, %c256 : index\n"
                        "%bo{0} = arith.addi %bo{0}a, %kcol : index\n"
                        "%b8_{0} = vector.load %B[%bo{0}] : memref<65536xi8, "
                        "{1}>, vector<16xi8>\n"
                        "%b{0} = vector.bitcast %b8_{0} : vector<16xi8> to "
                        "vector<32xf4E2M1FN>\n",
                        i, g)
              .str();
  }
  // Scale dwords: for 32-row band p (tiles 2p, 2p+1): chunk = band * 2 +
  // ks / 2, lane dword at chunk * 256 + 4 * lane.
  for (int p = 0; p < 4; ++p) {
    for (const char *m : {"A", "B"}) {
      const char *base = m[0] == 'A' ? "%wm" : "%wn";
      os << llvm::formatv("%{0}band{1}a = arith.muli {2}, %c4 : index\n"
                          "%{0}band{1} = arith.addi %{0}band{1}a, %c{1} : "
                          "index\n"
                          "%{0}so{1}a = arith.muli %{0}band{1}, %c512 : "
                          "index\n"
                          "%{0}so{1}b = arith.addi %{0}so{1}a, %kchunk256 : "
                          "index\n"
                          "%{0}so{1} = arith.addi %{0}so{1}b, %lane4 : index\n"
                          "%{0}s8_{1} = vector.load %S{0}[%{0}so{1}] : "
                          "memref<4096xi8, {3}>, vector<4xi8>\n"
                          "%{0}s{1} = vector.bitcast %{0}s8_{1} : vector<4xi8> "
                          "to vector<4xf8E8M0FNU>\n",
                          m, p, base, g)
                .str();
    }
  }
  os << "%kj = arith.remui %ks, %c2 : index\n";
  // scalesIdx = 2 * kj + (tile % 2) is an attribute: branch on kj.
  os << "%kjz = arith.cmpi eq, %kj, %c0 : index\n";
  os << "%new:64 = scf.if %kjz -> (";
  for (int t = 0; t < 64; ++t)
    os << (t ? ", " : "") << "vector<4xf32>";
  os << ") {\n";
  for (int kj = 0; kj < 2; ++kj) {
    if (kj == 1)
      os << "} else {\n";
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j)
        os << llvm::formatv(
                  "%d{0}_{1}_{2} = amdgpu.scaled_mfma 16x16x128 (%As{3}[{4}] "
                  "* %a{1}) * (%Bs{5}[{6}] * %b{2}) + %acc{7} : "
                  "vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, "
                  "vector<4xf8E8M0FNU>, vector<32xf4E2M1FN>, vector<4xf32>\n",
                  kj, i, j, i / 2, 2 * kj + i % 2, j / 2, 2 * kj + j % 2,
                  i * 8 + j)
                  .str();
    os << "scf.yield ";
    for (int t = 0; t < 64; ++t)
      os << (t ? ", " : "") << "%d" << kj << "_" << t / 8 << "_" << t % 8;
    os << " : ";
    for (int t = 0; t < 64; ++t)
      os << (t ? ", " : "") << "vector<4xf32>";
    os << "\n";
  }
  os << "}\n";
  os << "scf.yield ";
  for (int t = 0; t < 64; ++t)
    os << (t ? ", " : "") << "%new#" << t;
  os << " : ";
  for (int t = 0; t < 64; ++t)
    os << (t ? ", " : "") << "vector<4xf32>";
  os << "\n}\n";
  // Epilogue: register r of tile (i, j) is C[wm*128 + 16i + 4*(lane/16) + r]
  // [wn*128 + 16j + lane%16].
  os << "%rb = arith.muli %kb, %c4 : index\n"
     << "%cRow0 = arith.addi %wm128, %rb : index\n"
     << "%cCol0 = arith.addi %wn128, %row : index\n";
  for (int i = 0; i < 8; ++i)
    for (int r = 0; r < 4; ++r)
      os << llvm::formatv("%cr{0}_{1}a = arith.addi %cRow0, %c{2} : index\n"
                          "%cr{0}_{1} = arith.muli %cr{0}_{1}a, %c256 : "
                          "index\n",
                          i, r, 16 * i + r)
                .str();
  for (int j = 0; j < 8; ++j)
    os << llvm::formatv("%cc{0} = arith.addi %cCol0, %c{1} : index\n", j,
                        16 * j)
              .str();
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int r = 0; r < 4; ++r)
        os << llvm::formatv("%e{0}_{1}_{2} = vector.extract %res#{3}[{2}] : "
                            "f32 from vector<4xf32>\n"
                            "%co{0}_{1}_{2} = arith.addi %cr{0}_{2}, %cc{1} : "
                            "index\n"
                            "memref.store %e{0}_{1}_{2}, %C[%co{0}_{1}_{2}] : "
                            "memref<65536xf32, {4}>\n",
                            i, j, r, i * 8 + j, g)
                  .str();
  os << "gpu.return\n}\n}\n";
  os << "func.func @main(%A: memref<65536xi8>, %B: memref<65536xi8>, %SA: "
        "memref<4096xi8>, %SB: memref<4096xi8>) -> memref<65536xf32> {\n"
     << "%c1 = arith.constant 1 : index\n"
     << "%c256 = arith.constant 256 : index\n"
     << "%C = memref.alloc() : memref<65536xf32>\n";
  for (auto [name, type] :
       {std::pair<const char *, const char *>{"A", "65536xi8"},
        {"B", "65536xi8"},
        {"SA", "4096xi8"},
        {"SB", "4096xi8"},
        {"C", "65536xf32"}})
    os << llvm::formatv("%{0}g = memref.memory_space_cast %{0} : memref<{1}> "
                        "to memref<{1}, {2}>\n",
                        name, type, g)
              .str();
  os << "gpu.launch_func @k::@gemm blocks in (%c1, %c1, %c1) threads in "
        "(%c256, %c1, %c1) args(%Ag : memref<65536xi8, "
     << g << ">, %Bg : memref<65536xi8, " << g << ">, %SAg : memref<4096xi8, "
     << g << ">, %SBg : memref<4096xi8, " << g << ">, %Cg : memref<65536xf32, "
     << g << ">)\n"
     << "return %C : memref<65536xf32>\n}\n}\n";
  return s;
}

TEST_F(EmulatorTest, Gemm256x256x512IsFastAndExact) {
  std::string source = makeGemmKernel();
  std::mt19937 rng(6);
  constexpr int kN = 256, kKBlocks = 16, kRowBytes = 256;
  std::vector<uint8_t> a = randomBytes(rng, kN * kRowBytes),
                       b = randomBytes(rng, kN * kRowBytes);
  std::vector<uint8_t> sa = randomBytes(rng, kN * kKBlocks, 122, 132),
                       sb = randomBytes(rng, kN * kKBlocks, 122, 132);
  auto saShuffled =
      shuffleScales(MfmaShape::m16n16k128, kN, kKBlocks, sa, /*padding=*/255);
  auto sbShuffled =
      shuffleScales(MfmaShape::m16n16k128, kN, kKBlocks, sb, /*padding=*/255);
  ASSERT_TRUE(static_cast<bool>(saShuffled));
  ASSERT_TRUE(static_cast<bool>(sbShuffled));

  EmulatorStats stats;
  auto start = std::chrono::steady_clock::now();
  auto results =
      run(source,
          {toBytes(a), toBytes(b), toBytes(*saShuffled), toBytes(*sbShuffled)},
          &stats);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(stats.mfmas, 4 * 256);
  std::printf("[ info ] 256x256x512 FP4 GEMM emulated in %.2f s\n", seconds);
  EXPECT_LT(seconds, 30.0);
  std::vector<float> c = fromBytes<float>(results[0]);
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      float want = referenceDot(
          a, b, kRowBytes, i, j, kKBlocks, 0.0f,
          [&](int64_t kb) { return sa[i * kKBlocks + kb]; },
          [&](int64_t kb) { return sb[j * kKBlocks + kb]; });
      ASSERT_EQ(bitsOf(c[i * kN + j]), bitsOf(want)) << i << "," << j;
    }
}

} // namespace
