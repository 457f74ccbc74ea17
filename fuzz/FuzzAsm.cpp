// libFuzzer target: the assembler (isa/Assembler). Any text must assemble or
// be rejected with a message; an assembled model must be a valid bmodel
// (serialise, then parse back with all the reader's checks).
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"

#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  // .coeff_file paths resolve against a directory that holds nothing.
  auto model = tpu::isa::assemble(text, "fuzz.s", "/nonexistent-fuzz-dir");
  if (!model.isOk()) return 0;
  auto bytes = tpu::bmodel::serialize(*model);
  if (!bytes.isOk()) return 0; // e.g. over the container's size fields: an error, not a crash
  if (!tpu::bmodel::parse(bytes->data(), bytes->size()).isOk()) std::abort();
  return 0;
}
