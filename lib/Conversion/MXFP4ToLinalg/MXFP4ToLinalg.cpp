//===- MXFP4ToLinalg.cpp - the convert-mxfp4-to-linalg pass ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/MXFP4ToLinalg/MXFP4ToLinalg.h"

#include "Lowerings.h"

#include "mxfp4/Conversion/Passes.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTMXFP4TOLINALGPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

void mxfp4::populateMXFP4ToLinalgTypeConversion(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](RankedTensorType type) -> Type {
    if (isa<Float4E2M1FNType, Float8E8M0FNUType>(type.getElementType()))
      return type.clone(IntegerType::get(type.getContext(), 8));
    return type;
  });
}

void mxfp4::populateMXFP4ToLinalgConversionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns,
    bool x86Avx512BF16) {
  if (x86Avx512BF16)
    populateScaledMatmulToX86VectorPatterns(converter, patterns);
  populateQuantizeToVectorPatterns(converter, patterns);
  populateDequantizeLoweringPatterns(converter, patterns);
  populateHadamardLoweringPatterns(converter, patterns);
  populateScaledMatmulLoweringPatterns(converter, patterns);
}

namespace {

/// Constants of E2M1 codes or E8M0 bytes become i8 constants of the same
/// encodings (the CPU data ABI).
struct QuantizedConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!dense || !type ||
        !isa<Float4E2M1FNType, Float8E8M0FNUType>(type.getElementType()))
      return failure();
    auto i8Type = type.clone(rewriter.getI8Type());
    SmallVector<APInt> bytes;
    for (APFloat value : dense.getValues<APFloat>())
      bytes.push_back(value.bitcastToAPInt().zextOrTrunc(8));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, i8Type, DenseElementsAttr::get(i8Type, bytes));
    return success();
  }
};

struct ConvertMXFP4ToLinalgPass
    : mxfp4::impl::ConvertMXFP4ToLinalgPassBase<ConvertMXFP4ToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    TypeConverter converter;
    populateMXFP4ToLinalgTypeConversion(converter);

    // Give every op that still holds a 4-bit or E8M0 tensor after the
    // conversion a located error of its own, instead of the framework's
    // generic "failed to legalize".
    ConversionTarget target(*context);
    target.addIllegalDialect<MXFP4Dialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(context);
    populateMXFP4ToLinalgConversionPatterns(converter, patterns, x86Avx512BF16);
    patterns.add<QuantizedConstantLowering>(converter, context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);

    ModuleOp module = getOperation();
    bool unsupported = false;
    module.walk([&](Operation *op) {
      if (isa<MXFP4Dialect>(op->getDialect()) || isa<func::FuncOp>(op) ||
          isa<func::ReturnOp, func::CallOp, scf::ForOp, scf::YieldOp,
              scf::IfOp, scf::WhileOp, scf::ConditionOp, arith::ConstantOp>(
              op) ||
          converter.isLegal(op))
        return;
      op->emitError("cannot lower '")
          << op->getName()
          << "' on f4E2M1FN or f8E8M0FNU tensors: only mxfp4 ops, calls, "
             "returns, constants and scf control flow may carry quantized "
             "data";
      unsupported = true;
    });
    if (unsupported)
      return signalPassFailure();

    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
