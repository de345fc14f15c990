//===- mxfp4_cuda_run.cpp - replay a host plan on an NVIDIA GPU -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-cuda-run PLAN CUBIN --function=NAME --input=@x.npy --input=5
//       --output=@y.npy [--repeat=N] [--time-json=FILE] [--profile]
//   mxfp4-cuda-run PLAN CUBIN --train=DIR [--out=DIR] [--steps=N]
//   mxfp4-cuda-run --host=LIBRARY ...           (instead of PLAN CUBIN)
//   mxfp4-cuda-run --check-initial-weights=DIR   (no GPU needed)
//
// Runs one function of a plan written by `mxfp4-run compile --target=sm_90a`
// (include/mxfp4/API/HostPlan.h has the format) with the kernels of its
// cubin, through libcuda.so.1 loaded at run time. Standard C++ only, so it
// travels to a machine that has a GPU driver and a compiler but no LLVM.
// Every failure is a message and exit status 1.
//
// --host=host.so calls the compile's host library instead of interpreting
// the plan: the same allocations, uploads, launches and frees, made by
// machine code through this runner's callbacks (host_library.h). The
// library carries the plan (for the arguments and results) and the cubin.
//
// The first call is a warmup and writes the --output files; --repeat=N (1
// unless given) then times N more calls with CUDA events and prints
// `time: NAME: N calls, mean X ms, min Y ms, max Z ms`. The inputs are
// uploaded once and stay on the device; the plan's allocations come from a
// cache of freed blocks, as in PyTorch, so steady-state calls make no
// cuMemAlloc. --profile adds a call that times every launch and prints the
// kernels by total time.
//
// --train=DIR trains: DIR is written by `mxfp4-run train --export-gpu-run`
// (initial weights and every step's batch, drawn as the CPU trainer draws
// them), and @train_step runs step after step with the weights and AdamW
// moments kept on the device, writing metrics.jsonl and model.safetensors.
//
//===----------------------------------------------------------------------===//

#include "host_library.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail(const std::string &message) { throw Failure(message); }

//===----------------------------------------------------------------------===//
// The CUDA driver API, resolved at run time
//===----------------------------------------------------------------------===//

using CUresult = int;
using CUdeviceptr = unsigned long long;

struct Driver {
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
  CUresult (*ctxSynchronize)();
  CUresult (*eventCreate)(void **, unsigned);
  CUresult (*eventRecord)(void *, void *);
  CUresult (*eventSynchronize)(void *);
  CUresult (*eventElapsedTime)(float *, void *, void *);
  CUresult (*eventDestroy)(void *);
  CUresult (*getErrorName)(CUresult, const char **);

  template <typename F> void resolve(F &f, const char *name) {
    f = reinterpret_cast<F>(dlsym(library, name));
    if (!f)
      fail(std::string("libcuda.so.1 has no ") + name +
           ": a CUDA driver too old for this runner");
  }

  void load() {
    const char *path = getenv("MXFP4_CUDA_DRIVER");
    library = dlopen(path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
      fail(std::string("CUDA driver not found: dlopen(") +
           (path ? path : "libcuda.so.1") + "): " + dlerror() +
           "; this runner needs an NVIDIA GPU and its driver");
    resolve(init, "cuInit");
    resolve(deviceGet, "cuDeviceGet");
    resolve(deviceGetCount, "cuDeviceGetCount");
    resolve(deviceGetName, "cuDeviceGetName");
    resolve(primaryCtxRetain, "cuDevicePrimaryCtxRetain");
    resolve(ctxSetCurrent, "cuCtxSetCurrent");
    resolve(moduleLoadData, "cuModuleLoadData");
    resolve(moduleGetFunction, "cuModuleGetFunction");
    resolve(memAlloc, "cuMemAlloc_v2");
    resolve(memFree, "cuMemFree_v2");
    resolve(memcpyHtoD, "cuMemcpyHtoD_v2");
    resolve(memcpyDtoH, "cuMemcpyDtoH_v2");
    resolve(memcpyDtoD, "cuMemcpyDtoD_v2");
    resolve(launchKernel, "cuLaunchKernel");
    resolve(ctxSynchronize, "cuCtxSynchronize");
    resolve(eventCreate, "cuEventCreate");
    resolve(eventRecord, "cuEventRecord");
    resolve(eventSynchronize, "cuEventSynchronize");
    resolve(eventElapsedTime, "cuEventElapsedTime");
    resolve(eventDestroy, "cuEventDestroy_v2");
    resolve(getErrorName, "cuGetErrorName");
  }

  void check(CUresult status, const std::string &call) {
    if (status == 0)
      return;
    const char *name = "unknown error";
    getErrorName(status, &name);
    fail(call + " failed: " + name + " (" + std::to_string(status) + ")");
  }
};

//===----------------------------------------------------------------------===//
// .npy files (C order, little endian)
//===----------------------------------------------------------------------===//

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot read '" + path + "'");
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

/// The data bytes of a .npy file.
std::vector<char> readNpy(const std::string &path) {
  std::vector<char> file = readFile(path);
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0)
    fail("'" + path + "' is not a .npy file");
  size_t header = file[6] == 1
                      ? 10 + (uint8_t(file[8]) | uint8_t(file[9]) << 8)
                      : 12 + (uint8_t(file[8]) | uint8_t(file[9]) << 8 |
                              uint8_t(file[10]) << 16 |
                              uint32_t(uint8_t(file[11])) << 24);
  if (header > file.size())
    fail("'" + path + "' has a truncated header");
  std::string dict(file.data() + 8, header - 8);
  if (dict.find("'fortran_order': True") != std::string::npos)
    fail("'" + path + "' is in Fortran order");
  if (dict.find("'<") == std::string::npos &&
      dict.find("'|") == std::string::npos)
    fail("'" + path + "' is not little-endian");
  return std::vector<char>(file.begin() + header, file.end());
}

