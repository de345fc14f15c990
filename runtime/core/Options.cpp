//===- Options.cpp - the command line -------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "Failure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace mlir::mxfp4::runtime {

/// The usage of `tool`.
static std::string getUsage(const Tool &tool) {
  std::string target;
  for (const std::string &t : tool.targets)
    target += (target.empty() ? " [--target=" : "|") + t;
  if (!target.empty())
    target += "]";
  const std::string &n = tool.name, &code = tool.codeObject;
  std::string usage =
      "usage: " + n + " exec PLAN " + code +
      " --function=NAME "
      "[--input=@x.npy|N|zeros|ones|normal:STD|integers:N]... "
      "[--output=@y.npy]... [--repeat=N] "
      "[--back-to-back [--batches=N]] [--profile] [--time-json=FILE]" +
      target + "\n       " + n + " train PLAN " + code +
      " --run=DIR --out=DIR [--steps=N] "
      "[--checkpoint-every=N] [--resume] [--recipe=NAME] [--gpus=N]" +
      target + "\n       " + n +
      " study --recipes=DIR,DIR... --runs=DIR[,DIR...] "
      "--out=DIR [--steps=N] [--checkpoint-every=N] [--dnc-threshold=F]" +
      target + "\n       " + n + " check-weights --run=DIR";
  if (tool.hostLibrary)
    usage += "\nexec and train take --host=LIBRARY (host.so) instead of PLAN " +
             code;
  if (!tool.notes.empty())
    usage += "\n" + tool.notes;
  return usage;
}

/// The flags of each subcommand; a flag with '=' takes a value.
static const std::map<std::string, std::set<std::string>> flags = {
    {"exec",
     {"--host=", "--function=", "--input=", "--output=", "--repeat=",
      "--back-to-back", "--batches=", "--profile", "--time-json="}},
    {"train",
     {"--host=", "--run=", "--out=", "--steps=", "--checkpoint-every=",
      "--resume", "--recipe=", "--gpus="}},
    {"study",
     {"--recipes=", "--runs=", "--out=", "--steps=", "--checkpoint-every=",
      "--dnc-threshold="}},
    {"check-weights", {"--run="}},
};

/// `value` of `flag` as a count.
static uint64_t count(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  unsigned long long n = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || *end || value[0] == '-')
    fail(flag + " wants a number, not '" + value + "'");
  return n;
}

/// `value` of `flag` as a fraction of at least 0.
static double fraction(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double f = std::strtod(value.c_str(), &end);
  if (value.empty() || *end || !(f >= 0) || f == HUGE_VAL)
    fail(flag + " wants a fraction of at least 0, not '" + value + "'");
  return f;
}

