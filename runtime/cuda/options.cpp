//===- options.cpp - the command line -------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "options.h"

#include "failure.h"

#include <cstdlib>

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
