//===- mxfp4-bench.cpp - CPU benchmarks against peers ---------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Times the compiled CPU kernels and a peer doing the comparable job in the
// same process, and prints their ratio:
//  - Hadamard(16) + quantize of a bf16 tensor against memcpy of its bytes;
//  - scaled_matmul against OpenBLAS sgemm on f32 matrices of the same shape
//    (one thread each: the compiled code is single-threaded);
//  - a high-precision f32 linalg.matmul against sgemm.
// Peak memory (max RSS) is printed after each case.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/Pipelines/Pipelines.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <sys/resource.h>
#include <thread>

using namespace mlir::mxfp4;
namespace cl = llvm::cl;

/// The tool's own options; --help lists only these, not the ones LLVM's
/// libraries register.
static cl::OptionCategory benchCategory("mxfp4-bench options");
static cl::opt<int> repetitions("repetitions",
                                cl::desc("Timed runs per case (median)"),
                                cl::init(5), cl::cat(benchCategory));
static cl::opt<bool> quick("quick",
                           cl::desc("Small shapes only (a smoke test)"),
                           cl::cat(benchCategory));

/// Median wall time of `fn` over the repetitions, after one warm-up run.
static double medianSeconds(const std::function<void()> &fn) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < std::max(1, repetitions.getValue()); ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

static double peakMiB() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;
}

[[noreturn]] static void fail(llvm::Error error) {
  llvm::WithColor::error() << llvm::toString(std::move(error)) << "\n";
  std::exit(1);
}

template <typename T> static T check(llvm::Expected<T> value) {
  if (!value)
    fail(value.takeError());
  return std::move(*value);
}

static HostArray makeArray(DType dtype, llvm::ArrayRef<int64_t> shape) {
  HostArray array;
  array.dtype = dtype;
  array.shape.assign(shape.begin(), shape.end());
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  array.bytes.resize(count * getDTypeSize(dtype));
  return array;
}

static void quantizeCase(int64_t rows, int64_t cols, bool rotate) {
  std::string t = llvm::formatv("tensor<{0}x{1}xbf16>", rows, cols).str();
  std::string v = llvm::formatv("tensor<{0}x{1}xf4E2M1FN>", rows, cols).str();
  std::string s =
      llvm::formatv("tensor<{0}x{1}xf8E8M0FNU>", rows, cols / 32).str();
  std::string source =
      "func.func @q(%x: " + t + ") -> (" + v + ", " + s + ") {\n" +
      (rotate ? "  %h = mxfp4.hadamard %x axis = 1 size = 16 : " + t + "\n"
              : "") +
      "  %v, %s = mxfp4.quantize " + (rotate ? "%h" : "%x") + " axis = 1 : " +
      t + " -> " + v + ", " + s + "\n  return %v, %s : " + v + ", " + s +
      "\n}\n";
  auto module = check(CpuModule::fromSource(source, "quantize"));
  HostArray input = makeArray(DType::UInt16, {rows, cols});
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  auto *bits = reinterpret_cast<uint16_t *>(input.bytes.data());
  for (int64_t i = 0; i < rows * cols; ++i) {
    float f = normal(rng);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits[i] = u >> 16;
  }
  auto call = check(module->prepare("q", {CallArgument{input, "x"}}));
  double ours = medianSeconds([&] {
    if (llvm::Error error = call->run())
      fail(std::move(error));
  });
  std::vector<uint8_t> copy(input.bytes.size());
  double peer = medianSeconds([&] {
    std::memcpy(copy.data(), input.bytes.data(), input.bytes.size());
  });
  // The compiled code runs on every core (OpenMP), so also a memcpy split
  // over two threads.
  size_t half = input.bytes.size() / 2;
  double peer2 = medianSeconds([&] {
    std::thread other([&] {
      std::memcpy(copy.data() + half, input.bytes.data() + half,
                  input.bytes.size() - half);
    });
    std::memcpy(copy.data(), input.bytes.data(), half);
    other.join();
  });
  double gb = input.bytes.size() / 1e9;
  llvm::outs() << llvm::format(
      "%-34s %5lldx%-5lld bf16  %7.2f GB/s  memcpy %7.2f GB/s  ratio %.2fx  "
      "[memcpy(2T) %7.2f GB/s, ratio %.2fx]  peak %.0f MiB\n",
      rotate ? "hadamard16+quantize (even, RNE)" : "quantize (even, RNE)",
      (long long)rows, (long long)cols, gb / ours, gb / peer, peer / ours,
      gb / peer2, peer2 / ours, peakMiB());
}

