#include "tools/graph/GraphLayout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>

namespace tpu::graph {

ColorBy defaultColoring(const GraphModel &graph) {
  bool time = false;
  for (const GraphNode &n : graph.nodes) {
    if (!n.similarities.empty()) return ColorBy::Cosine;
    time |= n.time.has_value();
  }
  return time ? ColorBy::Time : ColorBy::None;
}

namespace {

constexpr const char *kUnknown = "#e4e4e4";

struct Rgb {
  double r, g, b;
};

std::string hex(const Rgb &c) {
  char s[8];
  std::snprintf(s, sizeof s, "#%02x%02x%02x", int(std::lround(c.r)), int(std::lround(c.g)), int(std::lround(c.b)));
  return s;
}

Rgb mix(const Rgb &a, const Rgb &b, double t) {
  t = std::clamp(t, 0.0, 1.0);
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

std::string cosineColor(std::optional<double> cosine, double tolerance) {
  if (!cosine) return kUnknown;
  if (*cosine >= tolerance) return "#a6dba0";
  const double limit = std::max(1 - tolerance, 1e-12);
  const double t = std::isnan(*cosine) ? 1.0 : std::log10(std::max(1 - *cosine, limit) / limit);
  return hex(mix({254, 224, 139}, {215, 48, 39}, t));
}

// DOT string literal contents.
std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

} // namespace

std::vector<NodeColors> nodeColors(const GraphModel &graph) {
  double slowest = 0;
  for (const GraphNode &n : graph.nodes)
    if (n.time) slowest = std::max(slowest, n.time->cycles());
  std::vector<NodeColors> colors;
  for (const GraphNode &n : graph.nodes) {
    NodeColors c;
    c.cosine = cosineColor(n.minCosine(), graph.tolerance);
    c.time = !n.time ? kUnknown
                     : hex(mix({255, 247, 236}, {217, 72, 1}, slowest > 0 ? n.time->cycles() / slowest : 0));
    colors.push_back(std::move(c));
  }
  return colors;
}

std::string toDot(const GraphModel &graph, ColorBy colorBy) {
  const std::vector<NodeColors> colors = nodeColors(graph);
  std::map<int, std::vector<size_t>> groups;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (graph.nodes[i].group >= 0) groups[graph.nodes[i].group].push_back(i);
  std::ostringstream os;
  os << "digraph " << quoted(graph.title) << " {\n"
     << "  graph [rankdir=TB, nodesep=0.2, ranksep=0.3, fontname=\"Helvetica\", fontsize=10];\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=9, height=0.3, "
        "margin=\"0.08,0.03\", fillcolor=\"#ffffff\"];\n"
     << "  edge [arrowsize=0.5, color=\"#707070\"];\n";
  auto node = [&](size_t i, const char *indent) {
    const GraphNode &n = graph.nodes[i];
    std::string label = n.name + "\n" + n.opType;
    if (!n.shape.empty() || !n.dtype.empty()) label += "  " + n.shape + " " + n.dtype;
    os << indent << "n" << i << " [id=\"n" << i << "\", label=" << quoted(label) << ", tooltip=" << quoted(n.name);
    if (colorBy == ColorBy::Cosine) os << ", fillcolor=\"" << colors[i].cosine << "\"";
    if (colorBy == ColorBy::Time) os << ", fillcolor=\"" << colors[i].time << "\"";
    if (n.opType == "input") os << ", shape=ellipse";
    os << "];\n";
  };
  std::vector<bool> inCluster(graph.nodes.size(), false);
  for (const auto &[g, members] : groups) {
    if (members.size() < 2) continue;
    os << "  subgraph cluster_" << g << " {\n    id=\"g" << g << "\"; label=\"group " << g
       << "\"; style=\"rounded,filled\"; fillcolor=\"#f3f3fa\"; color=\"#9a9ab8\"; fontsize=9;\n";
    for (size_t i : members) {
      node(i, "    ");
      inCluster[i] = true;
    }
    os << "  }\n";
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!inCluster[i]) node(i, "  ");
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const GraphEdge &edge = graph.edges[e];
    const GraphNode &from = graph.nodes[size_t(edge.from)];
    std::string tip = edge.tensor + (from.shape.empty() ? "" : " " + from.shape + " " + from.dtype);
    os << "  n" << edge.from << " -> n" << edge.to << " [id=\"e" << e << "\", tooltip=" << quoted(tip);
    if (edge.inferred) os << ", style=dashed";
    os << "];\n";
  }
  os << "}\n";
  return os.str();
}

namespace {

// Graphviz reports through a global callback: collect the messages of one
// render (renders are serialized, the library is not thread-safe).
std::mutex gvMutex;
std::string gvMessages;
int collectMessage(char *message) {
  gvMessages += message;
  return 0;
}

std::string lastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

} // namespace

Result<std::string> renderSvg(const std::string &dot) {
  std::lock_guard<std::mutex> lock(gvMutex);
  gvMessages.clear();
  agseterrf(collectMessage);
  agseterr(AGERR);
  GVC_t *gvc = gvContext();
  if (!gvc) return makeError("graphviz: cannot create a context");
  Agraph_t *g = agmemread(dot.c_str());
  if (!g) {
    gvFreeContext(gvc);
    return makeError("graphviz: the DOT text does not parse: ", lastLine(gvMessages));
  }
  std::string svg;
  Status st;
  if (gvLayout(gvc, g, "dot") != 0) {
    st = makeError("graphviz: dot layout failed: ", lastLine(gvMessages));
  } else {
    char *data = nullptr;
    unsigned int length = 0;
    if (gvRenderData(gvc, g, "svg", &data, &length) != 0 || !data)
      st = makeError("graphviz: SVG rendering failed: ", lastLine(gvMessages));
    else svg.assign(data, length);
    if (data) gvFreeRenderData(data);
    gvFreeLayout(gvc, g);
  }
  agclose(g);
  gvFreeContext(gvc);
  if (!st) return st;
  return svg;
}

} // namespace tpu::graph
