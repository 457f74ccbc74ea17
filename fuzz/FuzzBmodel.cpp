// libFuzzer target: the bmodel reader (isa/bmodel). Any byte string must parse
// or be rejected with an error; an accepted model must serialise again.
#include "isa/bmodel/Bmodel.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = tpu::bmodel::parse(data, size);
  if (!model.isOk()) return 0;
  // What the reader accepts, the writer can write (no inconsistent model escapes).
  if (!tpu::bmodel::serialize(*model).isOk()) std::abort();
  return 0;
}
