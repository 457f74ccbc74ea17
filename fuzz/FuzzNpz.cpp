// libFuzzer target: the .npy parser and the .npz reader (support/Npz).
// An .npz is read from a file (libzip opens paths), so the input is written
// to a per-process temporary file first.
#include "support/Npz.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {
// Every element of an accepted array is backed by its data bytes.
void checkArray(const tpu::NpyArray &a) {
  if (a.elementSize() == 0 || a.data.size() != uint64_t(a.numel()) * a.elementSize()) std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (auto npy = tpu::parseNpy(data, size, "fuzz.npy"); npy.isOk()) checkArray(*npy);

  static const std::string path = "/tmp/tpu_fuzz_npz_" + std::to_string(getpid()) + ".npz";
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  if (auto npz = tpu::readNpz(path); npz.isOk())
    for (const auto &member : *npz) checkArray(member.second);
  return 0;
}
