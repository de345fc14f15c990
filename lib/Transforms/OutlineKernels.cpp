//===- OutlineKernels.cpp - one private function per distinct kernel ------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_OUTLINEKERNELSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

/// The ops whose lowerings are explicitly vectorized loop nests. Elementwise
/// generics stay in their caller: there LLVM sees that their buffers are
/// distinct allocations and vectorizes them, which it cannot prove for the
/// arguments of an outlined function (measured: 40% slower Llama steps).
constexpr llvm::StringLiteral kDefaultRoots[] = {
    "linalg.matmul", "linalg.batch_matmul", "mxfp4.quantize",
    "mxfp4.scaled_matmul"};

/// Producers that are lowered together with their consumer: outlining them
/// with it keeps fusions (a quantize absorbs the rotation before it) and
/// lets the kernel allocate its own result.
bool isFusedProducer(Operation *op) {
  if (op->getNumResults() != 1)
    return false;
  StringRef name = op->getName().getStringRef();
  if (name == "arith.constant")
    return !isa<ShapedType>(op->getResult(0).getType());
  return name == "linalg.fill" || name == "tensor.empty" ||
         name == "mxfp4.hadamard";
}

/// The ops of the kernel rooted at `root`, in program order: the root and,
/// transitively, its producers that have no other user.
SmallVector<Operation *> collectKernel(Operation *root) {
  llvm::SetVector<Operation *> ops;
  SmallVector<Operation *> worklist = {root};
  ops.insert(root);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || ops.contains(producer) ||
          producer->getBlock() != root->getBlock() ||
          !isFusedProducer(producer))
        continue;
      // Constants may be cloned whatever their other users; the rest must
      // feed only this kernel.
      bool cloneable = producer->getName().getStringRef() == "arith.constant";
      if (!cloneable && !llvm::all_of(producer->getUsers(), [&](Operation *u) {
            return ops.contains(u);
          }))
        continue;
      ops.insert(producer);
      worklist.push_back(producer);
    }
  }
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

struct OutlineKernelsPass
    : mxfp4::impl::OutlineKernelsPassBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringSet<> roots;
    if (rootOps.empty())
      roots.insert(std::begin(kDefaultRoots), std::end(kDefaultRoots));
    else
      roots.insert(rootOps.begin(), rootOps.end());

    SmallVector<Operation *> candidates;
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](Operation *op) {
        if (roots.contains(op->getName().getStringRef()) &&
            op->getParentOp() == function.getOperation())
          candidates.push_back(op);
      });

    // Build every candidate's kernel detached and print it as its key, so
    // that only kernels that occur more than once are outlined: a kernel
    // that occurs once is compiled once either way, and in place it keeps
    // static strides and writes its results where they are used (an
    // outlined kernel allocates them, and a caller returning them copies
    // them out; measured: quantize 2.3x slower on the CPU).
    struct Candidate {
      Operation *root;
      SmallVector<Operation *> ops;
      SmallVector<Value> inputs;
      func::FuncOp kernel;
      std::string key;
      bool outlined = false;
    };
    SmallVector<Candidate> found;
    llvm::StringMap<unsigned> occurrences;
    OpBuilder b(&getContext());
    for (Operation *root : candidates) {
      Candidate &c = found.emplace_back();
      c.root = root;
      c.ops = collectKernel(root);
      // The kernel's arguments: values its ops (and their regions) use that
      // are defined outside it. Scalar constants are cloned instead, so the
      // kernel's code can fold them.
      llvm::SetVector<Value> inputs;
      SmallVector<Operation *> constants;
      auto addInput = [&](Value v) {
        Operation *def = v.getDefiningOp();
        if (def && llvm::is_contained(c.ops, def))
          return;
        if (def && def->getName().getStringRef() == "arith.constant" &&
            !isa<ShapedType>(v.getType())) {
          if (!llvm::is_contained(constants, def))
            constants.push_back(def);
          return;
        }
        inputs.insert(v);
      };
      for (Operation *op : c.ops) {
        for (Value operand : op->getOperands())
          addInput(operand);
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(op->getRegions(), captured);
        for (Value v : captured)
          addInput(v);
      }
      c.inputs.assign(inputs.begin(), inputs.end());

      SmallVector<Type> argTypes;
      for (Value v : inputs)
        argTypes.push_back(v.getType());
      auto type = b.getFunctionType(argTypes, root->getResultTypes());
      c.kernel = func::FuncOp::create(root->getLoc(), "kernel", type);
      Block *entry = c.kernel.addEntryBlock();
      OpBuilder body = OpBuilder::atBlockEnd(entry);
      IRMapping mapping;
      for (auto [value, arg] : llvm::zip_equal(inputs, entry->getArguments()))
        mapping.map(value, arg);
      for (Operation *constant : constants)
        body.clone(*constant, mapping);
      for (Operation *op : c.ops) {
        Operation *clone = body.clone(*op, mapping);
        // Tags such as mxfp4.gemm name a layer; the code does not depend
        // on them, and dropping them lets layers share a kernel.
        for (NamedAttribute attr :
             llvm::to_vector(clone->getDiscardableAttrs()))
          clone->removeDiscardableAttr(attr.getName());
      }
      SmallVector<Value> results;
      for (Value r : root->getResults())
        results.push_back(mapping.lookup(r));
      func::ReturnOp::create(body, root->getLoc(), results);
      c.kernel.setPrivate();
      llvm::raw_string_ostream os(c.key);
      c.kernel->print(os, OpPrintingFlags().printGenericOpForm());
      ++occurrences[c.key];
    }

    llvm::StringMap<func::FuncOp> kernels;
    // A kernel's input may be the result of one outlined before it (a
    // quantize of a matmul's result): that result is now the call's.
    DenseMap<Value, Value> replaced;
    auto current = [&](Value v) {
      for (auto it = replaced.find(v); it != replaced.end();
           it = replaced.find(v))
        v = it->second;
      return v;
    };
    unsigned counter = 0;
    for (Candidate &c : found) {
      if (occurrences[c.key] < 2) {
        c.kernel.erase();
        continue;
      }
      func::FuncOp &existing = kernels[c.key];
      if (existing) {
        c.kernel.erase();
      } else {
        c.kernel.setName(
            b.getStringAttr("__mxfp4_kernel_" + std::to_string(counter++)));
        module.push_back(c.kernel);
        existing = c.kernel;
      }
      SmallVector<Value> inputs = llvm::map_to_vector(c.inputs, current);
      OpBuilder call(c.root);
      auto callOp =
          func::CallOp::create(call, c.root->getLoc(), existing, inputs);
      for (auto [old, now] :
           llvm::zip_equal(c.root->getResults(), callOp.getResults()))
        replaced[old] = now;
      c.root->replaceAllUsesWith(callOp.getResults());
      c.outlined = true;
    }
    // Erased only now, so that no new op reuses the address of a value
    // `replaced` maps.
    for (Candidate &c : llvm::reverse(found))
      if (c.outlined)
        for (Operation *op : llvm::reverse(c.ops))
          if (op->use_empty())
            op->erase();
  }
};

} // namespace
