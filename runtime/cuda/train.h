//===- train.h - @train_step, step after step -------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_TRAIN_H
#define MXFP4_RUNTIME_CUDA_TRAIN_H

#include "driver.h"
#include "memory.h"
#include "plan.h"

#include <cstdint>
#include <string>

/// Trains with @train_step (parameters, AdamW m and v, tokens, step) ->
/// (loss, gradient norm, learning rate, new parameters, m, v): the loop of
/// the CPU trainer, with the state kept on the device and each step's
/// results becoming the next step's arguments. Writes metrics.jsonl (the
/// CPU trainer's fields) and model.safetensors to `outDir`.
void train(Driver &cu, Memory &memory, const Program &program,
           const std::string &dir, const std::string &outDir, int64_t stepsCap);

#endif // MXFP4_RUNTIME_CUDA_TRAIN_H
