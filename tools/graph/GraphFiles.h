// The whole `tpuc graph` job: load the model, add what the flow dir, the
// bmodel and the stats know, lay out, write .dot, .svg or .html.
#pragma once

#include "support/Status.h"
#include "tools/graph/GraphImport.h"

#include <string>

namespace tpu::graph {

enum class OutputFormat { Html, Svg, Dot };
// "html" / "svg" / "dot"; anything else is an error listing the choices.
Result<OutputFormat> parseOutputFormat(const std::string &name);

struct GraphRequest {
  std::string inputPath;  // .onnx, .top.mlir, .tpu.mlir, .bmodel
  std::string outputPath;
  OutputFormat format = OutputFormat::Html;
  std::string flowDir;    // a tpuc flow work dir (flow.json), or empty
  std::string statsPath;  // tpuc sim --stats JSON, or empty
  double tolerance = 0.99;
  ImportOptions import;
};

struct GraphSummary {
  size_t nodes = 0, edges = 0, groups = 0;
  size_t compared = 0, timed = 0; // nodes with a cosine, with a time (names the flow / stats know)
  double layoutSeconds = 0; // Graphviz layout + render
  std::string belowTolerance; // the first node under the tolerance ("" = none)
  std::string chip;           // a bmodel's chip ("" when no bmodel was read)
  std::string note;           // what the graph cannot show for this model
};

// With a flow dir, the flow's bmodel gives the layer groups and command
// counts, and its stats the time, unless --stats names other stats. The
// output is written atomically: a failed run leaves no file.
Result<GraphSummary> writeGraph(const GraphRequest &request);

} // namespace tpu::graph
