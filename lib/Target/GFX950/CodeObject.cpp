//===- CodeObject.cpp - AMDGPU code-object metadata -----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The YAML text is converted into the same msgpack::Document that the ELF
// note decodes to, so one reader extracts the kernels from both. The YAML is
// parsed with llvm::yaml::Stream rather than Document::fromYAML because the
// latter prints syntax errors to stderr instead of returning them.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/CodeObject.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <limits>

using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using llvm::StringRef;
namespace msgpack = llvm::msgpack;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

//===----------------------------------------------------------------------===//
// Small accessors
//===----------------------------------------------------------------------===//

bool KernelArgument::isHidden() const {
  return StringRef(valueKind).starts_with("hidden_");
}

int64_t KernelMetadata::getWorkgroupSize() const {
  if (requiredWorkgroupSize[0] > 0)
    return requiredWorkgroupSize[0] *
           std::max<int64_t>(1, requiredWorkgroupSize[1]) *
           std::max<int64_t>(1, requiredWorkgroupSize[2]);
  return maxFlatWorkgroupSize;
}

const KernelMetadata *CodeObjectMetadata::findKernel(StringRef name) const {
  for (const KernelMetadata &kernel : kernels)
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

bool CodeObject::isGfx950() const {
  return (elfFlags & llvm::ELF::EF_AMDGPU_MACH) ==
         llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX950;
}

KernargLayout gfx950::getKernargLayout(const KernelMetadata &kernel) {
  KernargLayout layout;
  layout.kernelName = kernel.name;
  layout.segmentSize = kernel.kernargBytes;
  for (const KernelArgument &argument : kernel.arguments)
    if (!argument.isHidden())
      layout.slots.push_back(
          {argument.offset, argument.size, argument.valueKind});
  return layout;
}

//===----------------------------------------------------------------------===//
// YAML -> msgpack::Document
//===----------------------------------------------------------------------===//

namespace {
/// Copies a YAML node tree into a msgpack::Document, every scalar as a
/// string (the extractor below parses numbers from strings as well as from
/// native MessagePack integers).
class YamlConverter {
public:
  explicit YamlConverter(msgpack::Document &doc) : doc(doc) {}

  /// Returns false on a node kind the metadata never uses (aliases).
  bool convert(llvm::yaml::Node *node, msgpack::DocNode &out) {
    using namespace llvm::yaml;
    if (!node || llvm::isa<NullNode>(node)) {
      out = doc.getNode();
      return true;
    }
    if (auto *scalar = llvm::dyn_cast<ScalarNode>(node)) {
      llvm::SmallString<32> storage;
      out = doc.getNode(scalar->getValue(storage), /*Copy=*/true);
      return true;
    }
    if (auto *block = llvm::dyn_cast<BlockScalarNode>(node)) {
      out = doc.getNode(block->getValue(), /*Copy=*/true);
      return true;
    }
    if (auto *sequence = llvm::dyn_cast<SequenceNode>(node)) {
      msgpack::ArrayDocNode array = doc.getArrayNode();
      for (Node &element : *sequence) {
        msgpack::DocNode value;
        if (!convert(&element, value))
          return false;
        array.push_back(value);
      }
      out = array;
      return true;
    }
    if (auto *mapping = llvm::dyn_cast<MappingNode>(node)) {
      msgpack::MapDocNode map = doc.getMapNode();
      for (KeyValueNode &entry : *mapping) {
        auto *key = llvm::dyn_cast_or_null<ScalarNode>(entry.getKey());
        if (!key)
          return false;
        llvm::SmallString<32> storage;
        msgpack::DocNode keyNode =
            doc.getNode(key->getValue(storage), /*Copy=*/true);
        msgpack::DocNode value;
        if (!convert(entry.getValue(), value))
          return false;
        map[keyNode] = value;
      }
      out = map;
      return true;
    }
    return false;
  }

private:
  msgpack::Document &doc;
};

/// Extracts CodeObjectMetadata from a decoded metadata map; `where` prefixes
/// every error ("k.s:220" or "k.hsaco").
class MetadataReader {
public:
  explicit MetadataReader(std::string where) : where(std::move(where)) {}

  llvm::Expected<CodeObjectMetadata> read(msgpack::DocNode &root) {
    if (!root.isMap())
      return error("", "the metadata is not a map");
    msgpack::MapDocNode map = root.getMap();
    CodeObjectMetadata result;
    if (msgpack::DocNode *target = find(map, "amdhsa.target"))
      result.target = toString(*target);
    if (msgpack::DocNode *version = find(map, "amdhsa.version")) {
      if (!version->isArray())
        return error("", "amdhsa.version is not a list");
      for (msgpack::DocNode &element : version->getArray()) {
        auto value = toInteger(element, "", "amdhsa.version");
        if (!value)
          return value.takeError();
        result.version.push_back(*value);
      }
    }
    msgpack::DocNode *kernels = find(map, "amdhsa.kernels");
    if (!kernels)
      return error("", "no amdhsa.kernels in the metadata");
    if (!kernels->isArray())
      return error("", "amdhsa.kernels is not a list");
    unsigned index = 0;
    for (msgpack::DocNode &kernel : kernels->getArray()) {
      auto parsed = readKernel(kernel, index++);
      if (!parsed)
        return parsed.takeError();
      result.kernels.push_back(std::move(*parsed));
    }
    return result;
  }

private:
  llvm::Error error(StringRef kernel, const llvm::Twine &message) const {
    if (kernel.empty())
      return makeError(where + ": " + message);
    return makeError(where + ": kernel '" + kernel + "': " + message);
  }

  static msgpack::DocNode *find(msgpack::MapDocNode &map, StringRef key) {
    auto it = map.find(key);
    if (it == map.end())
      return nullptr;
    return &it->second;
  }

  static std::string toString(const msgpack::DocNode &node) {
    if (node.isString())
      return node.getString().str();
    if (node.isScalar())
      return node.toString();
    return node.isMap() ? "<map>" : "<list>";
  }

  llvm::Expected<int64_t> toInteger(const msgpack::DocNode &node,
                                    StringRef kernel, StringRef key) const {
    switch (node.getKind()) {
    case msgpack::Type::Int:
      return node.getInt();
    case msgpack::Type::UInt:
      if (node.getUInt() >
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return error(kernel, key + " is out of range");
      return static_cast<int64_t>(node.getUInt());
    case msgpack::Type::String: {
      int64_t value;
      if (!node.getString().trim().getAsInteger(0, value))
        return value;
      break;
    }
    default:
      break;
    }
    return error(kernel, key + " is not an integer: '" + toString(node) + "'");
  }

  llvm::Expected<bool> toBool(const msgpack::DocNode &node, StringRef kernel,
                              StringRef key) const {
    if (node.getKind() == msgpack::Type::Boolean)
      return node.getBool();
    if (node.isString()) {
      StringRef text = node.getString().trim();
      if (text == "true" || text == "1")
        return true;
      if (text == "false" || text == "0")
        return false;
    }
    if (node.getKind() == msgpack::Type::UInt)
      return node.getUInt() != 0;
    return error(kernel, key + " is not a boolean: '" + toString(node) + "'");
  }

  /// Reads integer `key` of `map` into `out`; absent keys are an error when
  /// `required`, else leave `out` unchanged.
  llvm::Error readInteger(msgpack::MapDocNode &map, StringRef kernel,
                          StringRef key, int64_t &out, bool required) const {
    msgpack::DocNode *node = find(map, key);
    if (!node)
      return required ? error(kernel, "missing " + key)
                      : llvm::Error::success();
    auto value = toInteger(*node, kernel, key);
    if (!value)
      return value.takeError();
    if (*value < 0)
      return error(kernel, key + " is negative: " + llvm::Twine(*value));
    out = *value;
    return llvm::Error::success();
  }

  llvm::Expected<KernelMetadata> readKernel(msgpack::DocNode &node,
                                            unsigned index) const {
    std::string label = "#" + std::to_string(index);
    if (!node.isMap())
      return error(label, "the kernel entry is not a map");
    msgpack::MapDocNode map = node.getMap();
    KernelMetadata kernel;
    msgpack::DocNode *name = find(map, ".name");
    if (!name)
      return error(label, "missing .name");
    kernel.name = toString(*name);
    if (kernel.name.empty())
      return error(label, ".name is empty");
    StringRef k = kernel.name;
    if (msgpack::DocNode *symbol = find(map, ".symbol"))
      kernel.symbol = toString(*symbol);

    struct Field {
      StringRef key;
      int64_t *out;
      bool required;
    };
    // The fields every LLVM since code object v3 emits are required; the
    // optional ones default to 0 (AGPRs exist only with MAI instructions).
    Field fields[] = {
        {".vgpr_count", &kernel.vgprs, true},
        {".agpr_count", &kernel.agprs, false},
        {".sgpr_count", &kernel.sgprs, true},
        {".vgpr_spill_count", &kernel.vgprSpills, false},
        {".sgpr_spill_count", &kernel.sgprSpills, false},
        {".private_segment_fixed_size", &kernel.scratchBytes, true},
        {".group_segment_fixed_size", &kernel.ldsBytes, true},
        {".kernarg_segment_size", &kernel.kernargBytes, true},
        {".kernarg_segment_align", &kernel.kernargAlign, false},
        {".max_flat_workgroup_size", &kernel.maxFlatWorkgroupSize, true},
        {".wavefront_size", &kernel.wavefrontSize, true},
    };
    for (const Field &field : fields)
      if (llvm::Error err =
              readInteger(map, k, field.key, *field.out, field.required))
        return std::move(err);
    if (kernel.wavefrontSize != 32 && kernel.wavefrontSize != 64)
      return error(k, ".wavefront_size is " +
                          llvm::Twine(kernel.wavefrontSize) +
                          ", expected 32 or 64");
    if (kernel.maxFlatWorkgroupSize <= 0)
      return error(k, ".max_flat_workgroup_size must be positive");

    if (msgpack::DocNode *dynamicStack = find(map, ".uses_dynamic_stack")) {
      auto value = toBool(*dynamicStack, k, ".uses_dynamic_stack");
      if (!value)
        return value.takeError();
      kernel.usesDynamicStack = *value;
    }
    if (msgpack::DocNode *reqd = find(map, ".reqd_workgroup_size")) {
      if (!reqd->isArray() || reqd->getArray().size() != 3)
        return error(k, ".reqd_workgroup_size is not a list of 3 integers");
      unsigned i = 0;
      for (msgpack::DocNode &element : reqd->getArray()) {
        auto value = toInteger(element, k, ".reqd_workgroup_size");
        if (!value)
          return value.takeError();
        if (*value <= 0)
          return error(k, ".reqd_workgroup_size has a non-positive entry");
        kernel.requiredWorkgroupSize[i++] = *value;
      }
    }

    if (msgpack::DocNode *args = find(map, ".args")) {
      if (!args->isArray())
        return error(k, ".args is not a list");
      unsigned argIndex = 0;
      for (msgpack::DocNode &argNode : args->getArray()) {
        std::string argLabel = ".args[" + std::to_string(argIndex++) + "]";
        if (!argNode.isMap())
          return error(k, argLabel + " is not a map");
        msgpack::MapDocNode argMap = argNode.getMap();
        KernelArgument argument;
        for (auto [key, out] :
             {std::pair<StringRef, int64_t *>{".offset", &argument.offset},
              {".size", &argument.size}}) {
          msgpack::DocNode *value = find(argMap, key);
          if (!value)
            return error(k, argLabel + " has no " + key);
          auto parsed = toInteger(*value, k, (argLabel + key).str());
          if (!parsed)
            return parsed.takeError();
          if (*parsed < 0)
            return error(k, argLabel + key + " is negative");
          *out = *parsed;
        }
        msgpack::DocNode *kind = find(argMap, ".value_kind");
        if (!kind)
          return error(k, argLabel + " has no .value_kind");
        argument.valueKind = toString(*kind);
        if (msgpack::DocNode *space = find(argMap, ".address_space"))
          argument.addressSpace = toString(*space);
        if (msgpack::DocNode *argName = find(argMap, ".name"))
          argument.name = toString(*argName);
        if (argument.size == 0 && !argument.isHidden())
          return error(k, argLabel + " has size 0");
        if (argument.offset + argument.size > kernel.kernargBytes)
          return error(k, llvm::formatv("{0} at offset {1} size {2} ends past "
                                        ".kernarg_segment_size {3}",
                                        argLabel, argument.offset,
                                        argument.size, kernel.kernargBytes)
                              .str());
        kernel.arguments.push_back(std::move(argument));
      }
    }
    return kernel;
  }

  std::string where;
};
} // namespace

llvm::Expected<CodeObjectMetadata>
gfx950::parseMetadataYAML(StringRef yaml, StringRef sourceName,
                          unsigned firstLine) {
  llvm::SourceMgr sourceMgr;
  std::string diagnostics;
  struct Context {
    std::string *diagnostics;
    unsigned firstLine;
    StringRef sourceName;
  } context{&diagnostics, firstLine, sourceName};
  // Collect the parser's messages instead of letting SourceMgr print them.
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diag, void *opaque) {
        auto *ctx = static_cast<Context *>(opaque);
        if (!ctx->diagnostics->empty())
          return;
        *ctx->diagnostics =
            llvm::formatv(
                "{0}:{1}: invalid .amdgpu_metadata YAML: {2}", ctx->sourceName,
                diag.getLineNo() + ctx->firstLine - 1, diag.getMessage())
                .str();
      },
      &context);

  msgpack::Document doc;
  msgpack::DocNode root;
  bool converted = true;
  {
    llvm::yaml::Stream stream(yaml, sourceMgr, /*ShowColors=*/false);
    llvm::yaml::document_iterator it = stream.begin();
    if (it == stream.end() || stream.failed())
      converted = false;
    else
      converted = YamlConverter(doc).convert(it->getRoot(), root);
    if (stream.failed())
      converted = false;
  }
  if (!diagnostics.empty())
    return makeError(diagnostics);
  if (!converted)
    return makeError(llvm::formatv("{0}:{1}: the .amdgpu_metadata block is "
                                   "not a YAML map of AMDHSA metadata",
                                   sourceName, firstLine)
                         .str());
  return MetadataReader(llvm::formatv("{0}:{1}", sourceName, firstLine).str())
      .read(root);
}

