//===- LlamaGraph.h - forward and backward blocks of the Llama step -*- C++ -*-//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The blocks of the decoder, each a forward builder that returns what its
// backward needs and a backward builder, all on 2-D [tokens, features]
// activations (T = batch * seq rows, row t = b * seq + s).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_MODELS_LLAMAGRAPH_H
#define MXFP4_LIB_MODELS_LLAMAGRAPH_H

#include "TensorBuilder.h"

#include "mxfp4/Models/LlamaConfig.h"

namespace mlir::mxfp4 {

class LlamaGraph {
public:
  LlamaGraph(OpBuilder &b, Location loc, const LlamaConfig &config);

  TensorBuilder tb;
  const LlamaConfig &config;
  int64_t batch, seq, tokens, dim, heads, kvHeads, headDim, ffn, vocab;

  /// The GEMM tag of `role` for the module `layer` (a Hugging Face name).
  GemmAttr tag(GemmRole role, StringRef layer);

  /// A linear layer y = x W^T, its input gradient dY W and weight gradient
  /// dY^T X, tagged Fprop, Dgrad and Wgrad of `layer`.
  Value linear(Value x, Value weight, StringRef layer);
  Value linearDgrad(Value dy, Value weight, StringRef layer);
  Value linearWgrad(Value dy, Value x, StringRef layer);

  /// RMSNorm: returns x * rstd * gain and sets `rstd` [T].
  Value rmsNorm(Value x, Value gain, Value &rstd);
  /// Returns dx and sets `dGain`.
  Value rmsNormBackward(Value dy, Value x, Value gain, Value rstd,
                        Value &dGain);

  /// Rotate-half RoPE of a [T, n * headDim] projection; `inverse` applies
  /// the transposed rotation (the backward).
  Value rope(Value x, bool inverse);

  /// The attention composites' operands and results are token-major, the
  /// projections' layout seen as [B, S, heads, hd]: no transposition
  /// outside them (a fused kernel reads the heads in place).
  struct Attention {
    Value q, k, v; // rotated q and k, and v: [B, S, heads (kvHeads), hd]
    Value o;       // the output, [B, S, heads, hd]
    Value lse;     // [B, heads, S]: log-sum-exp of the scores
    Value out;     // [T, heads * hd], before o_proj
  };
  /// Causal softmax attention of rotated q and k and v (rows form).
  Attention attention(Value q, Value k, Value v);
  /// Returns the gradients of the rotated q and k and of v, rows form.
  void attentionBackward(const Attention &saved, Value dOut, Value &dq,
                         Value &dk, Value &dv);

  /// Token ids [T] of column offset `offset` of tokens [B, S + 1].
  Value tokenColumn(Value tokens, int64_t offset);
  /// Rows of `table` [V, D] picked by ids [T] (ids clamped into range).
  Value embed(Value table, Value ids);
  /// The scatter-add of rows `dx` [T, D] into a [V, D] gradient.
  Value embedBackward(Value dx, Value ids);

  /// Mean cross-entropy of logits [T, V] against ids [T] as a 0-d tensor;
  /// sets dLogits of the mean.
  Value crossEntropy(Value logits, Value targets, Value &dLogits);

private:
  /// Calls the attention composite `kind` (mxfp4/Models/Attention.h) of
  /// these arguments, defining it on first use.
  SmallVector<Value> callComposite(StringRef kind, ValueRange args);

  Value cosTable, sinTable; // [S, hd / 2]
};

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_MODELS_LLAMAGRAPH_H
