// Every tpuc subcommand registers itself here; main() only dispatches.
// A subcommand parses its flags, calls into a library and maps a failed
// Status to one line on stderr and exit code 2.
#pragma once

#include <functional>
#include <map>
#include <string>

namespace tpuc {

using SubcommandFn = std::function<int(int argc, char **argv)>;

struct SubcommandInfo {
  std::string summary;
  SubcommandFn run;
};

std::map<std::string, SubcommandInfo> &subcommands();

struct RegisterSubcommand {
  RegisterSubcommand(const std::string &name, const std::string &summary, SubcommandFn fn) {
    subcommands()[name] = {summary, std::move(fn)};
  }
};

// Exit codes shared by all subcommands.
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;   // ran fine, but a comparison failed
constexpr int kExitBadInput = 2;   // bad input, usage error or runtime failure

// Prints "tpuc <cmd>: error: <message>" and returns kExitBadInput.
int fail(const std::string &command, const std::string &message);

} // namespace tpuc
