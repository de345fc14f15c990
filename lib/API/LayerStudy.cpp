//===- LayerStudy.cpp - MXFP4 error of one linear layer's GEMMs -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/LayerStudy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// A rotation recipe: the hadamard applied to both operands (size 0: none).
struct Recipe {
  const char *name;
  int64_t size;
  const char *kind;
};

constexpr Recipe kRecipes[] = {
    {"fp4", 0, ""},
    {"fp4+H16", 16, "deterministic"},
    {"fp4+H32", 32, "deterministic"},
    {"fp4+RHT16", 16, "random_fixed"},
};

/// One GEMM in canonical form: C[rows, cols] = A[rows, red] * B[cols, red]^T,
/// where A and B are expressions over the function arguments.
struct Gemm {
  const char *name;
  std::string a, b; // SSA names of the K-major operands
  int64_t rows, cols, reduction;
};

std::string tensorType(int64_t r, int64_t c, llvm::StringRef element) {
  return llvm::formatv("tensor<{0}x{1}x{2}>", r, c, element).str();
}

/// Emits `%dst = linalg.transpose(%src)` for a [r, c] f32 tensor.
std::string transpose(llvm::StringRef dst, llvm::StringRef src, int64_t r,
                      int64_t c) {
  std::string out = tensorType(c, r, "f32");
  return llvm::formatv("  {0}_init = tensor.empty() : {1}\n"
                       "  {0} = linalg.transpose ins({2} : {3}) outs({0}_init "
                       ": {1}) permutation = [1, 0]\n",
                       dst, out, src, tensorType(r, c, "f32"))
      .str();
}

/// Emits rotation + quantization of `src` [r, red] along axis 1.
std::string quantize(llvm::StringRef prefix, llvm::StringRef src, int64_t r,
                     int64_t red, const Recipe &recipe) {
  std::string t = tensorType(r, red, "f32");
  std::string out;
  std::string input = src.str();
  if (recipe.size) {
    std::string kind = llvm::StringRef(recipe.kind) == "random_fixed"
                           ? " kind = random_fixed seed(%seed)"
                           : "";
    out += llvm::formatv("  {0}_h = mxfp4.hadamard {1} axis = 1 size = {2}{3} "
                         ": {4}\n",
                         prefix, src, recipe.size, kind, t)
               .str();
    input = (prefix + "_h").str();
  }
  out += llvm::formatv("  {0}_v, {0}_s = mxfp4.quantize {1} axis = 1 : {2} -> "
                       "{3}, {4}\n",
                       prefix, input, t, tensorType(r, red, "f4E2M1FN"),
                       tensorType(r, red / 32, "f8E8M0FNU"))
             .str();
  return out;
}

void fillNormal(std::vector<float> &data, std::mt19937_64 &rng) {
  std::normal_distribution<float> normal;
  for (float &x : data)
    x = normal(rng);
}

HostArray toArray(const std::vector<float> &data, int64_t r, int64_t c) {
  HostArray array;
  array.dtype = DType::Float32;
  array.shape = {r, c};
  array.bytes.resize(data.size() * sizeof(float));
  std::memcpy(array.bytes.data(), data.data(), array.bytes.size());
  return array;
}

/// Exact C = A * B^T in double for row-major A [m, k] and B [n, k].
std::vector<double> exactProduct(const std::vector<float> &a,
                                 const std::vector<float> &b, int64_t m,
                                 int64_t n, int64_t k) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(a[i * k + p]) * double(b[j * k + p]);
      c[i * n + j] = sum;
    }
  return c;
}

float roundToBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

double relativeError(const float *got, const std::vector<double> &exact) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    double d = double(got[i]) - exact[i];
    diff += d * d;
    norm += exact[i] * exact[i];
  }
  return std::sqrt(diff / norm);
}

std::vector<float> transposed(const std::vector<float> &x, int64_t r,
                              int64_t c) {
  std::vector<float> t(x.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      t[j * r + i] = x[i * c + j];
  return t;
}

} // namespace