void writeNpy(const std::string &path, const std::string &type,
              const std::vector<int64_t> &shape,
              const std::vector<char> &data) {
  const char *descr = type == "f32"   ? "<f4"
                      : type == "bf16" ? "<u2"
                      : type == "i32"  ? "<i4"
                      : type == "i64"  ? "<i8"
                                       : "|u1";
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.erase(dims.size() - 2);
  else if (shape.empty())
    dims.clear();
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    fail("cannot write '" + path + "'");
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t length = header.size();
  out.write(reinterpret_cast<char *>(&length), 2);
  out << header;
  out.write(data.data(), data.size());
}

//===----------------------------------------------------------------------===//
// The plan
//===----------------------------------------------------------------------===//

/// One record of the function, parsed once: the timed calls replay these and
/// read no text.
struct Record {
  enum Kind { Arg, Alloc, Free, View, Const, Global, Launch, Result };
  Kind kind = Alloc;
  long id = 0;
  long source = 0;        // view
  size_t index = 0;       // arg, result
  size_t bytes = 0;       // arg, alloc, global, result
  bool buffer = false;    // arg: a buffer, not a scalar
  uint64_t bits = 0;      // const
  std::vector<char> data; // global
  std::string name;       // launch: the kernel; result: the element type
  unsigned grid[3] = {}, block[3] = {};
  std::vector<std::pair<bool, long>> args; // launch: (is a buffer, id)
  std::vector<int64_t> shape;              // result
  void *kernel = nullptr;                  // launch, once the cubin is loaded
};

