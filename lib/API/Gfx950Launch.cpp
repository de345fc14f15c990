//===- Gfx950Launch.cpp - run a gfx950 host function through HIP ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Gfx950Launch.h"

#include "mxfp4/Target/GFX950/Emulator.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<std::unique_ptr<HipLauncher>> HipLauncher::create() {
  llvm::Expected<std::unique_ptr<HipRuntime>> hip = HipRuntime::load();
  if (!hip)
    return hip.takeError();
  std::unique_ptr<HipLauncher> launcher(new HipLauncher());
  launcher->hip = std::move(*hip);
  return launcher;
}

llvm::Error HipLauncher::loadCodeObject(llvm::StringRef bytes) {
  llvm::Expected<CodeObject> object = readCodeObject(bytes, "<gfx950 kernels>");
  if (!object)
    return object.takeError();
  codeObject = std::move(*object);
  llvm::Expected<HipModule> loaded = hip->loadModule(
      llvm::ArrayRef<uint8_t>(
          reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()),
      "<gfx950 kernels>");
  if (!loaded)
    return loaded.takeError();
  module = std::move(*loaded);
  return llvm::Error::success();
}

namespace {
/// A host-function value: a device buffer or a scalar.
struct DeviceValue {
  void *pointer = nullptr;
  int64_t bytes = 0;
  int64_t scalar = 0;
};
} // namespace

static int64_t bufferBytes(Type type) {
  auto memref = cast<MemRefType>(type);
  return memref.getNumElements() *
         ((memref.getElementTypeBitWidth() + 7) / 8);
}

llvm::Expected<std::vector<std::vector<uint8_t>>>
HipLauncher::run(func::FuncOp host,
                 llvm::ArrayRef<std::vector<uint8_t>> arguments) {
  DenseMap<Value, DeviceValue> values;
  std::vector<void *> owned;
  llvm::scope_exit release([&] {
    for (void *p : owned)
      llvm::consumeError(hip->deallocate(p));
  });
  auto allocate = [&](Value v, int64_t bytes) -> llvm::Error {
    llvm::Expected<void *> p = hip->allocate(bytes);
    if (!p)
      return p.takeError();
    owned.push_back(*p);
    values[v] = {*p, bytes, 0};
    return llvm::Error::success();
  };

  Block &entry = host.getBody().front();
  for (auto [arg, bytes] : llvm::zip(entry.getArguments(), arguments)) {
    if (!isa<MemRefType>(arg.getType())) {
      DeviceValue scalar;
      std::memcpy(&scalar.scalar, bytes.data(),
                  std::min<size_t>(bytes.size(), sizeof(int64_t)));
      values[arg] = scalar;
      continue;
    }
    if (llvm::Error e = allocate(arg, bytes.size()))
      return std::move(e);
    if (llvm::Error e =
            hip->copyToDevice(values[arg].pointer, bytes.data(), bytes.size()))
      return std::move(e);
  }

  llvm::StringMap<HipFunction> functions;
  for (Operation &op : entry) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      // Scalars keep their bit patterns (floats as their encoding).
      if (auto attr = dyn_cast<IntegerAttr>(c.getValue()))
        values[c.getResult()] = {nullptr, 0, attr.getInt()};
      else if (auto attr = dyn_cast<FloatAttr>(c.getValue()))
        values[c.getResult()] = {
            nullptr, 0,
            int64_t(attr.getValue().bitcastToAPInt().getZExtValue())};
      else
        return makeError("gfx950 launcher: unsupported constant");
    } else if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      if (llvm::Error e = allocate(alloc, bufferBytes(alloc.getType())))
        return std::move(e);
    } else if (auto cast = dyn_cast<memref::MemorySpaceCastOp>(op)) {
      values[cast.getResult()] = values[cast.getSource()];
    } else if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(op)) {
      // Reshapes of identity-layout buffers view the same bytes.
      values[op.getResult(0)] = values[op.getOperand(0)];
    } else if (auto get = dyn_cast<memref::GetGlobalOp>(op)) {
      llvm::Expected<std::vector<uint8_t>> host = getGlobalBytes(get);
      if (!host)
        return host.takeError();
      if (llvm::Error e = allocate(get, host->size()))
        return std::move(e);
      if (llvm::Error e = hip->copyToDevice(values[get].pointer, host->data(),
                                            host->size()))
        return std::move(e);
    } else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      StringRef name = launch.getKernelName().getValue();
      const KernelMetadata *metadata = codeObject.metadata.findKernel(name);
      if (!metadata)
        return makeError("gfx950 launcher: kernel '" + name +
                         "' is not in the code object");
      auto found = functions.find(name);
      if (found == functions.end()) {
        llvm::Expected<HipFunction> function = hip->getFunction(module, name);
        if (!function)
          return function.takeError();
        found = functions.insert({name, *function}).first;
      }
      KernargLayout layout = getKernargLayout(*metadata);
      SmallVector<KernelArgumentValue> args;
      for (auto [i, operand] : llvm::enumerate(launch.getKernelOperands())) {
        const DeviceValue &v = values[operand];
        Type type = operand.getType();
        // Index scalars are 32-bit in the kernels (index-bitwidth=32): the
        // code object's slot size says how wide each scalar is.
        int64_t size = i < layout.slots.size() ? layout.slots[i].size : 8;
        if (isa<MemRefType>(type))
          args.push_back(KernelArgumentValue::pointer(v.pointer));
        else if (size == 4)
          args.push_back(KernelArgumentValue::of(uint32_t(v.scalar)));
        else
          args.push_back(KernelArgumentValue::of(v.scalar));
      }
      auto dim = [&](Value v) { return unsigned(values[v].scalar); };
      if (llvm::Error e = hip->launch(
              found->second,
              {dim(launch.getGridSizeX()), dim(launch.getGridSizeY()),
               dim(launch.getGridSizeZ())},
              {dim(launch.getBlockSizeX()), dim(launch.getBlockSizeY()),
               dim(launch.getBlockSizeZ())},
              0, layout, args))
        return std::move(e);
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (llvm::Error e = hip->synchronize())
        return std::move(e);
      std::vector<std::vector<uint8_t>> results;
      for (Value v : ret.getOperands()) {
        const DeviceValue &d = values[v];
        std::vector<uint8_t> bytes(d.bytes);
        if (llvm::Error e = hip->copyToHost(bytes.data(), d.pointer, d.bytes))
          return std::move(e);
        results.push_back(std::move(bytes));
      }
      return results;
    } else if (!isa<memref::DeallocOp>(op)) {
      return makeError("gfx950 launcher: unsupported host op '" +
                       op.getName().getStringRef() + "'");
    }
  }
  return makeError("gfx950 launcher: the host function does not return");
}
