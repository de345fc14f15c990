//===- Telemetry.cpp - statistics of one quantization ---------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Transforms/Telemetry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;

Value mlir::mxfp4::buildQuantizationTelemetry(OpBuilder &b, Location loc,
                                              Value input,
                                              QuantizeOp quantize) {
  auto inputType = cast<RankedTensorType>(input.getType());
  int64_t axis = quantize.getAxis(), rank = inputType.getRank();
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type();
  auto f32Type = inputType.clone(f32);

  // The dequantized tensor, and the block maximum 6 * 2^s per element (the
  // dequantization of an all-6 tensor with the same scales).
  Value dequantized =
      DequantizeOp::create(b, loc, f32Type, quantize.getValues(),
                           quantize.getScales(), axis, kBlockSize);
  auto valuesType = quantize.getValues().getType();
  Value sixes = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          valuesType, b.getFloatAttr(valuesType.getElementType(), 6.0)));
  Value blockMax = DequantizeOp::create(b, loc, f32Type, sixes,
                                        quantize.getScales(), axis, kBlockSize);

  // One pass accumulating: clipped, flushed, sum x^2, sum err^2, sum s,
  // min s, max s, NaN-block elements (all f64).
  double inf = std::numeric_limits<double>::infinity();
  double inits[] = {0, 0, 0, 0, 0, inf, -inf, 0};
  auto scalar = RankedTensorType::get({}, f64);
  SmallVector<Value> outs;
  SmallVector<Type> outTypes;
  for (double init : inits) {
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, f64);
    Value cst = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(init));
    outs.push_back(
        linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty})
            .getResult(0));
    outTypes.push_back(scalar);
  }
  AffineMap all = b.getMultiDimIdentityMap(rank);
  AffineMap none = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<AffineMap> maps = {all, all, all};
  maps.append(outs.size(), none);
  auto reduce = linalg::GenericOp::create(
      b, loc, outTypes, ValueRange{input, dequantized, blockMax}, outs, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto cf = [&](double v) -> Value {
          return arith::ConstantOp::create(nb, nl, nb.getF64FloatAttr(v));
        };
        Value x = args[0];
        if (!x.getType().isF32())
          x = arith::ExtFOp::create(nb, nl, f32, x);
        Value d = args[1], top = args[2];
        Value nan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO,
                                          top, top);
        Value ok = arith::XOrIOp::create(
            nb, nl, nan,
            arith::ConstantOp::create(nb, nl, nb.getBoolAttr(true)));
        auto count = [&](Value cond) {
          return arith::SelectOp::create(
              nb, nl, arith::AndIOp::create(nb, nl, ok, cond), cf(1), cf(0));
        };
        Value zero32 =
            arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.0f));
        Value clipped = count(arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OGT, math::AbsFOp::create(nb, nl, x),
            top));
        Value flushed = count(arith::AndIOp::create(
            nb, nl,
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::ONE, x,
                                  zero32),
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, d,
                                  zero32)));
        Value xw = arith::ExtFOp::create(nb, nl, f64, x);
        Value err = arith::SubFOp::create(
            nb, nl, xw, arith::ExtFOp::create(nb, nl, f64, d));
        auto keep = [&](Value v) {
          return arith::SelectOp::create(nb, nl, ok, v, cf(0));
        };
        Value x2 = keep(arith::MulFOp::create(nb, nl, xw, xw));
        Value e2 = keep(arith::MulFOp::create(nb, nl, err, err));
        // 6 * 2^s has exponent field s + 129 (saturating at the top).
        Value bits = arith::BitcastOp::create(nb, nl, i32, top);
        Value field = arith::AndIOp::create(
            nb, nl,
            arith::ShRUIOp::create(
                nb, nl, bits,
                arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(23))),
            arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(0xFF)));
        Value s = arith::SIToFPOp::create(
            nb, nl, f64,
            arith::SubIOp::create(
                nb, nl, field,
                arith::ConstantOp::create(nb, nl, nb.getI32IntegerAttr(129))));
        Value nanCount = arith::SelectOp::create(nb, nl, nan, cf(1), cf(0));
        SmallVector<Value> next = {
            arith::AddFOp::create(nb, nl, args[3], clipped),
            arith::AddFOp::create(nb, nl, args[4], flushed),
            arith::AddFOp::create(nb, nl, args[5], x2),
            arith::AddFOp::create(nb, nl, args[6], e2),
            arith::AddFOp::create(nb, nl, args[7], keep(s)),
            arith::SelectOp::create(
                nb, nl, ok, arith::MinimumFOp::create(nb, nl, args[8], s),
                args[8]),
            arith::SelectOp::create(
                nb, nl, ok, arith::MaximumFOp::create(nb, nl, args[9], s),
                args[9]),
            arith::AddFOp::create(nb, nl, args[10], nanCount)};
        linalg::YieldOp::create(nb, nl, next);
      });

  SmallVector<Value> sums;
  for (Value result : reduce.getResults())
    sums.push_back(tensor::ExtractOp::create(b, loc, result, ValueRange{}));
  auto cf = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  };
  double n = static_cast<double>(inputType.getNumElements());
  Value total = cf(n);
  Value valid = arith::MaximumFOp::create(
      b, loc, arith::SubFOp::create(b, loc, total, sums[7]), cf(1));
  Value sqnr = arith::MulFOp::create(
      b, loc, cf(10),
      math::Log10Op::create(b, loc,
                            arith::DivFOp::create(b, loc, sums[2], sums[3])));
  // Averages over elements weigh every block equally (32 elements each).
  SmallVector<Value> row = {
      total,
      arith::DivFOp::create(b, loc, sums[0], total),
      arith::DivFOp::create(b, loc, sums[1], total),
      sqnr,
      sums[5],
      sums[6],
      arith::DivFOp::create(b, loc, sums[4], valid),
      arith::DivFOp::create(b, loc, sums[7], total)};
  for (Value &v : row)
    v = arith::TruncFOp::create(b, loc, f32, v);
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({static_cast<int64_t>(row.size())}, f32),
      row);
}
