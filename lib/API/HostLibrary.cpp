//===- HostLibrary.cpp - a plan's host functions as a library -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/API/HostLibrary.h"

#include "GpuCompile.h"

#include "mxfp4/API/HostABI.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cstddef>
#include <mutex>

using namespace mlir;
using namespace mlir::mxfp4;

// The generated code reads the callbacks as pointer-sized fields in
// declaration order.
static_assert(sizeof(mxfp4_tensor_map) == 20 * sizeof(uint64_t) &&
                  offsetof(mxfp4_tensor_map, dims) == 2 * sizeof(uint64_t),
              "HostABI.h's mxfp4_tensor_map changed: update the generator");
static_assert(offsetof(mxfp4_host_api, alloc) == 0 * sizeof(void *) &&
                  offsetof(mxfp4_host_api, free) == 1 * sizeof(void *) &&
                  offsetof(mxfp4_host_api, upload) == 2 * sizeof(void *) &&
                  offsetof(mxfp4_host_api, launch) == 3 * sizeof(void *) &&
                  offsetof(mxfp4_host_api, tensor_map) == 4 * sizeof(void *),
              "HostABI.h's mxfp4_host_api changed: update the generator");

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

namespace {

/// Builds the library's module: the exported data, then one function per
/// host function.
class HostModuleBuilder {
public:
  HostModuleBuilder(llvm::LLVMContext &context, llvm::Module &module)
      : module(module), b(context), i32(b.getInt32Ty()), i64(b.getInt64Ty()),
        ptr(b.getPtrTy()) {}

  /// `const uint32_t NAME = value;`
  void addVersion(llvm::StringRef name, uint32_t value) {
    new llvm::GlobalVariable(module, i32, /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage,
                             b.getInt32(value), name);
  }

  /// `const void *NAME(uint64_t *bytes)`: `data`, and its size in *bytes.
  void addBlob(llvm::StringRef name, llvm::StringRef data) {
    llvm::GlobalVariable *blob = addBytes(name + ".data", data);
    // cuModuleLoadData reads the cubin's ELF headers in place.
    blob->setAlignment(llvm::Align(64));
    llvm::Function *f = addFunction(ptr, {ptr}, name);
    b.CreateStore(b.getInt64(data.size()), f->getArg(0));
    b.CreateRet(blob);
  }

  /// `const char *const *NAME(uint32_t *count)`: `strings`, in order.
  void addStrings(llvm::StringRef name, llvm::ArrayRef<std::string> strings) {
    llvm::SmallVector<llvm::Constant *> pointers;
    for (const std::string &s : strings)
      pointers.push_back(addBytes(name + ".string", s, /*addNull=*/true));
    auto *type = llvm::ArrayType::get(ptr, pointers.size());
    auto *table = new llvm::GlobalVariable(
        module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(type, pointers), name + ".table");
    llvm::Function *f = addFunction(ptr, {ptr}, name);
    b.CreateStore(b.getInt32(strings.size()), f->getArg(0));
    b.CreateRet(table);
  }

  /// `int32_t mxfp4_fn_NAME(api, ctx, args, results)` (HostABI.h): the
  /// function's steps, each callback's status checked.
  void addFunction(const HostFunction &function,
                   const llvm::StringMap<uint32_t> &kernels);

private:
  llvm::GlobalVariable *addBytes(const llvm::Twine &name, llvm::StringRef data,
                                 bool addNull = false) {
    llvm::Constant *init =
        llvm::ConstantDataArray::getString(b.getContext(), data, addNull);
    return new llvm::GlobalVariable(
        module, init->getType(),
        /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init, name);
  }

  /// A constant `struct mxfp4_tensor_map` describing `map`.
  llvm::GlobalVariable *addTensorMap(const HostTensorMap &map) {
    auto *array5 = llvm::ArrayType::get(i64, 5);
    auto *type = llvm::StructType::get(
        b.getContext(), {ptr, i64, array5, array5, array5, i64, i64, i64});
    auto list = [&](const std::vector<int64_t> &values) {
      llvm::SmallVector<llvm::Constant *> elements;
      for (size_t i = 0; i < 5; ++i)
        elements.push_back(b.getInt64(i < values.size() ? values[i] : 0));
      return llvm::ConstantArray::get(array5, elements);
    };
    llvm::Constant *fields[] = {
        addBytes("tensor_map.type", map.elementType, /*addNull=*/true),
        b.getInt64(map.dims.size()),
        list(map.dims),
        list(map.strides),
        list(map.box),
        b.getInt64(map.offset),
        b.getInt64(map.swizzle),
        b.getInt64(map.l2Promotion)};
    return new llvm::GlobalVariable(
        module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(type, fields), "tensor_map");
  }

