//===- LlamaBlocks.cpp - forward and backward blocks of the Llama step ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each block computes what PyTorch's (Hugging Face's) Llama computes, in the
// same operation order where that is cheap to keep (x * rstd * gain, the
// rotate-half products, q k^T / sqrt(hd)), so the bf16 recipe matches
// PyTorch to f32 rounding.
//
//===----------------------------------------------------------------------===//

#include "LlamaGraph.h"

#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"
#include "mxfp4/Models/Attention.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;

using Args = ValueRange;

LlamaGraph::LlamaGraph(OpBuilder &b, Location loc, const LlamaConfig &config)
    : tb(b, loc), config(config), batch(config.batchSize), seq(config.seqLen),
      tokens(config.batchSize * config.seqLen), dim(config.dim),
      heads(config.numHeads), kvHeads(config.numKVHeads),
      headDim(config.getHeadDim()), ffn(config.ffnDim),
      vocab(config.vocabSize) {
  // The RoPE tables as PyTorch builds them in f32: inv_freq = 1 /
  // theta^(2i / hd), angle = s * inv_freq.
  int64_t half = headDim / 2;
  SmallVector<float> cosValues, sinValues;
  cosValues.reserve(seq * half);
  sinValues.reserve(seq * half);
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t i = 0; i < half; ++i) {
      float exponent = static_cast<float>(2 * i) / static_cast<float>(headDim);
      float invFreq =
          1.0f / std::pow(static_cast<float>(config.ropeTheta), exponent);
      float angle = static_cast<float>(s) * invFreq;
      cosValues.push_back(std::cos(angle));
      sinValues.push_back(std::sin(angle));
    }
  auto type = RankedTensorType::get({seq, half}, b.getF32Type());
  cosTable = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(cosValues)));
  sinTable = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<float>(sinValues)));
}

GemmAttr LlamaGraph::tag(GemmRole role, StringRef layer) {
  return GemmAttr::get(tb.b.getContext(), role, layer);
}

Value LlamaGraph::linear(Value x, Value weight, StringRef layer) {
  return tb.matmul(x, weight, false, true, tag(GemmRole::fprop, layer));
}

Value LlamaGraph::linearDgrad(Value dy, Value weight, StringRef layer) {
  return tb.matmul(dy, weight, false, false, tag(GemmRole::dgrad, layer));
}

Value LlamaGraph::linearWgrad(Value dy, Value x, StringRef layer) {
  return tb.matmul(dy, x, true, false, tag(GemmRole::wgrad, layer));
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

Value LlamaGraph::rmsNorm(Value x, Value gain, Value &rstd) {
  auto rows = tb.project(2, {0}), cols = tb.project(2, {1}),
       all = tb.identity(2);
  int64_t n = shapeOf(x)[1];
  Value squares = tb.generic(x, all, rows, {tokens}, 0.0,
                             [](OpBuilder &b, Location l, Args a) -> Value {
                               Value sq = arith::MulFOp::create(b, l, a[0], a[0]);
                               return arith::AddFOp::create(b, l, a[1], sq);
                             });
  Value count = tb.f32(static_cast<double>(n)), eps = tb.f32(config.normEps);
  rstd = tb.map(squares, [&](OpBuilder &b, Location l, Args a) -> Value {
    Value mean = arith::DivFOp::create(b, l, a[0], count);
    return math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, mean, eps));
  });
  return tb.generic({x, rstd, gain}, {all, rows, cols}, all, {tokens, n},
                    std::nullopt,
                    [](OpBuilder &b, Location l, Args a) -> Value {
                      Value normed = arith::MulFOp::create(b, l, a[0], a[1]);
                      return arith::MulFOp::create(b, l, a[2], normed);
                    });
}

