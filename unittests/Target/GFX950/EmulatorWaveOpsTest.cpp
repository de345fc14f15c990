//===- EmulatorWaveOpsTest.cpp - gpu.shuffle and bf16 amdgpu.mfma ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The emulator's cross-lane ops: gpu.shuffle in its four modes (values and
// `valid` as convert-gpu-to-rocdl's ds_bpermute lowering gives them, spot
// values written by hand), and the bf16 MFMAs 16x16x32 / 32x32x16 fed by
// kernels that spell the lane layouts out in their own index math, against
// a plain C++ GEMM; the accumulation order on a case where it matters; and
// a row reduction through the gfx950 pipeline with warp-reductions=1, whose
// shuffle-tree kernels the emulator runs.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/InitAll.h"
#include "mxfp4/Pipelines/Pipelines.h"
#include "mxfp4/Target/GFX950/Emulator.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace mlir::mxfp4::gfx950;

namespace {

std::unique_ptr<EmulatedKernelModule> parseOrFail(const std::string &text) {
  auto module = EmulatedKernelModule::parse(text, "kernel.mlir");
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

/// Launches kernel `name` with `args` on one workgroup of `threads`.
std::string launch(EmulatedKernelModule &module, llvm::StringRef name,
                   int64_t threads, std::vector<EmulatedKernelArg> args) {
  auto kernel = module.getKernel(name);
  if (!kernel)
    return llvm::toString(kernel.takeError());
  int64_t grid[3] = {1, 1, 1}, block[3] = {threads, 1, 1};
  if (llvm::Error error = module.launch(**kernel, grid, block, args))
    return llvm::toString(std::move(error));
  return "";
}

template <typename T> EmulatedKernelArg memArg(std::vector<T> &v) {
  EmulatedKernelArg arg;
  arg.pointer = v.data();
  arg.bytes = static_cast<int64_t>(v.size() * sizeof(T));
  return arg;
}

EmulatedKernelArg scalarArg(uint64_t bits) {
  EmulatedKernelArg arg;
  arg.bits = bits;
  return arg;
}

//===----------------------------------------------------------------------===//
// gpu.shuffle
//===----------------------------------------------------------------------===//

/// Thread t shuffles the i32 100 + t and the vector<2xf16> (t, -t); writes
/// the i32 result, valid, and the vector's second element (as f16 bits).
std::string shuffleKernel(const char *mode) {
  return llvm::formatv(R"mlir(
module attributes {{gpu.container_module} {
  gpu.module @k {
    gpu.func @shuffle(%out: memref<128xi32>, %ok: memref<128xi32>,
                      %vec: memref<128xi16>, %offset: i32, %width: i32) kernel {
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %c100 = arith.constant 100 : i32
      %v = arith.addi %ti, %c100 : i32
      %r, %valid = gpu.shuffle {0} %v, %offset, %width : i32
      memref.store %r, %out[%t] : memref<128xi32>
      %vi = arith.extui %valid : i1 to i32
      memref.store %vi, %ok[%t] : memref<128xi32>
      %f = arith.sitofp %ti : i32 to f16
      %nf = arith.negf %f : f16
      %pair = vector.from_elements %f, %nf : vector<2xf16>
      %rp, %vp = gpu.shuffle {0} %pair, %offset, %width : vector<2xf16>
      %second = vector.extract %rp[1] : f16 from vector<2xf16>
      %bits = arith.bitcast %second : f16 to i16
      memref.store %bits, %vec[%t] : memref<128xi16>
      gpu.return
    }
  }
}
)mlir",
                       mode)
      .str();
}

struct ShuffleRun {
  std::vector<int32_t> out, ok;
  std::vector<int16_t> vec;
};

ShuffleRun runShuffle(const char *mode, int32_t offset, int32_t width) {
  ShuffleRun run{std::vector<int32_t>(128, -1), std::vector<int32_t>(128, -1),
                 std::vector<int16_t>(128, 0)};
  auto module = parseOrFail(shuffleKernel(mode));
  if (!module)
    return run;
  std::string error = launch(*module, "shuffle", 128,
                             {memArg(run.out), memArg(run.ok), memArg(run.vec),
                              scalarArg(static_cast<uint32_t>(offset)),
                              scalarArg(static_cast<uint32_t>(width))});
  EXPECT_EQ(error, "");
  return run;
}

/// The f16 bits of -t.
int16_t negHalfBits(int t) {
  // -t for t < 2048 is exact in f16: sign, exponent, 10 mantissa bits.
  if (t == 0)
    return static_cast<int16_t>(0x8000);
  int e = static_cast<int>(std::floor(std::log2(t)));
  int mantissa = static_cast<int>(std::ldexp(t, 10 - e)) - 1024;
  return static_cast<int16_t>(0x8000 | ((e + 15) << 10) | mantissa);
}

TEST(EmulatorShuffle, XorStaysInTheWave) {
  ShuffleRun r = runShuffle("xor", 1, 64);
  EXPECT_EQ(r.out[5], 104);
  EXPECT_EQ(r.out[4], 105);
  EXPECT_EQ(r.out[64 + 5], 168); // the second wave trades among itself
  EXPECT_EQ(r.ok[5], 1);
  EXPECT_EQ(r.vec[5], negHalfBits(4));
  r = runShuffle("xor", 16, 32);
  EXPECT_EQ(r.out[3], 119);
  EXPECT_EQ(r.out[40], 156);
  EXPECT_EQ(r.ok[40], 1);
  // An xor partner past the end of the lane's width segment: invalid, own
  // value. The lowering bounds the partner only above, so lane 35 reads
  // lane 3 of the segment below, valid.
  r = runShuffle("xor", 32, 32);
  EXPECT_EQ(r.out[3], 103);
  EXPECT_EQ(r.ok[3], 0);
  EXPECT_EQ(r.out[35], 103);
  EXPECT_EQ(r.ok[35], 1);
}

TEST(EmulatorShuffle, DownUpAndIdx) {
  ShuffleRun r = runShuffle("down", 3, 16);
  EXPECT_EQ(r.out[12], 115);
  EXPECT_EQ(r.ok[12], 1);
  EXPECT_EQ(r.out[13], 113); // 16 is past lane 13's segment [0, 16)
  EXPECT_EQ(r.ok[13], 0);
  EXPECT_EQ(r.out[70], 173);
  EXPECT_EQ(r.vec[12], negHalfBits(15));
  // `up` is only bounded above by the lowering: lane 17 reads lane 14 of the
  // previous segment, and lane 1 reads lane (1 - 3) mod 64 = 62, both valid.
  r = runShuffle("up", 3, 16);
  EXPECT_EQ(r.out[20], 117);
  EXPECT_EQ(r.out[17], 114);
  EXPECT_EQ(r.ok[17], 1);
  EXPECT_EQ(r.out[1], 162);
  EXPECT_EQ(r.ok[1], 1);
  EXPECT_EQ(r.out[64 + 1], 164 + 62);
  r = runShuffle("idx", 5, 64);
  EXPECT_EQ(r.out[0], 105);
  EXPECT_EQ(r.out[63], 105);
  EXPECT_EQ(r.out[64], 169);
  EXPECT_EQ(r.ok[63], 1);
  r = runShuffle("idx", 70, 64);
  EXPECT_EQ(r.out[9], 109);
  EXPECT_EQ(r.ok[9], 0);
}

TEST(EmulatorShuffle, ReadingAnInactiveLaneIsAnError) {
  // 48 threads: lanes 48..63 of the only wave do not exist.
  auto module = parseOrFail(shuffleKernel("xor"));
  ASSERT_TRUE(module);
  std::vector<int32_t> out(128), ok(128);
  std::vector<int16_t> vec(128);
  std::string error = launch(
      *module, "shuffle", 48,
      {memArg(out), memArg(ok), memArg(vec), scalarArg(32), scalarArg(64)});
  EXPECT_NE(error.find("gpu.shuffle reads lane 48, which is not executing it"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("kernel.mlir:10:"), std::string::npos) << error;
  // Within 16 lanes it is fine.
  error = launch(
      *module, "shuffle", 48,
      {memArg(out), memArg(ok), memArg(vec), scalarArg(8), scalarArg(16)});
  EXPECT_EQ(error, "");
  EXPECT_EQ(out[40], 132);
}

//===----------------------------------------------------------------------===//
// bf16 MFMA
//===----------------------------------------------------------------------===//

/// One wave: lane l loads A and B elements (l % m, 8 * (l / m) + 0..7)
/// (row-major m x k and n x k), C/D register r at row
/// 8 * (r / 4) + 4 * (l / n) + r % 4, column l % n; D = mfma(A, B, C).
std::string mfmaKernel(int m, int k, int regs) {
  std::string accLoads, accStores, accNames;
  for (int r = 0; r < regs; ++r) {
    int offset = 8 * (r / 4) + r % 4;
    accLoads += llvm::formatv(
        "      %o{0} = arith.constant {1} : index\n"
        "      %row{0} = arith.addi %rowBase, %o{0} : index\n"
        "      %acc{0} = memref.load %C[%row{0}, %col] : memref<{2}x{2}xf32>\n",
        r, offset, m);
    accStores += llvm::formatv(
        "      %d{0} = vector.extract %d[{0}] : f32 from vector<{1}xf32>\n"
        "      memref.store %d{0}, %D[%row{0}, %col] : memref<{2}x{2}xf32>\n",
        r, regs, m);
    accNames += (r ? ", %acc" : "%acc") + std::to_string(r);
  }
  return llvm::formatv(R"mlir(
module attributes {{gpu.container_module} {
  gpu.module @k {
    gpu.func @mfma(%A: memref<{0}x{1}xbf16>, %B: memref<{0}x{1}xbf16>,
                   %C: memref<{0}x{0}xf32>, %D: memref<{0}x{0}xf32>) kernel {
      %lane = gpu.thread_id x
      %cm = arith.constant {0} : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %row = arith.remui %lane, %cm : index
      %group = arith.divui %lane, %cm : index
      %k0 = arith.muli %group, %c8 : index
      %a = vector.load %A[%row, %k0] : memref<{0}x{1}xbf16>, vector<8xbf16>
      %b = vector.load %B[%row, %k0] : memref<{0}x{1}xbf16>, vector<8xbf16>
      %col = arith.remui %lane, %cm : index
      %rowBase = arith.muli %group, %c4 : index
{2}      %acc = vector.from_elements {3} : vector<{4}xf32>
      %d = amdgpu.mfma {0}x{0}x{1} %a * %b + %acc blgp = none
        : vector<8xbf16>, vector<8xbf16>, vector<{4}xf32>
{5}      gpu.return
    }
  }
}
)mlir",
                       m, k, accLoads, accNames, regs, accStores)
      .str();
}

uint16_t toBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16); // inputs are exact in bf16
}

float fromBf16(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void checkMfma(int m, int k, int regs) {
  std::mt19937 rng(1234 + m);
  std::uniform_int_distribution<int> small(-64, 64);
  std::vector<uint16_t> a(m * k), b(m * k);
  std::vector<float> c(m * m), d(m * m, -7.0f);
  // Values with few significant bits (exact in bf16), scaled by powers of
  // two so that the products and sums need f32 rounding.
  for (auto &x : a)
    x = toBf16(std::ldexp(static_cast<float>(small(rng)), small(rng) % 9));
  for (auto &x : b)
    x = toBf16(std::ldexp(static_cast<float>(small(rng)), small(rng) % 9));
  for (auto &x : c)
    x = std::ldexp(static_cast<float>(small(rng)), small(rng) % 5) + 0.125f;
  // Element (0, 0): C = 1, then +2^24, -2^24: increasing K order with an f32
  // rounding per step gives 0 (1 + 2^24 rounds to 2^24); an exact sum 1.
  for (int kk = 0; kk < k; ++kk)
    a[kk] = toBf16(0.0f);
  a[0] = toBf16(4096.0f);
  b[0] = toBf16(4096.0f);
  a[1] = toBf16(4096.0f);
  b[1] = toBf16(-4096.0f);
  c[0] = 1.0f;

  auto module = parseOrFail(mfmaKernel(m, k, regs));
  ASSERT_TRUE(module);
  std::string error =
      launch(*module, "mfma", 64, {memArg(a), memArg(b), memArg(c), memArg(d)});
  ASSERT_EQ(error, "");
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j) {
      float ref = c[i * m + j];
      for (int kk = 0; kk < k; ++kk)
        ref = std::fma(fromBf16(a[i * k + kk]), fromBf16(b[j * k + kk]), ref);
      EXPECT_EQ(d[i * m + j], ref) << i << ", " << j;
    }
  EXPECT_EQ(d[0], 0.0f);
}

TEST(EmulatorMfma, Bf16x16x16x32MatchesReference) { checkMfma(16, 32, 4); }

TEST(EmulatorMfma, Bf16x32x32x16MatchesReference) { checkMfma(32, 16, 16); }

TEST(EmulatorMfma, UnsupportedMfmaIsLocatedError) {
  std::string text = mfmaKernel(16, 32, 4);
  text.replace(text.find("blgp = none"), 11, "{cbsz = 1 : i32} blgp = none");
  auto module = parseOrFail(text);
  ASSERT_TRUE(module);
  std::vector<uint16_t> a(16 * 32), b(16 * 32);
  std::vector<float> c(256), d(256);
  std::string error =
      launch(*module, "mfma", 64, {memArg(a), memArg(b), memArg(c), memArg(d)});
  EXPECT_NE(error.find("'amdgpu.mfma': blocks, cbsz"), std::string::npos)
      << error;
  // Half a wave cannot issue an MFMA.
  module = parseOrFail(mfmaKernel(16, 32, 4));
  ASSERT_TRUE(module);
  error =
      launch(*module, "mfma", 32, {memArg(a), memArg(b), memArg(c), memArg(d)});
  EXPECT_NE(error.find("executed by only 32 of the 64 lanes"),
            std::string::npos)
      << error;
}

//===----------------------------------------------------------------------===//
// Warp row reductions from the generic lowering
//===----------------------------------------------------------------------===//

/// Sum of squares of each row, then each element times rsqrt(its row's sum):
/// a row reduction and an elementwise op reading it.
const char *kRowNorm = R"mlir(
func.func @norm(%x: tensor<8x256xf32>) -> (tensor<8xf32>, tensor<8x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %ss = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8x256xf32>
  %y = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<8x256xf32>, tensor<8xf32>)
      outs(%e2 : tensor<8x256xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = math.rsqrt %s : f32
    %m = arith.mulf %a, %r : f32
    linalg.yield %m : f32
  } -> tensor<8x256xf32>
  return %ss, %y : tensor<8xf32>, tensor<8x256xf32>
}
)mlir";

