//===- mxfp4_cuda_run.cpp - replay a host plan on an NVIDIA GPU -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-cuda-run PLAN CUBIN --function=NAME --input=@x.npy --input=5
//       --output=@y.npy [--repeat=N] [--time-json=FILE] [--profile]
//   mxfp4-cuda-run PLAN CUBIN --train=DIR [--out=DIR] [--steps=N]
//   mxfp4-cuda-run --host=LIBRARY ...           (instead of PLAN CUBIN)
//   mxfp4-cuda-run --check-initial-weights=DIR   (no GPU needed)
//
// Runs one function of a plan written by `mxfp4-run compile --target=sm_90a`
// (include/mxfp4/API/HostPlan.h has the format) with the kernels of its
// cubin, through libcuda.so.1 loaded at run time. Standard C++ only, so it
// travels to a machine that has a GPU driver and a compiler but no LLVM.
// Every failure is a message and exit status 1.
//
// --host=host.so calls the compile's host library instead of interpreting
// the plan: the same allocations, uploads, launches and frees, made by
// machine code through this runner's callbacks (host_library.h). The
// library carries the plan (for the arguments and results) and the cubin.
//
// The first call is a warmup and writes the --output files; --repeat=N (1
// unless given) then times N more calls with CUDA events and prints
// `time: NAME: N calls, mean X ms, min Y ms, max Z ms`. The inputs are
// uploaded once and stay on the device; the plan's allocations come from a
// cache of freed blocks, as in PyTorch, so steady-state calls make no
// cuMemAlloc. --profile adds a call that times every launch and prints the
// kernels by total time.
//
// --train=DIR trains: DIR is written by `mxfp4-run train --export-gpu-run`
// (initial weights and every step's batch, drawn as the CPU trainer draws
// them), and @train_step runs step after step with the weights and AdamW
// moments kept on the device, writing metrics.jsonl and model.safetensors.
//
//===----------------------------------------------------------------------===//

#include "driver.h"
#include "failure.h"
#include "host_library.h"
#include "memory.h"
#include "npy.h"
#include "options.h"
#include "plan.h"
#include "replay.h"
#include "timing.h"
#include "train.h"
#include "training_run.h"

#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

static int run(int argc, char **argv) {
  if (argc == 2 &&
      std::string(argv[1]).rfind("--check-initial-weights=", 0) == 0)
    return checkInitialWeights(std::string(argv[1]).substr(24));
  Options o = parseOptions(argc, argv);
  if (!o.trainDir.empty() && o.function.empty())
    o.function = "train_step";
  // The library first: it needs no GPU, and tells its errors without one.
  std::unique_ptr<HostLibrary> library;
  Program program;
  std::vector<char> cubinFile;
  const void *cubin = nullptr;
  if (!o.hostPath.empty()) {
    library = std::make_unique<HostLibrary>(o.hostPath);
    program.records = readFunction(library->manifest(), o.hostPath, o.function);
    program.code = library->function(o.function);
    program.kernelNames = library->kernelNames();
    cubin = library->cubin();
  } else {
    std::vector<char> plan = readFile(o.planPath);
    program.records = readFunction(std::string(plan.begin(), plan.end()),
                                   o.planPath, o.function);
    cubinFile = readFile(o.cubinPath);
    cubin = cubinFile.data();
  }
  checkLifetimes(program.records);

  Driver cu;
  cu.load();
  cu.check(cu.init(0), "cuInit");
  int devices = 0;
  cu.check(cu.deviceGetCount(&devices), "cuDeviceGetCount");
  if (devices == 0)
    fail("no CUDA device");
  int device = 0;
  cu.check(cu.deviceGet(&device, 0), "cuDeviceGet");
  void *context = nullptr;
  cu.check(cu.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  cu.check(cu.ctxSetCurrent(context), "cuCtxSetCurrent");
  void *module = nullptr;
  cu.check(cu.moduleLoadData(&module, cubin),
           "cuModuleLoadData(" + (library ? o.hostPath : o.cubinPath) + ")");
  resolveKernels(cu, module, program);

  Memory memory(cu);
  if (!o.trainDir.empty()) {
    train(cu, memory, program, o.trainDir, o.outDir, o.steps);
    return 0;
  }
  Arguments arguments =
      upload(cu, memory, program.records, o.inputs, o.function);
  replay(cu, memory, program, arguments, &o.outputs);
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  if (o.repeat == 0)
    return 0;

  keepPristineCopies(cu, memory, arguments, o.function);
  std::vector<float> ms;
  {
    Timer timer(cu);
    for (size_t i = 0; i < o.repeat; ++i) {
      restore(cu, arguments);
      timer.begin();
      replay(cu, memory, program, arguments, nullptr);
      ms.push_back(timer.end());
    }
  }
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  Times t = summarize(ms);
  std::printf("time: %s: %zu calls, mean %.3f ms, min %.3f ms, max %.3f ms\n",
              o.function.c_str(), t.calls, t.mean, t.min, t.max);
  if (o.profile) {
    restore(cu, arguments);
    profileCall(cu, memory, program, arguments);
  }
  if (!o.timeJson.empty()) {
    size_t launches = 0;
    for (const Record &r : program.records)
      launches += r.kind == Record::Launch;
    writeTimeJson(o.timeJson, o.function, t, launches);
  }
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
