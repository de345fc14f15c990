//===- Replay.cpp - one call of a plan function on the device -------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Replay.h"

#include "Failure.h"
#include "HostLibrary.h"
#include "Npy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace mlir::mxfp4::runtime {

/// A 64-bit hash of `x` (splitmix64's finalizer).
static uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The bytes of argument `r` generated as `spec` says (see upload).
static std::vector<char> generate(const std::string &spec, const Record &r) {
  std::string argument = "argument #" + std::to_string(r.index);
  auto number = [&](const std::string &text) {
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !(value >= 0))
      fail(argument + ": '" + spec + "' needs a non-negative number");
    return value;
  };
  std::string kind = spec.substr(0, spec.find(':'));
  bool integers = kind == "integers";
  if (kind != "zeros" && kind != "ones" && kind != "normal" && !integers)
    fail(argument + " is a tensor: pass @FILE.npy, zeros, ones, "
                    "normal:STD or integers:N, not '" + spec + "'");
  std::string want = integers ? "i32" : "f32";
  if (r.name != want)
    fail(argument + " holds " + (r.name.empty() ? "bytes" : r.name) +
         ": '" + kind + "' makes " + want);
  size_t count = r.bytes / 4;
  std::vector<char> bytes(count * 4);
  std::string value =
      spec.find(':') == std::string::npos ? "" : spec.substr(spec.find(':') + 1);
  if (integers) {
    double n = number(value);
    if (n < 1 || n > 2147483647.0 || n != uint32_t(n))
      fail(argument + ": '" + spec + "' needs an integer N >= 1");
    auto *out = reinterpret_cast<int32_t *>(bytes.data());
    for (size_t i = 0; i < count; ++i)
      out[i] = int32_t(mix(i + 0x9e3779b97f4a7c15ull * (r.index + 1)) %
                       uint64_t(n));
    return bytes;
  }
  auto *out = reinterpret_cast<float *>(bytes.data());
  if (kind != "normal") {
    if (!value.empty())
      fail(argument + ": '" + kind + "' takes no value");
    std::fill(out, out + count, kind == "ones" ? 1.0f : 0.0f);
    return bytes;
  }
  double deviation = number(value);
  // Box-Muller over a fixed stream: 65,536 normal values, then each
  // element one of them, by a hash of its index and the argument.
  std::vector<float> table(1 << 16);
  for (size_t i = 0; i < table.size(); i += 2) {
    double u = (mix(2 * i + 1) >> 11) * 0x1.0p-53;
    double v = (mix(2 * i + 2) >> 11) * 0x1.0p-53;
    double radius = std::sqrt(-2.0 * std::log(1.0 - u));
    table[i] = float(deviation * radius * std::cos(2 * M_PI * v));
    table[i + 1] = float(deviation * radius * std::sin(2 * M_PI * v));
  }
  uint64_t salt = mix(r.index + 1);
  for (size_t i = 0; i < count; ++i)
    out[i] = table[mix(i ^ salt) & 0xffff];
  return bytes;
}

Arguments upload(Device &cu, Memory &memory, const std::vector<Record> &records,
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
    Input buffer;
    buffer.index = r.index;
    buffer.id = r.id;
    if (!input.empty() && input[0] == '@')
      buffer.host = readNpy(input.substr(1));
    else
      buffer.host = generate(input, r);
    if (buffer.host.size() != r.bytes)
      fail("argument #" + std::to_string(r.index) + " (" + input + ") has " +
           std::to_string(buffer.host.size()) +
           " bytes of data, the plan wants " + std::to_string(r.bytes));
    buffer.device = memory.hold(r.bytes);
    cu.copyToDevice(buffer.device, buffer.host.data(), r.bytes);
    arguments.buffers.push_back(std::move(buffer));
  }
  return arguments;
}

/// Repeated calls must start from the same inputs. The plan format does not
/// forbid writing an argument: a launch may be given an argument buffer (or
/// a view of one) and its kernel may store to any buffer it gets, and
/// one-shot bufferization with writable function boundaries can put a result
/// in place in an argument (a result record may then name the argument).
/// The GPU targets' @train_step does: its AdamW update writes the weights
/// and moments in place and its results name those arguments. The runner
/// cannot see stores from the plan, so it compares each argument with its
/// upload after the warmup call and keeps a pristine device copy of each one
/// that changed.
void keepPristineCopies(Device &cu, Memory &memory, Arguments &arguments,
                        const std::string &function, const std::string &tool) {
  for (Input &input : arguments.buffers) {
    std::vector<char> now(input.host.size());
    cu.copyToHost(now.data(), input.device, now.size());
    if (now == input.host)
      continue;
    std::fprintf(stderr,
                 "%s: note: @%s writes its argument #%zu; it is restored "
                 "before each timed call\n",
                 tool.c_str(), function.c_str(), input.index);
    input.pristine = memory.hold(input.host.size());
    cu.copyToDevice(input.pristine, input.host.data(), input.host.size());
  }
}

