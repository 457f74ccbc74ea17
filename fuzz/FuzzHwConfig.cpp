// libFuzzer target: HwConfig::fromJson (isa/HwConfig). An accepted config must
// satisfy what the simulator relies on: lanes in 1..64, LMEM lane size a power
// of two, global memory inside 40-bit addresses (checked without wrap-around),
// and it must round-trip through toJson.
#include "isa/HwConfig.h"

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  auto cfg = tpu::isa::HwConfig::fromJson(text, "fuzz.json");
  if (!cfg.isOk()) return 0;
  constexpr uint64_t kLimit = 1ull << 40;
  if (cfg->npuLanes < 1 || cfg->npuLanes > 64) std::abort();
  if (cfg->lmemBytesPerLane == 0 || (cfg->lmemBytesPerLane & (cfg->lmemBytesPerLane - 1))) std::abort();
  if (cfg->lmemBanks == 0 || cfg->euBytes == 0) std::abort();
  if (cfg->globalMemBase > kLimit || cfg->globalMemBytes > kLimit - cfg->globalMemBase) std::abort();
  auto again = tpu::isa::HwConfig::fromJson(cfg->toJson(), "round trip");
  if (!again.isOk() || again->toJson() != cfg->toJson()) std::abort();
  return 0;
}
