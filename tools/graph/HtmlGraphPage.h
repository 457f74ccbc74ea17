// The page `tpuc graph` writes: one self-contained HTML file (inline CSS,
// JS, SVG and the node data as JSON; nothing fetched). The Graphviz SVG is
// embedded as is; the script adds pan (drag) and zoom (wheel), a side panel
// for the clicked node (attributes, calibration threshold, cosine per stage
// pair, cycles, TIU/GDMA commands, inputs and users), a search box, a
// "first below tolerance" button and the choice of coloring (cosine, time).
// Test hook: window.graphPage, and the URL hash runs actions on load,
// '&'-separated: "select=NAME", "color=cosine|time|none", "first-below";
// <body data-ready="1" data-nodes="N"> once the script has run (N = drawn
// nodes).
#pragma once

#include "tools/graph/GraphLayout.h"
#include "tools/graph/GraphModel.h"

#include <string>

namespace tpu::graph {

// `svg` as rendered by renderSvg(toDot(graph, colorBy)).
std::string renderGraphHtml(const GraphModel &graph, const std::string &svg, ColorBy colorBy);

} // namespace tpu::graph
