// tpuc graph: a model's computation graph with accuracy and time on every
// node, as one self-contained HTML page (or .dot / .svg) — wiring only; the
// work is in tools/graph/GraphFiles.h.
#include "compiler/Import/OnnxImporter.h"
#include "tools/graph/GraphFiles.h"
#include "tools/tpuc/Subcommand.h"
#include "tools/tpuc/SubcommandArgs.h"

#include <cstdio>

namespace {

int runGraph(int argc, char **argv) {
  tpuc::SubcommandArgs args("graph", "model.{onnx,top.mlir,tpu.mlir,bmodel} -o graph.html "
                                     "[--format html|svg|dot] [--flow-dir DIR] [--stats stats.json] [--tolerance 0.99] "
                                     "[--input-shapes \"[[1,3,640,640]]\"]");
  args.positionals(1, 1, "model");
  args.option("--output", "the file to write", "-o");
  args.option("--format", "html (default: the interactive page), svg or dot");
  args.option("--flow-dir", "a tpuc flow work dir: color nodes by per-tensor cosine, add thresholds, groups, time");
  args.option("--stats", "stats JSON of a timed run (tpuc sim --stats): time and commands per node");
  args.option("--tolerance", "the cosine below which a node is flagged (default 0.99)");
  args.option("--input-shapes", "shapes of an ONNX model's dynamic inputs, e.g. [[1,3,640,640]]");
  if (auto done = args.parseCommandLine(argc, argv, {{"--output", "-o graph.html"}})) return *done;
  tpu::graph::GraphRequest rq;
  rq.inputPath = args.args()[0];
  rq.outputPath = args.get("--output");
  auto format = tpu::graph::parseOutputFormat(args.get("--format", "html"));
  if (!format) return tpuc::fail("graph", "--format: " + format.message());
  rq.format = *format;
  rq.flowDir = args.get("--flow-dir");
  rq.statsPath = args.get("--stats");
  auto tolerance = args.getDouble("--tolerance", 0.99);
  if (!tolerance) return tpuc::fail("graph", tolerance.message());
  rq.tolerance = *tolerance;
  if (args.has("--input-shapes")) {
    auto shapes = tpu::onnx::parseShapeList(args.get("--input-shapes"));
    if (!shapes) return tpuc::fail("graph", shapes.message());
    rq.import.inputShapes = shapes.take();
  }
  auto summary = tpu::graph::writeGraph(rq);
  if (!summary) return tpuc::fail("graph", summary.message());
  std::printf("graph: %zu nodes, %zu edges, %zu layer groups, laid out in %.2f s -> %s\n", summary->nodes,
              summary->edges, summary->groups, summary->layoutSeconds, rq.outputPath.c_str());
  // Few matches mean the flow dir or the stats belong to another model.
  if (!rq.flowDir.empty() || !rq.statsPath.empty())
    std::printf("graph: cosine on %zu of %zu nodes, time on %zu\n", summary->compared, summary->nodes,
                summary->timed);
  if (!summary->chip.empty()) std::printf("graph: chip %s\n", summary->chip.c_str());
  if (!summary->note.empty()) std::printf("graph: %s\n", summary->note.c_str());
  // Last: the layer to look at first.
  if (!summary->belowTolerance.empty())
    std::printf("graph: first layer below cosine %.4g: %s\n", rq.tolerance, summary->belowTolerance.c_str());
  return tpuc::kExitOk;
}

tpuc::RegisterSubcommand registerGraph("graph", "draw a model's graph (ONNX/Top/Tpu/bmodel) with cosine and time per node",
                                       runGraph);

} // namespace
