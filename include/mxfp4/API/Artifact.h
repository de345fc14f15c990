//===- Artifact.h - a compiled step's folder for a GPU runtime ---*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The folder a GPU runtime trains or runs from, as `mxfp4-run compile
// --out-dir` and the Python frontend write it:
//
//   sm_90a: kernels.cubin, kernels.ptx, kernels.mlir, plan.txt (the host
//           plan mxfp4-cuda-run replays), compiled.json, host.so (the same
//           functions linked for this host; last, as it needs a linker)
//   gfx950: kernels.hsaco, kernels.s, kernels.mlir, plan.txt (the host plan
//           mxfp4-hip-run replays), compiled.json
//
// compiled.json records what produced the files (the compiler's commit, the
// target, the recipe, the program or model, the GEMM precision); the
// runtimes copy it into every run's metrics.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_ARTIFACT_H
#define MXFP4_API_ARTIFACT_H

#include "mxfp4/API/Gfx950.h"
#include "mxfp4/API/Sm90a.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::mxfp4 {

/// What compiled.json says produced an artifact.
struct ArtifactOrigin {
  std::string target, recipe, gemmPrecision;
  /// The model preset, or the program's file (or a frontend's name).
  std::string model, program;
};

/// compiled.json's text for `origin`.
std::string describeArtifact(const ArtifactOrigin &origin);

/// Writes the sm_90a folder of `artifact` into `dir` (made if missing).
llvm::Error writeSm90aArtifact(const Sm90aArtifact &artifact,
                               const ArtifactOrigin &origin,
                               llvm::StringRef dir);

/// Writes the gfx950 folder of `artifact` into `dir`, after checking that
/// its host functions are a host plan that touches no buffer after freeing
/// it.
llvm::Error writeGfx950Artifact(const Gfx950Artifact &artifact,
                                const ArtifactOrigin &origin,
                                llvm::StringRef dir);

/// Compiles `source` (its recipe already applied, or `origin.recipe`
/// applies it) for `origin.target` ("sm_90a" or "gfx950") and writes the
/// folder into `dir`.
llvm::Error compileArtifact(llvm::StringRef source, llvm::StringRef name,
                            const ArtifactOrigin &origin, llvm::StringRef dir);

} // namespace mlir::mxfp4

#endif // MXFP4_API_ARTIFACT_H
