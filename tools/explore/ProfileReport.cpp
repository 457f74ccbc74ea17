#include "tools/explore/ProfileReport.h"

#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "runtime/RunFiles.h"
#include "runtime/Runtime.h"
#include "support/Npz.h"
#include "support/ReadFile.h"
#include "tools/explore/Html.h"
#include "tools/explore/SimStats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <vector>

namespace tpu::explore {
namespace {

using Json = nlohmann::json;

// Busy intervals per engine from the trace's complete events, in cycles,
// merged where the gap is below `minGap` (one pixel), so the SVG stays small
// for nets with 100k commands.
struct Interval {
  double start, end;
  uint64_t commands;
};
Result<std::array<std::vector<Interval>, 2>> readTrace(const std::string &text, const std::string &origin,
                                                       double clockMhz, double minGap) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return makeError(origin, ": not valid JSON");
  JsonReader rd{origin};
  if (!j.is_object()) return makeError(origin, ": the trace file must hold a JSON object");
  TPU_ASSIGN_OR_RETURN(const Json *events, rd.array(j, "traceEvents"));
  std::array<std::vector<Interval>, 2> raw;
  for (size_t i = 0; i < events->size(); ++i) {
    const Json &ev = (*events)[i];
    if (!ev.is_object()) return makeError(origin, ": traceEvents[", i, "] is not an object");
    auto ph = ev.find("ph"), cat = ev.find("cat");
    if (ph == ev.end() || *ph != "X" || cat == ev.end() || !cat->is_string()) continue;
    auto which = std::find(kStatsEngines.begin(), kStatsEngines.end(), cat->get<std::string>());
    if (which == kStatsEngines.end()) continue;
    std::string path = "traceEvents[" + std::to_string(i) + "]";
    TPU_ASSIGN_OR_RETURN(double ts, rd.number(ev, "ts", path));
    TPU_ASSIGN_OR_RETURN(double dur, rd.number(ev, "dur", path));
    raw[size_t(which - kStatsEngines.begin())].push_back({ts * clockMhz, (ts + dur) * clockMhz, 1});
  }
  std::array<std::vector<Interval>, 2> merged;
  for (size_t e = 0; e < 2; ++e) {
    std::sort(raw[e].begin(), raw[e].end(),
              [](const Interval &a, const Interval &b) { return a.start < b.start || (a.start == b.start && a.end < b.end); });
    for (const Interval &iv : raw[e]) {
      if (!merged[e].empty() && iv.start - merged[e].back().end < minGap) {
        merged[e].back().end = std::max(merged[e].back().end, iv.end);
        merged[e].back().commands += 1;
      } else {
        merged[e].push_back(iv);
      }
    }
  }
  return merged;
}

constexpr double kPlotWidth = 1000, kLabelWidth = 70, kRowHeight = 22;
const char *kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"};

std::string timelineSvg(const SimStats &s, const std::array<std::vector<Interval>, 2> *engines) {
  struct Row {
    std::string label;
    std::vector<std::string> rects;
  };
  double total = std::max(s.totalCycles, 1.0);
  auto x = [&](double c) { return kLabelWidth + c / total * kPlotWidth; };
  auto rect = [&](double a, double b, const char *color, const std::string &tip) {
    double w = std::max(x(b) - x(a), 0.5);
    return "<rect x=\"" + fixed(x(a), 2) + "\" y=\"0\" height=\"16\" width=\"" + fixed(w, 2) + "\" fill=\"" + color + "\"><title>" +
           escapeXml(tip) + "</title></rect>";
  };
  auto cycles = [&](double a, double b) {
    return fixed(a, 0) + "–" + fixed(b, 0) + " cycles (" + fixed((b - a) / s.clockMhz, 3) + " us)";
  };
  std::vector<Row> rows;
  if (engines) {
    for (size_t e = 0; e < 2; ++e) {
      Row r{e == 0 ? "TIU" : "GDMA", {}};
      for (const Interval &iv : (*engines)[e])
        r.rects.push_back(rect(iv.start, iv.end, kColors[e], std::to_string(iv.commands) + " command(s), " +
                                                                  cycles(iv.start, iv.end)));
      rows.push_back(std::move(r));
    }
  }
  Row layers{"layers", {}}, groups{"groups", {}};
  for (size_t i = 0; i < s.layers.size(); ++i)
    layers.rects.push_back(rect(s.layers[i].start, s.layers[i].end, kColors[2 + i % 6],
                                s.layers[i].name + ": " + cycles(s.layers[i].start, s.layers[i].end)));
  for (size_t i = 0; i < s.groups.size(); ++i)
    groups.rects.push_back(rect(s.groups[i].start, s.groups[i].end, kColors[6 + i % 2],
                                s.groups[i].name + ": " + cycles(s.groups[i].start, s.groups[i].end)));
  rows.push_back(std::move(layers));
  rows.push_back(std::move(groups));

  double height = rows.size() * kRowHeight + 24;
  std::ostringstream o;
  o << "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kLabelWidth + kPlotWidth + 10
    << "\" height=\"" << height << "\" viewBox=\"0 0 " << kLabelWidth + kPlotWidth + 10 << ' ' << height << "\">\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    double y = r * kRowHeight;
    o << "<g class=\"lane\" data-lane=\"" << escapeXml(rows[r].label) << "\" transform=\"translate(0," << y
      << ")\"><text x=\"4\" y=\"15\">" << escapeXml(rows[r].label) << "</text>"
      << "<g class=\"bars\" transform=\"translate(0,3)\">";
    for (const std::string &rc : rows[r].rects) o << rc;
    o << "</g></g>\n";
  }
  // Time axis: five ticks in microseconds.
  double y = rows.size() * kRowHeight + 4;
  for (int t = 0; t <= 4; ++t) {
    double c = total * t / 4;
    o << "<line x1=\"" << fixed(x(c), 2) << "\" x2=\"" << fixed(x(c), 2) << "\" y1=\"0\" y2=\"" << y
      << "\" stroke=\"#bbb\" stroke-dasharray=\"2,3\"/><text x=\"" << fixed(x(c) - (t == 4 ? 40 : 0), 2)
      << "\" y=\"" << y + 14 << "\">" << fixed(c / s.clockMhz, 1) << " us</text>";
  }
  o << "\n</svg>\n";
  return o.str();
}

