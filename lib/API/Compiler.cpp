//===- Compiler.cpp - parse, verify, transform and print modules ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/Compiler.h"

#include "mxfp4/InitAll.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"
#include "mxfp4/Models/Attention.h"

#include "mlir/IR/Verifier.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <mutex>

using namespace mlir;
using namespace mlir::mxfp4;

namespace {

llvm::Error makeError(const llvm::Twine &headline, llvm::StringRef details) {
  details = details.rtrim();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 details.empty() ? headline.str()
                                                 : (headline + "\n" + details)
                                                       .str());
}

/// Parses `source` in `context`, reporting diagnostics to `diagnostics`.
struct ParsedModule {
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  llvm::raw_string_ostream stream{diagnostics};
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
  OwningOpRef<ModuleOp> module;

  ParsedModule(MLIRContext &context, llvm::StringRef source,
               llvm::StringRef name) {
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, name), llvm::SMLoc());
    handler = std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr,
                                                           &context, stream);
    module = parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }
};

std::string print(ModuleOp module, bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module.print(os, flags);
  return text;
}

} // namespace

/// Parses `source` into a fresh context with every mxfp4 dialect and runs
/// `fn` on the module; parse and verification errors become an llvm::Error.
static llvm::Expected<std::string> withModule(
    llvm::StringRef source, llvm::StringRef name,
    llvm::function_ref<llvm::Expected<std::string>(ParsedModule &)> fn) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  ParsedModule parsed(context, source, name);
  if (!parsed.module)
    return makeError("cannot parse or verify '" + name + "'",
                     parsed.diagnostics);
  return fn(parsed);
}

llvm::Expected<std::string> mlir::mxfp4::parseAndPrint(llvm::StringRef source,
                                                       llvm::StringRef name,
                                                       bool generic) {
  return withModule(source, name, [&](ParsedModule &parsed) {
    return llvm::Expected<std::string>(print(*parsed.module, generic));
  });
}

llvm::Expected<std::string> mlir::mxfp4::runPipeline(llvm::StringRef source,
                                                     llvm::StringRef pipeline,
                                                     llvm::StringRef name) {
  // The textual pipeline names passes from the global registry.
  static std::once_flag registered;
  std::call_once(registered, [] { registerAllPasses(); });

  return withModule(
      source, name, [&](ParsedModule &parsed) -> llvm::Expected<std::string> {
        PassManager pm(parsed.module->getContext());
        std::string pipelineErrors;
        llvm::raw_string_ostream errorStream(pipelineErrors);
        if (failed(parsePassPipeline(pipeline, pm, errorStream)))
          return makeError("invalid pass pipeline '" + pipeline + "'",
                           pipelineErrors);
        if (failed(pm.run(*parsed.module)))
          return makeError("pipeline '" + pipeline + "' failed on '" + name +
                               "'",
                           parsed.diagnostics);
        return print(*parsed.module, /*generic=*/false);
      });
}

llvm::Expected<std::string>
mlir::mxfp4::addTrainStepToSource(llvm::StringRef source,
                                  const TrainStepOptions &options,
                                  llvm::StringRef name) {
  return withModule(
      source, name, [&](ParsedModule &parsed) -> llvm::Expected<std::string> {
        if (llvm::Error error = addTrainStep(*parsed.module, options))
          return std::move(error);
        if (failed(verify(*parsed.module)))
          return makeError("the train step of '" + name + "' does not verify",
                           parsed.diagnostics);
        return print(*parsed.module, /*generic=*/false);
      });
}

llvm::Expected<std::string>
mlir::mxfp4::getAttentionCompositeSource(llvm::StringRef kind,
                                         llvm::ArrayRef<int64_t> q,
                                         llvm::ArrayRef<int64_t> kv) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  for (int64_t d : llvm::concat<const int64_t>(q, kv))
    if (d <= 0)
      return makeError("attention composite '" + kind +
                           "': dimensions must be positive",
                       "");
  if (q.size() != 4 || kv.size() != 4)
    return makeError("attention composite '" + kind +
                         "': want q [B, S, H, D] and k, v [B, S, KVH, D]",
                     "");
  Type f32 = Float32Type::get(&context);
  auto qType = RankedTensorType::get(q, f32);
  auto kvType = RankedTensorType::get(kv, f32);
  SmallVector<Type> args = {qType, kvType, kvType};
  if (kind == kCausalAttentionBackward)
    args.append({qType, RankedTensorType::get({q[0], q[2], q[1]}, f32),
                 qType});
  std::string wrong = verifyAttentionCompositeTypes(kind, args);
  if (!wrong.empty())
    return makeError("attention composite: " + wrong, "");
  Location loc = UnknownLoc::get(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  func::FuncOp fn = getOrCreateAttentionComposite(*module, loc, kind, args);
  if (failed(verify(fn)))
    return makeError("attention composite '" + kind + "' does not verify", "");
  std::string text;
  llvm::raw_string_ostream os(text);
  fn.print(os);
  return text;
}
