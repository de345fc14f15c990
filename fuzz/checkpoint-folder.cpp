//===- checkpoint-folder.cpp - fuzz reading a checkpoint folder -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A resumed run reads its whole checkpoint folder: the runtime's
// readCheckpoint (runtime/core/Checkpoint.h, standard C++ over
// lib/Formats' trainer state and safetensors readers) against a small fixed
// run of three F32 parameters. The input is the folder's files, each a
// 2-byte little-endian length and that many bytes (fewer if the input ends
// first; 0xffff or a missing length leaves the file out), in the order of
// `kFiles`. The reader must return, or throw a Failure (no other exception)
// whose message names the folder; a checkpoint it returns is the run's (its
// trainer_state.json has the run's seed, plan and run hashes and the step
// returned), holds finite tensors of the run's shapes, and is written and
// read back the same.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "Checkpoint.h"
#include "Failure.h"

#include "mxfp4/Formats/Checkpoint.h"
#include "mxfp4/Train/Convergence.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <typeinfo>

#include <unistd.h>

using namespace mlir::mxfp4;

namespace fs = std::filesystem;

namespace {

/// The files of a checkpoint folder, in the order the input holds them.
/// The runtime does not read mxfp4_config.json (the CPU trainer does): it is
/// written only so that the folder is whole.
const char *const kFiles[] = {kCheckpointTrainerStateFile, kCheckpointModelFile,
                              kCheckpointOptimizerFile,
                              kCheckpointMxfp4ConfigFile};

/// The run the checkpoint must belong to (fuzz/seeds.py writes checkpoints
/// of it: keep its manifest, seed, plan hash and parameters the same).
const runtime::TrainingRun &getRun() {
  static const runtime::TrainingRun run = [] {
    runtime::TrainingRun run;
    // No folder: writeCheckpoint copies the run's configs only if present.
    run.dir = "/nonexistent/mxfp4-fuzz-run";
    run.manifest = "# mxfp4 training run v1\nsteps 8\n";
    run.steps = 8;
    run.batch = 2;
    run.window = 5;
    run.seed = 5;
    run.params = {{"embed.weight", {3, 2}},
                  {"norm.weight", {2}},
                  {"head.weight", {2, 3}}};
    return run;
  }();
  return run;
}

const runtime::CheckpointOwner kOwner = {"bf16", "0123456789abcdef"};

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Checks what readCheckpoint returned for `dir` against the run.
void checkRead(const runtime::Checkpoint &saved, const std::string &dir) {
  const runtime::TrainingRun &run = getRun();
  TrainerState state;
  std::string error = parseTrainerState(
      readText(dir + "/" + kCheckpointTrainerStateFile), state);
  fuzz::require(error.empty() && state.step == saved.step &&
                    state.seed == int64_t(run.seed) &&
                    state.plan == kOwner.planHash &&
                    state.run == runtime::hashText(run.manifest),
                "a checkpoint read is the run's",
                "step " + std::to_string(saved.step) + " " + error);
  fuzz::require(saved.step >= 0 && saved.step <= run.steps,
                "a checkpoint read has a step of the run",
                std::to_string(saved.step));
  for (const auto *part : {&saved.params, &saved.m, &saved.v}) {
    fuzz::require(part->size() == run.params.size(),
                  "a checkpoint read has every parameter",
                  std::to_string(part->size()));
    for (size_t i = 0; i < part->size(); ++i) {
      size_t elements = 1;
      for (int64_t size : run.params[i].second)
        elements *= size_t(size);
      const std::vector<char> &data = (*part)[i];
      fuzz::require(data.size() == 4 * elements,
                    "a checkpoint read has tensors of the run's shapes",
                    run.params[i].first + ": " + std::to_string(data.size()) +
                        " bytes");
      fuzz::require(isFiniteF32(data.data(), data.size()),
                    "a checkpoint read is finite", run.params[i].first);
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A fresh folder an input, removed after it (kept if it failed); in
  // memory where the system has /dev/shm.
  static const fs::path folder = [] {
    std::error_code ec;
    fs::path base = fs::is_directory("/dev/shm", ec)
                        ? fs::path("/dev/shm")
                        : fs::temp_directory_path();
    return base /
           ("mxfp4-fuzz-checkpoint-folder-" + std::to_string(long(::getpid())));
  }();
  fs::remove_all(folder);
  std::string dir = (folder / "checkpoint").string();
  fs::create_directories(dir);

  size_t at = 0;
  for (const char *file : kFiles) {
    if (size - at < 2)
      break;
    size_t length = data[at] | size_t(data[at + 1]) << 8;
    at += 2;
    if (length == 0xffff)
      continue;
    length = std::min(length, size - at);
    std::ofstream(dir + "/" + file, std::ios::binary)
        .write(reinterpret_cast<const char *>(data + at), length);
    at += length;
  }

  const runtime::TrainingRun &run = getRun();
  runtime::Checkpoint saved;
  try {
    saved = runtime::readCheckpoint(dir, run, kOwner);
  } catch (const runtime::Failure &failure) {
    // The runtime prints it and exits: it must say which folder is wrong.
    std::string message = failure.what();
    fuzz::require(message.find(dir) != std::string::npos,
                  "an error names the checkpoint", message);
    fs::remove_all(folder);
    return 0;
  } catch (const std::exception &other) {
    fuzz::require(false, "readCheckpoint only fails with a Failure",
                  std::string(typeid(other).name()) + ": " + other.what());
  }
  checkRead(saved, dir);

  // What was read is written and read back the same.
  std::string again = (folder / "again").string();
  runtime::writeCheckpoint(again, run, kOwner, saved);
  runtime::Checkpoint reread = runtime::readCheckpoint(again, run, kOwner);
  fuzz::require(reread.step == saved.step && reread.params == saved.params &&
                    reread.m == saved.m && reread.v == saved.v,
                "writeCheckpoint reads back", dir);
  fs::remove_all(folder);
  return 0;
}
