#include "support/ReadFile.h"

#include <fstream>

namespace tpu {

namespace {

Status cannotOpen(const std::string &path, const std::string &what) {
  return what.empty() ? makeError(path, ": cannot open") : makeError(path, ": cannot open ", what);
}

} // namespace

Result<std::string> readFile(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cannotOpen(path, what);
  // read() (not `<< rdbuf()`) so that a failed read, e.g. of a directory,
  // sets badbit on `in` instead of being taken for the end of the file.
  std::string bytes;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) bytes.append(chunk, size_t(in.gcount()));
  if (in.bad()) return makeError(path, ": read error");
  return bytes;
}

Result<std::string> readFileHead(const std::string &path, uint64_t bytes, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return cannotOpen(path, what);
  std::string head(size_t(bytes), '\0');
  in.read(head.data(), std::streamsize(bytes));
  if (in.bad()) return makeError(path, ": read error");
  head.resize(size_t(in.gcount()));
  return head;
}

Result<uint64_t> fileSize(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return cannotOpen(path, what);
  std::streamoff size = in.tellg();
  if (size < 0) return makeError(path, ": read error");
  return uint64_t(size);
}

} // namespace tpu
