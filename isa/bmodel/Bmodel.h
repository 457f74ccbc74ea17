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
// name vectors, too many commands, sizes over the 32-bit header fields,
// entries of one name that are not adjacent or not valid stages of one net:
// checkStages). The consecutive entries of one name are written as one Net
// with one NetParameter per stage; a stage whose coefficients (address and
// bytes) equal the previous stage's shares its CoeffMem (stored once).
Result<std::vector<uint8_t>> serialize(const Model &model);
Status writeFile(const Model &model, const std::string &path);

// Which chips' bmodels a reader takes: the BM1684's (what the simulator and
// the compiler work on), or any chip of the registry (isa/chips/Registry.h;
// `tpuc dis`), whose groups then keep their command streams as stored when
// its commands vary in length.
enum class ChipScope { Bm1684, AnyKnown };

// Parses and validates a bmodel held in memory. Errors name the net, group
// and command index; `readFile` prefixes them with the file name.
Result<Model> parse(const uint8_t *data, size_t size, ChipScope scope = ChipScope::Bm1684);
// `header`, when given, receives the file's header.
Result<Model> readFile(const std::string &path, Header *header = nullptr, ChipScope scope = ChipScope::Bm1684);

// The chip a bmodel file is for, from its header and FlatBuffers part only (neither its coefficients nor
// its commands are read): for a caller choosing the reader. Errors as readFile's for those parts.
Result<std::string> readChip(const std::string &path);

// Reads just the header (for `tpuc dis`); validates the magic and sizes.
Result<Header> parseHeader(const uint8_t *data, size_t size);

// Checks that `stages` (at least one) can be the stages of one net: the
// same number, names and dtypes of inputs and outputs, and no two with the
// same input shapes (the runtime picks a stage by them). `labels[i]` names
// stage i in the errors ("stage 1", "b.bmodel"):
// "stage 0 and stage 1 take the same input shapes [1,3,16,32]".
Status checkStages(const std::vector<const Net *> &stages, const std::vector<std::string> &labels);

// tpuc combine: the nets of `models` with the stages of equally named nets
// joined into one net, in argument order (nets of other names are kept as
// they are, in order of first appearance; the header is the first model's,
// neuron_size the largest). Stages must share their weights (coefficient
// address and bytes) and pass checkStages. `origins[i]` names models[i] in
// the errors ("net 'rec': the weights of b.bmodel differ from a.bmodel's ...").
Result<Model> combine(const std::vector<Model> &models, const std::vector<std::string> &origins);
// tpuc combine's job but the write (tpuc flow with several shape sets makes
// its bmodel with it too): each file read, the models combined (the paths
// name them in errors) and serialized.
Result<std::vector<uint8_t>> combineFiles(const std::vector<std::string> &paths);

// "[1,3,16,32]"
std::string shapeText(const std::vector<uint64_t> &dims);
// The input shapes of a stage in input order, "[1,3,8,8], [1,4,8,8]"; "(no
// inputs)" for a net without inputs.
std::string inputShapesText(const Net &stage);

// The sha256 check code stored in CoeffMem.
std::vector<uint8_t> sha256(const std::vector<uint8_t> &bytes);

} // namespace tpu::bmodel
