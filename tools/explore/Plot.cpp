#include "tools/explore/Plot.h"

#include "tools/explore/Html.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tpu::explore {
namespace {

const char *kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                          "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr double kW = 720, kH = 440, kLeft = 80, kRight = 220, kTop = 40, kBottom = 60;

struct Axis {
  bool log;
  double lo, hi;
  double map(double v, double a, double b) const {
    double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return a + t * (b - a);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      for (double p = std::floor(std::log10(lo)); p <= std::ceil(std::log10(hi)); ++p) {
        double v = std::pow(10.0, p);
        if (v >= lo * 0.999 && v <= hi * 1.001) t.push_back(v);
      }
      if (t.size() < 2) t = {lo, hi};
    } else {
      double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 4)));
      for (double m : {1.0, 2.0, 5.0, 10.0})
        if ((hi - lo) / (step * m) <= 6) {
          step *= m;
          break;
        }
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
    }
    return t;
  }
};

Axis makeAxis(std::vector<double> values, bool log) {
  if (log) values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return !(v > 0); }), values.end());
  if (values.empty()) return {log, 1, 10};
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  double lo = *mn, hi = *mx;
  if (log) {
    lo = std::pow(10.0, std::floor(std::log10(lo)));
    hi = std::pow(10.0, std::ceil(std::log10(hi)));
    if (hi <= lo) hi = lo * 10;
  } else {
    double pad = (hi - lo) * 0.05;
    if (pad == 0) pad = std::max(std::fabs(hi) * 0.1, 1.0);
    lo = lo >= 0 && lo - pad < 0 ? 0 : lo - pad;
    hi += pad;
  }
  return {log, lo, hi};
}

// A roof's y at x: the slope's line, capped by the ceiling if it has one.
double roofAt(const PlotLine &roof, double x) {
  double y = roof.slope * x;
  return roof.ceiling > 0 ? std::min(y, roof.ceiling) : y;
}

std::string num(double v) {
  double a = std::fabs(v);
  if (a != 0 && (a >= 1e5 || a < 1e-2)) {
    std::ostringstream o;
    o.precision(2);
    o << v;
    return o.str();
  }
  return fixed(v, a < 10 && v != std::floor(v) ? 2 : 0);
}

} // namespace

std::string renderSvg(const Plot &plot) {
  std::vector<double> xs, ys;
  for (const PlotSeries &s : plot.series)
    for (auto [x, y] : s.points) {
      xs.push_back(x);
      ys.push_back(y);
    }
  Axis ax = makeAxis(xs, plot.logX);
  // The y axis spans the roofs over the x range too: points far below a roof
  // must not hide it.
  for (const PlotLine &roof : plot.roofs)
    for (double x : {ax.lo, ax.hi}) ys.push_back(roofAt(roof, x));
  Axis ay = makeAxis(ys, plot.logY);
  double x0 = kLeft, x1 = kW - kRight, y0 = kH - kBottom, y1 = kTop;
  auto ok = [&](double x, double y) { return (!plot.logX || x > 0) && (!plot.logY || y > 0); };
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" << escapeXml(plot.id) << "\" width=\"" << kW
    << "\" height=\"" << kH << "\" viewBox=\"0 0 " << kW << ' ' << kH << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"" << kW / 2 - 100 << "\" y=\"22\" font-size=\"14\">"
    << escapeXml(plot.title) << "</text>\n";
  for (double t : ax.ticks()) {
    double px = ax.map(t, x0, x1);
    o << "<line x1=\"" << fixed(px, 1) << "\" x2=\"" << fixed(px, 1) << "\" y1=\"" << y0 << "\" y2=\"" << y1
      << "\" stroke=\"#eee\"/><text x=\"" << fixed(px - 10, 1) << "\" y=\"" << y0 + 16 << "\">" << num(t) << "</text>\n";
  }
  for (double t : ay.ticks()) {
    double py = ay.map(t, y0, y1);
    o << "<line x1=\"" << x0 << "\" x2=\"" << x1 << "\" y1=\"" << fixed(py, 1) << "\" y2=\"" << fixed(py, 1)
      << "\" stroke=\"#eee\"/><text x=\"" << x0 - 50 << "\" y=\"" << fixed(py + 4, 1) << "\">" << num(t) << "</text>\n";
  }
  o << "<rect x=\"" << x0 << "\" y=\"" << y1 << "\" width=\"" << x1 - x0 << "\" height=\"" << y0 - y1
    << "\" fill=\"none\" stroke=\"#333\"/>\n<text x=\"" << (x0 + x1) / 2 - 60 << "\" y=\"" << kH - 20 << "\">"
    << escapeXml(plot.xLabel) << "</text>\n<text transform=\"translate(18," << (y0 + y1) / 2 + 60
    << ") rotate(-90)\">" << escapeXml(plot.yLabel) << "</text>\n";
  // Roofs: sampled along x, clipped to the plot.
  for (size_t r = 0; r < plot.roofs.size(); ++r) {
    const PlotLine &roof = plot.roofs[r];
    std::string path;
    for (int i = 0; i <= 64; ++i) {
      double x = plot.logX ? std::pow(10.0, std::log10(ax.lo) + (std::log10(ax.hi) - std::log10(ax.lo)) * i / 64)
                           : ax.lo + (ax.hi - ax.lo) * i / 64;
      double y = roofAt(roof, x);
      if (!ok(x, y) || y < ay.lo || y > ay.hi) continue;
      path += (path.empty() ? "M" : " L") + fixed(ax.map(x, x0, x1), 1) + "," + fixed(ay.map(y, y0, y1), 1);
    }
    if (!path.empty())
      o << "<path class=\"roof\" d=\"" << path << "\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"6,3\"><title>"
        << escapeXml(roof.label) << "</title></path>\n";
    o << "<text x=\"" << x1 + 10 << "\" y=\"" << kH - kBottom - 14 * (plot.roofs.size() - r) << "\" fill=\"#777\">- - "
      << escapeXml(roof.label) << "</text>\n";
  }
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const PlotSeries &ser = plot.series[s];
    const char *color = kPalette[s % 10];
    std::string path;
    o << "<g class=\"series\">";
    for (size_t i = 0; i < ser.points.size(); ++i) {
      auto [x, y] = ser.points[i];
      if (!ok(x, y)) continue;
      std::string px = fixed(ax.map(x, x0, x1), 1), py = fixed(ay.map(y, y0, y1), 1);
      path += (path.empty() ? "M" : " L") + px + "," + py;
      o << "<circle cx=\"" << px << "\" cy=\"" << py << "\" r=\"3\" fill=\"" << color << "\"><title>"
        << escapeXml(i < ser.tips.size() ? ser.tips[i] : ser.label + ": " + num(x) + ", " + num(y))
        << "</title></circle>";
    }
    if (ser.lines && !path.empty())
      o << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << color << "\" stroke-width=\"1.5\"/>";
    o << "</g>\n<rect x=\"" << x1 + 10 << "\" y=\"" << y1 + 14 * s << "\" width=\"10\" height=\"10\" fill=\"" << color
      << "\"/><text x=\"" << x1 + 24 << "\" y=\"" << y1 + 14 * s + 9 << "\">" << escapeXml(ser.label) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

} // namespace tpu::explore
