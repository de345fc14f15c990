//===- Npy.cpp - .npy files and whole files -------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "Failure.h"

#include "mxfp4/Formats/Npy.h"

#include <cerrno>
#include <fstream>
#include <iterator>

namespace mlir::mxfp4::runtime {

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot read '" + path + "'");
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &text) {
  errno = 0; // what failWrite reports comes from this file's writes
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush())
    failWrite(path);
}

std::vector<char> readNpy(const std::string &path) {
  std::vector<char> file = readFile(path);
  NpyHeader header;
  std::string problem = mlir::mxfp4::parseNpyHeader(
      std::string_view(file.data(), file.size()), header);
  if (!problem.empty())
    fail("'" + path + "': " + problem);
  if (header.fortranOrder)
    fail("'" + path + "' is in Fortran order");
  if (header.descr.empty() || (header.descr[0] != '<' && header.descr[0] != '|'))
    fail("'" + path + "' is not little-endian");
  return std::vector<char>(file.begin() + header.dataOffset, file.end());
}

void writeNpy(const std::string &path, const std::string &type,
              const std::vector<int64_t> &shape,
              const std::vector<char> &data) {
  const char *descr = type == "f32"    ? "<f4"
                      : type == "bf16" ? "<u2"
                      : type == "i32"  ? "<i4"
                      : type == "i64"  ? "<i8"
                                       : "|u1";
  errno = 0; // what failWrite reports comes from this file's writes
  std::ofstream out(path, std::ios::binary);
  if (!out)
    failWrite(path);
  out << mlir::mxfp4::formatNpyHeader(descr, shape);
  out.write(data.data(), data.size());
  if (!out.flush())
    failWrite(path);
}

} // namespace mlir::mxfp4::runtime
