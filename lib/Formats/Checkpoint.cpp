//===- Checkpoint.cpp - the checkpoint folder, without LLVM ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Formats/Checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <unistd.h>
#define MXFP4_POSIX 1
#elif defined(_WIN32)
#include <process.h>
#endif

using namespace mlir::mxfp4;

namespace fs = std::filesystem;

std::string mlir::mxfp4::getCheckpointTensorName(const std::string &param,
                                                 unsigned part) {
  return param + (part == 0   ? ""
                  : part == 1 ? kFirstMomentSuffix
                              : kSecondMomentSuffix);
}

/// `n` levels of indent.
static std::string indent(int n) { return std::string(2 * n, ' '); }

/// `value` at depth `depth`: what follows a key or an indent.
static std::string formatValue(const JsonValue &value, int depth) {
  switch (value.kind) {
  case JsonValue::Null:
    return "null";
  case JsonValue::Bool:
    return value.boolean ? "true" : "false";
  case JsonValue::Number:
    return jsonNumber(value.number);
  case JsonValue::String:
    return jsonString(value.string);
  case JsonValue::Array: {
    if (value.elements.empty())
      return "[]";
    std::string text = "[";
    for (size_t i = 0; i < value.elements.size(); ++i)
      text += (i ? ",\n" : "\n") + indent(depth + 1) +
              formatValue(value.elements[i], depth + 1);
    return text + "\n" + indent(depth) + "]";
  }
  case JsonValue::Object: {
    if (value.members.empty())
      return "{}";
    std::vector<const std::pair<std::string, JsonValue> *> sorted;
    for (const auto &member : value.members)
      sorted.push_back(&member);
    std::sort(sorted.begin(), sorted.end(),
              [](auto *a, auto *b) { return a->first < b->first; });
    std::string text = "{";
    for (size_t i = 0; i < sorted.size(); ++i)
      text += (i ? ",\n" : "\n") + indent(depth + 1) +
              jsonString(sorted[i]->first) + ": " +
              formatValue(sorted[i]->second, depth + 1);
    return text + "\n" + indent(depth) + "}";
  }
  }
  return "null";
}

std::string mlir::mxfp4::formatCheckpointJson(const JsonValue &value) {
  return formatValue(value, 0) + "\n";
}

/// A JSON string of `value`.
static JsonValue string(const std::string &value) {
  JsonValue v;
  v.kind = JsonValue::String;
  v.string = value;
  return v;
}

std::string mlir::mxfp4::formatTrainerState(const TrainerState &state) {
  // Integers print exactly as they are, whatever their size: through
  // std::to_string, not as doubles.
  std::vector<std::pair<std::string, std::string>> members;
  auto add = [&](const char *key, const std::optional<JsonValue> &value) {
    if (value)
      members.push_back({key, formatValue(*value, 1)});
  };
  auto addInteger = [&](const char *key, const std::optional<int64_t> &value) {
    if (value)
      members.push_back({key, std::to_string(*value)});
  };
  auto addString = [&](const char *key,
                       const std::optional<std::string> &value) {
    if (value)
      add(key, string(*value));
  };
  addInteger("step", state.step);
  addInteger("seed", state.seed);
  addInteger("tokens_seen", state.tokensSeen);
  addString("recipe", state.recipe);
  addString("data", state.data);
  addString("tokenizer", state.tokenizer);
  add("mxfp4_config", state.mxfp4Config);
  addString("plan", state.plan);
  addString("run", state.run);
  std::sort(members.begin(), members.end());
  if (members.empty())
    return "{}\n";
  std::string text = "{";
  for (size_t i = 0; i < members.size(); ++i)
    text += (i ? ",\n" : "\n") + indent(1) + jsonString(members[i].first) +
            ": " + members[i].second;
  return text + "\n}\n";
}

