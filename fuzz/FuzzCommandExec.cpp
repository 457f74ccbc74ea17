// libFuzzer target: command decoding and execution (isa/TiuCommand.h,
// isa/GdmaCommand.h, simulator/semantics). Input: one selector byte (bit 0:
// TIU or GDMA), the 128-byte command, then bytes that fill LMEM and DDR (the
// data matters: LUT and index operands address memory by value). A decoded
// command must run or be rejected; a rejected command leaves both memories
// untouched (TiuExec.h, GdmaExec.h). The memories are small so that random
// addresses often land inside them, and live across runs (every run rewrites
// all of both) so that an execution costs no fresh pages.
#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "simulator/semantics/GdmaExec.h"
#include "simulator/semantics/TiuExec.h"

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace {

tpu::isa::HwConfig smallConfig() {
  tpu::isa::HwConfig cfg;
  cfg.npuLanes = 8;                 // 8 lanes x 4 KiB
  cfg.lmemBytesPerLane = 4096;
  cfg.globalMemBytes = 64 * 1024;   // at the usual base 0x1_0000_0000
  return cfg;
}

// The memory image both runs start from: `pattern` tiled over LMEM and DDR.
void fill(tpu::sim::LocalMemory &lmem, tpu::sim::GlobalMemory &gmem, const uint8_t *pattern,
          size_t size) {
  static std::vector<uint8_t> image(gmem.size());
  std::fill(image.begin(), image.end(), 0);
  for (size_t i = 0; size && i < image.size(); ++i) image[i] = pattern[i % size];
  for (uint32_t l = 0; l < lmem.lanes(); ++l)
    std::memcpy(lmem.lane(l), image.data() + (size_t(l) * lmem.laneBytes()) % image.size(),
                std::min<size_t>(lmem.laneBytes(), image.size()));
  if (!gmem.write(gmem.base(), image.data(), image.size()).isOk()) std::abort();
}

void snapshot(const tpu::sim::LocalMemory &lmem, const tpu::sim::GlobalMemory &gmem,
              std::vector<uint8_t> &all) {
  all.resize(lmem.totalBytes() + gmem.size());
  std::memcpy(all.data(), lmem.lane(0), lmem.totalBytes());
  if (!gmem.read(gmem.base(), all.data() + lmem.totalBytes(), gmem.size()).isOk()) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 + tpu::isa::kCommandBytes) return -1; // not a command: keep out of the corpus
  static const tpu::isa::HwConfig cfg = smallConfig();
  const bool isTiu = (data[0] & 1) == 0;
  const uint8_t *cmd = data + 1;
  const uint8_t *pattern = cmd + tpu::isa::kCommandBytes;
  size_t patternSize = size - 1 - tpu::isa::kCommandBytes;

  // Decoding does not depend on memory: reject early, fill only for commands that run.
  std::optional<tpu::isa::TiuCommand> tiu;
  std::optional<tpu::isa::GdmaCommand> gdma;
  if (isTiu) {
    auto decoded = tpu::isa::decodeTiu(cmd);
    if (!decoded.isOk()) return 0;
    tiu = *decoded;
  } else {
    auto decoded = tpu::isa::decodeGdma(tpu::isa::GdmaRaw::decode(cmd));
    if (!decoded.isOk()) return 0;
    gdma = *decoded;
  }

  static tpu::sim::LocalMemory lmem(cfg);
  static tpu::sim::GlobalMemory gmem(cfg);
  static std::vector<uint8_t> before, after;
  fill(lmem, gmem, pattern, patternSize);
  snapshot(lmem, gmem, before);
  tpu::Status st = tiu ? tpu::sim::executeTiu(cfg, lmem, *tiu) : tpu::sim::executeGdma(cfg, lmem, gmem, *gdma);
  if (!st.isOk()) {
    snapshot(lmem, gmem, after);
    if (after != before) std::abort(); // a rejected command wrote memory
  }
  return 0;
}
