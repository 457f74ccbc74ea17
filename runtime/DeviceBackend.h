// The real-chip backend: the bmodel runs on a BM1684 through libsophon's
// libbmlib.so / libbmrt.so, loaded with dlopen when the backend is created,
// so the project builds and tests without them. The simulated device's DDR
// serves as the host-side staging area: inputs converted by the Runtime are
// copied from there to the chip, outputs back to there.
//
// Libraries are looked up in $TPU_LIBSOPHON_DIR if set, else by the dynamic
// loader's search path (/opt/sophon/libsophon-current/lib on a BM1684 host).
#pragma once

#include "runtime/Backend.h"

namespace tpu::runtime {

// "no BM1684 device or libsophon found: ..." when a library or symbol is
// missing.
Result<std::unique_ptr<Backend>> makeDeviceBackend();

} // namespace tpu::runtime