std::string utilizationSvg(const SimStats &s) {
  std::ostringstream o;
  o << "<svg id=\"utilization\" xmlns=\"http://www.w3.org/2000/svg\" width=\"620\" height=\"70\">";
  const char *parts[] = {"busy", "waiting", "idle"};
  const char *colors[] = {"#59a14f", "#edc948", "#ddd"};
  for (size_t e = 0; e < 2; ++e) {
    const EngineStats &eng = s.engines[e];
    double sum = std::max(eng.busy + eng.waiting + eng.idle, 1e-9);
    double vals[] = {eng.busy, eng.waiting, eng.idle};
    double x = 60, y = e * 30.0 + 5;
    o << "<text x=\"0\" y=\"" << y + 15 << "\">" << (e == 0 ? "TIU" : "GDMA") << "</text>";
    for (int p = 0; p < 3; ++p) {
      double w = vals[p] / sum * 500;
      o << "<rect x=\"" << fixed(x, 2) << "\" y=\"" << y << "\" width=\"" << fixed(w, 2)
        << "\" height=\"20\" fill=\"" << colors[p] << "\"><title>" << parts[p] << ": " << fixed(vals[p], 0)
        << " cycles</title></rect>";
      x += w;
    }
    o << "<text x=\"565\" y=\"" << y + 15 << "\">" << fixed(eng.utilization * 100, 1) << " %</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string lmemSvg(const SimStats &s) {
  double peak = std::max(1.0, s.lmemPeakBytes());
  double barW = std::max(2.0, std::min(24.0, 900.0 / std::max<size_t>(s.groups.size(), 1)));
  std::ostringstream o;
  o << "<svg id=\"lmem\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(barW * s.groups.size() + 80, 0)
    << "\" height=\"140\"><text x=\"0\" y=\"12\">peak " << fixed(peak / 1024, 1) << " KiB</text>";
  for (size_t i = 0; i < s.groups.size(); ++i) {
    double v = std::max(s.groups[i].lmemBytes, 0.0), h = v / peak * 100;
    o << "<rect x=\"" << fixed(60 + i * barW, 2) << "\" y=\"" << fixed(120 - h, 2) << "\" width=\""
      << fixed(barW * 0.8, 2) << "\" height=\"" << fixed(h, 2) << "\" fill=\"#4e79a7\"><title>group " << i << ": "
      << fixed(v, 0) << " bytes</title></rect>";
  }
  o << "</svg>";
  return o.str();
}

const char *kStyle = R"(body{font:14px sans-serif;margin:20px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}td,th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}
td:first-child,th:first-child{text-align:left}th{cursor:pointer;background:#f3f3f3;user-select:none}
th.sorted-desc::after{content:" \25BC"}th.sorted-asc::after{content:" \25B2"}
svg text{font:11px sans-serif}.summary td{border:none}.note{color:#777})";

// Sorts a table by the clicked column: numbers by value (data-v), text by name.
const char *kScript = R"(function sortTable(th){
  var table=th.closest('table'),body=table.tBodies[0],col=th.cellIndex;
  var desc=!th.classList.contains('sorted-desc');
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.classList.remove('sorted-desc','sorted-asc');});
  th.classList.add(desc?'sorted-desc':'sorted-asc');
  var rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(a,b){
    var x=a.cells[col],y=b.cells[col];
    var vx=x.hasAttribute('data-v')?parseFloat(x.getAttribute('data-v')):x.textContent;
    var vy=y.hasAttribute('data-v')?parseFloat(y.getAttribute('data-v')):y.textContent;
    var r=vx<vy?-1:vx>vy?1:0;return desc?-r:r;});
  rows.forEach(function(r){body.appendChild(r);});
}
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){sortTable(th);});});
document.body.setAttribute('data-ready','1');
)";

