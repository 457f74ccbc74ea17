// tpuc compare: per-tensor similarity of two npz files — wiring only; the
// metrics are in kernels/Compare.h (docs/validation.md).
#include "kernels/Compare.h"
#include "support/Npz.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <iostream>
#include <sstream>

namespace {

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

int runCompare(int argc, char **argv) {
  tpuc::SubcommandArgs args("compare", "reference.npz other.npz [--tolerance 0.99,0.99] [--names a,b] "
                                       "[--except c,d]");
  args.positionals(2, 2, "a.npz b.npz");
  args.option("--tolerance", "minimum cosine,euclidean similarity for a tensor to pass (default 0.99,0.99)");
  args.option("--names", "compare only these tensors (comma-separated)");
  args.option("--except", "skip these tensors (comma-separated)");
  if (auto done = args.parseCommandLine(argc, argv)) return *done;
  tpu::kernels::CompareOptions options;
  if (args.has("--tolerance")) {
    auto parts = splitList(args.get("--tolerance"));
    std::vector<double> values;
    for (const auto &p : parts) {
      char *end = nullptr;
      double v = std::strtod(p.c_str(), &end);
      if (end == p.c_str() || *end || !(v >= -1 && v <= 1))
        return tpuc::fail("compare", "--tolerance: '" + p + "' is not a similarity between -1 and 1");
      values.push_back(v);
    }
    if (values.empty() || values.size() > 2)
      return tpuc::fail("compare", "--tolerance takes cosine[,euclidean], e.g. 0.99,0.99");
    options.minCosine = values[0];
    options.minEuclidean = values.size() > 1 ? values[1] : values[0];
  }
  options.names = splitList(args.get("--names"));
  options.except = splitList(args.get("--except"));
  auto a = tpu::readNpz(args.args()[0]);
  if (!a) return tpuc::fail("compare", a.message());
  auto b = tpu::readNpz(args.args()[1]);
  if (!b) return tpuc::fail("compare", b.message());
  auto report = tpu::kernels::compareArchives(*a, *b, options);
  if (!report) return tpuc::fail("compare", args.args()[0] + " vs " + args.args()[1] + ": " + report.message());
  std::cout << tpu::kernels::formatReport(*report, options);
  return report->allPass() ? tpuc::kExitOk : tpuc::kExitMismatch;
}

tpuc::RegisterSubcommand registerCompare("compare", "compare the tensors of two npz files (cosine, euclid, SQNR)",
                                         runCompare);

} // namespace