/// The comma-separated items of `value`.
static std::vector<std::string> list(const std::string &value) {
  std::vector<std::string> items;
  for (size_t at = 0; at <= value.size();) {
    size_t comma = std::min(value.find(',', at), value.size());
    if (comma > at)
      items.push_back(value.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

Options parseOptions(int argc, char **argv, const Tool &tool) {
  std::string usage = getUsage(tool);
  Options o;
  o.toolName = tool.name;
  if (!tool.targets.empty())
    o.target = tool.targets.front();
  // --help anywhere: the usage, and nothing else is done.
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("%s", usage.c_str());
      std::exit(0);
    }
  if (argc < 2 || !flags.count(argv[1]))
    fail(usage);
  o.command = argv[1];
  std::set<std::string> known = flags.at(o.command);
  if (!tool.hostLibrary)
    known.erase("--host=");
  if (!tool.targets.empty() && o.command != "check-weights")
    known.insert("--target=");
  std::vector<std::string> positional;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) {
      positional.push_back(a);
      continue;
    }
    size_t equals = a.find('=');
    std::string flag =
        a.substr(0, equals == std::string::npos ? a.size() : equals + 1);
    std::string value = equals == std::string::npos ? "" : a.substr(equals + 1);
    if (!known.count(flag))
      fail("'" + o.command + "' has no option '" + a.substr(0, equals) + "'");
    if (flag == "--host=")
      o.hostPath = value;
    else if (flag == "--target=" &&
             std::find(tool.targets.begin(), tool.targets.end(), value) ==
                 tool.targets.end()) {
      std::string known;
      for (const std::string &t : tool.targets)
        known += (known.empty() ? "" : " or ") + t;
      fail("--target wants " + known + ", not '" + value + "'");
    } else if (flag == "--target=")
      o.target = value;
    else if (flag == "--function=")
      o.function = value;
    else if (flag == "--input=")
      o.inputs.push_back(value);
    else if (flag == "--output=" && value.rfind('@', 0) == 0)
      o.outputs.push_back(value.substr(1));
    else if (flag == "--output=")
      fail("--output wants @FILE.npy, not '" + value + "'");
    else if (flag == "--repeat=")
      o.repeat = count("--repeat", value);
    else if (flag == "--back-to-back")
      o.backToBack = true;
    else if (flag == "--batches=")
      o.batches = count("--batches", value);
    else if (flag == "--profile")
      o.profile = true;
    else if (flag == "--time-json=")
      o.timeJson = value;
    else if (flag == "--run=")
      o.runDir = value;
    else if (flag == "--out=")
      o.outDir = value;
    else if (flag == "--steps=")
      o.steps = count("--steps", value);
    else if (flag == "--checkpoint-every=")
      o.checkpointEvery = count("--checkpoint-every", value);
    else if (flag == "--resume")
      o.resume = true;
    else if (flag == "--recipe=")
      o.recipe = value;
    else if (flag == "--gpus=")
      o.gpus = count("--gpus", value), o.dataParallel = true;
    else if (flag == "--dnc-threshold=")
      o.dncThreshold = fraction("--dnc-threshold", value);
    else if (flag == "--recipes=")
      o.recipeDirs = list(value);
    else if (flag == "--runs=")
      o.runDirs = list(value);
  }
  bool compiled = o.command == "exec" || o.command == "train";
  if (!o.hostPath.empty() && !positional.empty())
    fail("--host=LIBRARY carries the plan and the cubin: give PLAN CUBIN or "
         "--host, not both");
  if (compiled && o.hostPath.empty() && positional.size() != 2)
    fail("'" + o.command + "' wants PLAN " + tool.codeObject +
         (tool.hostLibrary ? " or --host=LIBRARY\n" : "\n") + usage);
  if (!compiled && !positional.empty())
    fail("'" + o.command + "' takes no '" + positional[0] + "'");
  if (compiled && o.hostPath.empty()) {
    o.planPath = positional[0];
    o.cubinPath = positional[1];
  }
  auto require = [&](bool given, const char *flag) {
    if (!given)
      fail("'" + o.command + "' needs " + flag);
  };
  if (o.command == "exec")
    require(!o.function.empty(), "--function=NAME");
  if (o.command != "exec" && o.command != "study")
    require(!o.runDir.empty(), "--run=DIR");
  if (o.command == "train" || o.command == "study")
    require(!o.outDir.empty(), "--out=DIR");
  if (o.command == "study") {
    require(!o.recipeDirs.empty(), "--recipes=DIR,...");
    require(!o.runDirs.empty(), "--runs=DIR,...");
  }
  if (o.gpus == 0)
    fail("--gpus=N needs N at least 1");
  if (o.gpus > 1024)
    fail("--gpus=" + std::to_string(o.gpus) + ": at most 1024 ranks");
  if (o.backToBack && o.repeat == 0)
    fail("--back-to-back needs timed calls: --repeat=N with N at least 1");
  if (o.batches != 1 && !o.backToBack)
    fail("--batches times batches of back-to-back calls: add --back-to-back");
  if (o.batches == 0)
    fail("--batches=N needs N at least 1");
  if (!o.timeJson.empty() && o.repeat == 0)
    fail("--time-json needs timed calls: --repeat=N with N at least 1");
  return o;
}

} // namespace mlir::mxfp4::runtime
