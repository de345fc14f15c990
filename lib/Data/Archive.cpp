//===- Archive.cpp - gzip streams and .tgz members ------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Data/Archive.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <limits>
#include <optional>

#include <zlib.h>

using namespace mlir::mxfp4;
using llvm::StringRef;

/// Returns an error "'name': message".
static llvm::Error fileError(StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + name + "': " + message);
}

bool mlir::mxfp4::isGzip(StringRef data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

//===----------------------------------------------------------------------===//
// GzipReader
//===----------------------------------------------------------------------===//

struct GzipReader::State {
  z_stream stream{};
  bool initialized = false;
  bool finished = false;
  StringRef data;
  std::string name;
  size_t fed = 0; // Bytes of `data` handed to zlib so far.

  /// The offset in `data` of the next byte zlib will read.
  size_t offset() const { return fed - stream.avail_in; }
};

GzipReader::GzipReader(StringRef data, StringRef name)
    : state(std::make_unique<State>()) {
  state->data = data;
  state->name = name.str();
  // 16 + MAX_WBITS: gzip framing only, so zlib checks the header and the
  // CRC-32 and length of the trailer.
  state->initialized = inflateInit2(&state->stream, 16 + MAX_WBITS) == Z_OK;
}

GzipReader::~GzipReader() {
  if (state->initialized)
    inflateEnd(&state->stream);
}

llvm::Expected<size_t> GzipReader::read(llvm::MutableArrayRef<char> buffer) {
  State &s = *state;
  if (!s.initialized)
    return fileError(s.name, "cannot initialize zlib");
  if (s.finished || buffer.empty())
    return 0;
  if (s.fed == 0 && !isGzip(s.data))
    return fileError(s.name, "not gzip data (bad magic bytes)");

  z_stream &z = s.stream;
  size_t produced = 0;
  while (produced < buffer.size()) {
    // zlib counts in 32-bit uInt; feed a large input in slices.
    if (z.avail_in == 0 && s.fed < s.data.size()) {
      size_t slice = std::min<size_t>(s.data.size() - s.fed, 1u << 30);
      z.next_in =
          reinterpret_cast<Bytef *>(const_cast<char *>(s.data.data() + s.fed));
      z.avail_in = static_cast<uInt>(slice);
      s.fed += slice;
    }
    size_t room = std::min<size_t>(buffer.size() - produced, 1u << 30);
    z.next_out = reinterpret_cast<Bytef *>(buffer.data() + produced);
    z.avail_out = static_cast<uInt>(room);
    int rc = inflate(&z, Z_NO_FLUSH);
    produced += room - z.avail_out;

    if (rc == Z_STREAM_END) {
      // Another member may follow, as in `cat a.gz b.gz`; zero padding after
      // the last member (some tools write it) is ignored.
      StringRef rest = s.data.drop_front(s.offset());
      if (isGzip(rest)) {
        inflateReset(&z);
        continue;
      }
      if (rest.find_first_not_of('\0') != StringRef::npos)
        return fileError(s.name, "unexpected data after the gzip stream at "
                                 "offset " +
                                     llvm::Twine(s.offset()));
      s.finished = true;
      break;
    }
    // Out of input before the end of the stream: the file was cut short.
    bool inputExhausted = z.avail_in == 0 && s.fed == s.data.size();
    if ((rc == Z_OK || rc == Z_BUF_ERROR) && inputExhausted && z.avail_out != 0)
      return fileError(s.name,
                       "truncated gzip data: the file ends (at offset " +
                           llvm::Twine(s.data.size()) +
                           ") before the end of the compressed stream");
    if (rc != Z_OK) {
      std::string reason = z.msg ? z.msg : "zlib error " + std::to_string(rc);
      return fileError(s.name, "corrupt gzip data near offset " +
                                   llvm::Twine(s.offset()) + ": " + reason);
    }
  }
  return produced;
}

llvm::Expected<std::string> mlir::mxfp4::gunzip(StringRef data,
                                                StringRef name) {
  GzipReader reader(data, name);
  std::string out;
  // A guess of the ratio of text; the buffer grows as needed.
  size_t chunk =
      std::max<size_t>(1 << 16, std::min<size_t>(data.size() * 4, 1 << 26));
  while (true) {
    size_t old = out.size();
    out.resize(old + chunk);
    llvm::Expected<size_t> n =
        reader.read(llvm::MutableArrayRef<char>(out.data() + old, chunk));
    if (!n)
      return n.takeError();
    out.resize(old + *n);
    if (*n < chunk)
      return out;
  }
}

//===----------------------------------------------------------------------===//
// LineReader
//===----------------------------------------------------------------------===//

LineReader::LineReader(std::string path,
                       std::unique_ptr<llvm::MemoryBuffer> file)
    : path(std::move(path)), file(std::move(file)) {}

LineReader::~LineReader() = default;

llvm::Expected<std::unique_ptr<LineReader>> LineReader::open(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fileError(path, "cannot read: " + file.getError().message());
  std::unique_ptr<LineReader> reader(
      new LineReader(path.str(), std::move(*file)));
  if (isGzip(reader->file->getBuffer()))
    reader->gzip =
        std::make_unique<GzipReader>(reader->file->getBuffer(), path);
  return reader;
}

llvm::Expected<bool> LineReader::next(StringRef &line) {
  // A plain file is scanned in place; a gzipped one through `pending`.
  StringRef input = gzip ? StringRef(pending) : file->getBuffer();
  while (true) {
    size_t newline = input.find('\n', position);
    if (newline == StringRef::npos && gzip && !atEnd) {
      // Drop the lines already returned, then decompress another chunk.
      pending.erase(0, position);
      position = 0;
      constexpr size_t chunk = 1 << 20;
      size_t old = pending.size();
      pending.resize(old + chunk);
      llvm::Expected<size_t> n =
          gzip->read(llvm::MutableArrayRef<char>(pending.data() + old, chunk));
      if (!n)
        return n.takeError();
      pending.resize(old + *n);
      atEnd = *n == 0;
      input = pending;
      continue;
    }
    if (position >= input.size())
      return false;
    size_t end = newline == StringRef::npos ? input.size() : newline;
    line = input.slice(position, end);
    if (line.ends_with("\r"))
      line = line.drop_back();
    position = end + 1;
    ++lineNumber;
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Tar
//===----------------------------------------------------------------------===//

namespace {
/// Reads the bytes of a plain or gzipped archive in order.
class ByteStream {
public:
  ByteStream(StringRef data, StringRef name) : data(data) {
    if (isGzip(data))
      gzip.emplace(data, name);
  }

  /// Appends up to `size` bytes to `out`; returns how many.
  llvm::Expected<size_t> read(size_t size, std::string &out) {
    size_t done = 0;
    while (done < size) {
      // Grow the string in steps, so a corrupt size in a header cannot make
      // us allocate more than the data that is really there.
      size_t step = std::min<size_t>(size - done, 1 << 20);
      size_t old = out.size();
      out.resize(old + step);
      size_t got;
      if (gzip) {
        llvm::Expected<size_t> n =
            gzip->read(llvm::MutableArrayRef<char>(out.data() + old, step));
        if (!n)
          return n.takeError();
        got = *n;
      } else {
        got = std::min(step, data.size() - offset);
        std::copy_n(data.data() + offset, got, out.data() + old);
      }
      offset += got;
      out.resize(old + got);
      done += got;
      if (got < step)
        break;
    }
    return done;
  }

  /// The number of (decompressed) bytes read so far.
  uint64_t getOffset() const { return offset; }

private:
  StringRef data;
  std::optional<GzipReader> gzip;
  uint64_t offset = 0;
};
} // namespace

/// Parses a tar numeric field: octal digits padded with spaces or NULs, or
/// the GNU base-256 form (high bit of the first byte set).
static std::optional<uint64_t> parseTarNumber(StringRef field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80)) {
    uint64_t value = static_cast<unsigned char>(field[0]) & 0x7f;
    for (char c : field.drop_front()) {
      if (value >> 55)
        return std::nullopt;
      value = (value << 8) | static_cast<unsigned char>(c);
    }
    return value;
  }
  field = field.take_until([](char c) { return c == '\0'; }).trim(" ");
  if (field.empty())
    return 0;
  uint64_t value;
  if (field.getAsInteger(8, value))
    return std::nullopt;
  return value;
}

/// Returns the NUL-terminated string in a fixed-size field.
static StringRef tarString(StringRef field) {
  return field.take_until([](char c) { return c == '\0'; });
}

/// Returns the "path" value of pax extended header records
/// ("LENGTH KEY=VALUE\n" each), if there is one.
static std::optional<std::string> paxPath(StringRef records) {
  std::optional<std::string> path;
  while (!records.empty()) {
    auto [lengthText, rest] = records.split(' ');
    size_t length;
    if (lengthText.getAsInteger(10, length) || length <= lengthText.size() ||
        length > records.size())
      break;
    StringRef record =
        records.substr(lengthText.size() + 1, length - lengthText.size() - 1);
    records = records.drop_front(length);
    auto [key, value] = record.split('=');
    if (key == "path")
      path = value.rtrim('\n').str();
  }
  return path;
}

llvm::Error mlir::mxfp4::forEachTarMember(
    StringRef path, llvm::function_ref<bool(StringRef)> select,
    llvm::function_ref<llvm::Error(StringRef, StringRef)> callback) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return fileError(path, "cannot read: " + file.getError().message());
  ByteStream stream((*file)->getBuffer(), path);

  std::optional<std::string> longName;
  std::string header, contents;
  while (true) {
    uint64_t headerOffset = stream.getOffset();
    header.clear();
    llvm::Expected<size_t> got = stream.read(512, header);
    if (!got)
      return got.takeError();
    // The end is two zero blocks; an archive that just stops at a block
    // boundary is accepted too, as GNU tar does.
    if (*got == 0)
      return llvm::Error::success();
    if (*got < 512)
      return fileError(path, "truncated tar archive: the header at offset " +
                                 llvm::Twine(headerOffset) + " is cut off");
    if (StringRef(header).find_first_not_of('\0') == StringRef::npos)
      return llvm::Error::success();

    // The checksum is the byte sum of the header with its own field taken
    // as spaces.
    std::optional<uint64_t> checksum =
        parseTarNumber(StringRef(header).substr(148, 8));
    uint64_t sum = 0;
    for (size_t i = 0; i < 512; ++i)
      sum +=
          (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(header[i]);
    if (!checksum || *checksum != sum)
      return fileError(path, "corrupt tar header at offset " +
                                 llvm::Twine(headerOffset) +
                                 " (bad checksum); not a tar archive?");

    StringRef h(header);
    std::optional<uint64_t> size = parseTarNumber(h.substr(124, 12));
    if (!size)
      return fileError(path, "corrupt tar header at offset " +
                                 llvm::Twine(headerOffset) + " (bad size)");
    char type = h[156];
    std::string name = tarString(h.substr(0, 100)).str();
    if (h.substr(257, 5) == "ustar") {
      StringRef prefix = tarString(h.substr(345, 155));
      if (!prefix.empty())
        name = (prefix + "/" + name).str();
    }
    if (longName)
      name = *std::exchange(longName, std::nullopt);

    bool isFile = type == '0' || type == '\0' || type == '7';
    bool wanted = isFile && select(name);
    bool meta = type == 'L' || type == 'x';
    contents.clear();
    uint64_t padded = (*size + 511) / 512 * 512;
    // Members we do not want are read in bounded pieces and dropped.
    uint64_t remaining = padded;
    while (remaining > 0) {
      size_t step =
          (wanted || meta) ? remaining : std::min<uint64_t>(remaining, 1 << 20);
      if (!(wanted || meta))
        contents.clear();
      llvm::Expected<size_t> n = stream.read(step, contents);
      if (!n)
        return n.takeError();
      if (*n < step)
        return fileError(path, "truncated tar archive: member '" + name +
                                   "' at offset " + llvm::Twine(headerOffset) +
                                   " is cut off");
      remaining -= step;
    }
    StringRef data = StringRef(contents).take_front(*size);
    if (type == 'L')
      longName = tarString(data).str();
    else if (type == 'x')
      longName = paxPath(data);
    else if (wanted)
      if (llvm::Error error = callback(name, data))
        return error;
  }
}

llvm::Expected<std::string> mlir::mxfp4::readTarMember(StringRef path,
                                                       StringRef memberName) {
  std::optional<std::string> found;
  if (llvm::Error error = forEachTarMember(
          path, [&](StringRef name) { return name == memberName; },
          [&](StringRef, StringRef contents) {
            found = contents.str();
            return llvm::Error::success();
          }))
    return std::move(error);
  if (!found)
    return fileError(path, "the archive has no member '" + memberName + "'");
  return std::move(*found);
}
