//===- mxfp4-cuda-run.cpp - run, train and study on an NVIDIA GPU ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-cuda-run exec PLAN CUBIN --function=NAME --input=@x.npy --input=5
//       --output=@y.npy [--repeat=N] [--back-to-back [--batches=N]]
//       [--time-json=FILE] [--profile]
//   mxfp4-cuda-run train PLAN CUBIN --run=DIR --out=DIR [--steps=N]
//       [--checkpoint-every=N] [--resume] [--recipe=NAME] [--gpus=N]
//   mxfp4-cuda-run study --recipes=DIR,DIR... --runs=DIR[,DIR...] --out=DIR
//       [--steps=N] [--checkpoint-every=N] [--dnc-threshold=F]
//   mxfp4-cuda-run check-weights --run=DIR          (no GPU needed)
//   exec and train take --host=LIBRARY instead of PLAN CUBIN
//
// Runs the plan written by `mxfp4-run compile --target=sm_90a`
// (include/mxfp4/Formats/HostPlan.h has the format) with the kernels of its
// cubin, through libcuda.so.1 loaded at run time. Standard C++ only, so it
// travels to a machine that has a GPU driver and a compiler but no LLVM.
// Every failure is a message and exit status 1.
//
// --host=host.so calls the compile's host library instead of interpreting
// the plan: the same allocations, uploads, launches and frees, made by
// machine code through this runner's callbacks (HostLibrary.h). The
// library carries the plan (for the arguments and results) and the cubin.
//
// exec calls one function (Exec.h); train trains from a run exported by
// `mxfp4-run train --export-gpu-run` as the CPU trainer would (Train.h);
// study trains compiled recipes on exported runs and tabulates them
// (Study.h), with --gpus=N data-parallel over N GPUs through NCCL
// (libnccl.so.2, or MXFP4_NCCL_LIBRARY; Launch.h); check-weights compares the runtime's initial weights with the
// CPU trainer's.
//
//===----------------------------------------------------------------------===//

#include "Compiled.h"
#include "CudaDevice.h"
#include "Exec.h"
#include "Options.h"
#include "Study.h"
#include "Train.h"
#include "TrainingRun.h"

#include <cstdio>
#include <exception>
#include <memory>

using namespace mlir::mxfp4::runtime;

static int run(int argc, char **argv) {
  Options o = parseOptions(argc, argv,
                           {"mxfp4-cuda-run", "CUBIN", /*hostLibrary=*/true,
                            /*targets=*/{}, /*notes=*/""});
  if (o.command == "check-weights")
    return checkInitialWeights(o.runDir);
  if (o.command == "study") {
    study({o.recipeDirs, o.runDirs, o.outDir, o.steps, o.checkpointEvery,
           o.dncThreshold},
          {"sm_90a", "kernels.cubin",
           [] { return std::make_unique<CudaDevice>(); }});
    return 0;
  }
  // The compile and the run first: they need no GPU, and tell their errors
  // without one.
  std::unique_ptr<Compiled> compiled =
      o.hostPath.empty() ? std::make_unique<Compiled>(o.planPath, o.cubinPath)
                         : std::make_unique<Compiled>(o.hostPath);
  if (o.command == "train") {
    runTrainCommand(
        argv, o, *compiled, readTrainingRun(o.runDir),
        [](int ordinal) -> std::unique_ptr<Device> {
          return std::make_unique<CudaDevice>(ordinal);
        },
        "libnccl.so.2");
    return 0;
  }
  compiled->program(o.function);
  CudaDevice cu;
  void *module = cu.loadModule(compiled->codeObject(), compiled->codeObjectOrigin());
  exec(cu, module, *compiled, o);
  return 0;
}

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mxfp4-cuda-run: error: %s\n", e.what());
    return 1;
  }
}
