// The in-memory bmodel: what the runtime and the simulator read, what the
// assembler and the compiler build. Plain data, no FlatBuffers types; the
// container format is in isa/bmodel/Bmodel.h and docs/bmodel.md.
#pragma once

#include "isa/Fields.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpu::bmodel {

// Tensor data type codes (BM1684.md §3).
enum class DataType : uint32_t {
  Float32 = 0, Float16 = 1, Int8 = 2, Uint8 = 3, Int16 = 4, Uint16 = 5, Int32 = 6, Uint32 = 7,
};
constexpr unsigned kDataTypeCount = 8;

// Global-memory store mode: batch items interleaved per 32-bit word.
enum class StoreMode : int32_t { N1 = 0, N2 = 1, N4 = 2 };

// Limits the reader enforces before allocating anything (docs/bmodel.md).
constexpr uint64_t kAddressLimit = 1ull << 40;   // 40-bit device addresses
constexpr size_t kMaxNets = 256;
constexpr size_t kMaxTensorsPerNet = 4096;
constexpr size_t kMaxDims = 8;
constexpr size_t kMaxGroupsPerNet = 1u << 16;
constexpr size_t kMaxSubnetsPerNet = 1u << 16;
constexpr size_t kMaxCommandsPerQueue = 65535; // ids are 16 bits, 0 = "none"

inline unsigned dataTypeBytes(DataType t) {
  switch (t) {
  case DataType::Float32: case DataType::Int32: case DataType::Uint32: return 4;
  case DataType::Float16: case DataType::Int16: case DataType::Uint16: return 2;
  case DataType::Int8: case DataType::Uint8: return 1;
  }
  return 0;
}

struct Tensor {
  std::string name;
  DataType dtype = DataType::Float32;
  StoreMode storeMode = StoreMode::N1;
  uint64_t deviceAddr = 0;
  uint64_t size = 0;               // bytes in device memory
  std::vector<uint64_t> shape;
  float scale = 1.0f;
  int32_t zeroPoint = 0;

  // Bytes the tensor occupies in global memory given its store mode:
  // 4N packs four batch items into each 32-bit word, so the batch is rounded
  // up to a multiple of 4 (2N: of 2). 0 for an empty tensor (a dim of 0);
  // nullopt if the shape overflows 2^40 bytes.
  std::optional<uint64_t> checkedStorageBytes() const {
    uint64_t batchGroup = storeMode == StoreMode::N4 ? 4 : storeMode == StoreMode::N2 ? 2 : 1;
    uint64_t n = shape.empty() ? 1 : shape[0];
    uint64_t rest = 1;
    for (size_t i = 1; i < shape.size(); ++i) {
      if (shape[i] != 0 && rest > kAddressLimit / shape[i]) return std::nullopt;
      rest *= shape[i];
    }
    uint64_t nRounded = (n + batchGroup - 1) / batchGroup * batchGroup;
    if (rest != 0 && nRounded > kAddressLimit / rest) return std::nullopt;
    uint64_t bytes = nRounded * rest * dataTypeBytes(dtype);
    if (bytes > kAddressLimit) return std::nullopt;
    return bytes;
  }
  // The same for a tensor of a loaded or assembled net, whose shape was
  // checked to fit.
  uint64_t storageBytes() const { return checkedStorageBytes().value_or(0); }
};

// One command group: the TIU and GDMA queues, each in its engine's order,
// and the layer name of every command ("" when unnamed).
struct CmdGroup {
  std::vector<isa::CommandBytes> tiu;
  std::vector<isa::CommandBytes> gdma;
  std::vector<std::string> tiuLayer;   // same length as tiu
  std::vector<std::string> gdmaLayer;  // same length as gdma
  // A chip whose commands vary in length (isa::ChipInfo::commandWordBytes 0, the BM1684X) keeps each
  // engine's commands as stored, back to back, with their count; tiu and gdma are then empty.
  std::vector<uint8_t> tiuStream, gdmaStream;
  uint32_t tiuStreamCount = 0, gdmaStreamCount = 0;
};

// A step of a net, in the order the net runs them (BMRuntime's sub_net,
// docs/bmodel.md "Sub-nets"): a TPU sub-net runs the net's command groups
// [firstGroup, firstGroup + groupCount); a CPU sub-net runs one host op
// (kernels/HostOps.h) on the host, reading `inputs` from device memory and
// writing `outputs` there. A net without sub-nets is one TPU step of all
// its groups (and is written without a sub_net list).
struct Subnet {
  enum class Mode : int32_t { Tpu = 0, Cpu = 1 };
  Mode mode = Mode::Tpu;
  size_t firstGroup = 0, groupCount = 0; // Tpu
  uint32_t cpuOpType = 0;                // Cpu: the host op's code
  std::vector<uint8_t> cpuParam;         // Cpu: the serialized kernels::HostCall
  std::vector<Tensor> inputs, outputs;   // the device tensors it reads and writes
};

// A net, or one stage of a net: several Nets of the same name, consecutive in
// Model::nets, are the stages of one net (BMRuntime's NetParameter list, one
// static input shape each; docs/bmodel.md "Stages"), in file order. Each is a
// full description of its stage; the stages of a net share its weights.
struct Net {
  std::string name;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  uint64_t ctxAddr = 0;          // neuron (activation) memory
  uint64_t ctxSize = 0;
  uint64_t coeffAddr = 0;        // where the coefficients are loaded
  std::vector<uint8_t> coeff;    // coefficient bytes
  std::vector<CmdGroup> groups;
  std::vector<Subnet> subnets; // empty: one TPU step of all groups
};

// The nets of a model as runs [first, first + count) of consecutive entries
// of one name: one run per net, its entries the net's stages.
struct StageRun {
  size_t first = 0, count = 0;
};
inline std::vector<StageRun> stageRuns(const std::vector<Net> &nets) {
  std::vector<StageRun> runs;
  for (size_t i = 0; i < nets.size(); ++i)
    if (!runs.empty() && nets[runs.back().first].name == nets[i].name)
      ++runs.back().count;
    else
      runs.push_back({i, 1});
  return runs;
}

// The type tpuc's code generator writes. Its BM1684 commands follow this toolkit's own operand conventions
// (docs/isa.md), not yet the chip's: the device backend refuses such a bmodel rather than let a real BM1684
// compute something else.
inline constexpr const char *kToolkitModelType = "tpuc codegen";

struct Model {
  std::string chip = "BM1684";
  std::string type;              // free text, e.g. "tpuc asm"
  std::string version;
  std::string time;
  uint64_t neuronSize = 0;
  uint32_t deviceNum = 1;
  std::vector<Net> nets; // the stages of a net are consecutive entries of one name
};

} // namespace tpu::bmodel