Value LlamaGraph::rmsNormBackward(Value dy, Value x, Value gain, Value rstd,
                                  Value &dGain) {
  auto rows = tb.project(2, {0}), cols = tb.project(2, {1}),
       all = tb.identity(2);
  int64_t n = shapeOf(x)[1];
  // dGain[d] = sum_t dy * x * rstd.
  dGain = tb.generic({dy, x, rstd}, {all, all, rows}, cols, {n}, 0.0,
                     [](OpBuilder &b, Location l, Args a) -> Value {
                       Value normed = arith::MulFOp::create(b, l, a[1], a[2]);
                       Value p = arith::MulFOp::create(b, l, a[0], normed);
                       return arith::AddFOp::create(b, l, a[3], p);
                     });
  // With g = dy * gain: dx = rstd * g - x * rstd^3 * mean(g * x).
  Value dot = tb.generic({dy, gain, x}, {all, cols, all}, rows, {tokens}, 0.0,
                         [](OpBuilder &b, Location l, Args a) -> Value {
                           Value g = arith::MulFOp::create(b, l, a[0], a[1]);
                           Value p = arith::MulFOp::create(b, l, g, a[2]);
                           return arith::AddFOp::create(b, l, a[3], p);
                         });
  Value count = tb.f32(static_cast<double>(n));
  return tb.generic(
      {dy, gain, x, rstd, dot}, {all, cols, all, rows, rows}, all, {tokens, n},
      std::nullopt, [&](OpBuilder &b, Location l, Args a) -> Value {
        Value g = arith::MulFOp::create(b, l, a[0], a[1]);
        Value r = a[3];
        Value r3 = arith::MulFOp::create(
            b, l, arith::MulFOp::create(b, l, r, r), r);
        Value coef = arith::MulFOp::create(
            b, l, r3, arith::DivFOp::create(b, l, a[4], count));
        return arith::SubFOp::create(b, l, arith::MulFOp::create(b, l, r, g),
                                     arith::MulFOp::create(b, l, a[2], coef));
      });
}

//===----------------------------------------------------------------------===//
// RoPE and head layouts
//===----------------------------------------------------------------------===//

Value LlamaGraph::rope(Value x, bool inverse) {
  int64_t n = shapeOf(x)[1] / headDim, half = headDim / 2;
  SmallVector<int64_t> shape = {batch, seq, n, 2, half};
  Value x5 = tb.reshape(x, shape);
  AffineExpr b0 = tb.d(0), s = tb.d(1), h = tb.d(2), j = tb.d(4);
  SmallVector<AffineMap> maps = {tb.mapOf(5, {b0, s, h, tb.c(0), j}),
                                 tb.mapOf(5, {b0, s, h, tb.c(1), j}),
                                 tb.mapOf(5, {s, j}), tb.mapOf(5, {s, j})};
  Value rotated = tb.generic(
      {x5, x5, cosTable, sinTable}, maps, tb.identity(5), shape, std::nullopt,
      [&](OpBuilder &b, Location l, Args a) -> Value {
        Value x0 = a[0], x1 = a[1], cos = a[2], sin = a[3];
        // The backward rotates by the negated angle.
        if (inverse)
          sin = arith::NegFOp::create(b, l, sin);
        // PyTorch: x * cos + rotate_half(x) * sin, rotate_half = (-x1, x0).
        Value first = arith::AddFOp::create(
            b, l, arith::MulFOp::create(b, l, x0, cos),
            arith::MulFOp::create(b, l, arith::NegFOp::create(b, l, x1), sin));
        Value second =
            arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x1, cos),
                                  arith::MulFOp::create(b, l, x0, sin));
        Value c = tb.loopIndex(b, l, 3);
        Value isFirst = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, c,
            arith::ConstantIndexOp::create(b, l, 0));
        return arith::SelectOp::create(b, l, isFirst, first, second);
      });
  return tb.reshape(rotated, shapeOf(x));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

SmallVector<Value> LlamaGraph::callComposite(StringRef kind,
                                             ValueRange args) {
  OpBuilder &b = tb.b;
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  func::FuncOp callee =
      getOrCreateAttentionComposite(module, tb.loc, kind, args.getTypes());
  return func::CallOp::create(b, tb.loc, callee, args).getResults();
}

