//===- mxfp4-hip-run.cpp - run, train and study on an AMD gfx950 ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-hip-run exec PLAN KERNELS --function=NAME --input=@x.npy
//       --input=5 --output=@y.npy [--repeat=N] [--back-to-back [--batches=N]]
//       [--time-json=FILE] [--profile] [--target=T]
//   mxfp4-hip-run train PLAN KERNELS --run=DIR --out=DIR [--steps=N]
//       [--checkpoint-every=N] [--resume] [--recipe=NAME] [--gpus=N]
//       [--target=T]
//   mxfp4-hip-run study --recipes=DIR,DIR... --runs=DIR[,DIR...] --out=DIR
//       [--steps=N] [--checkpoint-every=N] [--dnc-threshold=F] [--target=T]
//   mxfp4-hip-run check-weights --run=DIR          (no GPU needed)
//
// Runs the plan written by `mxfp4-run compile --target=gfx950` with its
// kernels, as mxfp4-cuda-run does on sm_90a, through the same core
// (runtime/core) over a HipDevice. --target=gfx950 (the default) loads
// ROCm's libamdhip64 ($MXFP4_HIP_LIBRARY, else libamdhip64.so, .so.7,
// .so.6) and takes the compile's kernels.hsaco; --target=gfx950-emulator
// loads the emulated HIP runtime ($MXFP4_EMULATED_HIP, else
// ../lib/libmxfp4-emulated-hip.so beside this executable), which runs each
// launch on the gfx950 emulator, and takes kernels.mlir. train --gpus=N
// trains data-parallel through RCCL (librccl.so, or MXFP4_NCCL_LIBRARY;
// on the emulator the stand-in libmxfp4-emulated-rccl.so beside the
// emulated HIP runtime; Launch.h). Standard C++ only.
// Every failure is a message and exit status 1.
//
//===----------------------------------------------------------------------===//

#include "Compiled.h"
#include "Exec.h"
#include "HipDevice.h"
#include "Options.h"
#include "Study.h"
#include "Train.h"
#include "TrainingRun.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>

using namespace mlir::mxfp4::runtime;

/// The HIP library of `target`: ROCm's, or the emulated stand-in.
static HipLibrary getLibrary(const std::string &target) {
  HipLibrary library;
  if (target == "gfx950-emulator") {
    library.displayName = "emulated HIP runtime";
    library.hint = "--target=gfx950-emulator needs the build's "
                   "libmxfp4-emulated-hip.so (set MXFP4_EMULATED_HIP to it)";
    if (const char *path = std::getenv("MXFP4_EMULATED_HIP"); path && *path) {
      library.paths = {path};
    } else {
      std::error_code ec;
      std::filesystem::path self =
          std::filesystem::read_symlink("/proc/self/exe", ec);
      library.paths = {
          (self.parent_path().parent_path() / "lib/libmxfp4-emulated-hip.so")
              .string()};
    }
    return library;
  }
  library.displayName = "HIP runtime";
  library.hint = "gfx950 kernels need ROCm >= 7.0 (set MXFP4_HIP_LIBRARY to "
                 "its libamdhip64.so)";
  if (const char *path = std::getenv("MXFP4_HIP_LIBRARY"); path && *path)
    library.paths = {path};
  else
    library.paths = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6"};
  return library;
}

/// The code object of a compile's folder for `target`.
static std::string getCodeObjectFile(const std::string &target) {
  return target == "gfx950-emulator" ? "kernels.mlir" : "kernels.hsaco";
}

static int run(int argc, char **argv) {
  Options o = parseOptions(
      argc, argv,
      {"mxfp4-hip-run", "KERNELS", /*hostLibrary=*/false,
       /*targets=*/{"gfx950", "gfx950-emulator"},
       /*notes=*/
       "--target=gfx950 (default): ROCm's libamdhip64 and the compile's "
       "kernels.hsaco; --target=gfx950-emulator: the emulated HIP runtime "
       "and kernels.mlir"});
  if (o.command == "check-weights")
    return checkInitialWeights(o.runDir);
  HipLibrary library = getLibrary(o.target);
  if (o.command == "study") {
    study({o.recipeDirs, o.runDirs, o.outDir, o.steps, o.checkpointEvery,
           o.dncThreshold},
          {"gfx950", getCodeObjectFile(o.target),
           [library] { return std::make_unique<HipDevice>(library); }});
    return 0;
  }
  // The compile and the run first: they need no GPU, and tell their errors
  // without one.
  Compiled compiled(o.planPath, o.cubinPath);
  if (o.command == "train") {
    // RCCL, or its stand-in beside the emulated HIP runtime.
    std::string collectives = "librccl.so";
    if (o.target == "gfx950-emulator")
      collectives = (std::filesystem::path(library.paths.front())
                         .parent_path() /
                     "libmxfp4-emulated-rccl.so")
                        .string();
    runTrainCommand(
        argv, o, compiled, readTrainingRun(o.runDir),
        [library](int ordinal) -> std::unique_ptr<Device> {
          return std::make_unique<HipDevice>(library, ordinal);
        },
        collectives);
    return 0;
  }
  compiled.program(o.function);
  HipDevice hip(library);
  void *module =
      hip.loadModule(compiled.codeObject(), compiled.codeObjectOrigin());
  exec(hip, module, compiled, o);
  return 0;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mxfp4-hip-run: error: %s\n", e.what());
    return 1;
  }
}
