//===- Gfx950.h - compile for and run on gfx950 (MI355X) --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The gfx950 target behind `mxfp4-run compile --target=gfx950` and
// `mxfp4-run exec --target=gfx950|gfx950-emulator`: compiles a module of
// mxfp4 ops to kernels, code objects and a kernel report, and runs its
// functions either through HIP on an MI350X/MI355X or on the host emulator,
// which executes the kernels' own IR lane by lane.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_GFX950_H
#define MXFP4_API_GFX950_H

#include "mxfp4/API/CpuRunner.h"
#include "mxfp4/API/Signature.h"
#include "mxfp4/Formats/HostPlan.h"
#include "mxfp4/Runtime/HostArray.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

struct Gfx950CompileOptions {
  /// GEMM workgroup tile (64, 128 or 256); 0 picks per shape.
  int64_t tile = 0;
  /// Tests only: a bug planted in the GEMM kernels (see
  /// convert-mxfp4-to-amdgpu's test-mutation).
  std::string testMutation;
  /// A recipe applied (and its rotations checked) before lowering.
  std::string recipe;
  /// High-precision GEMMs (linalg contractions): "f32" (generic kernels,
  /// the CPU path's numerics) or "bf16" (bf16 MFMA kernels,
  /// convert-linalg-matmul-to-amdgpu).
  std::string gemmPrecision = "f32";
  /// Build the code object and the per-kernel assembly (for launches and
  /// the report); the emulator needs neither.
  bool codeObjects = true;
};

/// One kernel's entry in the report.
struct Gfx950KernelInfo {
  std::string name;
  /// Workgroups of its launches (from the host function).
  int64_t workgroups = 0;
  /// The GEMM's M, N, K; all 0 for other kernels.
  int64_t m = 0, n = 0, k = 0;
  /// Iterations a work-item runs of the innermost loop of the kernel's
  /// deepest loop nest: the product of the nest's trip counts, read from the
  /// kernel IR's loop bounds (a bound of the form min(x + c, n) counts c
  /// iterations); 0 for a kernel without loops. The step model
  /// (Gfx950StepModel.h) times kernels without a GEMM shape by it.
  double loopIterations = 0;
  /// Loops of the kernel whose trip count the bounds do not tell (counted
  /// as one iteration).
  int64_t unknownTripCounts = 0;
  /// Bytes a work-item loads and stores in one iteration of that innermost
  /// loop, by the IR: with the steady state's bytes per lane it gives how
  /// far the code generator unrolled the loop.
  int64_t loopBytes = 0;
  /// The mean iterations of the steady-state loop a wave runs, where the
  /// kernel declares it (`mxfp4.steady_iterations`: loops whose bounds
  /// depend on the workgroup, as causal attention's); 0 otherwise.
  double steadyIterations = 0;
  /// This kernel compiled alone: its assembly with its metadata.
  std::string assembly;
  /// Seconds to compile this kernel alone to assembly.
  double compileSeconds = 0;
};

struct Gfx950Artifact {
  /// The host function and kernels in upstream dialects (the emulator's
  /// input), as text.
  std::string kernelIR;
  /// One HSACO (code object v5) holding every kernel.
  std::vector<uint8_t> codeObject;
  /// Every kernel's assembly, one after the other.
  std::string assembly;
  std::vector<Gfx950KernelInfo> kernels;
  /// The public host functions as a plan (launches in program order with
  /// their grids and buffers), or why they are not one.
  std::vector<HostFunction> plan;
  std::string planError;
  double compileSeconds = 0;
};

/// Compiles the module in `source` for gfx950.
llvm::Expected<Gfx950Artifact>
compileForGfx950(llvm::StringRef source, llvm::StringRef name,
                 const Gfx950CompileOptions &options = {});

/// The kernel report of `artifact` as JSON (docs/gfx950.md describes the
/// fields and the issue model) and as a table for people.
llvm::Expected<std::string> formatGfx950ReportJSON(const Gfx950Artifact &artifact);
llvm::Expected<std::string> formatGfx950ReportTable(const Gfx950Artifact &artifact);

enum class Gfx950Backend {
  /// HIP on an MI350X/MI355X (libamdhip64.so loaded at run time).
  hip,
  /// The host emulator: the kernels' IR executed lane by lane.
  emulator,
};

struct Gfx950RunStats {
  int64_t launches = 0, workgroups = 0, mfmas = 0;
};

class Gfx950Module {
public:
  static llvm::Expected<std::unique_ptr<Gfx950Module>>
  fromSource(llvm::StringRef source, llvm::StringRef name,
             const Gfx950CompileOptions &options, Gfx950Backend backend);
  ~Gfx950Module();

  llvm::ArrayRef<FunctionSignature> getFunctions() const { return functions; }
  const FunctionSignature *lookupFunction(llvm::StringRef name) const;

  /// Calls `name` on `arguments` (the CPU runner's conventions: FP4 codes
  /// and E8M0 bytes one per uint8, bf16 as uint16) and returns its results.
  llvm::Expected<llvm::SmallVector<HostArray>>
  invoke(llvm::StringRef name, llvm::ArrayRef<CallArgument> arguments,
         Gfx950RunStats *stats = nullptr);

  struct Impl;

private:
  Gfx950Module();
  std::unique_ptr<Impl> impl;
  llvm::SmallVector<FunctionSignature> functions;
};

} // namespace mlir::mxfp4

#endif // MXFP4_API_GFX950_H