LlamaGraph::Attention LlamaGraph::attention(Value q, Value k, Value v) {
  Attention saved;
  saved.q = tb.reshape(q, {batch, seq, heads, headDim});
  saved.k = tb.reshape(k, {batch, seq, kvHeads, headDim});
  saved.v = tb.reshape(v, {batch, seq, kvHeads, headDim});
  SmallVector<Value> r =
      callComposite(kCausalAttention, {saved.q, saved.k, saved.v});
  saved.o = r[0];
  saved.lse = r[1];
  saved.out = tb.reshape(saved.o, {tokens, heads * headDim});
  return saved;
}

void LlamaGraph::attentionBackward(const Attention &saved, Value dOut,
                                   Value &dq, Value &dk, Value &dv) {
  SmallVector<Value> r = callComposite(
      kCausalAttentionBackward,
      {saved.q, saved.k, saved.v, saved.o, saved.lse,
       tb.reshape(dOut, {batch, seq, heads, headDim})});
  dq = tb.reshape(r[0], {tokens, heads * headDim});
  dk = tb.reshape(r[1], {tokens, kvHeads * headDim});
  dv = tb.reshape(r[2], {tokens, kvHeads * headDim});
}

//===----------------------------------------------------------------------===//
// Embedding and loss
//===----------------------------------------------------------------------===//

Value LlamaGraph::tokenColumn(Value tokensArg, int64_t offset) {
  Value cols = tb.slice(tokensArg, 1, offset, seq);
  // The slice is strided; a copy into a fresh tensor makes the ids dense.
  Value dense = tb.generic(cols, tb.identity(2), tb.identity(2), {batch, seq},
                           std::nullopt,
                           [](OpBuilder &, Location, Args a) { return a[0]; },
                           tb.b.getI32Type());
  return tb.reshape(dense, {tokens});
}

/// Clamps an i32 id into [0, vocab) and makes it an index.
static Value clampedIndex(OpBuilder &b, Location l, Value id, int64_t vocab) {
  Value lo = arith::ConstantIntOp::create(b, l, 0, 32);
  Value hi = arith::ConstantIntOp::create(b, l, vocab - 1, 32);
  Value clamped = arith::MinSIOp::create(
      b, l, arith::MaxSIOp::create(b, l, id, lo), hi);
  return arith::IndexCastOp::create(b, l, b.getIndexType(), clamped);
}

Value LlamaGraph::embed(Value table, Value ids) {
  int64_t n = shapeOf(table)[1];
  return tb.generic(ids, tb.project(2, {0}), tb.identity(2), {tokens, n},
                    std::nullopt,
                    [&](OpBuilder &b, Location l, Args a) -> Value {
                      Value row = clampedIndex(b, l, a[0], vocab);
                      Value col = tb.loopIndex(b, l, 1);
                      return tensor::ExtractOp::create(b, l, table,
                                                       ValueRange{row, col});
                    });
}

Value LlamaGraph::embedBackward(Value dx, Value ids) {
  OpBuilder &b = tb.b;
  Location loc = tb.loc;
  int64_t n = shapeOf(dx)[1];
  Value zero = tb.index(0), one = tb.index(1);
  // A sequential scatter-add: rows of repeated ids accumulate in token
  // order, and the cost is O(T * D) whatever the vocabulary.
  auto outer = scf::ForOp::create(
      b, loc, zero, tb.index(tokens), one, ValueRange{tb.zeros({vocab, n})},
      [&](OpBuilder &ob, Location l, Value t, ValueRange iter) {
        Value id = tensor::ExtractOp::create(ob, l, ids, ValueRange{t});
        Value row = clampedIndex(ob, l, id, vocab);
        auto inner = scf::ForOp::create(
            ob, l, arith::ConstantIndexOp::create(ob, l, 0),
            arith::ConstantIndexOp::create(ob, l, n),
            arith::ConstantIndexOp::create(ob, l, 1), iter,
            [&](OpBuilder &ib, Location il, Value col, ValueRange acc) {
              Value old = tensor::ExtractOp::create(ib, il, acc[0],
                                                    ValueRange{row, col});
              Value add = tensor::ExtractOp::create(ib, il, dx,
                                                    ValueRange{t, col});
              Value sum = arith::AddFOp::create(ib, il, old, add);
              Value updated = tensor::InsertOp::create(
                  ib, il, sum, acc[0], ValueRange{row, col});
              scf::YieldOp::create(ib, il, updated);
            });
        scf::YieldOp::create(ob, l, inner.getResults());
      });
  return outer.getResult(0);
}