std::string mlir::mxfp4::parseTrainerState(const std::string &text,
                                           TrainerState &state) {
  std::string error;
  std::optional<JsonValue> value = parseJson(text, error);
  if (!value)
    return "is not valid JSON: " + error;
  if (value->kind != JsonValue::Object)
    return "is not a JSON object";
  state = TrainerState();
  state.step = value->getInteger("step");
  state.seed = value->getInteger("seed");
  state.tokensSeen = value->getInteger("tokens_seen");
  state.recipe = value->getString("recipe");
  state.data = value->getString("data");
  state.tokenizer = value->getString("tokenizer");
  if (const JsonValue *config = value->get("mxfp4_config"))
    if (config->kind == JsonValue::Object)
      state.mxfp4Config = *config;
  state.plan = value->getString("plan");
  state.run = value->getString("run");
  return "";
}

/// Makes renames in `dir` durable (fsync of the folder); best effort.
static void syncFolder(const fs::path &dir) {
#ifdef MXFP4_POSIX
  std::string path = dir.empty() ? std::string(".") : dir.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  (void)::fsync(fd);
  ::close(fd);
#else
  (void)dir;
#endif
}

/// Makes the data of every file in `dir` durable (fsync), so that the
/// folder a rename publishes never holds files a power loss would leave
/// empty; returns what failed, or an empty string.
static std::string syncFiles(const fs::path &dir) {
#ifdef MXFP4_POSIX
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file())
      continue;
    std::string path = it->path().string();
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      std::string why = std::strerror(errno);
      if (fd >= 0)
        ::close(fd);
      return "cannot sync '" + path + "': " + why;
    }
    ::close(fd);
  }
  if (ec)
    return "cannot list '" + dir.string() + "': " + ec.message();
#else
  (void)dir;
#endif
  return "";
}

/// Atomically exchanges the folders `a` and `b` where the system can (Linux
/// renameat2); returns false if it cannot, so the caller falls back to two
/// renames.
static bool exchangeFolders(const std::string &a, const std::string &b) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(),
                     RENAME_EXCHANGE) == 0;
#else
  (void)a;
  (void)b;
  return false;
#endif
}

/// This process's id, which names its temporary folders.
static long getProcessId() {
#ifdef MXFP4_POSIX
  return long(::getpid());
#elif defined(_WIN32)
  return long(::_getpid());
#else
  return 0;
#endif
}

/// Whether `c` separates the parts of a path.
static bool isSeparator(char c) {
  return c == '/' || c == char(fs::path::preferred_separator);
}

