//===- CpuRunner.h - run functions of a module on the host CPU --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Compiles a module of mxfp4 and upstream ops for the host CPU with the
// mxfp4-to-cpu pipeline, JIT-compiles it with MLIR's ExecutionEngine, and
// calls its public functions on host arrays. The facade behind
// `mxfp4-run exec` and the Python module: every failure is an llvm::Error
// whose message names what is wrong, never a diagnostic on stderr.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_CPURUNNER_H
#define MXFP4_API_CPURUNNER_H

#include "mxfp4/API/Signature.h"
#include "mxfp4/Runtime/HostArray.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <variant>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::mxfp4 {

/// A scalar given by value, converted to the parameter's type at the call.
struct Scalar {
  bool isFloat = false;
  int64_t intValue = 0;
  double floatValue = 0.0;

  /// Parses a decimal or hexadecimal ("0x10") integer, or a floating-point
  /// number ("-1.5", "1e-3", "inf", "nan").
  static llvm::Expected<Scalar> parse(llvm::StringRef text);
};

/// One argument of a call: an array for a tensor parameter (or a 0-d array
/// for a scalar one) or a scalar.
struct CallArgument {
  std::variant<HostArray, Scalar> value;
  /// Where the argument came from ("@a.npy", "5"); error messages name it.
  std::string label;
};

/// How scaled_matmul is lowered for the CPU.
enum class CpuMatmulKernel {
  /// The AVX-512 BF16 micro-kernel where the host has AVX512_BF16, else the
  /// portable reference loops.
  automatic,
  /// The portable reference loops (docs/Semantics.md order, any x86-64).
  reference,
  /// The AVX-512 BF16 micro-kernel; an error on hosts without AVX512_BF16.
  avx512BF16,
};

/// Options of the CPU compilation.
struct CpuCompileOptions {
  CpuMatmulKernel matmulKernel = CpuMatmulKernel::automatic;
  /// A recipe (docs/Recipes.md) applied, and its rotations checked, before
  /// lowering; empty applies none.
  std::string recipe;
  /// Spread independent loops over the cores (OpenMP), where the build found
  /// libomp; results do not depend on it.
  bool parallel = true;
};

class PreparedCall;

/// A module compiled for the host CPU.
class CpuModule {
public:
  /// Parses, verifies, lowers and JIT-compiles the module in `source`;
  /// diagnostics name the buffer `name`.
  static llvm::Expected<std::unique_ptr<CpuModule>>
  fromSource(llvm::StringRef source, llvm::StringRef name = "<source>",
             const CpuCompileOptions &options = {});

  /// Same as fromSource for the file at `path` ("-" reads stdin).
  static llvm::Expected<std::unique_ptr<CpuModule>>
  fromFile(llvm::StringRef path, const CpuCompileOptions &options = {});

  ~CpuModule();

  /// Returns the public functions, in source order, with their signatures
  /// before lowering.
  llvm::ArrayRef<FunctionSignature> getFunctions() const { return functions; }

  /// Returns the public function `name`, or null.
  const FunctionSignature *lookupFunction(llvm::StringRef name) const;

  /// Calls `name` on `arguments` and returns its results in order, scalars as
  /// 0-d arrays. Every argument is checked against the signature first: its
  /// count, dtype and shape (dynamic sizes match any size). Argument arrays
  /// are copied, so the function cannot modify them.
  llvm::Expected<llvm::SmallVector<HostArray>>
  invoke(llvm::StringRef name, llvm::ArrayRef<CallArgument> arguments);

  /// Checks and converts `arguments` and allocates the results of `name`
  /// once, for calls repeated on the same buffers (benchmarks, loops).
  llvm::Expected<std::unique_ptr<PreparedCall>>
  prepare(llvm::StringRef name, llvm::ArrayRef<CallArgument> arguments);

  /// Returns true if scaled_matmul was lowered to the AVX-512 BF16 kernel.
  bool usesAvx512BF16() const { return avx512BF16; }

private:
  CpuModule();

  std::unique_ptr<ExecutionEngine> engine;
  llvm::SmallVector<FunctionSignature> functions;
  bool avx512BF16 = false;
};

/// A call of one function on buffers that stay allocated between runs. The
/// module must outlive it.
class PreparedCall {
public:
  /// Runs the function; the results are overwritten.
  llvm::Error run();

  /// The argument buffers (the function may read them again on every run).
  llvm::MutableArrayRef<HostArray> getInputs() { return inputs; }
  /// The results of the last run.
  llvm::MutableArrayRef<HostArray> getResults() { return results; }

private:
  friend class CpuModule;
  PreparedCall() = default;

  ExecutionEngine *engine = nullptr;
  const FunctionSignature *function = nullptr;
  llvm::SmallVector<HostArray> inputs;
  llvm::SmallVector<HostArray> results;
};

} // namespace mlir::mxfp4

#endif // MXFP4_API_CPURUNNER_H