llvm::Expected<CodeObjectMetadata>
gfx950::parseAssemblyMetadata(StringRef assembly, StringRef sourceName) {
  // Find the directive lines; the YAML starts on the line after the opener.
  size_t lineStart = 0;
  unsigned line = 1;
  std::optional<size_t> begin;
  unsigned beginLine = 0;
  while (lineStart <= assembly.size()) {
    size_t lineEnd = assembly.find('\n', lineStart);
    if (lineEnd == StringRef::npos)
      lineEnd = assembly.size();
    StringRef text = assembly.slice(lineStart, lineEnd).trim();
    if (!begin && text == ".amdgpu_metadata") {
      begin = lineEnd + 1;
      beginLine = line + 1;
    } else if (begin && text == ".end_amdgpu_metadata") {
      return parseMetadataYAML(assembly.slice(*begin, lineStart), sourceName,
                               beginLine);
    }
    lineStart = lineEnd + 1;
    ++line;
  }
  if (begin)
    return makeError(llvm::formatv("{0}:{1}: .amdgpu_metadata block without "
                                   ".end_amdgpu_metadata",
                                   sourceName, beginLine - 1)
                         .str());
  return makeError(
      sourceName +
      ": no .amdgpu_metadata block; expected the AMDHSA assembly that "
      "gpu-module-to-binary{format=isa} writes for a #rocdl.target");
}