TEST(EmulatorWarpReductions, RowReductionThroughTheGfx950Pipeline) {
  mlir::DialectRegistry registry;
  mlir::mxfp4::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kRowNorm, config, "norm.mlir");
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  mlir::mxfp4::Gfx950PipelineOptions options;
  options.mixed = true;
  options.warpReductions = true;
  mlir::mxfp4::buildGfx950KernelPipeline(pm, options);
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  int64_t shuffles = 0;
  module->walk([&](mlir::gpu::ShuffleOp) { ++shuffles; });
  EXPECT_GE(shuffles, 5) << "no shuffle tree: the test would not test it";

  std::vector<float> x(8 * 256);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (float &v : x)
    v = dist(rng);
  EmulatorBuffer in(x.size() * 4);
  std::memcpy(in.data(), x.data(), in.size());
  auto results = emulate(*module, "norm", {in});
  ASSERT_TRUE(static_cast<bool>(results))
      << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 2u);
  std::vector<float> sums(8), y(8 * 256);
  ASSERT_EQ((*results)[0].size(), 32u);
  std::memcpy(sums.data(), (*results)[0].data(), 32);
  std::memcpy(y.data(), (*results)[1].data(), y.size() * 4);
  for (int i = 0; i < 8; ++i) {
    double ref = 0;
    for (int j = 0; j < 256; ++j)
      ref += double(x[i * 256 + j]) * x[i * 256 + j];
    EXPECT_NEAR(sums[i], ref, 1e-5 * ref) << i;
    for (int j = 0; j < 256; ++j)
      EXPECT_NEAR(y[i * 256 + j], x[i * 256 + j] / std::sqrt(ref), 1e-5)
          << i << ", " << j;
  }
}

} // namespace
