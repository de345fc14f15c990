//===- CudaDevice.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Device of an NVIDIA GPU: libcuda.so.1 (or $MXFP4_CUDA_DRIVER, a fake
// for tests) opened with dlopen, so the runner needs no CUDA headers and
// builds where there is no GPU. Messages name the cu* call that failed and
// the driver's error name.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_CUDA_DEVICE_H
#define MXFP4_RUNTIME_CUDA_CUDA_DEVICE_H

#include "Device.h"

#include <cstddef>
#include <set>
#include <string>

namespace mlir::mxfp4::runtime {

/// Device 0 of the machine through the CUDA driver API; every operation is
/// on the default stream.
class CudaDevice : public Device {
public:
  /// Opens the driver, resolves every entry point and makes device 0's
  /// primary context current.
  /// Opens GPU `ordinal` (a data-parallel rank's; 0 otherwise).
  explicit CudaDevice(int ordinal = 0);
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  void *loadModule(const void *image, const std::string &origin) override;
  void *getKernel(void *module, const std::string &name) override;
  DevicePtr allocate(size_t bytes) override;
  void release(DevicePtr p) noexcept override;
  void copyToDevice(DevicePtr to, const void *from, size_t bytes) override;
  void copyToHost(void *to, DevicePtr from, size_t bytes) override;
  void copyOnDevice(DevicePtr to, DevicePtr from, size_t bytes) override;
  void launch(void *kernel, const std::string &name, const unsigned grid[3],
              const unsigned block[3], unsigned sharedBytes,
              void **params) override;
  void encodeTensorMap(const HostTensorMap &map, DevicePtr address,
                       void *encoded) override;
  void synchronize() override;
  void memoryInfo(size_t &freeBytes, size_t &totalBytes) override;
  void *createEvent() override;
  void destroyEvent(void *event) noexcept override;
  void recordEvent(void *event) override;
  float elapsedMs(void *start, void *stop) override;

private:
  using CUresult = int;
  using CUdeviceptr = unsigned long long;

  void load();
  template <typename F> void resolve(F &f, const char *name);
  /// Fails with `call`'s name and the driver's error name unless `status`
  /// is success.
  void check(CUresult status, const std::string &call);

  void *library = nullptr;
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(int *, int);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGetName)(char *, int, int);
  CUresult (*primaryCtxRetain)(void **, int);
  CUresult (*ctxSetCurrent)(void *);
  CUresult (*moduleLoadData)(void **, const void *);
  CUresult (*moduleGetFunction)(void **, void *, const char *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*memcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*funcSetAttribute)(void *, int, int);
  /// CUDA 12's; null with an older driver, which fails only plans that
  /// use tensor maps.
  CUresult (*tensorMapEncodeTiled)(void *, int, unsigned, void *,
                                   const unsigned long long *,
                                   const unsigned long long *,
                                   const unsigned *, const unsigned *, int,
                                   int, int, int) = nullptr;
  CUresult (*ctxSynchronize)();
  CUresult (*memGetInfo)(size_t *, size_t *);
  CUresult (*eventCreate)(void **, unsigned);
  CUresult (*eventRecord)(void *, void *);
  CUresult (*eventSynchronize)(void *);
  CUresult (*eventElapsedTime)(float *, void *, void *);
  CUresult (*eventDestroy)(void *);
  CUresult (*getErrorName)(CUresult, const char **);
  /// The kernels whose dynamic shared memory limit was raised.
  std::set<void *> largeShared;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CUDA_CUDA_DEVICE_H
