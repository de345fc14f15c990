//===- Metrics.cpp - the metrics.jsonl log of a training run --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Metrics.h"
#include "mxfp4/Runtime/Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace fs = llvm::sys::fs;

/// Returns an error "'path': message".
static llvm::Error metricsError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "': " + message);
}

namespace {
/// One record of a metrics file and the text it came from.
struct Line {
  StringRef text;
  llvm::json::Object record;
};

/// The records of a metrics file.
struct ParsedMetrics {
  std::vector<Line> lines;
  /// Where the text after the last complete record begins: the size of the
  /// file if it ends with a newline, else the start of a torn last line.
  size_t completeSize = 0;
  /// True if the last line lacks its newline but is a whole record (the
  /// newline was lost, not the record).
  bool lastLineUnterminated = false;
};
} // namespace

/// Splits `text`, the contents of `path`, into records.
static llvm::Expected<ParsedMetrics> parseMetrics(StringRef text,
                                                  StringRef path) {
  ParsedMetrics parsed;
  size_t lineNumber = 0;
  size_t offset = 0;
  while (offset < text.size()) {
    ++lineNumber;
    size_t newline = text.find('\n', offset);
    bool terminated = newline != StringRef::npos;
    size_t end = terminated ? newline : text.size();
    StringRef lineText = text.slice(offset, end);
    size_t next = terminated ? end + 1 : end;

    if (!lineText.trim().empty()) {
      llvm::Expected<llvm::json::Value> value = llvm::json::parse(lineText);
      llvm::json::Object *object = value ? value->getAsObject() : nullptr;
      if (!object) {
        std::string problem =
            value ? "not a JSON object" : llvm::toString(value.takeError());
        // A crash while appending leaves a torn last line; it is no record.
        if (!terminated)
          return parsed;
        return metricsError(path, "line " + llvm::Twine(lineNumber) +
                                      ": invalid record: " + problem);
      }
      parsed.lines.push_back({lineText, std::move(*object)});
      parsed.lastLineUnterminated = !terminated;
    }
    offset = next;
    parsed.completeSize = offset;
  }
  return parsed;
}

/// Reads the file at `path`, or returns "" if it does not exist.
static llvm::Expected<std::string> readIfExists(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (buffer.getError() == std::errc::no_such_file_or_directory)
    return std::string();
  if (std::error_code error = buffer.getError())
    return metricsError(path, "cannot read: " + error.message());
  return (*buffer)->getBuffer().str();
}

/// Returns the keys of `object` sorted, except that `first` comes first:
/// json::Object iterates in hash order, which would make files differ from
/// run to run.
static std::vector<StringRef> getSortedKeys(const llvm::json::Object &object,
                                            StringRef first = "") {
  std::vector<StringRef> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first);
  llvm::sort(keys, [&](StringRef a, StringRef b) {
    return std::make_pair(a != first, a) < std::make_pair(b != first, b);
  });
  return keys;
}

void mlir::mxfp4::writeJSON(llvm::json::OStream &json,
                            const llvm::json::Value &value) {
  switch (value.kind()) {
  case llvm::json::Value::Object: {
    const llvm::json::Object &object = *value.getAsObject();
    json.object([&] {
      for (StringRef key : getSortedKeys(object)) {
        json.attributeBegin(key);
        writeJSON(json, *object.get(key));
        json.attributeEnd();
      }
    });
    return;
  }
  case llvm::json::Value::Array:
    json.array([&] {
      for (const llvm::json::Value &element : *value.getAsArray())
        writeJSON(json, element);
    });
    return;
  case llvm::json::Value::Number: {
    // Integers (and uint64) print exactly as they are.
    if (value.getAsInteger() || value.getAsUINT64()) {
      json.value(value);
      return;
    }
    double number = *value.getAsNumber();
    if (!std::isfinite(number)) {
      json.value(nullptr);
      return;
    }
    char buffer[32];
    std::to_chars_result result =
        std::to_chars(buffer, buffer + sizeof(buffer), number);
    json.rawValue(StringRef(buffer, result.ptr - buffer));
    return;
  }
  default:
    json.value(value);
  }
}

