//===- mxfp4_cuda_run.cpp - replay a host plan on an NVIDIA GPU -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   mxfp4-cuda-run PLAN CUBIN --function=NAME --input=@x.npy --input=5
//       --output=@y.npy
//
// Runs one function of a plan written by `mxfp4-run compile --target=sm_90a`
// (include/mxfp4/API/HostPlan.h has the format) with the kernels of its
// cubin, through libcuda.so.1 loaded at run time. Standard C++ only, so it
// travels to a machine that has a GPU driver and a compiler but no LLVM.
// Every failure is a message and exit status 1.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
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
  CUresult (*launchKernel)(void *, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, void *, void **,
                           void **);
  CUresult (*ctxSynchronize)();
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
    resolve(launchKernel, "cuLaunchKernel");
    resolve(ctxSynchronize, "cuCtxSynchronize");
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
// Replay
//===----------------------------------------------------------------------===//

struct Scalar {
  uint64_t bits = 0;
};

int run(int argc, char **argv) {
  if (argc < 3)
    fail("usage: mxfp4-cuda-run PLAN CUBIN --function=NAME "
         "[--input=@x.npy|--input=N]... [--output=@y.npy]...");
  std::string planPath = argv[1], cubinPath = argv[2], function;
  std::vector<std::string> inputs, outputs;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--function=", 0) == 0)
      function = a.substr(11);
    else if (a.rfind("--input=", 0) == 0)
      inputs.push_back(a.substr(8));
    else if (a.rfind("--output=@", 0) == 0)
      outputs.push_back(a.substr(10));
    else
      fail("unknown argument '" + a + "'");
  }

  // The function's records.
  std::ifstream planFile(planPath);
  if (!planFile)
    fail("cannot read '" + planPath + "'");
  std::vector<std::string> records;
  std::vector<std::string> names;
  bool inside = false;
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
      continue;
    }
    if (inside)
      records.push_back(line);
    if (kind == "end")
      inside = false;
  }
  if (records.empty()) {
    std::string known;
    for (const std::string &n : names)
      known += " " + n;
    fail("no function '" + function + "' in '" + planPath +
         "' (functions:" + known + ")");
  }

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
  std::vector<char> cubin = readFile(cubinPath);
  void *module = nullptr;
  cu.check(cu.moduleLoadData(&module, cubin.data()),
           "cuModuleLoadData(" + cubinPath + ")");

  std::map<long, CUdeviceptr> buffers;
  std::map<long, size_t> sizes;
  std::map<long, Scalar> scalars;
  std::map<std::string, void *> kernels;
  std::vector<CUdeviceptr> owned;
  auto alloc = [&](long id, size_t bytes) {
    CUdeviceptr p = 0;
    cu.check(cu.memAlloc(&p, bytes ? bytes : 1), "cuMemAlloc");
    buffers[id] = p;
    sizes[id] = bytes;
    owned.push_back(p);
  };
  for (const std::string &line : records) {
    std::istringstream w(line);
    std::string kind;
    w >> kind;
    if (kind == "arg") {
      size_t index;
      std::string what;
      long id;
      size_t bytes;
      w >> index >> what >> id >> bytes;
      if (index >= inputs.size())
        fail("@" + function + " takes more arguments than the " +
             std::to_string(inputs.size()) + " given");
      const std::string &input = inputs[index];
      if (what == "buffer") {
        if (input.empty() || input[0] != '@')
          fail("argument #" + std::to_string(index) + " is a tensor: pass "
               "@FILE.npy");
        std::vector<char> data = readNpy(input.substr(1));
        if (data.size() != bytes)
          fail("argument #" + std::to_string(index) + " (" + input + ") has " +
               std::to_string(data.size()) + " bytes of data, the plan wants " +
               std::to_string(bytes));
        alloc(id, bytes);
        cu.check(cu.memcpyHtoD(buffers[id], data.data(), bytes),
                 "cuMemcpyHtoD");
      } else {
        scalars[id].bits = std::strtoull(input.c_str(), nullptr, 0);
      }
    } else if (kind == "alloc") {
      long id;
      size_t bytes;
      w >> id >> bytes;
      alloc(id, bytes);
    } else if (kind == "free") {
      // Freed at exit: the driver's allocator is the slow path to exercise.
    } else if (kind == "view") {
      long id, source;
      w >> id >> source;
      buffers[id] = buffers.at(source);
      sizes[id] = sizes.at(source);
    } else if (kind == "const") {
      long id;
      int bytes;
      std::string hex;
      w >> id >> bytes >> hex;
      scalars[id].bits = std::strtoull(hex.c_str(), nullptr, 16);
    } else if (kind == "global") {
      long id;
      size_t bytes;
      std::string hex;
      w >> id >> bytes >> hex;
      std::vector<char> data(bytes);
      for (size_t i = 0; i < bytes && 2 * i + 1 < hex.size(); ++i)
        data[i] = char(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
      alloc(id, bytes);
      cu.check(cu.memcpyHtoD(buffers[id], data.data(), bytes), "cuMemcpyHtoD");
    } else if (kind == "launch") {
      std::string name;
      unsigned g[3], b[3];
      w >> name >> g[0] >> g[1] >> g[2] >> b[0] >> b[1] >> b[2];
      void *&kernel = kernels[name];
      if (!kernel)
        cu.check(cu.moduleGetFunction(&kernel, module, name.c_str()),
                 "cuModuleGetFunction(" + name + ")");
      // One pointer per parameter; the driver copies as many bytes as the
      // kernel declares (index scalars are 32-bit in the kernels: the low
      // half of the little-endian 64-bit value).
      std::vector<void *> params;
      std::vector<CUdeviceptr> pointers;
      std::vector<uint64_t> values;
      std::vector<std::string> args;
      for (std::string a; w >> a;)
        args.push_back(a);
      pointers.reserve(args.size());
      values.reserve(args.size());
      for (const std::string &a : args) {
        long id = std::stol(a.substr(1));
        if (a[0] == 'b') {
          pointers.push_back(buffers.at(id));
          params.push_back(&pointers.back());
        } else {
          values.push_back(scalars.at(id).bits);
          params.push_back(&values.back());
        }
      }
      cu.check(cu.launchKernel(kernel, g[0], g[1], g[2], b[0], b[1], b[2], 0,
                               nullptr, params.data(), nullptr),
               "cuLaunchKernel(" + name + ")");
    } else if (kind == "result") {
      size_t index;
      long id;
      size_t bytes;
      std::string type;
      w >> index >> id >> bytes >> type;
      std::vector<int64_t> shape;
      for (int64_t d; w >> d;)
        shape.push_back(d);
      if (index >= outputs.size())
        continue;
      cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
      std::vector<char> data(bytes);
      cu.check(cu.memcpyDtoH(data.data(), buffers.at(id), bytes),
               "cuMemcpyDtoH");
      writeNpy(outputs[index], type, shape, data);
    } else if (kind == "end") {
      break;
    } else {
      fail("unknown plan record '" + kind + "'");
    }
  }
  cu.check(cu.ctxSynchronize(), "cuCtxSynchronize");
  for (CUdeviceptr p : owned)
    cu.memFree(p);
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
