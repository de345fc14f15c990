//===- Metrics.cpp - the metrics.jsonl log of a training run --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Metrics.h"

#include "mxfp4/Formats/Metrics.h"
#include "mxfp4/Runtime/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir::mxfp4;
using llvm::StringRef;

namespace fs = llvm::sys::fs;

/// Returns an error "'path': message".
static llvm::Error metricsError(StringRef path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path + "': " + message);
}

/// Parses `text`, the contents of `path`, into records.
static llvm::Expected<MetricsFile> parseMetricsFile(StringRef text,
                                                    StringRef path) {
  MetricsFile file;
  std::string problem =
      parseMetrics(std::string_view(text.data(), text.size()), file);
  if (!problem.empty())
    return metricsError(path, problem);
  return file;
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

/// Returns the keys of `object` sorted: json::Object iterates in hash order,
/// which would make files differ from run to run.
static std::vector<StringRef> getSortedKeys(const llvm::json::Object &object) {
  std::vector<StringRef> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first);
  llvm::sort(keys);
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
  case llvm::json::Value::Number:
    // Integers (and uint64) print exactly as they are, other numbers as
    // metrics records write them.
    if (value.getAsInteger() || value.getAsUINT64())
      json.value(value);
    else
      json.rawValue(jsonNumber(*value.getAsNumber()));
    return;
  default:
    json.value(value);
  }
}

/// `object` as a JsonValue, without copying it into an llvm::json::Value.
static JsonValue toJsonObject(const llvm::json::Object &object) {
  JsonValue result;
  result.kind = JsonValue::Object;
  for (const auto &[key, member] : object)
    result.members.push_back({key.str(), toJsonValue(member)});
  return result;
}

JsonValue mlir::mxfp4::toJsonValue(const llvm::json::Value &value) {
  JsonValue result;
  switch (value.kind()) {
  case llvm::json::Value::Null:
    break;
  case llvm::json::Value::Boolean:
    result.kind = JsonValue::Bool;
    result.boolean = *value.getAsBoolean();
    break;
  case llvm::json::Value::Number:
    result.kind = JsonValue::Number;
    result.number = *value.getAsNumber();
    result.integer = value.getAsInteger();
    break;
  case llvm::json::Value::String:
    result.kind = JsonValue::String;
    result.string = value.getAsString()->str();
    break;
  case llvm::json::Value::Array:
    result.kind = JsonValue::Array;
    for (const llvm::json::Value &element : *value.getAsArray())
      result.elements.push_back(toJsonValue(element));
    break;
  case llvm::json::Value::Object:
    return toJsonObject(*value.getAsObject());
  }
  return result;
}

/// `text` where it is UTF-8, which llvm::json requires, else with the
/// invalid sequences replaced.
static std::string toUTF8(std::string text) {
  return llvm::json::isUTF8(text) ? text : llvm::json::fixUTF8(text);
}

static llvm::json::Value toLLVMJson(const JsonValue &value);

/// The JSON object `object`, read by the formats library, for llvm::json.
static llvm::json::Object toLLVMObject(const JsonValue &object) {
  llvm::json::Object result;
  for (const auto &[key, member] : object.members)
    result[toUTF8(key)] = toLLVMJson(member);
  return result;
}

/// `value`, read by the formats library, as an llvm::json::Value. Integers
/// stay integers, as llvm::json::parse makes them.
static llvm::json::Value toLLVMJson(const JsonValue &value) {
  switch (value.kind) {
  case JsonValue::Null:
    return nullptr;
  case JsonValue::Bool:
    return value.boolean;
  case JsonValue::Number:
    if (value.integer)
      return *value.integer;
    if (std::trunc(value.number) == value.number &&
        std::fabs(value.number) <= 9007199254740992.0)
      return static_cast<int64_t>(value.number);
    return value.number;
  case JsonValue::String:
    return toUTF8(value.string);
  case JsonValue::Array: {
    llvm::json::Array array;
    for (const JsonValue &element : value.elements)
      array.push_back(toLLVMJson(element));
    return array;
  }
  case JsonValue::Object:
    return toLLVMObject(value);
  }
  llvm_unreachable("unknown JSON kind");
}

std::string mlir::mxfp4::formatMetricsRecord(const llvm::json::Object &record) {
  return formatMetricsRecord(toJsonObject(record));
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
  llvm::Expected<MetricsFile> parsed = parseMetricsFile(*text, path);
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
  llvm::Expected<MetricsFile> parsed = parseMetricsFile(*text, path);
  if (!parsed)
    return parsed.takeError();

  if (llvm::Error error =
          writeFileAtomically(path, formatMetricsUpToStep(*parsed, step)))
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
  llvm::Expected<MetricsFile> parsed =
      parseMetricsFile((*buffer)->getBuffer(), path);
  if (!parsed)
    return parsed.takeError();
  std::vector<llvm::json::Object> records;
  for (const MetricsLine &line : parsed->lines)
    records.push_back(toLLVMObject(line.record));
  return records;
}