std::string td(double v, int digits) { return "<td data-v=\"" + fixed(v, 3) + "\">" + fixed(v, digits) + "</td>"; }

std::string layerTable(const SimStats &s) {
  std::vector<const StatsSpan *> order;
  for (const StatsSpan &l : s.layers) order.push_back(&l);
  // Longest first; ties keep program order.
  std::stable_sort(order.begin(), order.end(),
                   [](const StatsSpan *a, const StatsSpan *b) { return a->end - a->start > b->end - b->start; });
  std::ostringstream o;
  o << "<table id=\"layers\" class=\"sortable\"><thead><tr><th>layer</th><th class=\"sorted-desc\">time (us)</th>"
       "<th>share %</th><th>start (us)</th><th>TIU busy (us)</th><th>GDMA busy (us)</th><th>TIU cmds</th>"
       "<th>GDMA cmds</th></tr></thead><tbody>\n";
  double total = std::max(s.totalCycles, 1e-9);
  for (const StatsSpan *l : order) {
    double span = l->end - l->start;
    o << "<tr><td>" << escapeXml(l->name) << "</td>" << td(span / s.clockMhz, 3) << td(span / total * 100, 1)
      << td(l->start / s.clockMhz, 3) << td(l->busy[0] / s.clockMhz, 3) << td(l->busy[1] / s.clockMhz, 3)
      << td(l->commands[0], 0) << td(l->commands[1], 0) << "</tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

std::string groupTable(const SimStats &s) {
  std::ostringstream o;
  o << "<table id=\"groups\" class=\"sortable\"><thead><tr><th>group</th><th>time (us)</th><th>TIU busy %</th>"
       "<th>GDMA busy %</th><th>TIU cmds</th><th>GDMA cmds</th>"
    << (s.haveLmem ? "<th>LMEM (KiB)</th>" : "") << "</tr></thead><tbody>\n";
  for (size_t i = 0; i < s.groups.size(); ++i) {
    const StatsSpan &g = s.groups[i];
    double span = std::max(g.end - g.start, 1e-9);
    o << "<tr><td data-v=\"" << i << "\">" << i << "</td>" << td((g.end - g.start) / s.clockMhz, 3)
      << td(g.busy[0] / span * 100, 1) << td(g.busy[1] / span * 100, 1) << td(g.commands[0], 0)
      << td(g.commands[1], 0);
    if (s.haveLmem) o << td(std::max(g.lmemBytes, 0.0) / 1024, 1);
    o << "</tr>\n";
  }
  o << "</tbody></table>\n";
  return o.str();
}

} // namespace

Result<std::string> renderProfileHtml(const std::string &statsJson, const std::string &traceJson,
                                      const std::string &origin, const ProfileChip *chip) {
  auto stats = parseSimStats(statsJson, origin);
  if (!stats) return stats.status();
  const SimStats &s = *stats;
  std::optional<std::array<std::vector<Interval>, 2>> engines;
  if (!traceJson.empty()) {
    auto t = readTrace(traceJson, origin + " (trace)", s.clockMhz, s.totalCycles / (2 * kPlotWidth));
    if (!t) return t.status();
    engines = t.take();
  }
  const std::string title = (chip ? escapeXml(chip->name) : std::string("TPU")) + " profile: " + escapeXml(origin);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" << title << "</title>\n<style>"
    << kStyle << "</style></head><body>\n"
    << "<h1>" << title << "</h1>\n<table class=\"summary\" id=\"summary\">";
  if (chip)
    o << "<tr><td>chip</td><td id=\"chip\">" << escapeXml(chip->name) << " (clock " << fixed(s.clockMhz, 0)
      << " MHz in this run; its preset " << fixed(chip->presetClockMhz, 0) << " MHz)</td></tr>";
  else
    o << "<tr><td>chip</td><td id=\"chip\">not recorded in the stats file (<code>tpuc profile model.bmodel "
         "--input in.npz</code> names it)</td></tr>";
  o << "<tr><td>time</td><td>" << fixed(s.timeUs, 3) << " us (" << fixed(s.totalCycles, 0) << " cycles at "
    << fixed(s.clockMhz, 0) << " MHz)</td></tr>"
    << "<tr><td>commands</td><td>TIU " << fixed(s.engines[0].commands, 0) << ", GDMA "
    << fixed(s.engines[1].commands, 0) << "</td></tr>"
    << "<tr><td>DDR</td><td>" << fixed(s.ddrBytes, 0) << " bytes (" << fixed(s.payloadBytes, 0) << " payload), average "
    << fixed(s.ddrGBs, 2) << " GB/s</td></tr></table>\n"
    << "<h2>Utilization</h2>\n"
    << utilizationSvg(s) << "\n<h2>Timeline</h2>\n";
  if (!engines) o << "<p class=\"note\">No trace given: TIU/GDMA rows need <code>--trace</code>.</p>\n";
  o << timelineSvg(s, engines ? &*engines : nullptr) << "<h2>Layers (click a column to sort)</h2>\n";
  if (chip && !chip->commandsNameLayers)
    o << "<p class=\"note\" id=\"no-layers\">Per-layer times are not available for this " << escapeXml(chip->name)
      << " bmodel: its commands carry no layer names. The command groups below and the TIU/GDMA rows of the "
         "timeline hold its time.</p>\n";
  else if (s.layers.empty())
    o << "<p class=\"note\" id=\"no-layers\">The stats carry no per-layer times.</p>\n";
  o << layerTable(s) << "<h2>Command groups</h2>\n";
  if (s.haveLmem) o << "<h3>LMEM use per group</h3>\n" << lmemSvg(s) << "\n";
  else
    o << "<p class=\"note\" id=\"no-lmem\">The stats carry no LMEM figures per group.</p>\n";
  o << groupTable(s) << "<script>\n" << kScript << "</script>\n</body></html>\n";
  return o.str();
}

Status writeProfileReport(const std::string &statsPath, const std::string &tracePath,
                          const std::string &htmlPath) {
  auto stats = readTextFile(statsPath);
  if (!stats) return stats.status();
  std::string trace;
  if (!tracePath.empty()) {
    auto t = readTextFile(tracePath);
    if (!t) return t.status();
    trace = t.take();
  }
  auto html = renderProfileHtml(*stats, trace, statsPath);
  if (!html) return html.status();
  return runtime::writeFileAtomically(htmlPath, *html);
}

Status writeBmodelProfileReport(const std::string &bmodelPath, const std::string &netName, const std::string &inputPath,
                                const std::string &configPath, const std::string &htmlPath) {
  auto model = bmodel::readFile(bmodelPath, nullptr, bmodel::ChipScope::AnyKnown);
  if (!model) return model.status();
  const isa::ChipInfo *info = isa::chipByBmodelName(model->chip);
  if (!info) return makeError(bmodelPath, ": unknown chip '", model->chip, "'");
  if (!info->hasSimulator) return makeError(bmodelPath, ": no timed simulator for the ", model->chip, " yet");
  ProfileChip chip{model->chip, info->hwConfig().clockMhz, false};
  for (const bmodel::Net &net : model->nets)
    for (const bmodel::CmdGroup &g : net.groups)
      for (const auto *names : {&g.tiuLayer, &g.gdmaLayer})
        for (const std::string &n : *names) chip.commandsNameLayers |= !n.empty();

  // As the C API does: the device's config is the keys over the BM1684 defaults, and a bmodel its chip's
  // runner runs takes the same keys over its chip's preset (Runtime::setChipConfigOverrides).
  std::string configJson;
  isa::HwConfig deviceConfig;
  if (!configPath.empty()) {
    auto text = readFile(configPath, "hardware config");
    if (!text) return text.status();
    configJson = *text;
    auto cfg = isa::HwConfig::fromJson(configJson, configPath);
    if (!cfg) return cfg.status();
    deviceConfig = cfg.take();
  }
  auto rt = runtime::Runtime::create(deviceConfig, runtime::BackendKind::Sim);
  if (!rt) return rt.status();
  (*rt)->setChipConfigOverrides(configJson, configPath);
  TPU_RETURN_IF_ERROR((*rt)->loadBmodel(bmodelPath));
  std::string net = netName;
  if (net.empty()) {
    auto names = (*rt)->netNames();
    if (names.size() != 1) return makeError(bmodelPath, ": holds ", names.size(), " nets: choose one with --net");
    net = names[0];
  }
  auto inputs = readNpz(inputPath);
  if (!inputs) return inputs.status();
  runtime::RunOptions opts;
  opts.recordTrace = true;
  runtime::RunReport report;
  auto outputs = (*rt)->run(net, *inputs, opts, report);
  if (!outputs) return Status(outputs.status()).prefix(bmodelPath);
  if (report.statsJson.empty()) return makeError(bmodelPath, ": the timed run left no stats");
  auto html = renderProfileHtml(report.statsJson, report.traceJson, bmodelPath, &chip);
  if (!html) return html.status();
  return runtime::writeFileAtomically(htmlPath, *html);
}

} // namespace tpu::explore