/// Whether `name` is `base` + `infix` + a process id, as
/// writeCheckpointFolder names its folders: a name that only begins so (a
/// person's "ckpt.old-good") is not the writer's to delete or restore.
static bool isWriterFolder(const std::string &name, const std::string &base,
                           const char *infix) {
  std::string prefix = base + infix;
  return name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
         std::all_of(name.begin() + prefix.size(), name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

std::string mlir::mxfp4::recoverCheckpointFolder(const std::string &dirArg) {
  std::string dir = dirArg;
  while (dir.size() > 1 && isSeparator(dir.back()))
    dir.pop_back();
  fs::path path(dir);
  fs::path parent = path.parent_path().empty() ? fs::path(".")
                                               : path.parent_path();
  std::string base = path.filename().string();
  std::error_code ec;
  std::vector<fs::path> temps, olds;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (isWriterFolder(name, base, ".tmp-"))
      temps.push_back(it->path());
    else if (isWriterFolder(name, base, ".old-"))
      olds.push_back(it->path());
  }
  if (ec)
    return "checkpoint '" + dir + "': cannot list '" + parent.string() +
           "': " + ec.message();
  // Without `dir`, a set-aside previous checkpoint is the last complete one
  // (of several, a crash can only have left one: the next writer restores
  // or deletes it first). The writer only sets a folder aside: a file or a
  // link of that name is stale, and restoring it would leave `dir` a file
  // or a link that no writer replaces.
  auto setAside = std::find_if(olds.begin(), olds.end(), [](const fs::path &p) {
    std::error_code ignored;
    return fs::is_directory(fs::symlink_status(p, ignored));
  });
  if (!fs::exists(fs::symlink_status(dir, ec)) && setAside != olds.end()) {
    fs::rename(*setAside, dir, ec);
    if (ec)
      return "checkpoint '" + dir + "': cannot restore '" + setAside->string() +
             "': " + ec.message();
    olds.erase(setAside);
  }
  for (const std::vector<fs::path> *stale : {&temps, &olds})
    for (const fs::path &p : *stale) {
      fs::remove_all(p, ec);
      if (ec)
        return "checkpoint '" + dir + "': cannot remove the stale '" +
               p.string() + "': " + ec.message();
    }
  if (!temps.empty() || !olds.empty())
    syncFolder(parent);
  return "";
}

std::string mlir::mxfp4::writeCheckpointFolder(
    const std::string &dirArg,
    const std::function<std::string(const std::string &folder)> &writeFiles) {
  // "ckpt/" and "ckpt" are the same folder; the suffixes below need the
  // latter.
  std::string dir = dirArg;
  while (dir.size() > 1 && isSeparator(dir.back()))
    dir.pop_back();
  if (dir.empty())
    return "checkpoint '" + dirArg + "': empty folder name";
  auto error = [&](const std::string &message) {
    return "checkpoint '" + dir + "': " + message;
  };

  // Replacing means deleting the old folder: make sure it is a checkpoint.
  std::error_code ec;
  fs::file_status status = fs::symlink_status(dir, ec);
  bool exists = !ec && fs::exists(status);
  if (exists) {
    // Swapping a link would delete the folder it points to.
    if (fs::is_symlink(status))
      return error("is a symbolic link; name the folder itself");
    if (!fs::is_directory(status))
      return error("exists and is not a folder");
    fs::directory_iterator it(dir, ec);
    if (ec)
      return error("cannot list it: " + ec.message());
    bool empty = it == fs::directory_iterator();
    if (!empty && !fs::exists(dir + "/" + kCheckpointModelFile) &&
        !fs::exists(dir + "/" + kCheckpointTrainerStateFile))
      return error(std::string("refusing to replace a folder that is not a "
                               "checkpoint (it has no ") +
                   kCheckpointModelFile + " or " +
                   kCheckpointTrainerStateFile + ")");
  }

  std::string pid = std::to_string(getProcessId());
  std::string temp = dir + ".tmp-" + pid;
  // A folder of that name is left over from a crashed run that had our pid.
  if (fs::exists(temp)) {
    fs::remove_all(temp, ec);
    if (ec)
      return error("cannot remove the stale '" + temp + "': " + ec.message());
  }
  // As readable as any file the umask lets through.
  fs::create_directories(temp, ec);
  if (ec)
    return error("cannot create '" + temp + "': " + ec.message());
  std::string failure = writeFiles(temp);
  if (failure.empty())
    failure = syncFiles(temp);
  if (!failure.empty()) {
    fs::remove_all(temp, ec);
    return error(failure);
  }
  syncFolder(temp);

  if (!exists) {
    fs::rename(temp, dir, ec);
    if (ec) {
      std::error_code ignored;
      fs::remove_all(temp, ignored);
      return error("cannot rename '" + temp + "' to it: " + ec.message());
    }
  } else if (exchangeFolders(temp, dir)) {
    // `temp` now holds the previous checkpoint.
    fs::remove_all(temp, ec);
  } else {
    // Two renames: between them `dir` is missing but `old` holds the previous
    // checkpoint, which is only deleted once the new one is in place.
    std::string old = dir + ".old-" + pid;
    std::error_code ignored;
    if (fs::exists(old))
      fs::remove_all(old, ignored);
    fs::rename(dir, old, ec);
    if (ec) {
      fs::remove_all(temp, ignored);
      return error("cannot move it aside to '" + old + "': " + ec.message());
    }
    fs::rename(temp, dir, ec);
    if (ec) {
      fs::rename(old, dir, ignored);
      fs::remove_all(temp, ignored);
      return error("cannot rename '" + temp + "' to it: " + ec.message());
    }
    fs::remove_all(old, ignored);
  }
  syncFolder(fs::path(dir).parent_path());
  return "";
}