static void matmulCase(int64_t m, int64_t n, int64_t k,
                       CpuMatmulKernel kernel) {
  auto type = [](llvm::StringRef e, int64_t r, int64_t c) {
    return llvm::formatv("tensor<{0}x{1}x{2}>", r, c, e).str();
  };
  std::string a = type("f4E2M1FN", m, k), as = type("f8E8M0FNU", m, k / 32);
  std::string b = type("f4E2M1FN", n, k), bs = type("f8E8M0FNU", n, k / 32);
  std::string c = type("f32", m, n);
  std::string operands = a + ", " + as + ", " + b + ", " + bs;
  std::string source = "func.func @mm(%a: " + a + ", %as: " + as + ", %b: " +
                       b + ", %bs: " + bs + ") -> " + c +
                       " {\n  %c = mxfp4.scaled_matmul %a scale %as, %b scale "
                       "%bs : " +
                       operands + " -> " + c + "\n  return %c : " + c + "\n}\n";
  auto module = check(CpuModule::fromSource(source, "matmul",
                                            CpuCompileOptions{kernel}));
  std::mt19937 rng(2);
  auto fill = [&](HostArray &array, int lo, int hi) {
    std::uniform_int_distribution<int> dist(lo, hi);
    for (uint8_t &byte : array.bytes)
      byte = dist(rng);
  };
  HostArray av = makeArray(DType::UInt8, {m, k}), bv = makeArray(DType::UInt8, {n, k});
  HostArray asc = makeArray(DType::UInt8, {m, k / 32});
  HostArray bsc = makeArray(DType::UInt8, {n, k / 32});
  fill(av, 0, 15);
  fill(bv, 0, 15);
  fill(asc, 120, 134);
  fill(bsc, 120, 134);
  auto call = check(module->prepare(
      "mm", {CallArgument{av, "a"}, CallArgument{asc, "as"},
             CallArgument{bv, "b"}, CallArgument{bsc, "bs"}}));
  double ours = medianSeconds([&] {
    if (llvm::Error error = call->run())
      fail(std::move(error));
  });

  std::vector<float> fa(m * k), fb(n * k), fc(m * n);
  std::uniform_real_distribution<float> uni(-1, 1);
  for (float &x : fa)
    x = uni(rng);
  for (float &x : fb)
    x = uni(rng);
  auto sgemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                fa.data(), k, fb.data(), k, 0.0f, fc.data(), n);
  };
  openblas_set_num_threads(1);
  double peer = medianSeconds(sgemm);
  openblas_set_num_threads(2);
  double peer2 = medianSeconds(sgemm);
  double flop = 2.0 * m * n * k;
  llvm::outs() << llvm::format(
      "scaled_matmul %-12s %5lldx%-5lldx%-5lld %7.1f GFLOP/s  sgemm(1T) %7.1f "
      "GFLOP/s  ratio %.2fx  [sgemm(2T) %7.1f GFLOP/s]  peak %.0f MiB\n",
      module->usesAvx512BF16() ? "avx512-bf16" : "reference", (long long)m,
      (long long)n, (long long)k, flop / ours / 1e9, flop / peer / 1e9,
      peer / ours, flop / peer2 / 1e9, peakMiB());
}

/// A high-precision f32 linalg.matmul (tiled and vectorized by the CPU
/// pipeline) against sgemm on the same shape.
static void f32MatmulCase(int64_t m, int64_t n, int64_t k) {
  auto type = [](int64_t r, int64_t c) {
    return llvm::formatv("tensor<{0}x{1}xf32>", r, c).str();
  };
  std::string source =
      "func.func @mm(%a: " + type(m, k) + ", %b: " + type(n, k) + ") -> " +
      type(m, n) +
      " {\n  %c0 = arith.constant 0.0 : f32\n  %e = tensor.empty() : " +
      type(m, n) + "\n  %z = linalg.fill ins(%c0 : f32) outs(%e : " +
      type(m, n) + ") -> " + type(m, n) +
      "\n  %c = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, "
      "k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, "
      "n)>] ins(%a, %b : " +
      type(m, k) + ", " + type(n, k) + ") outs(%z : " + type(m, n) + ") -> " +
      type(m, n) + "\n  return %c : " + type(m, n) + "\n}\n";
  auto module = check(CpuModule::fromSource(source, "f32-matmul"));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uni(-1, 1);
  auto fill = [&](HostArray &array) {
    auto *data = reinterpret_cast<float *>(array.bytes.data());
    for (size_t i = 0; i < array.bytes.size() / 4; ++i)
      data[i] = uni(rng);
  };
  HostArray a = makeArray(DType::Float32, {m, k});
  HostArray b = makeArray(DType::Float32, {n, k});
  fill(a);
  fill(b);
  auto call = check(module->prepare(
      "mm", {CallArgument{a, "a"}, CallArgument{b, "b"}}));
  double ours = medianSeconds([&] {
    if (llvm::Error error = call->run())
      fail(std::move(error));
  });
  std::vector<float> fc(m * n);
  openblas_set_num_threads(1);
  double peer = medianSeconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f,
                reinterpret_cast<const float *>(a.bytes.data()), k,
                reinterpret_cast<const float *>(b.bytes.data()), k, 0.0f,
                fc.data(), n);
  });
  double flop = 2.0 * m * n * k;
  llvm::outs() << llvm::format(
      "linalg.matmul f32 (vectorized) %5lldx%-5lldx%-5lld %7.1f GFLOP/s  "
      "sgemm(1T) %7.1f GFLOP/s  ratio %.2fx  peak %.0f MiB\n",
      (long long)m, (long long)n, (long long)k, flop / ours / 1e9,
      flop / peer / 1e9, peer / ours, peakMiB());
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(benchCategory);
  cl::ParseCommandLineOptions(argc, argv,
                              "mxfp4 CPU benchmarks against peers\n");
  bool bf16 = hostHasAvx512BF16();
  llvm::outs() << "host AVX512_BF16: " << (bf16 ? "yes" : "no")
               << "; repetitions: " << repetitions << " (median)\n";
  if (quick) {
    quantizeCase(256, 1024, true);
    matmulCase(256, 256, 256, CpuMatmulKernel::automatic);
    matmulCase(64, 64, 256, CpuMatmulKernel::reference);
    f32MatmulCase(256, 256, 256);
    return 0;
  }
  quantizeCase(8192, 4096, false);
  quantizeCase(8192, 4096, true);
  matmulCase(2048, 2048, 2048, CpuMatmulKernel::automatic);
  matmulCase(8192, 1024, 1024, CpuMatmulKernel::automatic);
  matmulCase(512, 512, 512, CpuMatmulKernel::reference);
  f32MatmulCase(1024, 1024, 1024);
  return 0;
}