llvm::Expected<LayerStudyReport>
mxfp4::runLayerStudy(const LayerStudyOptions &options) {
  int64_t t = options.tokens, k = options.inFeatures, n = options.outFeatures;
  for (int64_t dim : {t, k, n})
    if (dim <= 0 || dim % 32 != 0)
      return llvm::createStringError(
          "layer study: tokens, in- and out-features must be positive "
          "multiples of 32, got " +
          std::to_string(t) + ", " + std::to_string(k) + ", " +
          std::to_string(n));

  // Canonical forms (docs/Rationale.md): every operand is K-major.
  Gemm gemms[] = {{"Fprop", "%x", "%w", t, n, k},
                  {"Dgrad", "%dy", "%wt", t, k, n},
                  {"Wgrad", "%dyt", "%xt", n, k, t}};
  std::string body = transpose("%wt", "%w", n, k) +
                     transpose("%dyt", "%dy", t, n) +
                     transpose("%xt", "%x", t, k);
  std::vector<std::string> results, resultTypes;
  for (const Gemm &gemm : gemms)
    for (const Recipe &recipe : kRecipes) {
      std::string tag = llvm::formatv("%{0}_{1}", gemm.name, results.size());
      body += quantize(tag + "_a", gemm.a, gemm.rows, gemm.reduction, recipe);
      body += quantize(tag + "_b", gemm.b, gemm.cols, gemm.reduction, recipe);
      std::string c = tensorType(gemm.rows, gemm.cols, "f32");
      body += llvm::formatv(
                  "  {0} = mxfp4.scaled_matmul {0}_a_v scale {0}_a_s, {0}_b_v "
                  "scale {0}_b_s : {1}, {2}, {3}, {4} -> {5}\n",
                  tag, tensorType(gemm.rows, gemm.reduction, "f4E2M1FN"),
                  tensorType(gemm.rows, gemm.reduction / 32, "f8E8M0FNU"),
                  tensorType(gemm.cols, gemm.reduction, "f4E2M1FN"),
                  tensorType(gemm.cols, gemm.reduction / 32, "f8E8M0FNU"), c)
                  .str();
      results.push_back(tag);
      resultTypes.push_back(c);
    }
  std::string types = llvm::join(resultTypes, ", ");
  LayerStudyReport report;
  report.source =
      llvm::formatv("func.func @layer(%x: {0}, %w: {1}, %dy: {2}, %seed: i64) "
                    "-> ({3}) {{\n{4}  return {5} : {3}\n}\n",
                    tensorType(t, k, "f32"), tensorType(n, k, "f32"),
                    tensorType(t, n, "f32"), types, body,
                    llvm::join(results, ", "))
          .str();

  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<CpuModule>> module =
      CpuModule::fromSource(report.source, "layer-study", options.compile);
  if (!module)
    return module.takeError();
  auto compiled = std::chrono::steady_clock::now();

  // Activations with outlier channels, gradients with outlier tokens.
  std::mt19937_64 rng(options.seed);
  std::vector<float> x(t * k), w(n * k), dy(t * n);
  fillNormal(x, rng);
  fillNormal(w, rng);
  fillNormal(dy, rng);
  std::uniform_int_distribution<int64_t> channel(0, k - 1), token(0, t - 1);
  for (int64_t i = 0; i < options.outliers; ++i) {
    int64_t c = channel(rng), row = token(rng);
    for (int64_t r = 0; r < t; ++r)
      x[r * k + c] *= options.outlierScale;
    for (int64_t j = 0; j < n; ++j)
      dy[row * n + j] *= options.outlierScale;
  }

  llvm::Expected<llvm::SmallVector<HostArray>> outputs = (*module)->invoke(
      "layer", {CallArgument{toArray(x, t, k), "x"},
                CallArgument{toArray(w, n, k), "w"},
                CallArgument{toArray(dy, t, n), "dy"},
                CallArgument{Scalar{false, int64_t(options.seed), 0}, "seed"}});
  if (!outputs)
    return outputs.takeError();
  auto ran = std::chrono::steady_clock::now();
  report.compileSeconds =
      std::chrono::duration<double>(compiled - start).count();
  report.runSeconds = std::chrono::duration<double>(ran - compiled).count();

  // Exact products of each GEMM's operands in canonical form, and the bf16
  // baseline: operands rounded to bf16, products accumulated exactly.
  std::vector<float> wt = transposed(w, n, k), dyt = transposed(dy, t, n),
                     xt = transposed(x, t, k);
  const std::vector<float> *operands[3][2] = {
      {&x, &w}, {&dy, &wt}, {&dyt, &xt}};
  size_t next = 0;
  for (auto [g, gemm] : llvm::enumerate(gemms)) {
    const std::vector<float> &a = *operands[g][0], &b = *operands[g][1];
    std::vector<double> exact =
        exactProduct(a, b, gemm.rows, gemm.cols, gemm.reduction);
    std::vector<float> ab(a.size()), bb(b.size());
    for (size_t i = 0; i < a.size(); ++i)
      ab[i] = roundToBF16(a[i]);
    for (size_t i = 0; i < b.size(); ++i)
      bb[i] = roundToBF16(b[i]);
    std::vector<double> bf16 =
        exactProduct(ab, bb, gemm.rows, gemm.cols, gemm.reduction);
    std::vector<float> bf16f(bf16.begin(), bf16.end());
    report.rows.push_back({gemm.name, "bf16", relativeError(bf16f.data(), exact)});
    for (const Recipe &recipe : kRecipes) {
      const auto *c =
          reinterpret_cast<const float *>((*outputs)[next++].bytes.data());
      report.rows.push_back({gemm.name, recipe.name, relativeError(c, exact)});
    }
  }
  return report;
}
