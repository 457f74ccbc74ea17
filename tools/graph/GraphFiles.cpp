#include "tools/graph/GraphFiles.h"

#include "runtime/RunFiles.h"
#include "tools/explore/Html.h"
#include "tools/graph/GraphLayout.h"
#include "tools/graph/HtmlGraphPage.h"

#include <chrono>

namespace tpu::graph {

Result<OutputFormat> parseOutputFormat(const std::string &name) {
  if (name == "html") return OutputFormat::Html;
  if (name == "svg") return OutputFormat::Svg;
  if (name == "dot") return OutputFormat::Dot;
  return makeError("unknown format '", name, "' (expected html, svg or dot)");
}

Result<GraphSummary> writeGraph(const GraphRequest &rq) {
  if (!(rq.tolerance >= -1 && rq.tolerance <= 1)) return makeError("--tolerance must be a cosine between -1 and 1");
  // Check the flow dir before the (possibly long) import.
  std::optional<flow::FlowManifest> manifest;
  if (!rq.flowDir.empty()) {
    auto m = flow::readFlowManifest(rq.flowDir);
    if (!m) return m.status();
    manifest = m.take();
  }
  auto loaded = loadGraph(rq.inputPath, rq.import);
  if (!loaded) return loaded.status();
  GraphModel graph = loaded.take();
  graph.tolerance = rq.tolerance;

  std::string statsPath = rq.statsPath;
  if (manifest) {
    TPU_RETURN_IF_ERROR(annotateFlow(graph, *manifest));
    if (graph.source != "bmodel" && !manifest->path("bmodel").empty())
      TPU_RETURN_IF_ERROR(annotateBmodel(graph, manifest->path("bmodel")));
    if (statsPath.empty()) statsPath = manifest->path("stats");
  }
  if (!statsPath.empty()) {
    auto text = explore::readTextFile(statsPath);
    if (!text) return text.status();
    TPU_RETURN_IF_ERROR(annotateStats(graph, *text, statsPath));
  }

  const ColorBy colorBy = defaultColoring(graph);
  const std::string dot = toDot(graph, colorBy);
  GraphSummary summary;
  summary.chip = graph.chip;
  summary.note = graph.note;
  summary.nodes = graph.nodes.size();
  summary.edges = graph.edges.size();
  for (const GraphNode &n : graph.nodes) {
    summary.groups = std::max(summary.groups, size_t(n.group + 1));
    summary.compared += !n.similarities.empty();
    summary.timed += n.time.has_value();
    auto cos = n.minCosine();
    if (cos && !(*cos >= graph.tolerance) && summary.belowTolerance.empty()) summary.belowTolerance = n.name;
  }
  std::string out = dot;
  if (rq.format != OutputFormat::Dot) {
    auto start = std::chrono::steady_clock::now();
    auto svg = renderSvg(dot);
    if (!svg) return makeError(rq.inputPath, ": ", svg.message());
    summary.layoutSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out = rq.format == OutputFormat::Svg ? svg.take() : renderGraphHtml(graph, *svg, colorBy);
  }
  TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(rq.outputPath, out));
  return summary;
}

} // namespace tpu::graph
