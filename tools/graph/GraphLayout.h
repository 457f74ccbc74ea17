// GraphModel -> Graphviz: the DOT text (nodes "n<i>", edges "e<i>", layer
// groups of two or more nodes as clusters "cluster_<g>"), laid out and
// rendered to SVG by Graphviz's own library (libgvc, the dot layout).
// Node fill colors come from nodeColors, the one place the color scales live.
#pragma once

#include "support/Status.h"
#include "tools/graph/GraphModel.h"

#include <string>
#include <vector>

namespace tpu::graph {

enum class ColorBy { Cosine, Time, None };

// What the page colors by first: cosine when the graph has similarities,
// else time when it has stats, else nothing.
ColorBy defaultColoring(const GraphModel &graph);

// Fill colors ("#rrggbb") of one node under each scale:
// cosine: grey = not measured, green = at or above graph.tolerance, yellow
//         to red as 1 - cosine grows from 1x to 10x (1 - tolerance);
// time:   grey = no time, white to dark orange by the node's share of the
//         slowest node's cycles.
struct NodeColors {
  std::string cosine, time;
};
std::vector<NodeColors> nodeColors(const GraphModel &graph);

std::string toDot(const GraphModel &graph, ColorBy colorBy);

// Lays out `dot` with Graphviz's dot engine and renders SVG in memory.
// Errors carry Graphviz's message.
Result<std::string> renderSvg(const std::string &dot);

} // namespace tpu::graph
