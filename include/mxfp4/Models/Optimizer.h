//===- Optimizer.h - AdamW with clipping and a schedule, as IR ---*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The optimizer of every training step the compiler builds: the global
// gradient norm clipped as torch.nn.utils.clip_grad_norm_ clips it, a
// learning rate with linear warm-up and cosine decay, and AdamW in the
// operation order of PyTorch 1.13's _single_tensor_adamw, one pass over each
// parameter. The Llama builder (LlamaStep.h) and `addTrainStep`, which
// turns any loss-and-gradients function (a frontend's) into the step the
// runtimes train, share it.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_MODELS_OPTIMIZER_H
#define MXFP4_MODELS_OPTIMIZER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::mxfp4 {

/// The optimizer's hyperparameters. The learning rate of step t (0-based)
/// is lr (t + 1) / max(warmupSteps, 1) during the warm-up, then decays
/// with a cosine to lr * minLrRatio at totalSteps.
struct AdamWConfig {
  double lr = 3e-4, minLrRatio = 0.1;
  int64_t warmupSteps = 0, totalSteps = 1;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weightDecay = 0.1;
  /// The global gradient norm is clipped to this.
  double clipNorm = 1.0;

  /// An error naming the first field out of range, or success.
  llvm::Error verify() const;
};

/// Builds at `b`'s insertion point the optimizer step of parameters `w`
/// with AdamW moments `m` and `v` (tensors of one shape each) from their
/// gradients `grads`, the 0-d f32 `loss` and the i64 `step`; `decay[i]`
/// says whether parameter i gets weight decay. Returns loss, grad_norm
/// (before clipping) and lr as 0-d f32 tensors, then the new weights, m
/// and v.
SmallVector<Value> buildAdamWStep(OpBuilder &b, Location loc,
                                  const AdamWConfig &config, Value loss,
                                  ArrayRef<Value> grads, ArrayRef<Value> w,
                                  ArrayRef<Value> m, ArrayRef<Value> v,
                                  ArrayRef<bool> decay, Value step);

/// Builds the optimizer step of one shard of every parameter, flattened
/// and concatenated (ZeRO-1 data-parallel training, where each rank updates
/// its piece): `grad`, `w`, `m`, `v` and `decayMask` are 1-D f32 tensors of
/// one length, weight decay applies where `decayMask` is not 0, and the 0-d
/// `sumSquares` is the squared norm of the whole gradient (every rank's
/// shard). Returns what buildAdamWStep returns, for the one shard; its
/// arithmetic per element is buildAdamWStep's.
SmallVector<Value> buildAdamWShardStep(OpBuilder &b, Location loc,
                                       const AdamWConfig &config, Value loss,
                                       Value sumSquares, Value grad, Value w,
                                       Value m, Value v, Value decayMask,
                                       Value step);

/// What `addTrainStep` builds from.
struct TrainStepOptions {
  /// The function returning (loss, gradients): its arguments are the
  /// parameters (`{mxfp4.parameter}`, one gradient each, in order), then
  /// data tensors, then the step (`i64 {mxfp4.step}`).
  std::string from = "loss_and_grads";
  AdamWConfig adamw;
  /// Parameters without weight decay, by name; empty: those of rank 1 (norm
  /// gains, biases), PyTorch's usual two groups.
  std::vector<std::string> noDecay;
  bool noDecayGiven = false;
  /// Data arguments to take as i32 and widen to the f32 that `from` reads
  /// (token ids, exact below 2^24), by position among the data arguments.
  std::vector<unsigned> integerData;
};

/// Adds `@train_step(params, exp_avg, exp_avg_sq, data..., step)` to
/// `module`, returning (loss, grad_norm, lr, params', exp_avg',
/// exp_avg_sq'): the body of `options.from` followed by the optimizer, the
/// signature the runtimes' training loop calls; and, unless the module has
/// one, `@loss(params, data..., step)` returning the loss alone (held-out
/// evaluation). An error says what in `from` does not fit.
llvm::Error addTrainStep(ModuleOp module, const TrainStepOptions &options);

} // namespace mlir::mxfp4

#endif // MXFP4_MODELS_OPTIMIZER_H
