//===- Memory.h - device memory with a cache of freed blocks ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_MEMORY_H
#define MXFP4_RUNTIME_CORE_MEMORY_H

#include "Device.h"

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlir::mxfp4::runtime {

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
  explicit Memory(Device &cu) : cu(cu) {}
  Memory(const Memory &) = delete;
  Memory &operator=(const Memory &) = delete;
  ~Memory() {
    for (auto [p, bytes] : blocks)
      cu.release(p);
    for (DevicePtr p : held)
      cu.release(p);
  }

  /// A buffer for the whole run.
  DevicePtr hold(size_t bytes) {
    held.push_back(allocate(bytes ? bytes : 1));
    return held.back();
  }

  /// A block of at least `bytes`, cached or new.
  DevicePtr take(size_t bytes) {
    size_t size = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    std::vector<DevicePtr> &free = idle[size];
    if (free.empty()) {
      DevicePtr p = allocate(size);
      blocks[p] = size;
      return p;
    }
    DevicePtr p = free.back();
    free.pop_back();
    return p;
  }

  /// Returns a block from `take` to the cache.
  void give(DevicePtr p) { idle[blocks.at(p)].push_back(p); }

  /// The device address of the tensor map `map` of the buffer at `buffer`,
  /// encoded and uploaded once: a map depends on the address and the
  /// description alone, and the caching allocator hands the same blocks to
  /// every call, so a step's maps are made by its first call.
  DevicePtr tensorMap(const HostTensorMap &map, DevicePtr buffer) {
    std::vector<int64_t> key = {static_cast<int64_t>(buffer), map.offset,
                                map.swizzle, map.l2Promotion};
    for (const std::vector<int64_t> *list : {&map.dims, &map.strides, &map.box}) {
      key.push_back(static_cast<int64_t>(list->size()));
      key.insert(key.end(), list->begin(), list->end());
    }
    DevicePtr &address = tensorMaps[{map.elementType, key}];
    if (!address) {
      alignas(64) unsigned char encoded[128];
      std::memset(encoded, 0, sizeof(encoded));
      cu.encodeTensorMap(map, buffer, encoded);
      DevicePtr p = hold(sizeof(encoded));
      cu.copyToDevice(p, encoded, sizeof(encoded));
      address = p;
    }
    return address;
  }

  /// The bytes taken from the driver so far: held buffers and the cache,
  /// the run's device memory at its peak (nothing is given back early).
  size_t allocatedBytes() const { return allocated; }

private:
  DevicePtr allocate(size_t bytes) {
    DevicePtr p = cu.allocate(bytes);
    allocated += bytes;
    return p;
  }

  Device &cu;
  std::map<size_t, std::vector<DevicePtr>> idle; // by size
  std::map<DevicePtr, size_t> blocks;            // all of the cache's
  std::vector<DevicePtr> held;
  std::map<std::pair<std::string, std::vector<int64_t>>, DevicePtr> tensorMaps;
  size_t allocated = 0;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_MEMORY_H
