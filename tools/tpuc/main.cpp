#include "tools/tpuc/Subcommand.h"

#include <cstdio>
#include <cstring>
#include <iostream>

namespace tpuc {

std::map<std::string, SubcommandInfo> &subcommands() {
  static std::map<std::string, SubcommandInfo> table;
  return table;
}

int fail(const std::string &command, const std::string &message) {
  std::cerr << "tpuc " << command << ": error: " << message << "\n";
  return kExitBadInput;
}

} // namespace tpuc

static void usage(std::ostream &os) {
  os << "usage: tpuc <command> [options]   (tpuc <command> --help for its options)\n\ncommands:\n";
  for (const auto &[name, info] : tpuc::subcommands())
    os << "  " << name << std::string(name.size() < 10 ? 10 - name.size() : 1, ' ') << info.summary << "\n";
}

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? tpuc::kExitBadInput : tpuc::kExitOk;
  }
  auto &table = tpuc::subcommands();
  auto it = table.find(argv[1]);
  if (it == table.end()) {
    std::cerr << "tpuc: error: unknown command '" << argv[1] << "'\n";
    usage(std::cerr);
    return tpuc::kExitBadInput;
  }
  return it->second.run(argc - 2, argv + 2);
}