  /// An exported function, with the builder in its entry block.
  llvm::Function *addFunction(llvm::Type *result,
                              llvm::ArrayRef<llvm::Type *> params,
                              const llvm::Twine &name) {
    auto *f = llvm::Function::Create(
        llvm::FunctionType::get(result, params, /*isVarArg=*/false),
        llvm::GlobalValue::ExternalLinkage, name, module);
    f->setDoesNotThrow();
    b.SetInsertPoint(llvm::BasicBlock::Create(b.getContext(), "entry", f));
    return f;
  }

  llvm::Module &module;
  llvm::IRBuilder<> b;
  llvm::Type *i32, *i64, *ptr;
};

} // namespace

void HostModuleBuilder::addFunction(const HostFunction &function,
                                    const llvm::StringMap<uint32_t> &kernels) {
  llvm::Function *f =
      addFunction(i32, {ptr, ptr, ptr, ptr}, "mxfp4_fn_" + function.name);
  llvm::Value *api = f->getArg(0), *ctx = f->getArg(1);
  llvm::Value *args = f->getArg(2), *results = f->getArg(3);
  llvm::LLVMContext &context = b.getContext();

  enum Callback { Alloc, Free, Upload, Launch, TensorMap };
  llvm::Value *callbacks[5];
  for (int i : {Alloc, Free, Upload, Launch, TensorMap})
    callbacks[i] =
        b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, api, i), "callback");
  llvm::FunctionType *allocType =
      llvm::FunctionType::get(i32, {ptr, i64, ptr}, false);
  llvm::FunctionType *freeType =
      llvm::FunctionType::get(i32, {ptr, i64}, false);
  llvm::FunctionType *uploadType =
      llvm::FunctionType::get(i32, {ptr, ptr, i64, ptr}, false);
  llvm::SmallVector<llvm::Type *> launchParams = {ptr, i32, i32, i32, i32, i32,
                                                  i32, i32, i32, ptr, i32};
  llvm::FunctionType *launchType =
      llvm::FunctionType::get(i32, launchParams, false);
  llvm::FunctionType *tensorMapType =
      llvm::FunctionType::get(i32, {ptr, ptr, i64, ptr}, false);

  // One slot for alloc's and upload's buffer, one array for every launch's
  // parameters: the frame stays small however long the function is.
  size_t maxParams = 1;
  for (const HostStep &step : function.steps)
    maxParams = std::max(maxParams, step.params.size());
  llvm::Value *buffer = b.CreateAlloca(i64, nullptr, "buffer");
  llvm::Value *params =
      b.CreateAlloca(llvm::ArrayType::get(i64, maxParams), nullptr, "params");

  // A failed callback's status goes straight to the return.
  auto *failed = llvm::BasicBlock::Create(context, "failed", f);
  llvm::IRBuilder<> failedBuilder(failed);
  llvm::PHINode *status = failedBuilder.CreatePHI(i32, 0, "status");
  failedBuilder.CreateRet(status);
  auto check = [&](llvm::Value *result) {
    auto *next = llvm::BasicBlock::Create(context, "ok", f);
    status->addIncoming(result, b.GetInsertBlock());
    b.CreateCondBr(b.CreateICmpNE(result, b.getInt32(0)), failed, next);
    b.SetInsertPoint(next);
  };

  llvm::DenseMap<int64_t, llvm::Value *> values;
  // The buffers the call allocated and their views; the others are the
  // caller's arguments.
  llvm::DenseSet<int64_t> owned;
  for (auto [i, arg] : llvm::enumerate(function.arguments))
    values[arg.id] = b.CreateLoad(i64, b.CreateConstGEP1_64(i64, args, i));
  for (const HostStep &step : function.steps) {
    switch (step.kind) {
    case HostStep::Kind::Alloc:
      check(b.CreateCall(allocType, callbacks[Alloc],
                         {ctx, b.getInt64(step.bytes), buffer}));
      values[step.id] = b.CreateLoad(i64, buffer);
      owned.insert(step.id);
      break;
    case HostStep::Kind::Free:
      if (owned.contains(step.id))
        check(b.CreateCall(freeType, callbacks[Free], {ctx, values[step.id]}));
      break;
    case HostStep::Kind::View:
      values[step.id] = values[step.source];
      if (owned.contains(step.source))
        owned.insert(step.id);
      break;
    case HostStep::Kind::Const:
      values[step.id] = b.getInt64(step.bits);
      break;
    case HostStep::Kind::Global: {
      std::string bytes(step.data.begin(), step.data.end());
      bytes.resize(step.bytes);
      llvm::Constant *data = addBytes("global", bytes);
      check(b.CreateCall(uploadType, callbacks[Upload],
                         {ctx, data, b.getInt64(step.bytes), buffer}));
      values[step.id] = b.CreateLoad(i64, buffer);
      owned.insert(step.id);
      break;
    }
    case HostStep::Kind::TensorMap: {
      check(b.CreateCall(tensorMapType, callbacks[TensorMap],
                         {ctx, addTensorMap(step.map), values[step.source],
                          buffer}));
      values[step.id] = b.CreateLoad(i64, buffer);
      break;
    }
    case HostStep::Kind::Launch: {
      for (auto [i, param] : llvm::enumerate(step.params))
        b.CreateStore(values[param.second],
                      b.CreateConstGEP1_64(i64, params, i));
      llvm::SmallVector<llvm::Value *> operands = {
          ctx, b.getInt32(kernels.lookup(step.kernel))};
      for (int64_t size : step.grid)
        operands.push_back(b.getInt32(size));
      for (int64_t size : step.block)
        operands.push_back(b.getInt32(size));
      operands.append({b.getInt32(step.sharedBytes), params,
                       b.getInt32(step.params.size())});
      check(b.CreateCall(launchType, callbacks[Launch], operands));
      break;
    }
    }
  }
  for (auto [i, result] : llvm::enumerate(function.results))
    b.CreateStore(values[result.id], b.CreateConstGEP1_64(i64, results, i));
  b.CreateRet(b.getInt32(0));
}

