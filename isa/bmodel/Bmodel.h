// The bmodel container: 64-byte header, FlatBuffers (schema bmodel.fbs),
// one binary blob. The reader validates everything before it is used (sizes
// against the file, the FlatBuffers verifier, every Binary range against the
// blob, the coefficient sha256, command counts, resource limits, every
// command's task/eu types) and returns an error naming file, net, group and
// command. Layout and limits: docs/bmodel.md.
#pragma once

#include "isa/bmodel/Model.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::bmodel {

constexpr uint32_t kMagic = 0xFF55AAEE;
constexpr uint32_t kHeaderSize = 64;
constexpr const char *kChip = "BM1684";

struct Header {
  uint32_t magic = kMagic;
  uint32_t headerSize = kHeaderSize;
  uint32_t flatbuffersSize = 0;
  uint32_t binarySize = 0;
};

// Serialises a model. Fails if the model is not writable (mismatched layer
// name vectors, too many commands, sizes over the 32-bit header fields).
Result<std::vector<uint8_t>> serialize(const Model &model);
Status writeFile(const Model &model, const std::string &path);

// Parses and validates a bmodel held in memory. Errors name the net, group
// and command index; `readFile` prefixes them with the file name.
Result<Model> parse(const uint8_t *data, size_t size);
// `header`, when given, receives the file's header.
Result<Model> readFile(const std::string &path, Header *header = nullptr);

// Reads just the header (for `tpuc dis`); validates the magic and sizes.
Result<Header> parseHeader(const uint8_t *data, size_t size);

// The sha256 check code stored in CoeffMem.
std::vector<uint8_t> sha256(const std::vector<uint8_t> &bytes);

} // namespace tpu::bmodel
