//===- ArrayPrinter.cpp - readable printing of host arrays ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Runtime/ArrayPrinter.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

using namespace mlir::mxfp4;

/// Arrays with more elements than this are summarized, as NumPy does.
static constexpr int64_t kSummaryThreshold = 1000;
/// Entries shown at each end of a summarized dimension.
static constexpr int64_t kEdgeItems = 3;
/// Rows wrap before this column.
static constexpr size_t kLineWidth = 75;

template <typename T> static T load(const HostArray &array, int64_t index) {
  T value;
  std::memcpy(&value, array.bytes.data() + index * sizeof(T), sizeof(T));
  return value;
}

static std::string formatFloat(double value, int digits) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.*g", digits, value);
  return text;
}

std::string mlir::mxfp4::formatElement(const HostArray &array, ElementType type,
                                       int64_t index) {
  switch (type) {
  case ElementType::F32:
    return formatFloat(load<float>(array, index), 9);
  case ElementType::F64:
    return formatFloat(load<double>(array, index), 17);
  case ElementType::BF16:
    return formatFloat(decodeBF16(load<uint16_t>(array, index)), 9);
  case ElementType::I8:
    return std::to_string(load<uint8_t>(array, index));
  case ElementType::I32:
    return std::to_string(load<int32_t>(array, index));
  case ElementType::I64:
  case ElementType::Index:
    return std::to_string(load<int64_t>(array, index));
  case ElementType::F4E2M1FN: {
    uint8_t code = load<uint8_t>(array, index);
    if (code > 0xF)
      return "invalid(" + std::to_string(code) + ")";
    return formatFloat(decodeE2M1(code), 9);
  }
  case ElementType::F8E8M0FNU: {
    uint8_t scale = load<uint8_t>(array, index);
    if (scale == 0xFF)
      return "NaN";
    return "2^" + std::to_string(static_cast<int>(scale) - 127);
  }
  }
  llvm_unreachable("unknown element type");
}

namespace {
/// Prints one array; the texts of the shown elements are computed first so
/// that every column gets the same width.
class Printer {
public:
  Printer(const HostArray &array, ElementType type)
      : array(array), type(type),
        summarize(array.getNumElements() > kSummaryThreshold) {
    int64_t stride = 1;
    strides.resize(array.shape.size());
    for (int64_t dim = array.shape.size() - 1; dim >= 0; --dim) {
      strides[dim] = stride;
      stride *= array.shape[dim];
    }
  }

  void print(llvm::raw_ostream &os) {
    collect(0, 0);
    for (const std::string &text : texts)
      width = std::max(width, text.size());
    next = 0;
    emit(os, 0);
  }

private:
  /// Returns the indices shown along `dim`; -1 stands for "...".
  llvm::SmallVector<int64_t> shownIndices(int64_t dim) const {
    int64_t size = array.shape[dim];
    llvm::SmallVector<int64_t> indices;
    if (!summarize || size <= 2 * kEdgeItems) {
      for (int64_t i = 0; i < size; ++i)
        indices.push_back(i);
      return indices;
    }
    for (int64_t i = 0; i < kEdgeItems; ++i)
      indices.push_back(i);
    indices.push_back(-1);
    for (int64_t i = size - kEdgeItems; i < size; ++i)
      indices.push_back(i);
    return indices;
  }

  void collect(int64_t dim, int64_t offset) {
    if (dim == static_cast<int64_t>(array.shape.size())) {
      texts.push_back(formatElement(array, type, offset));
      return;
    }
    for (int64_t i : shownIndices(dim))
      if (i >= 0)
        collect(dim + 1, offset + i * strides[dim]);
  }

  void emit(llvm::raw_ostream &os, int64_t dim) {
    int64_t rank = array.shape.size();
    if (dim == rank) {
      os << texts[next++];
      return;
    }
    os << '[';
    if (dim == rank - 1) {
      emitRow(os);
      return;
    }
    // Between rows: a comma, one newline per remaining outer level, and the
    // indentation of the opening brackets.
    std::string separator =
        "," + std::string(rank - dim - 1, '\n') + std::string(dim + 1, ' ');
    for (auto [position, i] : llvm::enumerate(shownIndices(dim))) {
      if (position)
        os << separator;
      if (i < 0)
        os << "...";
      else
        emit(os, dim + 1);
    }
    os << ']';
  }

  /// Prints the next innermost row after its '[', wrapped at
  /// kLineWidth columns like NumPy.
  void emitRow(llvm::raw_ostream &os) {
    int64_t rank = array.shape.size();
    size_t column = rank;
    for (auto [position, i] : llvm::enumerate(shownIndices(rank - 1))) {
      size_t length = i < 0 ? 3 : width;
      if (position) {
        os << ',';
        if (column + 2 + length + 1 > kLineWidth) {
          os << '\n' << std::string(rank, ' ');
          column = rank;
        } else {
          os << ' ';
          column += 2;
        }
      }
      if (i < 0)
        os << "...";
      else
        os << llvm::right_justify(texts[next++], width);
      column += length;
    }
    os << ']';
  }

  const HostArray &array;
  ElementType type;
  bool summarize;
  llvm::SmallVector<int64_t> strides;
  std::vector<std::string> texts;
  size_t width = 0;
  size_t next = 0;
};
} // namespace

void mlir::mxfp4::printArray(llvm::raw_ostream &os, const HostArray &array,
                             ElementType type) {
  Printer(array, type).print(os);
  os << '\n';
}
