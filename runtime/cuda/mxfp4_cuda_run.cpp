//===- mxfp4_cuda_run.cpp - replay a host plan on an NVIDIA GPU -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-cuda-run PLAN CUBIN --function=NAME --input=@x.npy --input=5
//       --output=@y.npy [--repeat=N] [--time-json=FILE]
//
// Runs one function of a plan written by `mxfp4-run compile --target=sm_90a`
// (include/mxfp4/API/HostPlan.h has the format) with the kernels of its
// cubin, through libcuda.so.1 loaded at run time. Standard C++ only, so it
// travels to a machine that has a GPU driver and a compiler but no LLVM.
// Every failure is a message and exit status 1.
//
// The first call is a warmup and writes the --output files; --repeat=N (1
// unless given) then times N more calls with CUDA events and prints
// `time: NAME: N calls, mean X ms, min Y ms, max Z ms`. The inputs are
// uploaded once and stay on the device; the plan's allocations come from a
// cache of freed blocks, as in PyTorch, so steady-state calls make no
// cuMemAlloc.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
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

/// The records of `function`, up to its `end`.
std::vector<Record> readFunction(const std::string &planPath,
                                 const std::string &function) {
  std::ifstream planFile(planPath);
  if (!planFile)
    fail("cannot read '" + planPath + "'");
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

void resolveKernels(Driver &cu, void *module, std::vector<Record> &records) {
  std::map<std::string, void *> kernels;
  for (Record &r : records) {
    if (r.kind != Record::Launch)
      continue;
    void *&kernel = kernels[r.name];
    if (!kernel)
      cu.check(cu.moduleGetFunction(&kernel, module, r.name.c_str()),
               "cuModuleGetFunction(" + r.name + ")");
    r.kernel = kernel;
  }
}

void launch(Driver &cu, const Record &r,
            const std::map<long, CUdeviceptr> &buffers,
            const std::map<long, uint64_t> &scalars) {
  // One pointer per parameter; the driver copies as many bytes as the
  // kernel declares (index scalars are 32-bit in the kernels: the low half
  // of the little-endian 64-bit value).
  std::vector<void *> params;
  std::vector<CUdeviceptr> pointers;
  std::vector<uint64_t> values;
  pointers.reserve(r.args.size());
  values.reserve(r.args.size());
  for (auto [isBuffer, id] : r.args) {
    if (isBuffer) {
      pointers.push_back(buffers.at(id));
      params.push_back(&pointers.back());
    } else {
      values.push_back(scalars.at(id));
      params.push_back(&values.back());
    }
  }
  cu.check(cu.launchKernel(r.kernel, r.grid[0], r.grid[1], r.grid[2],
                           r.block[0], r.block[1], r.block[2], 0, nullptr,
                           params.data(), nullptr),
           "cuLaunchKernel(" + r.name + ")");
}

void writeResult(Driver &cu, const Record &r, CUdeviceptr p,
                 const std::string &path) {
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  std::vector<char> data(r.bytes);
  cu.check(cu.memcpyDtoH(data.data(), p, r.bytes), "cuMemcpyDtoH");
  writeNpy(path, r.name, r.shape, data);
}

/// One call of the function. The warmup call gets the --output paths and
/// writes the results; timed calls get none and copy nothing back. Blocks
/// the call took and did not free (its results, its globals) go back to the
/// cache at its end, as when a caller drops the results.
void replay(Driver &cu, Memory &memory, const std::vector<Record> &records,
            const Arguments &arguments,
            const std::vector<std::string> *outputs) {
  std::map<long, CUdeviceptr> buffers;
  for (const Input &input : arguments.buffers)
    buffers[input.id] = input.device;
  std::set<CUdeviceptr> live; // blocks taken and not yet freed
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
    case Record::Launch:
      launch(cu, r, buffers, arguments.scalars);
      break;
    case Record::Result:
      if (outputs && r.index < outputs->size())
        writeResult(cu, r, buffers.at(r.id), (*outputs)[r.index]);
      break;
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

struct Options {
  std::string planPath, cubinPath, function, timeJson;
  std::vector<std::string> inputs, outputs;
  size_t repeat = 1;
};

Options parseOptions(int argc, char **argv) {
  if (argc < 3)
    fail("usage: mxfp4-cuda-run PLAN CUBIN --function=NAME "
         "[--input=@x.npy|--input=N]... [--output=@y.npy]... [--repeat=N] "
         "[--time-json=FILE]");
  Options o;
  o.planPath = argv[1];
  o.cubinPath = argv[2];
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--function=", 0) == 0) {
      o.function = a.substr(11);
    } else if (a.rfind("--input=", 0) == 0) {
      o.inputs.push_back(a.substr(8));
    } else if (a.rfind("--output=@", 0) == 0) {
      o.outputs.push_back(a.substr(10));
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
  if (!o.timeJson.empty() && o.repeat == 0)
    fail("--time-json needs timed calls: --repeat=N with N at least 1");
  return o;
}

int run(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  std::vector<Record> records = readFunction(o.planPath, o.function);
  checkLifetimes(records);

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
  std::vector<char> cubin = readFile(o.cubinPath);
  void *module = nullptr;
  cu.check(cu.moduleLoadData(&module, cubin.data()),
           "cuModuleLoadData(" + o.cubinPath + ")");
  resolveKernels(cu, module, records);

  Memory memory(cu);
  Arguments arguments = upload(cu, memory, records, o.inputs, o.function);
  replay(cu, memory, records, arguments, &o.outputs);
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
      replay(cu, memory, records, arguments, nullptr);
      ms.push_back(timer.end());
    }
  }
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  Times t = summarize(ms);
  std::printf("time: %s: %zu calls, mean %.3f ms, min %.3f ms, max %.3f ms\n",
              o.function.c_str(), t.calls, t.mean, t.min, t.max);
  if (!o.timeJson.empty()) {
    size_t launches = 0;
    for (const Record &r : records)
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
