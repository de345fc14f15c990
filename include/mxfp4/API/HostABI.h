//===- HostABI.h - the C ABI of an sm_90a host library ----------*- C -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `mxfp4-run compile --target=sm_90a` writes host.so: the host functions of
// the plan (HostPlan.h) as machine code, which call back into the runtime
// for every device operation, with the cubin and the plan's text inside.
// The compiler (lib/API/HostLibrary.cpp) and the runtime (runtime/, no
// LLVM) both include this header, so it is plain C. Exported symbols:
//
//   const uint32_t mxfp4_host_abi_version;  (MXFP4_HOST_ABI_VERSION)
//   const void *mxfp4_cubin(uint64_t *bytes);
//   const char *mxfp4_manifest(uint64_t *bytes);  (the plan: plan.txt)
//   const char *const *mxfp4_kernel_names(uint32_t *count);
//   mxfp4_host_function mxfp4_fn_NAME;  (one per function of the plan)
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_HOSTABI_H
#define MXFP4_API_HOSTABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Changes whenever a declaration of this header does.
#define MXFP4_HOST_ABI_VERSION 2u

/// A tensor map of a buffer (HostPlan.h's HostTensorMap): what the
/// runtime encodes with cuTensorMapEncodeTiled. Sizes go outermost first;
/// `strides[i]` is the byte stride of dimension i (rank - 1 of them).
struct mxfp4_tensor_map {
  const char *element_type; /* u8 f16 bf16 f32 i32 i64 */
  uint64_t rank;
  uint64_t dims[5];
  uint64_t strides[5];
  uint64_t box[5];
  uint64_t offset;       /* bytes from the buffer's address */
  uint64_t swizzle;      /* 0, 32, 64 or 128 bytes */
  uint64_t l2_promotion; /* 0, 64, 128 or 256 bytes */
};

/// What a host function asks of the runtime. Device buffers are 64-bit
/// device addresses. Each callback returns 0 on success; the host function
/// stops at the first other value and returns it.
struct mxfp4_host_api {
  /// A new device buffer of `bytes` bytes.
  int32_t (*alloc)(void *ctx, uint64_t bytes, uint64_t *buffer);
  /// Releases a buffer from `alloc` or `upload` (never an argument).
  int32_t (*free)(void *ctx, uint64_t buffer);
  /// A new device buffer holding a copy of `bytes` host bytes (a constant
  /// global of the program).
  int32_t (*upload)(void *ctx, const void *data, uint64_t bytes,
                    uint64_t *buffer);
  /// Launches kernel `kernel` (an index into mxfp4_kernel_names) on a grid
  /// of blocks with `sharedBytes` of dynamic shared memory. Each parameter is
  /// a 64-bit value, a buffer's (or tensor map's) address or a scalar's
  /// little-endian bits; a kernel reads as many low bytes as it declares.
  int32_t (*launch)(void *ctx, uint32_t kernel, uint32_t gridX, uint32_t gridY,
                    uint32_t gridZ, uint32_t blockX, uint32_t blockY,
                    uint32_t blockZ, uint32_t sharedBytes,
                    const uint64_t *params, uint32_t numParams);
  /// The device address of tensor map `map` of the device buffer `buffer`,
  /// which stays valid for the runtime's life.
  int32_t (*tensor_map)(void *ctx, const struct mxfp4_tensor_map *map,
                        uint64_t buffer, uint64_t *address);
};

/// `mxfp4_fn_NAME`: one call of the plan's function NAME. `args` holds one
/// 64-bit value per argument (a buffer's address or a scalar's bits, as
/// launch parameters); `results` receives the result buffers, which then
/// belong to the caller.
typedef int32_t mxfp4_host_function(const struct mxfp4_host_api *api, void *ctx,
                                    const uint64_t *args, uint64_t *results);

#ifdef __cplusplus
}
#endif

#endif // MXFP4_API_HOSTABI_H
