//===- Artifact.cpp - a compiled step's folder for a GPU runtime ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Artifact.h"

#include "mxfp4/API/HostLibrary.h"
#include "mxfp4/Formats/HostPlan.h"
#include "mxfp4/Runtime/AtomicFile.h"
#include "mxfp4/Train/Commit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::mxfp4;

std::string mxfp4::describeArtifact(const ArtifactOrigin &origin) {
  llvm::json::Object o{{"commit", getBuildCommit()},
                       {"target", origin.target},
                       {"recipe", origin.recipe}};
  if (origin.program.empty())
    o["model"] = origin.model;
  else
    o["program"] = origin.program;
  o["gemm_precision"] = origin.gemmPrecision;
  return llvm::formatv("{0:2}\n", llvm::json::Value(std::move(o))).str();
}

/// Writes `files` (name, contents) into `dir`, each whole or not at all.
static llvm::Error
writeFiles(llvm::StringRef dir,
           llvm::ArrayRef<std::pair<llvm::StringRef, llvm::StringRef>> files) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError("cannot create '" + dir +
                                   "': " + ec.message());
  for (auto [file, contents] : files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file);
    if (llvm::Error error = writeFileAtomically(path, contents))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error mxfp4::writeSm90aArtifact(const Sm90aArtifact &artifact,
                                      const ArtifactOrigin &origin,
                                      llvm::StringRef dir) {
  llvm::StringRef cubin(reinterpret_cast<const char *>(artifact.cubin.data()),
                        artifact.cubin.size());
  std::string compiled = describeArtifact(origin);
  if (llvm::Error error = writeFiles(dir, {{"kernels.cubin", cubin},
                                           {"kernels.ptx", artifact.ptx},
                                           {"kernels.mlir", artifact.kernelIR},
                                           {"plan.txt", artifact.plan},
                                           {"compiled.json", compiled}}))
    return error;
  // Last: without a linker the plan-based artifact above is still complete.
  llvm::SmallString<256> library(dir);
  llvm::sys::path::append(library, "host.so");
  if (llvm::Error error = linkHostLibrary(artifact.hostObject, library))
    return llvm::createStringError(llvm::toString(std::move(error)) +
                                   " (kernels.cubin and plan.txt are written)");
  return llvm::Error::success();
}

llvm::Error mxfp4::writeGfx950Artifact(const Gfx950Artifact &artifact,
                                       const ArtifactOrigin &origin,
                                       llvm::StringRef dir) {
  // The host plan runtime/hip runs (mxfp4-hip-run): it must be one, and
  // touch no buffer after freeing it.
  if (!artifact.planError.empty())
    return llvm::createStringError(
        "gfx950: the host functions are not a host plan: " +
        artifact.planError);
  for (const HostFunction &function : artifact.plan)
    if (std::string problem = checkHostLifetimes(function); !problem.empty())
      return llvm::createStringError("gfx950: host function '" + function.name +
                                     "': " + problem);
  llvm::StringRef object(
      reinterpret_cast<const char *>(artifact.codeObject.data()),
      artifact.codeObject.size());
  std::string plan = formatHostPlan(artifact.plan),
              compiled = describeArtifact(origin);
  return writeFiles(dir, {{"kernels.hsaco", object},
                          {"kernels.s", artifact.assembly},
                          {"kernels.mlir", artifact.kernelIR},
                          {"plan.txt", plan},
                          {"compiled.json", compiled}});
}

llvm::Error mxfp4::compileArtifact(llvm::StringRef source, llvm::StringRef name,
                                   const ArtifactOrigin &origin,
                                   llvm::StringRef dir) {
  if (origin.gemmPrecision != "bf16" && origin.gemmPrecision != "f32")
    return llvm::createStringError("the GEMM precision must be bf16 or f32, "
                                   "got '" +
                                   origin.gemmPrecision + "'");
  if (origin.target == "sm_90a") {
    llvm::Expected<Sm90aArtifact> artifact =
        compileForSm90a(source, name, origin.recipe, origin.gemmPrecision);
    if (!artifact)
      return artifact.takeError();
    return writeSm90aArtifact(*artifact, origin, dir);
  }
  if (origin.target == "gfx950") {
    Gfx950CompileOptions options;
    options.recipe = origin.recipe;
    options.gemmPrecision = origin.gemmPrecision;
    llvm::Expected<Gfx950Artifact> artifact =
        compileForGfx950(source, name, options);
    if (!artifact)
      return artifact.takeError();
    return writeGfx950Artifact(*artifact, origin, dir);
  }
  return llvm::createStringError("unknown target '" + origin.target +
                                 "' (sm_90a or gfx950)");
}
