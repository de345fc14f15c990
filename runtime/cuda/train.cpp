//===- train.cpp - @train_step, step after step ---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "train.h"

#include "failure.h"
#include "json.h"
#include "npy.h"
#include "replay.h"
#include "timing.h"
#include "training_run.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

/// Writes `params` as Hugging Face safetensors (little-endian f32).
static void writeSafetensors(Driver &cu, const std::string &path,
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
         std::to_string(run.window) +
         " batch and a step: was it compiled "
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
    cu.check(cu.memcpyHtoD(state[i], host.data(), host.size()), "cuMemcpyHtoD");
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
                  (long long)(step + 1),
                  (long long)((step + 1) * tokensPerStep), scalars[0],
                  scalars[2], scalars[1], (step + 1) * tokensPerStep / seconds,
                  seconds);
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