Record parseRecord(const std::string &line) {
  std::istringstream w(line);
  std::string kind;
  w >> kind;
  Record r;
  if (kind == "arg") {
    std::string what;
    r.kind = Record::Arg;
    w >> r.index >> what >> r.id >> r.bytes;
    r.buffer = what == "buffer";
  } else if (kind == "alloc") {
    r.kind = Record::Alloc;
    w >> r.id >> r.bytes;
  } else if (kind == "free") {
    r.kind = Record::Free;
    w >> r.id;
  } else if (kind == "view") {
    r.kind = Record::View;
    w >> r.id >> r.source;
  } else if (kind == "const") {
    std::string hex;
    r.kind = Record::Const;
    w >> r.id >> r.bytes >> hex;
    r.bits = std::strtoull(hex.c_str(), nullptr, 16);
  } else if (kind == "global") {
    std::string hex;
    r.kind = Record::Global;
    w >> r.id >> r.bytes >> hex;
    r.data.resize(r.bytes);
    for (size_t i = 0; i < r.bytes && 2 * i + 1 < hex.size(); ++i)
      r.data[i] = char(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  } else if (kind == "launch") {
    r.kind = Record::Launch;
    w >> r.name >> r.grid[0] >> r.grid[1] >> r.grid[2] >> r.block[0] >>
        r.block[1] >> r.block[2];
    for (std::string a; w >> a;)
      r.args.push_back({a[0] == 'b', std::stol(a.substr(1))});
  } else if (kind == "result") {
    r.kind = Record::Result;
    w >> r.index >> r.id >> r.bytes >> r.name;
    for (int64_t d; w >> d;)
      r.shape.push_back(d);
  } else {
    fail("unknown plan record '" + kind + "'");
  }
  return r;
}

/// The records of `function` in the plan `text` (read from `planPath`), up
/// to its `end`.
std::vector<Record> readFunction(const std::string &text,
                                 const std::string &planPath,
                                 const std::string &function) {
  std::istringstream planFile(text);
  std::vector<Record> records;
  std::vector<std::string> names;
  bool inside = false, found = false;
  for (std::string line; std::getline(planFile, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    std::string kind, name;
    words >> kind;
    if (kind == "function") {
      words >> name;
      names.push_back(name);
      inside = name == function;
      found |= inside;
      continue;
    }
    if (kind == "end")
      inside = false;
    else if (inside)
      records.push_back(parseRecord(line));
  }
  if (!found) {
    std::string known;
    for (const std::string &n : names)
      known += " " + n;
    fail("no function '" + function + "' in '" + planPath +
         "' (functions:" + known + ")");
  }
  return records;
}

/// The cache below hands a freed block to a later `alloc`, so a plan that
/// touched a buffer after its `free` would read another buffer's data. The
/// compiler frees each allocation once, after its last use (LinalgToGPU's
/// freeAfterLastUse): this only refuses a broken plan, before any launch.
void checkLifetimes(const std::vector<Record> &records) {
  std::map<long, long> root; // a view's allocation (or argument)
  std::set<long> freed;
  auto use = [&](long id, const std::string &what) {
    auto it = root.find(id);
    long base = it == root.end() ? id : it->second;
    if (freed.count(base))
      fail("the plan " + what + " buffer " + std::to_string(id) +
           " after freeing it");
    return base;
  };
  for (const Record &r : records) {
    if (r.kind == Record::View)
      root[r.id] = use(r.source, "views");
    else if (r.kind == Record::Free)
      freed.insert(use(r.id, "frees"));
    else if (r.kind == Record::Result)
      use(r.id, "returns");
    else if (r.kind == Record::Launch)
      for (auto [isBuffer, id] : r.args)
        if (isBuffer)
          use(id, "passes " + r.name);
  }
}

/// The function a run calls: its plan records, and, through a host
/// library, its code and the kernels the code launches by index (else the
/// records' launches are replayed).
struct Program {
  std::vector<Record> records;
  mxfp4_host_function *code = nullptr;
  std::vector<void *> kernels;
  std::vector<std::string> kernelNames;
};

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

/// A buffer argument: uploaded once, before the first call, and kept on the
/// device for every call.
struct Input {
  size_t index = 0;
  long id = 0;
  std::vector<char> host; // the .npy data, to spot a call writing it
  CUdeviceptr device = 0;
  CUdeviceptr pristine = 0; // a copy to restore, once a call wrote it
};

/// What every call starts from: the argument buffers and the scalars
/// (arguments and the plan's constants, fixed for the run).
struct Arguments {
  std::vector<Input> buffers;
  std::map<long, uint64_t> scalars;
};

Arguments upload(Driver &cu, Memory &memory, const std::vector<Record> &records,
                 const std::vector<std::string> &inputs,
                 const std::string &function) {
  Arguments arguments;
  for (const Record &r : records) {
    if (r.kind == Record::Const)
      arguments.scalars[r.id] = r.bits;
    if (r.kind != Record::Arg)
      continue;
    if (r.index >= inputs.size())
      fail("@" + function + " takes more arguments than the " +
           std::to_string(inputs.size()) + " given");
    const std::string &input = inputs[r.index];
    if (!r.buffer) {
      arguments.scalars[r.id] = std::strtoull(input.c_str(), nullptr, 0);
      continue;
    }
    if (input.empty() || input[0] != '@')
      fail("argument #" + std::to_string(r.index) +
           " is a tensor: pass "
           "@FILE.npy");
    Input buffer;
    buffer.index = r.index;
    buffer.id = r.id;
    buffer.host = readNpy(input.substr(1));
    if (buffer.host.size() != r.bytes)
      fail("argument #" + std::to_string(r.index) + " (" + input + ") has " +
           std::to_string(buffer.host.size()) +
           " bytes of data, the plan wants " + std::to_string(r.bytes));
    buffer.device = memory.hold(r.bytes);
    cu.check(cu.memcpyHtoD(buffer.device, buffer.host.data(), r.bytes),
             "cuMemcpyHtoD");
    arguments.buffers.push_back(std::move(buffer));
  }
  return arguments;
}

/// Repeated calls must start from the same inputs. The plan format does not
/// forbid writing an argument: a launch may be given an argument buffer (or
/// a view of one) and its kernel may store to any buffer it gets, and
/// one-shot bufferization with writable function boundaries can put a result
/// in place in an argument (a result record may then name the argument).
/// The compiler's plans of today never do (no kernel of the micro step
/// stores to an argument, no result names one), but the runner cannot see
/// stores from the plan, so it compares each argument with its upload after
/// the warmup call and keeps a pristine device copy of each one that changed.
void keepPristineCopies(Driver &cu, Memory &memory, Arguments &arguments,
                        const std::string &function) {
  for (Input &input : arguments.buffers) {
    std::vector<char> now(input.host.size());
    cu.check(cu.memcpyDtoH(now.data(), input.device, now.size()),
             "cuMemcpyDtoH");
    if (now == input.host)
      continue;
    std::fprintf(stderr,
                 "mxfp4-cuda-run: note: @%s writes its argument #%zu; it is "
                 "restored before each timed call\n",
                 function.c_str(), input.index);
    input.pristine = memory.hold(input.host.size());
    cu.check(
        cu.memcpyHtoD(input.pristine, input.host.data(), input.host.size()),
        "cuMemcpyHtoD");
  }
}

/// Puts back the arguments a call wrote (outside the timed region: the copy
/// is queued before the start event on the same stream).
void restore(Driver &cu, const Arguments &arguments) {
  for (const Input &input : arguments.buffers)
    if (input.pristine)
      cu.check(cu.memcpyDtoD(input.device, input.pristine, input.host.size()),
               "cuMemcpyDtoD");
}

//===----------------------------------------------------------------------===//
// Replay
//===----------------------------------------------------------------------===//

/// Resolves the kernels of the records' launches and the library's.
void resolveKernels(Driver &cu, void *module, Program &program) {
  std::map<std::string, void *> kernels;
  auto get = [&](const std::string &name) {
    void *&kernel = kernels[name];
    if (!kernel)
      cu.check(cu.moduleGetFunction(&kernel, module, name.c_str()),
               "cuModuleGetFunction(" + name + ")");
    return kernel;
  };
  for (Record &r : program.records)
    if (r.kind == Record::Launch)
      r.kernel = get(r.name);
  for (const std::string &name : program.kernelNames)
    program.kernels.push_back(get(name));
}

/// Events around each launch of a profiled call, in launch order.
struct LaunchEvents {
  std::vector<std::pair<void *, void *>> events;
  std::vector<const std::string *> kernels;
};

/// Launches `kernel` (named `name`), between events if the call is
/// profiled. The driver gets one pointer per parameter and copies as many
/// bytes as the kernel declares (index scalars are 32-bit in the kernels:
/// the low half of the little-endian 64-bit value).
void launchKernel(Driver &cu, LaunchEvents *profile, void *kernel,
                  const std::string &name, const unsigned grid[3],
                  const unsigned block[3], unsigned sharedBytes,
                  const uint64_t *values, size_t count) {
  std::vector<void *> params(count);
  for (size_t i = 0; i < count; ++i)
    params[i] = const_cast<uint64_t *>(values + i);
  size_t index = profile ? profile->kernels.size() : 0;
  if (profile) {
    if (index == profile->events.size())
      fail("the call launches more kernels than its plan");
    profile->kernels.push_back(&name);
    cu.check(cu.eventRecord(profile->events[index].first, nullptr),
             "cuEventRecord");
  }
  cu.check(cu.launchKernel(kernel, grid[0], grid[1], grid[2], block[0],
                           block[1], block[2], sharedBytes, nullptr,
                           params.data(), nullptr),
           "cuLaunchKernel(" + name + ")");
  if (profile)
    cu.check(cu.eventRecord(profile->events[index].second, nullptr),
             "cuEventRecord");
}

void writeResult(Driver &cu, const Record &r, CUdeviceptr p,
                 const std::string &path) {
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  std::vector<char> data(r.bytes);
  cu.check(cu.memcpyDtoH(data.data(), p, r.bytes), "cuMemcpyDtoH");
  writeNpy(path, r.name, r.shape, data);
}

/// One call by replaying the records; `live` gets the blocks it takes and
/// does not free. Returns the result buffers, by index.
std::vector<CUdeviceptr> interpret(Driver &cu, Memory &memory,
                                   const std::vector<Record> &records,
                                   const Arguments &arguments,
                                   std::set<CUdeviceptr> &live,
                                   LaunchEvents *profile) {
  std::map<long, CUdeviceptr> buffers;
  for (const Input &input : arguments.buffers)
    buffers[input.id] = input.device;
  std::vector<CUdeviceptr> results;
  for (const Record &r : records) {
    switch (r.kind) {
    case Record::Arg:
    case Record::Const:
      break; // in `arguments`
    case Record::Alloc:
      live.insert(buffers[r.id] = memory.take(r.bytes));
      break;
    case Record::Free:
      // Not a block of this call: an argument, which stays with the runner
      // for the next call.
      if (live.erase(buffers.at(r.id)))
        memory.give(buffers.at(r.id));
      break;
    case Record::View:
      buffers[r.id] = buffers.at(r.source);
      break;
    case Record::Global:
      live.insert(buffers[r.id] = memory.take(r.bytes));
      cu.check(cu.memcpyHtoD(buffers[r.id], r.data.data(), r.bytes),
               "cuMemcpyHtoD");
      break;
    case Record::Launch: {
      std::vector<uint64_t> values;
      for (auto [isBuffer, id] : r.args)
        values.push_back(isBuffer ? buffers.at(id) : arguments.scalars.at(id));
      launchKernel(cu, profile, r.kernel, r.name, r.grid, r.block, 0,
                   values.data(), values.size());
      break;
    }
    case Record::Result:
      if (results.size() <= r.index)
        results.resize(r.index + 1);
      results[r.index] = buffers.at(r.id);
      break;
    }
  }
  return results;
}

/// The host library's device operations, as `interpret` makes them for the
/// records.
class LibraryCalls : public HostCalls {
public:
  LibraryCalls(Driver &cu, Memory &memory, const Program &program,
               std::set<CUdeviceptr> &live, LaunchEvents *profile)
      : cu(cu), memory(memory), program(program), live(live), profile(profile) {
  }

  uint64_t alloc(uint64_t bytes) override {
    CUdeviceptr p = memory.take(bytes);
    live.insert(p);
    return p;
  }

  void free(uint64_t buffer) override {
    if (!live.erase(buffer))
      fail("the host library frees a buffer the call did not allocate");
    memory.give(buffer);
  }

  uint64_t upload(const void *data, uint64_t bytes) override {
    uint64_t p = alloc(bytes);
    cu.check(cu.memcpyHtoD(p, data, bytes), "cuMemcpyHtoD");
    return p;
  }

  void launch(uint32_t kernel, const unsigned grid[3], const unsigned block[3],
              unsigned sharedBytes, const uint64_t *params,
              uint32_t numParams) override {
    if (kernel >= program.kernels.size())
      fail("the host library launches kernel #" + std::to_string(kernel) +
           " of " + std::to_string(program.kernels.size()));
    launchKernel(cu, profile, program.kernels[kernel],
                 program.kernelNames[kernel], grid, block, sharedBytes, params,
                 numParams);
  }

private:
  Driver &cu;
  Memory &memory;
  const Program &program;
  std::set<CUdeviceptr> &live;
  LaunchEvents *profile;
};

/// One call through the host library, as `interpret`.
std::vector<CUdeviceptr> callLibrary(Driver &cu, Memory &memory,
                                     const Program &program,
                                     const Arguments &arguments,
                                     std::set<CUdeviceptr> &live,
                                     LaunchEvents *profile) {
  std::vector<uint64_t> args;
  size_t results = 0;
  for (const Record &r : program.records) {
    if (r.kind == Record::Arg) {
      args.resize(std::max(args.size(), r.index + 1));
      if (!r.buffer)
        args[r.index] = arguments.scalars.at(r.id);
    }
    results += r.kind == Record::Result;
  }
  for (const Input &input : arguments.buffers)
    args.at(input.index) = input.device;
  std::vector<uint64_t> buffers(results);
  LibraryCalls calls(cu, memory, program, live, profile);
  callHostFunction(program.code, calls, args.data(), buffers.data());
  return std::vector<CUdeviceptr>(buffers.begin(), buffers.end());
}

/// One call of the function, through the library or the records. The
/// warmup call gets the --output paths and writes the results; timed calls
/// get none and copy nothing back. Blocks the call took and did not free
/// (its results, its globals) go back to the cache at its end, as when a
/// caller drops the results.
void replay(Driver &cu, Memory &memory, const Program &program,
            const Arguments &arguments, const std::vector<std::string> *outputs,
            LaunchEvents *profile = nullptr,
            std::vector<CUdeviceptr> *kept = nullptr) {
  std::set<CUdeviceptr> live; // blocks taken and not yet freed
  std::vector<CUdeviceptr> results =
      program.code
          ? callLibrary(cu, memory, program, arguments, live, profile)
          : interpret(cu, memory, program.records, arguments, live, profile);
  for (const Record &r : program.records) {
    if (r.kind != Record::Result)
      continue;
    if (outputs && r.index < outputs->size())
      writeResult(cu, r, results[r.index], (*outputs)[r.index]);
    // Kept results belong to the caller, who gives them back.
    if (kept) {
      if (kept->size() <= r.index)
        kept->resize(r.index + 1);
      (*kept)[r.index] = results[r.index];
      live.erase(results[r.index]);
    }
  }
  for (CUdeviceptr p : live)
    memory.give(p);
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

/// A call's time on the device's clock: an event before its first record and
/// one after its last, on the default stream that every launch and copy of
/// the call uses, so it covers the allocations, the copies of globals and
/// the host's gaps between launches as well as the kernels.
class Timer {
public:
  explicit Timer(Driver &cu) : cu(cu) {
    cu.check(cu.eventCreate(&start, 0), "cuEventCreate");
    cu.check(cu.eventCreate(&stop, 0), "cuEventCreate");
  }
  Timer(const Timer &) = delete;
  Timer &operator=(const Timer &) = delete;
  ~Timer() {
    cu.eventDestroy(start);
    cu.eventDestroy(stop);
  }

  void begin() { cu.check(cu.eventRecord(start, nullptr), "cuEventRecord"); }

  /// Milliseconds since `begin`, once the device is there.
  float end() {
    cu.check(cu.eventRecord(stop, nullptr), "cuEventRecord");
    cu.check(cu.eventSynchronize(stop), "cuEventSynchronize");
    float ms = 0;
    cu.check(cu.eventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    return ms;
  }

private:
  Driver &cu;
  void *start = nullptr, *stop = nullptr;
};

/// Runs one more call with events around every launch and prints the
/// kernels by total time: where a step's time goes.
void profileCall(Driver &cu, Memory &memory, const Program &program,
                 const Arguments &arguments) {
  LaunchEvents profile;
  for (const Record &r : program.records)
    if (r.kind == Record::Launch) {
      void *start = nullptr, *stop = nullptr;
      cu.check(cu.eventCreate(&start, 0), "cuEventCreate");
      cu.check(cu.eventCreate(&stop, 0), "cuEventCreate");
      profile.events.push_back({start, stop});
    }
  replay(cu, memory, program, arguments, nullptr, &profile);
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  std::map<std::string, std::pair<double, size_t>> byKernel;
  double total = 0;
  for (size_t i = 0; i < profile.kernels.size(); ++i) {
    float ms = 0;
    cu.check(cu.eventElapsedTime(&ms, profile.events[i].first,
                                 profile.events[i].second),
             "cuEventElapsedTime");
    auto &entry = byKernel[*profile.kernels[i]];
    entry.first += ms;
    ++entry.second;
    total += ms;
  }
  for (auto [start, stop] : profile.events) {
    cu.eventDestroy(start);
    cu.eventDestroy(stop);
  }
  std::vector<std::pair<double, std::string>> sorted;
  for (auto &[name, entry] : byKernel)
    sorted.push_back({entry.first, name});
  std::sort(sorted.rbegin(), sorted.rend());
  std::printf("profile: %zu launches, %.3f ms in kernels\n",
              profile.kernels.size(), total);
  for (size_t i = 0; i < sorted.size() && i < 25; ++i)
    std::printf("profile: %9.3f ms %5.1f%% %5zu x %s\n", sorted[i].first,
                100 * sorted[i].first / total,
                byKernel[sorted[i].second].second, sorted[i].second.c_str());
}

struct Times {
  size_t calls = 0;
  double mean = 0, min = 0, max = 0;
};

Times summarize(const std::vector<float> &ms) {
  Times t;
  t.calls = ms.size();
  t.min = *std::min_element(ms.begin(), ms.end());
  t.max = *std::max_element(ms.begin(), ms.end());
  for (float m : ms)
    t.mean += m;
  t.mean /= double(ms.size());
  return t;
}

std::string jsonString(const std::string &s) {
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    if (uint8_t(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\u%04x", c);
      quoted += escape;
      continue;
    }
    quoted += c;
  }
  return quoted + "\"";
}

void writeTimeJson(const std::string &path, const std::string &function,
                   const Times &t, size_t launches) {
  std::ofstream out(path);
  if (!out)
    fail("cannot write '" + path + "'");
  char numbers[160];
  std::snprintf(numbers, sizeof(numbers),
                "\"calls\": %zu, \"mean_ms\": %.6f, \"min_ms\": %.6f, "
                "\"max_ms\": %.6f, \"launches_per_call\": %zu",
                t.calls, t.mean, t.min, t.max, launches);
  out << "{\"function\": " << jsonString(function) << ", " << numbers << "}\n";
}

//===----------------------------------------------------------------------===//
// The command
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Training (--train=DIR)
//===----------------------------------------------------------------------===//

/// A run exported by `mxfp4-run train --export-gpu-run=DIR`: run.txt, the
/// initial parameters param<i>.npy and every step's batch in batches.bin.
struct TrainingRun {
  int64_t steps = 0, batch = 0, window = 0, tokenBytes = 4;
  uint64_t seed = 0;
  double initStd = 0;
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  std::vector<bool> normal; // else ones (norm gains)
  std::vector<char> batches;
};

/// SplitMix64, as lib/API/Trainer.cpp draws initial weights.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  return mix(mix(mix(a) ^ b) ^ c);
}

/// Parameter `i`'s initial values, drawn as initLlamaParameters does
/// (Box-Muller on counter-based uniforms), for runs too large to carry them.
std::vector<char> drawParameter(const TrainingRun &run, size_t i,
                                size_t elements) {
  std::vector<float> v(elements, 1.0f);
  auto unitOpen = [](uint64_t bits) {
    return (double(bits >> 11) + 0.5) * 0x1.0p-53;
  };
  if (run.normal[i])
    for (size_t j = 0; j < elements; ++j) {
      uint64_t pair = j / 2;
      double u1 = unitOpen(mix(run.seed, i * 2 + 0x1000, pair));
      double u2 = unitOpen(mix(run.seed, i * 2 + 0x1001, pair));
      double radius = std::sqrt(-2.0 * std::log(u1));
      double angle = 2.0 * M_PI * u2;
      double z = j % 2 == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
      v[j] = static_cast<float>(z * run.initStd);
    }
  std::vector<char> bytes(elements * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

TrainingRun readTrainingRun(const std::string &dir) {
  std::ifstream manifest(dir + "/run.txt");
  if (!manifest)
    fail("cannot read '" + dir + "/run.txt' (write it with 'mxfp4-run train "
         "--export-gpu-run=" + dir + "')");
  TrainingRun run;
  std::string line;
  while (std::getline(manifest, line)) {
    std::istringstream w(line);
    std::string key;
    w >> key;
    if (key == "steps")
      w >> run.steps;
    else if (key == "batch")
      w >> run.batch;
    else if (key == "window")
      w >> run.window;
    else if (key == "token_bytes")
      w >> run.tokenBytes;
    else if (key == "seed")
      w >> run.seed;
    else if (key == "init_std")
      w >> run.initStd;
    else if (key == "param") {
      size_t index;
      std::string name, init;
      w >> index >> name >> init;
      run.normal.push_back(init == "normal");
      std::vector<int64_t> shape;
      for (int64_t d; w >> d;)
        shape.push_back(d);
      run.params.push_back({name, shape});
    }
  }
  run.batches = readFile(dir + "/batches.bin");
  if (run.batches.size() !=
      size_t(run.steps * run.batch * run.window * run.tokenBytes))
    fail("'" + dir + "/batches.bin' does not hold " +
         std::to_string(run.steps) + " batches of " +
         std::to_string(run.batch) + " x " + std::to_string(run.window) +
         " tokens");
  return run;
}

/// Writes `params` as Hugging Face safetensors (little-endian f32).
void writeSafetensors(Driver &cu, const std::string &path,
                      const TrainingRun &run,
                      const std::vector<CUdeviceptr> &params) {
  std::string header = "{";
  size_t offset = 0;
  std::vector<size_t> sizes;
  for (auto &[name, shape] : run.params) {
    size_t bytes = 4;
    std::string dims;
    for (int64_t d : shape) {
      bytes *= d;
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    header += (offset ? "," : "") + jsonString(name) +
              ":{\"dtype\":\"F32\",\"shape\":[" + dims +
              "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
    sizes.push_back(bytes);
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    fail("cannot write '" + path + "'");
  uint64_t length = header.size();
  out.write(reinterpret_cast<char *>(&length), 8);
  out << header;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<char> data(sizes[i]);
    cu.check(cu.memcpyDtoH(data.data(), params[i], sizes[i]), "cuMemcpyDtoH");
    out.write(data.data(), data.size());
  }
}

/// Trains with @train_step (parameters, AdamW m and v, tokens, step) ->
/// (loss, gradient norm, learning rate, new parameters, m, v): the loop of
/// the CPU trainer, with the state kept on the device and each step's
/// results becoming the next step's arguments. Writes metrics.jsonl (the
/// CPU trainer's fields) and model.safetensors to `outDir`.
void train(Driver &cu, Memory &memory, const Program &program,
           const std::string &dir, const std::string &outDir,
           int64_t stepsCap) {
  const std::vector<Record> &records = program.records;
  TrainingRun run = readTrainingRun(dir);
  size_t n = run.params.size();
  std::vector<const Record *> args;
  for (const Record &r : records)
    if (r.kind == Record::Arg) {
      if (args.size() <= r.index)
        args.resize(r.index + 1);
      args[r.index] = &r;
    }
  size_t tokenBytes = size_t(run.batch * run.window) * 4;
  if (args.size() != 3 * n + 2 || !args[3 * n]->buffer ||
      args[3 * n]->bytes != tokenBytes || args[3 * n + 1]->buffer)
    fail("the plan's @train_step does not take " + std::to_string(n) +
         " parameters, their moments, a " + std::to_string(run.batch) + " x " +
         std::to_string(run.window) + " batch and a step: was it compiled "
         "from the same config?");

  Arguments arguments;
  for (const Record &r : records)
    if (r.kind == Record::Const)
      arguments.scalars[r.id] = r.bits;
  std::vector<CUdeviceptr> state(3 * n);
  for (size_t i = 0; i < 3 * n; ++i) {
    state[i] = memory.take(args[i]->bytes);
    std::vector<char> host(args[i]->bytes, 0);
    if (i < n) {
      std::string path = dir + "/param" + std::to_string(i) + ".npy";
      host = std::ifstream(path) ? readNpy(path)
                                 : drawParameter(run, i, args[i]->bytes / 4);
      if (host.size() != args[i]->bytes)
        fail("'" + path + "' does not fit parameter '" + run.params[i].first +
             "'");
    }
    cu.check(cu.memcpyHtoD(state[i], host.data(), host.size()),
             "cuMemcpyHtoD");
  }
  CUdeviceptr tokens = memory.hold(tokenBytes);
  for (size_t i = 0; i <= 3 * n; ++i) {
    Input input;
    input.index = i;
    input.id = args[i]->id;
    input.device = i < 3 * n ? state[i] : tokens;
    arguments.buffers.push_back(input);
  }

  std::string metricsPath = outDir + "/metrics.jsonl";
  std::ofstream metrics(metricsPath);
  if (!metrics)
    fail("cannot write '" + metricsPath + "'");
  int64_t steps = stepsCap > 0 ? std::min(stepsCap, run.steps) : run.steps;
  int64_t tokensPerStep = run.batch * (run.window - 1);
  std::vector<int32_t> batch(run.batch * run.window);
  Timer clock(cu);
  clock.begin();
  for (int64_t step = 0; step < steps; ++step) {
    const char *from =
        run.batches.data() + step * batch.size() * run.tokenBytes;
    for (size_t t = 0; t < batch.size(); ++t)
      if (run.tokenBytes == 1)
        batch[t] = static_cast<uint8_t>(from[t]);
      else
        std::memcpy(&batch[t], from + 4 * t, 4);
    cu.check(cu.memcpyHtoD(tokens, batch.data(), tokenBytes), "cuMemcpyHtoD");
    arguments.scalars[args[3 * n + 1]->id] = uint64_t(step);
    std::vector<CUdeviceptr> results;
    replay(cu, memory, program, arguments, nullptr, nullptr, &results);
    if (results.size() != 3 * n + 3)
      fail("@train_step returns " + std::to_string(results.size()) +
           " results, not " + std::to_string(3 * n + 3));
    float scalars[3];
    for (int k = 0; k < 3; ++k) {
      cu.check(cu.memcpyDtoH(&scalars[k], results[k], 4), "cuMemcpyDtoH");
      memory.give(results[k]);
    }
    // The new parameters and moments are the next step's arguments.
    for (size_t i = 0; i < 3 * n; ++i) {
      memory.give(state[i]);
      state[i] = arguments.buffers[i].device = results[3 + i];
    }
    float elapsedMs = clock.end();
    double seconds = elapsedMs / 1000.0;
    char line[320];
    std::snprintf(line, sizeof(line),
                  "{\"step\": %lld, \"tokens\": %lld, \"loss\": %.9g, "
                  "\"lr\": %.9g, \"grad_norm\": %.9g, \"tokens_per_s\": %.1f, "
                  "\"elapsed_s\": %.3f}",
                  (long long)(step + 1), (long long)((step + 1) * tokensPerStep),
                  scalars[0], scalars[2], scalars[1],
                  (step + 1) * tokensPerStep / seconds, seconds);
    metrics << line << "\n";
    if ((step + 1) % 50 == 0 || step + 1 == steps || step < 3)
      std::printf("step %lld: loss %.4f, lr %.3g, grad norm %.3f, %.0f "
                  "tokens/s\n",
                  (long long)(step + 1), scalars[0], scalars[2], scalars[1],
                  (step + 1) * tokensPerStep / seconds);
  }
  metrics.close();
  writeSafetensors(cu, outDir + "/model.safetensors", run,
                   std::vector<CUdeviceptr>(state.begin(), state.begin() + n));
  std::printf("metrics: %s\ncheckpoint: %s/model.safetensors\n",
              metricsPath.c_str(), outDir.c_str());
}

/// Draws every parameter that DIR also carries as param<i>.npy and compares
/// the bytes: the runtime's generator against the CPU trainer's, without a
/// GPU. Prints one line and returns 0 if all are identical.
int checkInitialWeights(const std::string &dir) {
  TrainingRun run = readTrainingRun(dir);
  size_t checked = 0;
  for (size_t i = 0; i < run.params.size(); ++i) {
    std::string path = dir + "/param" + std::to_string(i) + ".npy";
    if (!std::ifstream(path))
      continue;
    std::vector<char> carried = readNpy(path);
    if (drawParameter(run, i, carried.size() / 4) != carried)
      fail("the runtime draws parameter '" + run.params[i].first +
           "' differently from the CPU trainer ('" + path + "')");
    ++checked;
  }
  if (!checked)
    fail("'" + dir + "' carries no initial weights to compare with");
  std::printf("initial weights: %zu of %zu parameters drawn bit-identically "
              "to the CPU trainer's\n",
              checked, run.params.size());
  return 0;
}

struct Options {
  std::string planPath, cubinPath, function, timeJson;
  std::string hostPath; // --host: the library instead of PLAN CUBIN
  std::string trainDir, outDir = "."; // --train: the exported run
  int64_t steps = 0;                  // --train: at most this many steps
  std::vector<std::string> inputs, outputs;
  size_t repeat = 1;
  bool profile = false; // one more call, timing each launch
};

Options parseOptions(int argc, char **argv) {
  const char *usage =
      "usage: mxfp4-cuda-run PLAN CUBIN --function=NAME "
      "[--input=@x.npy|--input=N]... [--output=@y.npy]... [--repeat=N] "
      "[--profile] [--time-json=FILE]\n"
      "       mxfp4-cuda-run PLAN CUBIN --train=DIR [--out=DIR] [--steps=N]\n"
      "       mxfp4-cuda-run --host=LIBRARY ... (host.so instead of PLAN "
      "CUBIN)\n"
      "       mxfp4-cuda-run --check-initial-weights=DIR";
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional.push_back(a);
    } else if (a.rfind("--host=", 0) == 0) {
      o.hostPath = a.substr(7);
    } else if (a.rfind("--function=", 0) == 0) {
      o.function = a.substr(11);
    } else if (a.rfind("--input=", 0) == 0) {
      o.inputs.push_back(a.substr(8));
    } else if (a.rfind("--output=@", 0) == 0) {
      o.outputs.push_back(a.substr(10));
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a.rfind("--train=", 0) == 0) {
      o.trainDir = a.substr(8);
    } else if (a.rfind("--out=", 0) == 0) {
      o.outDir = a.substr(6);
    } else if (a.rfind("--steps=", 0) == 0) {
      o.steps = std::strtoll(a.c_str() + 8, nullptr, 10);
    } else if (a.rfind("--repeat=", 0) == 0) {
      std::string n = a.substr(9);
      char *end = nullptr;
      unsigned long long value = std::strtoull(n.c_str(), &end, 10);
      if (n.empty() || *end || n[0] == '-')
        fail("--repeat wants a number of calls, not '" + n + "'");
      o.repeat = value;
    } else if (a.rfind("--time-json=", 0) == 0) {
      o.timeJson = a.substr(12);
    } else {
      fail("unknown argument '" + a + "'");
    }
  }
  if (!o.hostPath.empty() && !positional.empty())
    fail("--host=LIBRARY carries the plan and the cubin: give PLAN CUBIN or "
         "--host, not both");
  if (o.hostPath.empty() && positional.size() != 2)
    fail(usage);
  if (o.hostPath.empty()) {
    o.planPath = positional[0];
    o.cubinPath = positional[1];
  }
  if (!o.timeJson.empty() && o.repeat == 0)
    fail("--time-json needs timed calls: --repeat=N with N at least 1");
  return o;
}

int run(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]).rfind("--check-initial-weights=", 0) == 0)
    return checkInitialWeights(std::string(argv[1]).substr(24));
  Options o = parseOptions(argc, argv);
  if (!o.trainDir.empty() && o.function.empty())
    o.function = "train_step";
  // The library first: it needs no GPU, and tells its errors without one.
  std::unique_ptr<HostLibrary> library;
  Program program;
  std::vector<char> cubinFile;
  const void *cubin = nullptr;
  if (!o.hostPath.empty()) {
    library = std::make_unique<HostLibrary>(o.hostPath);
    program.records = readFunction(library->manifest(), o.hostPath, o.function);
    program.code = library->function(o.function);
    program.kernelNames = library->kernelNames();
    cubin = library->cubin();
  } else {
    std::vector<char> plan = readFile(o.planPath);
    program.records = readFunction(std::string(plan.begin(), plan.end()),
                                   o.planPath, o.function);
    cubinFile = readFile(o.cubinPath);
    cubin = cubinFile.data();
  }
  checkLifetimes(program.records);

  Driver cu;
  cu.load();
  cu.check(cu.init(0), "cuInit");
  int devices = 0;
  cu.check(cu.deviceGetCount(&devices), "cuDeviceGetCount");
  if (devices == 0)
    fail("no CUDA device");
  int device = 0;
  cu.check(cu.deviceGet(&device, 0), "cuDeviceGet");
  void *context = nullptr;
  cu.check(cu.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  cu.check(cu.ctxSetCurrent(context), "cuCtxSetCurrent");
  void *module = nullptr;
  cu.check(cu.moduleLoadData(&module, cubin),
           "cuModuleLoadData(" + (library ? o.hostPath : o.cubinPath) + ")");
  resolveKernels(cu, module, program);

  Memory memory(cu);
  if (!o.trainDir.empty()) {
    train(cu, memory, program, o.trainDir, o.outDir, o.steps);
    return 0;
  }
  Arguments arguments =
      upload(cu, memory, program.records, o.inputs, o.function);
  replay(cu, memory, program, arguments, &o.outputs);
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  if (o.repeat == 0)
    return 0;

  keepPristineCopies(cu, memory, arguments, o.function);
  std::vector<float> ms;
  {
    Timer timer(cu);
    for (size_t i = 0; i < o.repeat; ++i) {
      restore(cu, arguments);
      timer.begin();
      replay(cu, memory, program, arguments, nullptr);
      ms.push_back(timer.end());
    }
  }
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  Times t = summarize(ms);
  std::printf("time: %s: %zu calls, mean %.3f ms, min %.3f ms, max %.3f ms\n",
              o.function.c_str(), t.calls, t.mean, t.min, t.max);
  if (o.profile) {
    restore(cu, arguments);
    profileCall(cu, memory, program, arguments);
  }
  if (!o.timeJson.empty()) {
    size_t launches = 0;
    for (const Record &r : program.records)
      launches += r.kind == Record::Launch;
    writeTimeJson(o.timeJson, o.function, t, launches);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "mxfp4-cuda-run: error: %s\n", e.what());
    return 1;
  }
}
