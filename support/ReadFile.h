// The whole-file reader every parser of the project opens its input with:
// the file's bytes, unchanged (binary), or one-line errors naming the path.
#pragma once

#include "support/Status.h"

#include <cstdint>
#include <string>

namespace tpu {

// "<path>: cannot open <what>" (or "<path>: cannot open" when `what` is
// empty) when the file cannot be opened, "<path>: read error" when reading
// it fails.
Result<std::string> readFile(const std::string &path, const std::string &what = "");

// The first `bytes` bytes of the file (all of it when it is shorter), for readers that need only its
// head; errors as readFile's.
Result<std::string> readFileHead(const std::string &path, uint64_t bytes, const std::string &what = "");

// The size in bytes of the file at `path`, for readers that refuse a file
// over a limit before reading it; errors as readFile's.
Result<uint64_t> fileSize(const std::string &path, const std::string &what = "");

} // namespace tpu
