#include "tools/explore/SweepReport.h"

#include "isa/GdmaCommand.h"
#include "isa/TiuCommand.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "timing/GdmaTiming.h"
#include "timing/TiuTiming.h"
#include "tools/explore/Html.h"
#include "tools/explore/Plot.h"
#include "tools/explore/SimStats.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>

namespace fs = std::filesystem;

namespace tpu::explore {

using Json = nlohmann::ordered_json;

namespace {

// Per-layer work of a bmodel for the roofline: multiply-accumulates of its
// TIU commands and DDR bytes of its GDMA commands under the point's config.
struct LayerWork {
  double macs = 0, ddrBytes = 0;
};
Result<std::map<std::string, LayerWork>> layerWork(const std::string &bmodelPath, const isa::HwConfig &hw) {
  auto model = bmodel::readFile(bmodelPath);
  if (!model) return model.status();
  std::map<std::string, LayerWork> work;
  if (model->nets.empty()) return work;
  for (const bmodel::CmdGroup &g : model->nets[0].groups) {
    for (size_t i = 0; i < g.tiu.size(); ++i) {
      auto cmd = isa::decodeTiu(g.tiu[i].data());
      if (!cmd) return cmd.status();
      work[g.tiuLayer[i]].macs += double(timing::tiuCost(*cmd, hw).macs);
    }
    for (size_t i = 0; i < g.gdma.size(); ++i) {
      auto cmd = isa::decodeGdma(isa::GdmaRaw::decode(g.gdma[i].data()));
      if (!cmd) return cmd.status();
      auto cost = timing::gdmaCost(*cmd, hw);
      if (!cost) return cost.status();
      work[g.gdmaLayer[i]].ddrBytes += double(cost->ddrBytes);
    }
  }
  return work;
}

std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string optional(double v, int digits) { return v < 0 ? "" : fixed(v, digits); }

} // namespace

Json rowJson(const SweepRow &r, const std::vector<std::string> &hwKeys) {
  Json o;
  o["point"] = r.point.id();
  o["model"] = r.model;
  o["quantize"] = r.point.compile.quantize;
  o["layer_group"] = r.point.compile.layerGroup;
  for (const std::string &k : hwKeys) o[k] = hwValue(r.point.hardware.at(k));
  o["latency_us"] = r.latencyUs;
  o["total_cycles"] = r.totalCycles;
  o["tiu_utilization"] = r.tiuUtilization;
  o["gdma_utilization"] = r.gdmaUtilization;
  o["ddr_bytes"] = r.ddrBytes;
  o["lmem_peak_bytes"] = r.lmemPeakBytes < 0 ? Json(nullptr) : Json(r.lmemPeakBytes);
  o["compile_s"] = r.compileSeconds;
  o["sim_wall_s"] = r.simWallSeconds;
  o["chip"] = r.chip;
  o["bmodel"] = r.bmodel;
  o["error"] = r.error.empty() ? Json(nullptr) : Json(r.error);
  return o;
}

SweepRow blankRow(const Plan &plan, const SweepSpec &spec, size_t i) {
  SweepRow row;
  row.point = plan.points[i];
  row.model = spec.models[row.point.model].name;
  row.bmodel = plan.builds[plan.buildOf[i]].bmodel;
  row.chip = plan.builds[plan.buildOf[i]].chip;
  return row;
}

Result<SweepRow> readRow(const Plan &plan, const SweepSpec &spec, size_t i) {
  const std::string path = plan.rowPath(i);
  if (!fs::exists(path)) return makeError("not run yet (no ", path, ")");
  auto text = readTextFile(path);
  if (!text) return text.status();
  Json j = Json::parse(*text, nullptr, false);
  SweepRow row = blankRow(plan, spec, i);
  Json expected = rowJson(row, plan.hwKeys);
  for (const char *k : {"point", "model", "chip", "quantize", "layer_group", "bmodel"})
    if (j.is_discarded() || !j.is_object() || !j.contains(k) || j[k] != expected[k])
      return makeError(path, ": not this sweep's row (", k, " differs)");
  for (const std::string &k : plan.hwKeys)
    if (!j.contains(k) || !j[k].is_number() || j[k].get<double>() != row.point.hardware.at(k))
      return makeError(path, ": not this sweep's row (", k, " differs)");
  if (j.contains("error") && j["error"].is_string()) {
    row.error = j["error"].get<std::string>();
    return row;
  }
  auto num = [&](const char *k) -> Result<double> {
    if (!j.contains(k) || !j[k].is_number()) return makeError(path, ": '", k, "' is missing");
    return j[k].get<double>();
  };
  for (auto [key, field] :
       std::initializer_list<std::pair<const char *, double *>>{{"latency_us", &row.latencyUs},
                                                                {"total_cycles", &row.totalCycles},
                                                                {"tiu_utilization", &row.tiuUtilization},
                                                                {"gdma_utilization", &row.gdmaUtilization},
                                                                {"compile_s", &row.compileSeconds},
                                                                {"sim_wall_s", &row.simWallSeconds}}) {
    auto v = num(key);
    if (!v) return v.status();
    *field = *v;
  }
  auto ddr = num("ddr_bytes");
  if (!ddr) return ddr.status();
  row.ddrBytes = uint64_t(*ddr);
  row.lmemPeakBytes =
      j.contains("lmem_peak_bytes") && j["lmem_peak_bytes"].is_number() ? j["lmem_peak_bytes"].get<double>() : -1;
  return row;
}

void countFailures(SweepResult &result) {
  for (const SweepRow &r : result.rows)
    if (!r.error.empty() && result.failed++ == 0) result.firstFailure = r.point.id() + ": " + r.error;
}

Result<SweepResult> collectRows(const Plan &plan, const SweepSpec &spec, SweepResult result) {
  const std::string &out = plan.out;
  result.rows.clear();
  std::map<size_t, double> compileOf; // per build: the compile time, whichever task spent it
  for (size_t i = 0; i < plan.points.size(); ++i) {
    auto row = readRow(plan, spec, i);
    SweepRow r = row ? row.take() : blankRow(plan, spec, i);
    if (!row) r.error = row.message();
    compileOf[plan.buildOf[i]] = std::max(compileOf[plan.buildOf[i]], r.compileSeconds);
    result.rows.push_back(std::move(r));
  }
  for (size_t i = 0; i < plan.points.size(); ++i) result.rows[i].compileSeconds = compileOf[plan.buildOf[i]];
  countFailures(result);

  std::ostringstream csv, jsonl;
  csv << "point,model,quantize,layer_group";
  for (const std::string &k : plan.hwKeys) csv << ',' << k;
  csv << ",latency_us,total_cycles,tiu_utilization,gdma_utilization,ddr_bytes,lmem_peak_bytes,compile_s,sim_wall_s,"
         "chip,bmodel,error\n";
  for (const SweepRow &r : result.rows) {
    csv << r.point.id() << ',' << csvField(r.model) << ',' << r.point.compile.quantize << ','
        << (r.point.compile.layerGroup ? "on" : "off");
    for (const std::string &k : plan.hwKeys) {
      double v = r.point.hardware.at(k);
      csv << ',' << fixed(v, v == std::floor(v) ? 0 : 3);
    }
    if (r.error.empty())
      csv << ',' << fixed(r.latencyUs, 3) << ',' << fixed(r.totalCycles, 3) << ',' << fixed(r.tiuUtilization, 4) << ','
          << fixed(r.gdmaUtilization, 4) << ',' << r.ddrBytes << ',' << optional(r.lmemPeakBytes, 0) << ','
          << fixed(r.compileSeconds, 3) << ',' << fixed(r.simWallSeconds, 6);
    else
      csv << ",,,,,,," << fixed(r.compileSeconds, 3) << ',';
    csv << ',' << csvField(r.chip) << ',' << csvField(r.bmodel) << ',' << csvField(r.error) << '\n';
    jsonl << rowJson(r, plan.hwKeys).dump() << '\n';
  }
  auto write = [&](const std::string &name, const std::string &text) -> Status {
    TPU_RETURN_IF_ERROR(runtime::writeFileAtomically(out + "/" + name, text));
    result.files.push_back(out + "/" + name);
    return Status::ok();
  };
  TPU_RETURN_IF_ERROR(write("sweep.csv", csv.str()));
  TPU_RETURN_IF_ERROR(write("sweep.jsonl", jsonl.str()));

  // Latency vs DDR bandwidth: one series per model, compile options and the
  // other hardware values; failed points are left out.
  Plot lat{"latency_vs_ddr", "Latency vs DDR bandwidth", "DDR bandwidth (GB/s)", "latency (ms)", false, false, {}, {}};
  std::map<std::string, size_t> seriesOf;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const SweepPoint &p = plan.points[i];
    if (!result.rows[i].error.empty()) continue;
    std::string label = result.rows[i].model + " " + p.compile.key();
    for (const auto &[k, v] : p.hardware)
      if (k != "ddrBandwidthGBs") label += " " + k + "=" + fixed(v, v == std::floor(v) ? 0 : 2);
    auto [it, fresh] = seriesOf.emplace(label, lat.series.size());
    if (fresh) lat.series.push_back({label, {}, true, {}});
    lat.series[it->second].points.push_back({plan.configs[i].ddrBandwidthGBs, result.rows[i].latencyUs / 1e3});
  }
  for (PlotSeries &s : lat.series) std::sort(s.points.begin(), s.points.end());
  TPU_RETURN_IF_ERROR(write("latency_vs_ddr.svg", renderSvg(lat)));

