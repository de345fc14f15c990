//===- CheckRotations.cpp - prove scaled_matmul rotations cancel ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CHECKROTATIONSPASS
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

/// What one operand of a scaled_matmul went through.
struct OperandHistory {
  QuantizeOp quantize;
  HadamardOp rotation; // null if the quantized tensor was not rotated
};

std::string describe(HadamardOp rotation) {
  if (!rotation)
    return "not rotated";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "rotated by a" << (rotation.getInverse() ? "n inverse " : " ")
     << stringifyHadamardKind(rotation.getKind()) << " H"
     << rotation.getSize();
  if (rotation.getSeed())
    os << " (seed and step values of their own)";
  return text;
}

struct CheckRotationsPass
    : mxfp4::impl::CheckRotationsPassBase<CheckRotationsPass> {
  using Base::Base;

  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](ScaledMatmulOp op) {
      if (!check(op))
        failed = true;
    });
    if (failed)
      signalPassFailure();
  }

  /// Finds the quantize (and rotation) behind an operand; returns false
  /// after reporting if there is nothing to prove from.
  bool trace(ScaledMatmulOp op, llvm::StringRef side, Value values,
             Value scales, OperandHistory &history) {
    auto quantize = values.getDefiningOp<QuantizeOp>();
    if (!quantize) {
      if (allowExternalOperands)
        return true;
      op.emitError("cannot prove that the rotations cancel: the ")
          << side << " values do not come from an mxfp4.quantize in this "
          << "function (pass allow-external-operands to accept it)";
      return false;
    }
    if (scales.getDefiningOp<QuantizeOp>() != quantize) {
      op.emitError("the ") << side
                           << " values and scales come from different "
                              "quantizations";
      return false;
    }
    int64_t k = quantize.getInput().getType().getRank() - 1;
    if (static_cast<int64_t>(quantize.getAxis()) != k) {
      op.emitError("the ") << side << " operand is blocked along axis "
                           << quantize.getAxis()
                           << ", not the contraction axis " << k;
      return false;
    }
    history.quantize = quantize;
    if (auto rotation = quantize.getInput().getDefiningOp<HadamardOp>()) {
      if (static_cast<int64_t>(rotation.getAxis()) != k) {
        op.emitError("the ")
            << side << " operand is rotated along axis " << rotation.getAxis()
            << ", not the contraction axis " << k
            << ": the rotation does not cancel in the product";
        return false;
      }
      history.rotation = rotation;
    }
    return true;
  }

  bool check(ScaledMatmulOp op) {
    OperandHistory lhs, rhs;
    if (!trace(op, "lhs", op.getLhs(), op.getLhsScale(), lhs) ||
        !trace(op, "rhs", op.getRhs(), op.getRhsScale(), rhs))
      return false;
    if (!lhs.quantize || !rhs.quantize)
      return true; // external operands, accepted by option
    HadamardOp a = lhs.rotation, b = rhs.rotation;
    if (!a && !b)
      return true;
    if (a && b && a.hasSameRotation(b) && a.getInverse() == b.getInverse())
      return true;
    InFlightDiagnostic diag =
        op.emitError("the rotations of the operands do not cancel: lhs is ")
        << describe(a) << ", rhs is " << describe(b);
    if (a && b && a.getKind() == b.getKind() && a.getSize() == b.getSize())
      diag << " (their seed or step operands differ)";
    for (HadamardOp rotation : {a, b})
      if (rotation)
        diag.attachNote(rotation.getLoc()) << "rotation here";
    return false;
  }
};

} // namespace
