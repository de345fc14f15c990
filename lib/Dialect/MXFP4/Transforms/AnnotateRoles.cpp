//===- AnnotateRoles.cpp - write inferred GEMM roles as tags --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Roles.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_ANNOTATEROLESPASS
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

struct AnnotateRolesPass
    : mxfp4::impl::AnnotateRolesPassBase<AnnotateRolesPass> {
  using Base::Base;

  void runOnOperation() override {
    LinearGemms found =
        findLinearGemms(getOperation(), /*infer=*/true, includeLmHead);
    for (const LinearGemm &gemm : found.gemms)
      if (gemm.inferred)
        gemm.op->setAttr(kGemmAttrName, GemmAttr::get(&getContext(),
                                                      gemm.role, gemm.layer));
    for (const UnclassifiedContraction &rest : found.unclassified)
      rest.op->emitRemark(rest.message() + ": left in high precision");
  }
};

} // namespace
