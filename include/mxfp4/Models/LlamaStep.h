//===- LlamaStep.h - the Llama training step as one MLIR module -*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Builds the training step of a Llama-3-style decoder (LlamaConfig.h) as
// linalg/tensor IR: forward, hand-written backward and the AdamW update in
// one function. Every linear-layer GEMM carries `#mxfp4.gemm<role, layer>`
// with the Hugging Face module name as the layer, in the forms the recipe
// passes rewrite (docs/Recipes.md); attention, norms, embedding and the LM
// head carry no tag and stay in f32, as in the paper's stack.
//
// The module has three public functions (P = number of parameters, in the
// order of getLlamaParameters; tokens are int32 [batch, seq + 1], inputs
// tokens[:, :-1] and targets tokens[:, 1:]):
//
//   @loss(params x P, tokens, step: i64 {mxfp4.step}) -> loss
//       (the forward pass, for evaluation)
//   @loss_and_grads(params x P, tokens, step: i64 {mxfp4.step})
//       -> (loss, grads x P)
//   @train_step(params x P, exp_avg x P, exp_avg_sq x P, tokens,
//               step: i64 {mxfp4.step})
//       -> (loss, grad_norm, lr, params' x P, exp_avg' x P, exp_avg_sq' x P)
//
// and, for ZeRO-1 data-parallel training over `ranks` ranks (each keeps
// and updates one shard of the parameters flattened into
// include/mxfp4/Train/Sharding.h's layout, of S elements):
//
//   @sum_squares(grad shard: tensor<S>) -> the shard's sum of squares
//   @apply_shard(w, exp_avg, exp_avg_sq, grad, decay mask: tensor<S> each,
//                sum of squares, loss, step: i64 {mxfp4.step})
//       -> (loss, grad_norm, lr, w', exp_avg', exp_avg_sq')
//
// where the sum of squares is the whole gradient's (every rank's
// @sum_squares, summed) and @apply_shard is @train_step's optimizer on the
// shard, element for element.
//
// `step` is the 0-based index of the update: it picks the learning rate
// (linear warm-up, then cosine decay), the AdamW bias correction (t = step
// + 1) and the streams of stochastic rounding and per-step random
// rotations (which is why the other two functions take it too). Loss, grad_norm (before
// clipping) and lr are 0-d f32 tensors.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_MODELS_LLAMASTEP_H
#define MXFP4_MODELS_LLAMASTEP_H

#include "mxfp4/Models/LlamaConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::mxfp4 {

/// Loads the dialects the step is built from into `context`.
void loadLlamaStepDialects(MLIRContext &context);

/// Builds the module described above with the functions named in
/// `functions` ("loss", "loss_and_grads", "train_step", and with `ranks`
/// "sum_squares" and "apply_shard"; empty: all);
/// `config` must verify.
OwningOpRef<ModuleOp>
buildLlamaStepModule(MLIRContext &context, const LlamaConfig &config,
                     llvm::ArrayRef<llvm::StringRef> functions = {},
                     int64_t ranks = 0);

} // namespace mlir::mxfp4

#endif // MXFP4_MODELS_LLAMASTEP_H
