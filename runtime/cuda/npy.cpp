//===- npy.cpp - .npy files and whole files -------------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "npy.h"

#include "failure.h"

#include <cstring>
#include <fstream>
#include <iterator>

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("cannot read '" + path + "'");
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush())
    fail("cannot write '" + path + "'");
}

std::vector<char> readNpy(const std::string &path) {
  std::vector<char> file = readFile(path);
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0)
    fail("'" + path + "' is not a .npy file");
  size_t header =
      file[6] == 1
          ? 10 + (uint8_t(file[8]) | uint8_t(file[9]) << 8)
          : 12 + (uint8_t(file[8]) | uint8_t(file[9]) << 8 |
                  uint8_t(file[10]) << 16 | uint32_t(uint8_t(file[11])) << 24);
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
  const char *descr = type == "f32"    ? "<f4"
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
