// tools/graph: DOT text, Graphviz layout, the color scales, the annotations
// (stats, flow manifest), the graph of a Top module and of a bmodel, and
// the page data.
#include "compiler/Dialect/Tpu/TpuOps.h"
#include "compiler/Interpreter/TopInterpreter.h"
#include "isa/Assembler.h"
#include "tools/graph/BmodelGraph.h"
#include "tools/graph/GraphImport.h"
#include "tools/graph/GraphLayout.h"
#include "tools/graph/HtmlGraphPage.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <regex>
#include <tuple>

namespace tpu::graph {
namespace {

GraphNode node(const std::string &name, const std::string &op, int group = -1) {
  GraphNode n;
  n.name = name;
  n.opType = op;
  n.shape = "1x8x4x4";
  n.dtype = "f32";
  n.group = group;
  return n;
}

GraphModel chain() {
  GraphModel g;
  g.title = "chain";
  g.addNode(node("in", "input"));
  g.addNode(node("conv \"a\"", "top.conv", 0));
  g.addNode(node("relu", "top.relu", 0));
  g.addNode(node("out", "top.gemm", 1));
  g.edges = {{0, 1, "in", false}, {1, 2, "conv \"a\"", true}, {2, 3, "relu", false}};
  return g;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(GraphLayout, DotHasNodesEdgesAndClustersOfTwoOrMore) {
  std::string dot = toDot(chain(), ColorBy::None);
  EXPECT_EQ(count(dot, "[id=\"n"), 4u);
  EXPECT_EQ(count(dot, "[id=\"e"), 3u);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  EXPECT_EQ(dot.find("subgraph cluster_1"), std::string::npos); // one node: no cluster
  EXPECT_NE(dot.find("conv \\\"a\\\""), std::string::npos);     // quotes escaped
  EXPECT_NE(dot.find("n1 -> n2 [id=\"e1\", tooltip=\"conv \\\"a\\\" 1x8x4x4 f32\", style=dashed]"),
            std::string::npos);
  EXPECT_NE(dot.find("n0 [id=\"n0\", label=\"in\\ninput  1x8x4x4 f32\", tooltip=\"in\", shape=ellipse]"),
            std::string::npos);
}

TEST(GraphLayout, GraphvizRendersEveryNodeAndEdge) {
  auto svg = renderSvg(toDot(chain(), ColorBy::None));
  ASSERT_TRUE(svg) << svg.message();
  EXPECT_EQ(count(*svg, "class=\"node\""), 4u);
  EXPECT_EQ(count(*svg, "class=\"edge\""), 3u);
  EXPECT_EQ(count(*svg, "class=\"cluster\""), 1u);
  EXPECT_NE(svg->find("<g id=\"n3\" class=\"node\">"), std::string::npos);
  EXPECT_NE(svg->find("stroke-dasharray"), std::string::npos); // the inferred edge
}

TEST(GraphLayout, BadDotIsAnError) {
  auto svg = renderSvg("digraph { a -> ; }");
  ASSERT_FALSE(svg);
  EXPECT_NE(svg.message().find("graphviz: the DOT text does not parse"), std::string::npos) << svg.message();
}

TEST(GraphLayout, ColorScales) {
  GraphModel g = chain();
  g.tolerance = 0.99;
  g.nodes[1].similarities = {{"top vs tpu", 0.995, 0.9, true}};
  g.nodes[2].similarities = {{"top vs tpu", 0.999, 0.9, true}, {"tpu vs bmodel", 0.9, 0.8, false}}; // 10x
  g.nodes[3].similarities = {{"top vs tpu", 0.99, 0.9, true}};
  g.nodes[1].time = LayerTime{0, 100, 50, 50};
  g.nodes[2].time = LayerTime{100, 400, 300, 0};
  auto c = nodeColors(g);
  EXPECT_EQ(c[0].cosine, "#e4e4e4"); // not compared
  EXPECT_EQ(c[1].cosine, "#a6dba0");
  EXPECT_EQ(c[2].cosine, "#d73027"); // the lower of the two pairs, 10x below
  EXPECT_EQ(c[3].cosine, "#a6dba0"); // at the line: passes
  EXPECT_EQ(c[0].time, "#e4e4e4");
  EXPECT_EQ(c[2].time, "#d94801");   // the slowest
  EXPECT_EQ(defaultColoring(g), ColorBy::Cosine);
  for (GraphNode &n : g.nodes) n.similarities.clear();
  EXPECT_EQ(defaultColoring(g), ColorBy::Time);
}

TEST(GraphModel, StatsGiveTimeCommandsAndGroups) {
  GraphModel g = chain();
  g.nodes[1].group = g.nodes[2].group = g.nodes[3].group = -1;
  // The stats of `tpuc sim --stats` (tools/explore/SimStats.h reads them).
  const std::string span = R"("tiu_busy_cycles": 0, "gdma_busy_cycles": 0, "tiu_commands": 0, "gdma_commands": 0)";
  const std::string engine = R"({"commands": 1, "busy_cycles": 1, "waiting_cycles": 0, "idle_cycles": 0, "utilization": 0.5})";
  const std::string stats = R"({"clock_mhz": 550, "total_cycles": 1000, "time_us": 1.8,
    "engines": {"tiu": )" + engine + R"(, "gdma": )" + engine + R"(},
    "ddr": {"bytes": 64, "payload_bytes": 64, "average_gbs": 1},
    "groups": [{"start_cycle": 0, "end_cycle": 600, )" + span + R"(}, {"start_cycle": 600, "end_cycle": 1000, )" + span + R"(}],
    "layers": [
      {"name": "relu", "start_cycle": 100, "end_cycle": 600, "tiu_busy_cycles": 400, "gdma_busy_cycles": 90,
       "tiu_commands": 3, "gdma_commands": 2},
      {"name": "out", "start_cycle": 600, "end_cycle": 1000, "tiu_busy_cycles": 10, "gdma_busy_cycles": 390,
       "tiu_commands": 1, "gdma_commands": 4},
      {"name": "elsewhere", "start_cycle": 0, "end_cycle": 1, )" + span + R"(}]})";
  ASSERT_TRUE(annotateStats(g, stats, "s.json"));
  EXPECT_EQ(g.clockMhz, 550);
  EXPECT_EQ(g.groupCount, 2u);
  ASSERT_TRUE(g.nodes[2].time);
  EXPECT_EQ(g.nodes[2].time->cycles(), 500);
  EXPECT_EQ(g.nodes[2].group, 0);
  EXPECT_EQ(g.nodes[3].group, 1);
  EXPECT_EQ(*g.nodes[3].gdmaCommands, 4u);
  EXPECT_FALSE(g.nodes[1].time);

