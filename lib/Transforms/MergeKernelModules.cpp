//===- MergeKernelModules.cpp - one gpu.module of distinct kernels --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// gpu-kernel-outlining makes one gpu.module per launch; a training step has
// thousands, most of them the same kernel once per layer. Move every kernel
// into one module, keep one copy of each distinct kernel, and point the
// launches at it: one code object, and each distinct kernel compiled once.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_MERGEKERNELMODULESPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

/// The kernel's text with its name left out: equal texts, equal kernels.
static std::string fingerprint(gpu::GPUFuncOp func) {
  std::string text;
  llvm::raw_string_ostream os(text);
  StringAttr name = SymbolTable::getSymbolName(func);
  SymbolTable::setSymbolName(func, "k");
  func->print(os, OpPrintingFlags().useLocalScope().enableDebugInfo(false));
  SymbolTable::setSymbolName(func, name);
  return text;
}

namespace {

struct MergeKernelModulesPass
    : mxfp4::impl::MergeKernelModulesPassBase<MergeKernelModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    auto target = module.lookupSymbol<gpu::GPUModuleOp>(into);
    if (!target) {
      b.setInsertionPointToEnd(module.getBody());
      target = gpu::GPUModuleOp::create(b, module.getLoc(), into);
    }
    SymbolTable targetSymbols(target);
    llvm::StringMap<StringAttr> byFingerprint;
    for (auto func : target.getOps<gpu::GPUFuncOp>())
      byFingerprint[fingerprint(func)] = SymbolTable::getSymbolName(func);

    // Old @module::@kernel -> kernel in `target`.
    DenseMap<Attribute, StringAttr> renamed;
    int64_t next = 0;
    for (auto source :
         llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>())) {
      if (source == target)
        continue;
      for (auto func : llvm::make_early_inc_range(
               source.getOps<gpu::GPUFuncOp>())) {
        Attribute oldRef = SymbolRefAttr::get(
            source.getSymNameAttr(),
            {FlatSymbolRefAttr::get(SymbolTable::getSymbolName(func))});
        auto [it, inserted] =
            byFingerprint.try_emplace(fingerprint(func), StringAttr());
        if (inserted) {
          std::string name;
          do
            name = llvm::formatv("kernel_{0}", next++).str();
          while (targetSymbols.lookup(name));
          func->moveBefore(target.getBody(), target.getBody()->end());
          SymbolTable::setSymbolName(func, name);
          targetSymbols.insert(func);
          it->second = SymbolTable::getSymbolName(func);
        }
        renamed[oldRef] = it->second;
      }
      source.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto found = renamed.find(launch.getKernel());
      if (found != renamed.end())
        launch.setKernelAttr(SymbolRefAttr::get(
            target.getSymNameAttr(), {FlatSymbolRefAttr::get(found->second)}));
    });
  }
};

} // namespace