/// The module of host.so.
static std::unique_ptr<llvm::Module>
buildHostModule(llvm::LLVMContext &context, llvm::ArrayRef<HostFunction> plan,
                llvm::StringRef manifest, llvm::ArrayRef<uint8_t> cubin) {
  auto module = std::make_unique<llvm::Module>("mxfp4_host", context);
  HostModuleBuilder builder(context, *module);
  builder.addVersion("mxfp4_host_abi_version", MXFP4_HOST_ABI_VERSION);
  builder.addBlob("mxfp4_cubin",
                  llvm::StringRef(reinterpret_cast<const char *>(cubin.data()),
                                  cubin.size()));
  builder.addBlob("mxfp4_manifest", manifest);
  // Kernels are numbered in the order the plan first launches them.
  llvm::StringMap<uint32_t> kernels;
  std::vector<std::string> names;
  for (const HostFunction &function : plan)
    for (const HostStep &step : function.steps)
      if (step.kind == HostStep::Kind::Launch &&
          kernels.try_emplace(step.kernel, names.size()).second)
        names.push_back(step.kernel);
  builder.addStrings("mxfp4_kernel_names", names);
  for (const HostFunction &function : plan)
    builder.addFunction(function, kernels);
  return module;
}

llvm::Expected<std::string>
mxfp4::emitHostObject(llvm::ArrayRef<HostFunction> plan,
                      llvm::StringRef manifest, llvm::ArrayRef<uint8_t> cubin) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no LLVM target for the host library (" + triple.str() +
                     "): " + error);
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, "generic", "", llvm::TargetOptions(), llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Less));
  if (!machine)
    return makeError("cannot create a target machine for " + triple.str());

  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      buildHostModule(context, plan, manifest, cubin);
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  std::string broken;
  llvm::raw_string_ostream brokenStream(broken);
  if (llvm::verifyModule(*module, &brokenStream))
    return makeError("the host library's module is invalid: " + broken);

  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return makeError("the " + triple.str() + " target cannot emit objects");
  passes.run(*module);
  return std::string(object.str());
}

llvm::Error mxfp4::linkHostLibrary(llvm::StringRef object,
                                   llvm::StringRef path) {
  llvm::sys::fs::remove(path);
  std::string lld = findLdLld();
  if (lld.empty())
    return makeError("cannot link '" + path +
                     "': no ld.lld (Debian package lld-22; or set "
                     "MXFP4_LD_LLD)");
  llvm::SmallString<128> objectPath, messagesPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mxfp4-host", "o", objectPath))
    return makeError("cannot create a temporary file: " + ec.message());
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("mxfp4-host", "txt", messagesPath))
    return makeError("cannot create a temporary file: " + ec.message());
  llvm::scope_exit cleanup([&] {
    llvm::sys::fs::remove(objectPath);
    llvm::sys::fs::remove(messagesPath);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return makeError("cannot write '" + objectPath + "': " + ec.message());
    os << object;
  }
  llvm::StringRef argv[] = {lld, "-shared", "-o", path, objectPath};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, messagesPath,
                                                messagesPath};
  std::string execError;
  int status = llvm::sys::ExecuteAndWait(lld, argv, std::nullopt, redirects, 0,
                                         0, &execError);
  if (status == 0)
    return llvm::Error::success();
  std::string messages;
  if (auto buffer = llvm::MemoryBuffer::getFile(messagesPath))
    messages = (*buffer)->getBuffer().trim().str();
  return makeError("cannot link '" + path + "': '" + lld + "' failed" +
                   (execError.empty() ? "" : ": " + execError) +
                   (messages.empty() ? "" : ":\n" + messages));
}