  std::string missing = stats;
  missing.replace(missing.find(R"("end_cycle": 600, "tiu_busy_cycles": 400)"), 18, "");
  auto bad = annotateStats(g, missing, "s.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message(), "s.json: missing key 'layers[0].end_cycle'");
  EXPECT_EQ(annotateStats(g, "[1, 2]", "s.json").message(), "s.json: the stats file must hold a JSON object");
}

TEST(GraphModel, FlowManifestGivesSimilarities) {
  GraphModel g = chain();
  flow::FlowManifest m;
  kernels::CompareRow row;
  row.name = "relu";
  row.stats.cosine = 0.97;
  row.stats.euclidean = 0.8;
  row.pass = true;
  m.comparisons.push_back({"top", "tpu", 0.8, 0.5, {row}});
  ASSERT_TRUE(annotateFlow(g, m));
  ASSERT_EQ(g.nodes[2].similarities.size(), 1u);
  EXPECT_EQ(g.nodes[2].similarities[0].stages, "top vs tpu");
  EXPECT_EQ(*g.nodes[2].minCosine(), 0.97);
  EXPECT_FALSE(g.nodes[1].minCosine());
}

TEST(GraphImport, TopModuleOneNodePerOpWeightsAsOperands) {
  mlir::MLIRContext context;
  context.getOrLoadDialect<tpuir::TpuDialect>();
  auto module = top::loadTopModule(context, std::string(TPU_TEST_DATA_DIR) + "/../lit/compiler/tpu/Inputs/net.top.mlir");
  ASSERT_TRUE(module) << module.message();
  GraphModel g = moduleGraph(**module, "top");
  std::vector<std::string> names;
  for (const GraphNode &n : g.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"input", "conv1", "relu1", "pool1", "conv2", "add", "relu2", "pool2",
                                             "gap", "flatten", "output"}));
  EXPECT_EQ(g.edges.size(), 11u);
  const GraphNode &conv = g.nodes[1];
  EXPECT_EQ(conv.opType, "top.conv");
  EXPECT_EQ(conv.shape, "1x8x16x16");
  EXPECT_EQ(conv.dtype, "f32");
  bool weight = false;
  for (const auto &[k, v] : conv.attributes) weight |= k == "operand 1" && v == "weight w1 tensor<8x3x3x3xf32>";
  EXPECT_TRUE(weight);
  int add = g.find("add");
  int from = -1;
  for (const GraphEdge &e : g.edges)
    if (e.to == add && e.from != g.find("conv2")) from = e.from;
  EXPECT_EQ(from, g.find("pool1")); // the residual
}

