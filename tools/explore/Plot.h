// Self-written SVG charts for sweep results: line series on linear or
// log-log axes with ticks, labels and a legend. Deterministic text output.
#pragma once

#include <string>
#include <vector>

namespace tpu::explore {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points; // drawn in the given order
  bool lines = true;                             // false: markers only
  std::vector<std::string> tips;                 // optional tooltip per point
};

struct PlotLine {                                // a reference line y = slope * x (log-log roofs)
  std::string label;
  double slope = 0, ceiling = 0;                 // y = min(slope * x, ceiling); ceiling 0 = none
};

struct Plot {
  std::string id, title, xLabel, yLabel;
  bool logX = false, logY = false;
  std::vector<PlotSeries> series;
  std::vector<PlotLine> roofs;
};

std::string renderSvg(const Plot &plot);

} // namespace tpu::explore