Value LlamaGraph::crossEntropy(Value logits, Value targets, Value &dLogits) {
  AffineMap all = tb.identity(2), rows = tb.project(2, {0});
  SmallVector<int64_t> shape(shapeOf(logits));
  Value rowMax = tb.reduceLast(logits, /*isMax=*/true);
  Value sumExp = tb.generic({logits, rowMax}, {all, rows}, rows, {tokens}, 0.0,
                            [](OpBuilder &b, Location l, Args a) -> Value {
                              Value z = arith::SubFOp::create(b, l, a[0], a[1]);
                              Value e = math::ExpOp::create(b, l, z);
                              return arith::AddFOp::create(b, l, a[2], e);
                            });
  Value logSumExp = tb.generic(
      {rowMax, sumExp}, {tb.identity(1), tb.identity(1)}, tb.identity(1),
      {tokens}, std::nullopt, [](OpBuilder &b, Location l, Args a) -> Value {
        return arith::AddFOp::create(b, l, a[0],
                                     math::LogOp::create(b, l, a[1]));
      });
  // loss_t = logsumexp_t - logit[t, target_t], summed over t.
  Value total = tb.generic(
      {logits, targets, logSumExp}, {all, rows, rows}, tb.mapOf(2, {}), {},
      0.0, [&](OpBuilder &b, Location l, Args a) -> Value {
        Value v = tb.loopIndex(b, l, 1);
        Value target = arith::IndexCastOp::create(b, l, b.getIndexType(), a[1]);
        Value isTarget =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, v, target);
        Value first = arith::CmpIOp::create(
            b, l, arith::CmpIPredicate::eq, v,
            arith::ConstantIndexOp::create(b, l, 0));
        Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0));
        // Add lse once per row (at v = 0) and subtract the target logit.
        Value plus = arith::SelectOp::create(b, l, first, a[2], zero);
        Value minus = arith::SelectOp::create(b, l, isTarget, a[0], zero);
        Value term = arith::SubFOp::create(b, l, plus, minus);
        return arith::AddFOp::create(b, l, a[3], term);
      });
  Value count = tb.f32(static_cast<double>(tokens));
  Value loss = tb.generic(total, tb.mapOf(0, {}), tb.mapOf(0, {}), {},
                          std::nullopt,
                          [&](OpBuilder &b, Location l, Args a) -> Value {
                            return arith::DivFOp::create(b, l, a[0], count);
                          });
  dLogits = tb.generic(
      {logits, targets, logSumExp}, {all, rows, rows}, all, shape,
      std::nullopt, [&](OpBuilder &b, Location l, Args a) -> Value {
        Value v = tb.loopIndex(b, l, 1);
        Value target = arith::IndexCastOp::create(b, l, b.getIndexType(), a[1]);
        Value isTarget =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, v, target);
        Value p = math::ExpOp::create(
            b, l, arith::SubFOp::create(b, l, a[0], a[2]));
        Value one = arith::ConstantOp::create(b, l, b.getF32FloatAttr(1.0));
        Value zero = arith::ConstantOp::create(b, l, b.getF32FloatAttr(0.0));
        Value hot = arith::SelectOp::create(b, l, isTarget, one, zero);
        return arith::DivFOp::create(
            b, l, arith::SubFOp::create(b, l, p, hot), count);
      });
  return loss;
}
