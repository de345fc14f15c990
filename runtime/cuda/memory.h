//===- memory.h - device memory with a cache of freed blocks ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CUDA_MEMORY_H
#define MXFP4_RUNTIME_CUDA_MEMORY_H

#include "driver.h"

#include <map>
#include <vector>

/// The device memory of a run. A plan `alloc` takes a block from a cache of
/// freed blocks of its size (rounded up to 256 bytes) before it asks the
/// driver, and a plan `free` puts the block back: after the first call, a
/// call repeats the same sequence and finds every block it needs, so steady
/// state makes no cuMemAlloc (PyTorch's caching allocator does the same).
/// Reuse needs no events: every launch and copy is on the default stream, so
/// a kernel that gets a reused block runs after every earlier user of it,
/// and the plan frees a block only after its last use. Arguments (and their
/// pristine copies) are held for the whole run, apart from the cache.
/// Everything is released at exit.
class Memory {
public:
  explicit Memory(Driver &cu) : cu(cu) {}
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory() {
    for (auto [p, bytes] : blocks)
      cu.memFree(p);
    for (CUdeviceptr p : held)
      cu.memFree(p);
  }

  /// A buffer for the whole run.
  CUdeviceptr hold(size_t bytes) {
    held.push_back(allocate(bytes ? bytes : 1));
    return held.back();
  }

  /// A block of at least `bytes`, cached or new.
  CUdeviceptr take(size_t bytes) {
    size_t size = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    std::vector<CUdeviceptr> &free = idle[size];
    if (free.empty()) {
      CUdeviceptr p = allocate(size);
      blocks[p] = size;
      return p;
    }
    CUdeviceptr p = free.back();
    free.pop_back();
    return p;
  }

  /// Returns a block from `take` to the cache.
  void give(CUdeviceptr p) { idle[blocks.at(p)].push_back(p); }

private:
  CUdeviceptr allocate(size_t bytes) {
    CUdeviceptr p = 0;
    cu.check(cu.memAlloc(&p, bytes), "cuMemAlloc");
    return p;
  }

  Driver &cu;
  std::map<size_t, std::vector<CUdeviceptr>> idle; // by size
  std::map<CUdeviceptr, size_t> blocks;            // all of the cache's
  std::vector<CUdeviceptr> held;
};

#endif // MXFP4_RUNTIME_CUDA_MEMORY_H
