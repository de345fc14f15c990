//===- MathToROCDLIntrinsics.cpp - f32 math on AMDGPU hardware ops --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Upstream lowers math.exp, log, rsqrt, powf, ... to ROCm device-library
// calls (__ocml_*), which need bitcode that Debian does not ship for gfx950.
// The generic kernels (softmax, SiLU, RMSNorm, loss) use f32 only: lower
// those ops to the hardware's transcendental instructions instead
// (v_exp_f32 = 2^x, v_log_f32 = log2 x, v_rcp_f32, v_sqrt_f32), and the rare
// trigonometric ones to upstream polynomial approximations. Results are
// within a few ulp of the CPU's, not bit-identical.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_CONVERTMATHTOROCDLINTRINSICSPASS
#include "mxfp4/Conversion/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

Value constantLike(PatternRewriter &r, Location loc, Value like, double v) {
  return arith::ConstantOp::create(r, loc, r.getFloatAttr(like.getType(), v));
}

template <typename MathOp>
struct F32Pattern : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &r) const override {
    if (!op.getType().isF32())
      return failure();
    r.replaceOp(op, lower(op, r));
    return success();
  }
  virtual Value lower(MathOp op, PatternRewriter &r) const = 0;
};

struct ExpLowering : F32Pattern<math::ExpOp> {
  using F32Pattern::F32Pattern;
  Value lower(math::ExpOp op, PatternRewriter &r) const override {
    Location loc = op.getLoc();
    Value x = arith::MulFOp::create(r, loc, op.getOperand(),
                                    constantLike(r, loc, op, M_LOG2E));
    return ROCDL::ROCDLExp2::create(r, loc, op.getType(), x);
  }
};

struct Exp2Lowering : F32Pattern<math::Exp2Op> {
  using F32Pattern::F32Pattern;
  Value lower(math::Exp2Op op, PatternRewriter &r) const override {
    return ROCDL::ROCDLExp2::create(r, op.getLoc(), op.getType(),
                                    op.getOperand());
  }
};

struct LogLowering : F32Pattern<math::LogOp> {
  using F32Pattern::F32Pattern;
  Value lower(math::LogOp op, PatternRewriter &r) const override {
    Location loc = op.getLoc();
    Value log2 =
        ROCDL::ROCDLLog::create(r, loc, op.getType(), op.getOperand());
    return arith::MulFOp::create(r, loc, log2,
                                 constantLike(r, loc, op, M_LN2));
  }
};

struct Log2Lowering : F32Pattern<math::Log2Op> {
  using F32Pattern::F32Pattern;
  Value lower(math::Log2Op op, PatternRewriter &r) const override {
    return ROCDL::ROCDLLog::create(r, op.getLoc(), op.getType(),
                                   op.getOperand());
  }
};

struct RsqrtLowering : F32Pattern<math::RsqrtOp> {
  using F32Pattern::F32Pattern;
  Value lower(math::RsqrtOp op, PatternRewriter &r) const override {
    Location loc = op.getLoc();
    Value root = math::SqrtOp::create(r, loc, op.getOperand());
    return ROCDL::ROCDLRcp::create(r, loc, op.getType(), root);
  }
};

/// x^y = 2^(y log2 x) for the positive bases of the training step (bias
/// corrections); a non-positive base gives NaN or 0 as log2 does.
struct PowFLowering : F32Pattern<math::PowFOp> {
  using F32Pattern::F32Pattern;
  Value lower(math::PowFOp op, PatternRewriter &r) const override {
    Location loc = op.getLoc();
    Value log2 = ROCDL::ROCDLLog::create(r, loc, op.getType(), op.getLhs());
    Value e = arith::MulFOp::create(r, loc, op.getRhs(), log2);
    return ROCDL::ROCDLExp2::create(r, loc, op.getType(), e);
  }
};

/// floor(x) = trunc(x) - (x < trunc(x)): math.trunc is an LLVM intrinsic the
/// backend selects (v_trunc_f32), math.floor a device-library call. The
/// polynomial cos/sin use it for range reduction.
struct FloorLowering : F32Pattern<math::FloorOp> {
  using F32Pattern::F32Pattern;
  Value lower(math::FloorOp op, PatternRewriter &r) const override {
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value t = math::TruncOp::create(r, loc, x);
    Value below =
        arith::CmpFOp::create(r, loc, arith::CmpFPredicate::OLT, x, t);
    Value one = constantLike(r, loc, x, 1.0);
    Value zero = constantLike(r, loc, x, 0.0);
    return arith::SubFOp::create(
        r, loc, t, arith::SelectOp::create(r, loc, below, one, zero));
  }
};

/// f64 transcendental functions exist only in the device libraries: the
/// step uses them for scalars (the cosine learning-rate schedule), where f32
/// precision is plenty. Compute in f32 and extend.
template <typename MathOp>
struct DemoteF64 : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op,
                                PatternRewriter &r) const override {
    if (!op.getType().isF64())
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(arith::TruncFOp::create(r, loc, r.getF32Type(), v));
    Value f32 = MathOp::create(r, loc, operands).getResult();
    r.replaceOp(op, arith::ExtFOp::create(r, loc, r.getF64Type(), f32));
    return success();
  }
};

struct ConvertMathToROCDLIntrinsicsPass
    : mxfp4::impl::ConvertMathToROCDLIntrinsicsPassBase<
          ConvertMathToROCDLIntrinsicsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpLowering, Exp2Lowering, LogLowering, Log2Lowering,
                 RsqrtLowering, PowFLowering, FloorLowering>(&getContext());
    patterns.add<DemoteF64<math::ExpOp>, DemoteF64<math::Exp2Op>,
                 DemoteF64<math::LogOp>, DemoteF64<math::Log2Op>,
                 DemoteF64<math::RsqrtOp>, DemoteF64<math::PowFOp>,
                 DemoteF64<math::CosOp>, DemoteF64<math::SinOp>,
                 DemoteF64<math::TanhOp>, DemoteF64<math::ErfOp>>(
        &getContext());
    // tanh, erf, sin, cos, ... as polynomials in arith (no library calls).
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return name != "exp" && name != "log" && name != "log2" &&
                 name != "exp2" && name != "rsqrt" && name != "powf";
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
