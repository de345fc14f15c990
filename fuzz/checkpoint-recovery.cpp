//===- checkpoint-recovery.cpp - fuzz the checkpoint folder's recovery ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// recoverCheckpointFolder (mxfp4/Formats/Checkpoint.h) reads a folder tree
// that a crashed writer, a person or another tool left beside the
// checkpoint, and deletes some of it. The input decodes into such a tree:
// its first byte picks how the checkpoint's path is spelled, then each pair
// of bytes adds one entry, a name from `kNames` (the checkpoint, the
// writer's `checkpoint.tmp-<pid>` and `checkpoint.old-<pid>`, and names
// that only look like them) and what it is: a file, an empty folder, a
// folder holding a marker file, or a symbolic link to a sibling (which may
// not exist). After recovery:
//   - it reports no error: every entry is this process's to delete;
//   - no `checkpoint.tmp-<pid>` or `checkpoint.old-<pid>` (a pid being
//     decimal digits) remains, and every other entry is as it was, a link
//     as the same link (what it points to is not followed, nor deleted);
//   - a `checkpoint` that existed is as it was; a missing one is, if a
//     `checkpoint.old-<pid>` folder existed, one of those folders, else
//     still missing (the writer only ever sets a folder aside);
//   - nothing else appeared, and recovering again changes nothing.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "mxfp4/Formats/Checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <unistd.h>

using namespace mlir::mxfp4;

namespace fs = std::filesystem;

