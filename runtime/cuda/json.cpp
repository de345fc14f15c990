//===- json.cpp - JSON text -----------------------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "json.h"

#include <cstdint>
#include <cstdio>

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