  // Roofline per model and compile options, at its first point that ran: per
  // layer arithmetic intensity (ops per DDR byte) vs achieved GOPS, under the DDR roof.
  std::set<size_t> drawn;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const SweepPoint &p = plan.points[i];
    if (!result.rows[i].error.empty() || !drawn.insert(plan.buildOf[i]).second) continue;
    auto figures = readSimStatsFile(plan.stem(i) + ".stats.json");
    if (!figures) return figures.status();
    std::string name = result.rows[i].model + "_" + p.compile.key();
    // Per-layer work needs layer names on the commands: a bmodel without them (the BM1684X's) has no roofline.
    if (figures->layers.empty()) {
      result.notes.push_back("roofline_" + name + ".svg: not drawn: the " + result.rows[i].chip +
                             " bmodel's run has no per-layer times (its commands name no layers)");
      continue;
    }
    auto work = layerWork(result.rows[i].bmodel, plan.configs[i]);
    if (!work) return work.status();
    PlotSeries layers{"layers", {}, false, {}};
    for (const StatsSpan &layer : figures->layers) {
      const double us = (layer.end - layer.start) / figures->clockMhz;
      const std::string &name = layer.name;
      auto w = work->find(name);
      if (w == work->end() || w->second.macs <= 0 || w->second.ddrBytes <= 0 || us <= 0) continue;
      double ops = 2 * w->second.macs;
      layers.points.push_back({ops / w->second.ddrBytes, ops / (us * 1e3)});
      layers.tips.push_back(name + ": " + fixed(ops / w->second.ddrBytes, 2) + " ops/byte, " +
                            fixed(ops / (us * 1e3), 1) + " GOPS");
    }
    const isa::HwConfig &cfg = plan.configs[i];
    Plot roof{"roofline_" + name,
              "Roofline: " + name + " (point " + p.id() + ")",
              "arithmetic intensity (ops / DDR byte)",
              "achieved GOPS",
              true,
              true,
              {std::move(layers)},
              {{"DDR " + fixed(cfg.ddrBandwidthGBs, 1) + " GB/s", cfg.ddrBandwidthGBs, 0}}};
    TPU_RETURN_IF_ERROR(write("roofline_" + name + ".svg", renderSvg(roof)));
  }
  return result;
}

} // namespace tpu::explore
