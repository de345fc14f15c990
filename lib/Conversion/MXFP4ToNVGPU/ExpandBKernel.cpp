//===- ExpandBKernel.cpp - An MXFP4 GEMM's B expanded once ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Where many row tiles of A read the same B, the GEMM (GemmKernel.cpp)
// takes B expanded to bf16 once, laid out as its shared-memory stages so
// that one bulk copy moves a stage: [N tiles][super steps][4 stages] of
// 128 rows x 32 K, each an unpadded run of 8-row groups of wgmma core
// matrices. Within a stage, K follows the GEMM's A fragments: word j of
// block t of the super step fills stage j, its pair p K 8 p + 2 t.
//
//===----------------------------------------------------------------------===//

#include "Fp4Expansion.h"
#include "Kernels.h"
#include "mxfp4/Conversion/NVGPUCommon/WarpgroupMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::sm90;

int64_t sm90::expandedBElements(const GemmConfig &c) {
  return llvm::divideCeil(c.n, kTile) * kTile *
         llvm::divideCeil(c.k, kGemmSuperStepK) * kGemmSuperStepK;
}

/// The expansion kernel's warps: one per 8 rows of a B tile and super step.
static int64_t expandBWarps(const GemmConfig &c) {
  return llvm::divideCeil(c.n, kTile) * llvm::divideCeil(c.k, kGemmSuperStepK) *
         (kTile / 8);
}

int64_t sm90::expandBBlocks(const GemmConfig &c) {
  return llvm::divideCeil(expandBWarps(c) * 32, kWorkgroupSize);
}

gpu::GPUFuncOp sm90::buildExpandBKernel(OpBuilder &b, Location loc,
                                        gpu::GPUModuleOp module, StringRef name,
                                        const GemmConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type();
  SmallVector<Type> args = {
      globalBuffer(ctx, c.n * c.k / 2, i8),
      globalBuffer(ctx, c.n * c.k / 32, i8),
      globalBuffer(ctx, expandedBElements(c), b.getBF16Type())};
  gpu::GPUFuncOp func = createKernel(b, loc, module, name, args);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc, BoundsMode::guarded);
  Value id = kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId());
  Value warp = kb.div(id, 32), lane = kb.rem(id, 32);
  kb.when(kb.lt(warp, expandBWarps(c)), [&] {
    // Warp (tile, super step, 8-row group); lane 4 r + t reads row r's
    // block t of the super step, as the GEMM's lanes do, and writes word j's
    // pairs where the GEMM's expandB puts them: stage j, K 8 p + 2 t.
    int64_t superSteps = llvm::divideCeil(c.k, kGemmSuperStepK),
            kBlocks = c.k / 32;
    Value group = kb.rem(warp, kTile / 8);
    Value s = kb.rem(kb.div(warp, kTile / 8), superSteps);
    Value tileN = kb.div(warp, (kTile / 8) * superSteps);
    Value r = kb.div(lane, 4), t = kb.rem(lane, 4);
    Value row = kb.add(kb.mul(tileN, kTile), kb.add(kb.mul(group, 8), r));
    Value block = kb.add(kb.mul(s, 4), t);
    Value valid = kb.andI(kb.lt(row, c.n), kb.lt(block, kBlocks));
    Value at = kb.add(kb.mul(row, kBlocks), block);
    Value codes = kb.load(VectorType::get({4}, b.getI32Type()),
                          codeWords(kb, func.getArgument(0)), valid,
                          kb.mul(at, 4), c.n * kBlocks * 4, /*alignment=*/16);
    Value scale =
        scalePair(b, loc,
                  arith::ExtUIOp::create(b, loc, b.getI32Type(),
                                         kb.load(i8, func.getArgument(1), valid,
                                                 at, c.n * kBlocks)));
    Value base =
        kb.add(kb.mul(kb.add(kb.mul(tileN, superSteps), s),
                      kGemmBStages * kExpandedBStageBytes / 2),
               kb.add(kb.mul(group, CoreMatrixTile::groupBytes(false) / 2),
                      kb.add(kb.mul(r, 8), kb.mul(t, 2))));
    for (int64_t j = 0; j < 4; ++j) {
      SmallVector<Value, 4> pairs = expandPairs(
          b, loc, vector::ExtractOp::create(b, loc, codes, j), scale);
      for (auto [p, pair] : llvm::enumerate(pairs)) {
        int64_t offset =
            j * kExpandedBStageBytes / 2 +
            static_cast<int64_t>(p) * CoreMatrixTile::coreBytes(false) / 2;
        storePair(b, loc, pair, func.getArgument(2), kb.add(base, offset));
      }
    }
  });
  gpu::ReturnOp::create(b, loc);
  return func;
}
