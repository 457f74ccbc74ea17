#include "tools/tpuc/SubcommandArgs.h"

#include "tools/tpuc/Subcommand.h"

#include <iostream>

namespace tpuc {

std::optional<int> SubcommandArgs::parseCommandLine(int argc, char **argv,
                                                    std::initializer_list<RequiredOption> required) {
  if (auto st = parse(argc, argv); !st) return fail(command_, st.message());
  if (helpRequested()) {
    std::cout << help();
    return kExitOk;
  }
  for (const RequiredOption &option : required)
    if (!has(option.name)) return fail(command_, std::string("missing ") + option.what);
  return std::nullopt;
}

} // namespace tpuc