namespace {

/// The names an entry can have: the checkpoint itself, the writer's
/// leftovers with short, long and zero-padded pids, and names recovery must
/// leave alone (no pid, a pid that is not a number, other suffixes).
const char *const kNames[] = {
    "checkpoint",
    "checkpoint.tmp-1",
    "checkpoint.tmp-4242",
    "checkpoint.tmp-99999999999999999999999",
    "checkpoint.old-1",
    "checkpoint.old-4242",
    "checkpoint.old-99999999999999999999999",
    "checkpoint.old-007",
    "checkpoint.tmp-",
    "checkpoint.old-",
    "checkpoint.tmp-abc",
    "checkpoint.old-12x",
    "checkpoint.old--1",
    "checkpoint.old-1.tmp-2",
    "checkpoint.tmp",
    "checkpointX",
    "checkpoint.old",
    "xcheckpoint.old-1",
    "other",
    "model.safetensors",
};
constexpr size_t kNumNames = std::size(kNames);

/// The file a folder entry may hold.
constexpr const char *kMarker = "model.safetensors";

/// At most this many entries an input: enough for every interplay, few
/// enough that an input takes well under a millisecond.
constexpr size_t kMaxEntries = 12;

/// Whether recovery owns `name`: "checkpoint.tmp-" or "checkpoint.old-"
/// and a pid, as writeCheckpointFolder names its folders.
bool isLeftover(const std::string &name, const std::string &infix) {
  std::string prefix = "checkpoint" + infix;
  return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// What `path` is, for comparing before and after: its kind and contents,
/// a link's target unfollowed; empty if it does not exist.
std::string describe(const fs::path &path) {
  std::error_code ec;
  fs::file_status status = fs::symlink_status(path, ec);
  switch (status.type()) {
  case fs::file_type::not_found:
    return "";
  case fs::file_type::symlink:
    return "link to " + fs::read_symlink(path, ec).string();
  case fs::file_type::regular:
    return "file '" + readText(path) + "'";
  case fs::file_type::directory: {
    std::set<std::string> children;
    for (const fs::directory_entry &child : fs::directory_iterator(path, ec))
      children.insert(child.path().filename().string() + ": " +
                      describe(child.path()));
    std::string text = "folder {";
    for (const std::string &child : children)
      text += " " + child + ";";
    return text + " }";
  }
  default:
    return "other";
  }
}

/// Every entry of `folder` and what it is.
std::map<std::string, std::string> snapshot(const fs::path &folder) {
  std::map<std::string, std::string> entries;
  std::error_code ec;
  for (const fs::directory_entry &entry : fs::directory_iterator(folder, ec))
    entries[entry.path().filename().string()] = describe(entry.path());
  return entries;
}

std::string format(const std::map<std::string, std::string> &entries) {
  std::string text;
  for (const auto &[name, what] : entries)
    text += "  " + name + ": " + what + "\n";
  return text;
}

/// A folder of this process's for the entries of an input: in memory where
/// the system has /dev/shm, as recovery syncs the folder it changes.
fs::path getScratch() {
  std::error_code ec;
  fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm")
                                                   : fs::temp_directory_path();
  return base /
         ("mxfp4-fuzz-checkpoint-recovery-" + std::to_string(long(::getpid())));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  // A fresh folder an input, removed after it (kept if it failed).
  static const fs::path folder = getScratch();
  fs::remove_all(folder);
  fs::create_directories(folder);

  // "checkpoint/" and "checkpoint" name the same folder.
  const char *spellings[] = {"/checkpoint", "/checkpoint/", "/checkpoint//",
                             "/./checkpoint"};
  std::string dir = folder.string() + spellings[data[0] % 4];

  for (size_t i = 1; i + 1 < size && i / 2 < kMaxEntries; i += 2) {
    fs::path path = folder / kNames[data[i] % kNumNames];
    std::error_code ec;
    if (fs::exists(fs::symlink_status(path, ec)))
      continue;
    uint8_t what = data[i + 1];
    // Each entry's contents are its own, to tell which one moved where.
    std::string contents = "entry " + std::to_string(i / 2);
    switch (what % 4) {
    case 0:
      std::ofstream(path, std::ios::binary) << contents;
      break;
    case 1:
      fs::create_directory(path);
      break;
    case 2:
      fs::create_directory(path);
      std::ofstream(path / kMarker, std::ios::binary) << contents;
      break;
    case 3:
      fs::create_symlink(kNames[(what / 4) % kNumNames], path, ec);
      break;
    }
  }

  std::map<std::string, std::string> before = snapshot(folder);
  std::string error = recoverCheckpointFolder(dir);
  std::map<std::string, std::string> after = snapshot(folder);
  std::string trees = "before:\n" + format(before) + "after:\n" + format(after);
  fuzz::require(error.empty(), "recoverCheckpointFolder succeeds",
                error + "\n" + trees);

  std::set<std::string> setAside;
  for (const auto &[name, what] : before) {
    if (isLeftover(name, ".tmp-") || isLeftover(name, ".old-")) {
      fuzz::require(!after.count(name), "the writer's leftovers are removed",
                    name + "\n" + trees);
      if (isLeftover(name, ".old-") && what.rfind("folder", 0) == 0)
        setAside.insert(what);
    } else if (name != "checkpoint") {
      fuzz::require(after.count(name) && after[name] == what,
                    "other entries are left as they were", name + "\n" + trees);
    }
  }
  for (const auto &[name, what] : after)
    fuzz::require(before.count(name) || name == "checkpoint",
                  "recovery only restores the checkpoint", name + "\n" + trees);

  if (before.count("checkpoint"))
    fuzz::require(after.count("checkpoint") &&
                      after["checkpoint"] == before["checkpoint"],
                  "an existing checkpoint is left as it was", trees);
  else if (setAside.empty())
    fuzz::require(!after.count("checkpoint"),
                  "only a set-aside folder becomes the checkpoint", trees);
  else
    fuzz::require(
        after.count("checkpoint") && setAside.count(after["checkpoint"]),
        "a missing checkpoint is restored from a set-aside folder", trees);

  error = recoverCheckpointFolder(dir);
  fuzz::require(error.empty() && snapshot(folder) == after,
                "recovering again changes nothing", error + "\n" + trees);

  fs::remove_all(folder);
  return 0;
}