void restore(Device &cu, const Arguments &arguments) {
  for (const Input &input : arguments.buffers)
    if (input.pristine)
      cu.copyOnDevice(input.device, input.pristine, input.host.size());
}

//===----------------------------------------------------------------------===//
// Replay
//===----------------------------------------------------------------------===//

void resolveKernels(Device &cu, void *module, Program &program) {
  std::map<std::string, void *> kernels;
  auto get = [&](const std::string &name) {
    void *&kernel = kernels[name];
    if (!kernel)
      kernel = cu.getKernel(module, name);
    return kernel;
  };
  for (Record &r : program.records)
    if (r.kind == Record::Launch)
      r.kernel = get(r.name);
  for (const std::string &name : program.kernelNames)
    program.kernels.push_back(get(name));
}

/// Launches `kernel` (named `name`), between events if the call is
/// profiled. The driver gets one pointer per parameter and copies as many
/// bytes as the kernel declares (index scalars are 32-bit in the kernels:
/// the low half of the little-endian 64-bit value).
static void launchKernel(Device &cu, LaunchEvents *profile, void *kernel,
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
    cu.recordEvent(profile->events[index].first);
  }
  cu.launch(kernel, name, grid, block, sharedBytes, params.data());
  if (profile)
    cu.recordEvent(profile->events[index].second);
}

static void writeResult(Device &cu, const Record &r, DevicePtr p,
                        const std::string &path) {
  cu.synchronize();
  std::vector<char> data(r.bytes);
  cu.copyToHost(data.data(), p, r.bytes);
  writeNpy(path, r.name, r.shape, data);
}

/// One call by replaying the records; `live` gets the blocks it takes and
/// does not free. Returns the result buffers, by index.
static std::vector<DevicePtr> interpret(Device &cu, Memory &memory,
                                          const std::vector<Record> &records,
                                          const Arguments &arguments,
                                          std::set<DevicePtr> &live,
                                          LaunchEvents *profile) {
  std::map<long, DevicePtr> buffers;
  for (const Input &input : arguments.buffers)
    buffers[input.id] = input.device;
  std::vector<DevicePtr> results;
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
      cu.copyToDevice(buffers[r.id], r.data.data(), r.bytes);
      break;
    case Record::TensorMap:
      buffers[r.id] = memory.tensorMap(r.map, buffers.at(r.source));
      break;
    case Record::Launch: {
      std::vector<uint64_t> values;
      for (auto [isBuffer, id] : r.args)
        values.push_back(isBuffer ? buffers.at(id) : arguments.scalars.at(id));
      launchKernel(cu, profile, r.kernel, r.name, r.grid, r.block,
                   r.sharedBytes, values.data(), values.size());
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

namespace {

/// The host library's device operations, as `interpret` makes them for the
/// records.
class LibraryCalls : public HostCalls {
public:
  LibraryCalls(Device &cu, Memory &memory, const Program &program,
               std::set<DevicePtr> &live, LaunchEvents *profile)
      : cu(cu), memory(memory), program(program), live(live), profile(profile) {
  }

  uint64_t alloc(uint64_t bytes) override {
    DevicePtr p = memory.take(bytes);
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
    cu.copyToDevice(p, data, bytes);
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

  uint64_t tensorMap(const HostTensorMap &map, uint64_t buffer) override {
    return memory.tensorMap(map, buffer);
  }

private:
  Device &cu;
  Memory &memory;
  const Program &program;
  std::set<DevicePtr> &live;
  LaunchEvents *profile;
};

} // namespace

/// One call through the host library, as `interpret`.
static std::vector<DevicePtr> callLibrary(Device &cu, Memory &memory,
                                            const Program &program,
                                            const Arguments &arguments,
                                            std::set<DevicePtr> &live,
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
  return std::vector<DevicePtr>(buffers.begin(), buffers.end());
}

void replay(Device &cu, Memory &memory, const Program &program,
            const Arguments &arguments, const std::vector<std::string> *outputs,
            LaunchEvents *profile, std::vector<DevicePtr> *kept) {
  std::set<DevicePtr> live; // blocks taken and not yet freed
  std::vector<DevicePtr> results =
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
  for (DevicePtr p : live)
    memory.give(p);
}

} // namespace mlir::mxfp4::runtime
