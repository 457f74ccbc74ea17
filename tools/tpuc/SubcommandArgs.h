// The command line of a tpuc subcommand: tpu::ArgParser plus the opening
// every subcommand shares, written once: parse, answer --help, and name
// the first missing required option.
#pragma once

#include "support/ArgParser.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace tpuc {

// An option the subcommand cannot run without, and how its error names it
// ("missing " + what).
struct RequiredOption {
  const char *name; // "--output"
  const char *what; // "-o model.bmodel"
};

class SubcommandArgs : public tpu::ArgParser {
public:
  SubcommandArgs(const std::string &command, std::string usage)
      : ArgParser(command, std::move(usage)), command_(command) {}

  // Parses argv (without the program and subcommand names). Returns the exit
  // code to end with: a parse error or a missing required option is one line
  // on stderr and kExitBadInput; --help prints the help and kExitOk. Returns
  // nullopt when the subcommand goes on.
  std::optional<int> parseCommandLine(int argc, char **argv, std::initializer_list<RequiredOption> required = {});

private:
  std::string command_;
};

} // namespace tpuc