std::string mlir::mxfp4::formatMetricsRecord(const llvm::json::Object &record) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  // "step" first makes the file easy to scan by eye.
  json.object([&] {
    for (StringRef key : getSortedKeys(record, "step")) {
      json.attributeBegin(key);
      writeJSON(json, *record.get(key));
      json.attributeEnd();
    }
  });
  return text;
}

MetricsLog::MetricsLog(std::string path,
                       std::unique_ptr<llvm::raw_fd_ostream> os)
    : path(std::move(path)), os(std::move(os)) {}
MetricsLog::MetricsLog(MetricsLog &&) = default;
MetricsLog &MetricsLog::operator=(MetricsLog &&) = default;

MetricsLog::~MetricsLog() {
  if (!os)
    return;
  os->close();
  // An unreported error would abort in raw_fd_ostream's destructor.
  os->clear_error();
}

llvm::Expected<MetricsLog> MetricsLog::open(StringRef path) {
  llvm::Expected<std::string> text = readIfExists(path);
  if (!text)
    return text.takeError();
  llvm::Expected<ParsedMetrics> parsed = parseMetrics(*text, path);
  if (!parsed)
    return parsed.takeError();

  int fd;
  if (std::error_code error =
          fs::openFileForWrite(path, fd, fs::CD_OpenAlways, fs::OF_Append))
    return metricsError(path, "cannot open for appending: " + error.message());
  if (parsed->completeSize < text->size())
    if (std::error_code error = fs::resize_file(fd, parsed->completeSize)) {
      llvm::sys::Process::SafelyCloseFileDescriptor(fd);
      return metricsError(path, "cannot cut off its torn last line: " +
                                    error.message());
    }
  auto os = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
  MetricsLog log(path.str(), std::move(os));
  if (parsed->lastLineUnterminated) {
    *log.os << '\n';
    log.os->flush();
  }
  return log;
}

llvm::Error MetricsLog::append(const llvm::json::Object &record) {
  if (!os)
    return metricsError(path, "the log is not open");
  std::string line = formatMetricsRecord(record);
  line.push_back('\n');
  *os << line;
  os->flush();
  if (os->has_error()) {
    std::error_code error = os->error();
    os->clear_error();
    return metricsError(path, "cannot append: " + error.message());
  }
  return llvm::Error::success();
}

llvm::Error MetricsLog::truncateAfterStep(int64_t step) {
  llvm::Expected<std::string> text = readIfExists(path);
  if (!text)
    return text.takeError();
  llvm::Expected<ParsedMetrics> parsed = parseMetrics(*text, path);
  if (!parsed)
    return parsed.takeError();

  if (llvm::Error error =
          writeFileAtomically(path, [&](llvm::raw_ostream &out) {
            for (const Line &line : parsed->lines) {
              std::optional<int64_t> lineStep = line.record.getInteger("step");
              if (!lineStep || *lineStep <= step)
                out << line.text << '\n';
            }
            return llvm::Error::success();
          }))
    return error;

  // The old descriptor points at the replaced file; append to the new one.
  if (os) {
    os->close();
    os->clear_error();
    os.reset();
  }
  int fd;
  if (std::error_code error =
          fs::openFileForWrite(path, fd, fs::CD_OpenAlways, fs::OF_Append))
    return metricsError(path,
                        "cannot reopen for appending: " + error.message());
  os = std::make_unique<llvm::raw_fd_ostream>(fd, /*shouldClose=*/true);
  return llvm::Error::success();
}

llvm::Expected<std::vector<llvm::json::Object>>
mlir::mxfp4::readMetrics(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (std::error_code error = buffer.getError())
    return metricsError(path, "cannot read: " + error.message());
  llvm::Expected<ParsedMetrics> parsed =
      parseMetrics((*buffer)->getBuffer(), path);
  if (!parsed)
    return parsed.takeError();
  std::vector<llvm::json::Object> records;
  for (Line &line : parsed->lines)
    records.push_back(std::move(line.record));
  return records;
}