//===----------------------------------------------------------------------===//
// ELF code objects
//===----------------------------------------------------------------------===//

llvm::Expected<CodeObject> gfx950::readCodeObject(StringRef bytes,
                                                  StringRef sourceName) {
  if (!bytes.starts_with("\x7f"
                         "ELF"))
    return makeError(sourceName +
                     ": not an ELF code object (no \\x7fELF magic)");
  auto object = llvm::object::ObjectFile::createELFObjectFile(
      llvm::MemoryBufferRef(bytes, sourceName));
  if (!object)
    return makeError(sourceName +
                     ": invalid ELF: " + llvm::toString(object.takeError()));
  auto *elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(object->get());
  if (!elf)
    return makeError(sourceName +
                     ": not a 64-bit little-endian ELF, so not an AMDHSA "
                     "code object");
  unsigned machine = elf->getELFFile().getHeader().e_machine;
  if (machine != llvm::ELF::EM_AMDGPU)
    return makeError(llvm::formatv("{0}: ELF machine {1} is not EM_AMDGPU",
                                   sourceName, machine)
                         .str());

  CodeObject result;
  result.elfFlags = elf->getPlatformFlags();
  if (std::optional<StringRef> cpu = elf->tryGetCPUName(); cpu && !cpu->empty())
    result.processor = cpu->str();
  else
    result.processor =
        llvm::formatv("unknown (e_flags {0:x})",
                      result.elfFlags & llvm::ELF::EF_AMDGPU_MACH)
            .str();

  // The metadata is one NT_AMDGPU_METADATA note owned by "AMDGPU"; linked
  // objects carry it in a PT_NOTE segment, relocatable ones only in a
  // SHT_NOTE section.
  const auto &file = elf->getELFFile();
  std::optional<StringRef> blob;
  auto visit = [&](auto notes, llvm::Error &err) {
    for (const auto &note : notes)
      if (!blob && note.getName() == "AMDGPU" &&
          note.getType() == llvm::ELF::NT_AMDGPU_METADATA)
        blob = note.getDescAsStringRef(4);
    return std::move(err);
  };
  auto phdrs = file.program_headers();
  if (!phdrs)
    return makeError(sourceName + ": invalid ELF program headers: " +
                     llvm::toString(phdrs.takeError()));
  for (const auto &phdr : *phdrs) {
    if (phdr.p_type != llvm::ELF::PT_NOTE || blob)
      continue;
    llvm::Error err = llvm::Error::success();
    if (llvm::Error e = visit(file.notes(phdr, err), err))
      return makeError(sourceName + ": invalid note segment: " +
                       llvm::toString(std::move(e)));
  }
  if (!blob) {
    auto sections = file.sections();
    if (!sections)
      return makeError(sourceName + ": invalid ELF sections: " +
                       llvm::toString(sections.takeError()));
    for (const auto &shdr : *sections) {
      if (shdr.sh_type != llvm::ELF::SHT_NOTE || blob)
        continue;
      llvm::Error err = llvm::Error::success();
      if (llvm::Error e = visit(file.notes(shdr, err), err))
        return makeError(sourceName + ": invalid note section: " +
                         llvm::toString(std::move(e)));
    }
  }
  if (!blob)
    return makeError(sourceName +
                     ": no NT_AMDGPU_METADATA note; code object v2 and "
                     "non-HSA objects are not supported");

  msgpack::Document doc;
  if (!doc.readFromBlob(*blob, /*Multi=*/false))
    return makeError(sourceName +
                     ": the NT_AMDGPU_METADATA note is not valid MessagePack");
  auto metadata = MetadataReader(sourceName.str()).read(doc.getRoot());
  if (!metadata)
    return metadata.takeError();
  result.metadata = std::move(*metadata);
  return result;
}

llvm::Expected<CodeObject> gfx950::readCodeObjectFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + path +
                     "': " + buffer.getError().message());
  return readCodeObject((*buffer)->getBuffer(), path);
}