TEST(GraphImport, BadFiles) {
  EXPECT_EQ(loadGraph("/nonexistent/m.onnx", {}).message(), "/nonexistent/m.onnx: no such file");
  auto unknown = loadGraph(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s", {});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.message().find("unknown model type"), std::string::npos);
}

TEST(BmodelGraph, LayersGroupsAndGlobalMemoryDataflow) {
  auto model = isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(model) << model.message();
  auto g = bmodelGraph(model->nets[0], "conv_add");
  ASSERT_TRUE(g) << g.message();
  std::vector<std::string> names;
  for (const GraphNode &n : g->nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"x", "y", "conv1", "add1"}));
  const GraphNode &conv = g->nodes[2], &add = g->nodes[3];
  EXPECT_EQ(*conv.tiuCommands, 1u);
  EXPECT_EQ(*conv.gdmaCommands, 3u);
  EXPECT_EQ(*add.tiuCommands, 1u);
  EXPECT_EQ(*add.gdmaCommands, 2u);
  EXPECT_EQ(conv.group, 0);
  ASSERT_EQ(g->edges.size(), 3u);
  // x is loaded by conv1, y by add1 (DDR reads of the inputs); conv1 feeds
  // add1 in local memory: inferred.
  auto edge = [&](size_t i) { return std::tuple{g->edges[i].from, g->edges[i].to, g->edges[i].inferred}; };
  EXPECT_EQ(edge(0), std::tuple(0, 2, false));
  EXPECT_EQ(edge(1), std::tuple(1, 3, false));
  EXPECT_EQ(edge(2), std::tuple(2, 3, true));
}

TEST(HtmlGraphPage, SelfContainedWithTheNodeData) {
  GraphModel g = chain();
  g.nodes[3].name = "</script><b>";
  auto svg = renderSvg(toDot(g, ColorBy::None));
  ASSERT_TRUE(svg) << svg.message();
  std::string html = renderGraphHtml(g, *svg, ColorBy::None);
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 2u); // the data block and the script, nothing from the name
  EXPECT_NE(html.find(" id=\"graph\">"), std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex("(src|href)=\"https?:")));
  EXPECT_NE(html.find("\"color_modes\":[\"none\"]"), std::string::npos);
}

} // namespace
} // namespace tpu::graph
