// Fits timing parameters once, on a whole set of compiled models with
// published latencies, and predicts each model left out of its own fit.
//
//   fit_timing manifest.tsv [--chip bm1684|bm1684x] [--config hw.json] [--fit name:lo:hi,...] [--no-loo]
//              [--max-evals N] [--overlap compiled|prefetch|group|program]
//
// --chip names the chip of the manifest's bmodels (each is checked): its preset (isa/chips/Registry.h) is
// the configuration --config and the fit override. BM1684X rows are priced by timing/bm1684x on the same
// schedule.
// manifest rows (tab-separated): model, mode, batch, published ms per image,
// bmodel path, and optionally the model's family (default: the model). The bmodels' commands are decoded once; each
// trial parameter vector is priced by the timing library (tiuCost, gdmaCost, syncCost) on the cmd-id schedule
// (timing::scheduleCycles), which is what the compiler's cost model computes and what the SystemC model simulates for a
// program with one GDMA engine (docs/timing.md, "Golden timing tests": equal to 1/1000 cycle). The objective is the sum
// of squared log errors log(simulated / published) over all rows, minimised by Nelder-Mead inside the [lo, hi] box of
// each parameter (a value outside is clamped), from
// --config's values and from the box centre, each restarted twice. Leave-one-model-out: for each model, the same fit
// on the other models' rows predicts its rows; it starts from three fixed points of the box (a quarter, half and
// three quarters of each range), not from the in-sample optimum or --config's values (the defaults are that
// optimum), which have seen the model. Leave-one-family-out: the same with all
// models of a family left out at once (the YOLOs), so a family cannot vouch
// for its own members.
// Prints one JSON object: fitted values, per row simulated ms per image in
// sample, with its model left out and with its family left out, and the
// objective. --overlap prices the rows under a
// counterfactual overlap of the two engines instead (Overlap below).
#include "isa/GdmaCommand.h"
#include "isa/HwConfig.h"
#include "isa/ProgramOrder.h"
#include "isa/TiuCommand.h"
#include "isa/bm1684x/Command.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/chips/Registry.h"
#include "memory/GdmaAccess.h"
#include "support/ParseNumber.h"
#include "timing/GdmaTiming.h"
#include "timing/Schedule.h"
#include "timing/TiuTiming.h"
#include "timing/bm1684x/CommandCost.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace tpu;

namespace {

struct Group {
  std::vector<isa::OrderedCommand> order;
  std::vector<isa::TiuCommand> tiu;
  std::vector<sim::GdmaAccess> gdma;
  std::vector<bool> weightLoad; // per GDMA command: a load from the coefficients into LMEM
  std::vector<isa::SyncIds> tiuIds, gdmaIds;
  // A BM1684X group's commands as their work (then tiu, gdma and weightLoad are empty).
  std::vector<timing::bm1684x::CommandWork> xTiu, xDma;
};

// How the engines' work is overlapped when a row is priced (--overlap). Only
// `compiled` is what the bmodel does; the others are counterfactual bounds
// for compiler changes that overlap more (docs/timing.md):
//   prefetch: each command group's weight loads run in the previous group's
//             GDMA idle time as far as it lasts (TPU-MLIR's group overlap
//             with unlimited local memory);
//   group:    each command group takes max(TIU busy, GDMA busy);
//   program:  the program takes max(TIU busy, GDMA busy) over all groups.
enum class Overlap { Compiled, Prefetch, Group, Program };

struct Row {
  std::string model, mode, family;
  int batch = 1;
  double publishedMs = 0;
  std::vector<Group> groups;
};

struct Param {
  std::string name;
  double lo = 0, hi = 0;
};

int fail(const std::string &msg) {
  std::cerr << "fit_timing: error: " << msg << "\n";
  return 2;
}

Result<Row> loadRow(const std::string &line, const isa::HwConfig &hw, isa::Chip rowChip) {
  std::istringstream is(line);
  Row r;
  std::string path;
  if (!std::getline(is, r.model, '\t') || !std::getline(is, r.mode, '\t') || !(is >> r.batch) ||
      !(is >> r.publishedMs) || !(is >> path))
    return makeError("expected model, mode, batch, published ms, bmodel path[, family]");
  if (!(is >> r.family)) r.family = r.model;
  if (r.batch < 1 || !(r.publishedMs > 0)) return makeError("batch and published ms must be positive");
  Result<bmodel::Model> m = bmodel::readFile(path, nullptr, bmodel::ChipScope::AnyKnown);
  if (!m) return m.status();
  const isa::ChipInfo *chip = isa::chipByBmodelName(m->chip);
  if (!chip || chip->chip != rowChip)
    return makeError(path, ": a ", m->chip, " bmodel, the manifest's chip is ", isa::chipInfo(rowChip).bmodelName);
  for (const bmodel::Net &net : m->nets)
    for (const bmodel::CmdGroup &cg : net.groups) {
      if (rowChip == isa::Chip::BM1684X) {
        Group g;
        auto tiu = isa::bm1684x::decodeBuffer(isa::Engine::Tiu, cg.tiuStream.data(), cg.tiuStream.size());
        auto dma = isa::bm1684x::decodeBuffer(isa::Engine::Gdma, cg.gdmaStream.data(), cg.gdmaStream.size());
        if (!tiu || !dma) return Status(!tiu ? tiu.status() : dma.status()).prefix(path);
        // The schedule indexes commands by id: ids must be queue positions + 1, as tpuc writes them.
        for (auto [queue, other] : {std::pair{&*tiu, &*dma}, std::pair{&*dma, &*tiu}})
          for (size_t i = 0; i < queue->size(); ++i)
            if ((*queue)[i].id() != i + 1 || (*queue)[i].waitId() > other->size())
              return makeError(path, ": command ids are not queue positions (", (*queue)[i].op().mnemonic, " #", i,
                               " has id ", (*queue)[i].id(), ")");
        auto order = isa::bm1684x::programOrder(*tiu, *dma);
        if (!order) return Status(order.status()).prefix(path);
        g.order = std::move(*order);
        for (auto [commands, work, ids] :
             {std::tuple{&*tiu, &g.xTiu, &g.tiuIds}, std::tuple{&*dma, &g.xDma, &g.gdmaIds}})
          for (const isa::bm1684x::Command &c : *commands) {
            auto w = timing::bm1684x::commandWork(c, hw);
            if (!w) return Status(w.status()).prefix(path);
            work->push_back(*w);
            ids->push_back({c.id(), c.waitId()});
          }
        r.groups.push_back(std::move(g));
        continue;
      }
      Group g;
      for (const auto &bytes : cg.tiu) {
        Result<isa::TiuCommand> c = isa::decodeTiu(bytes.data());
        if (!c) return Status(c.status()).prefix(path);
        g.tiuIds.push_back({c->cmdIdTpu, c->cmdIdGdma});
        g.tiu.push_back(*c);
      }
      for (const auto &bytes : cg.gdma) {
        Result<isa::GdmaCommand> c = isa::decodeGdma(isa::GdmaRaw::decode(bytes.data()));
        if (!c) return Status(c.status()).prefix(path);
        g.weightLoad.push_back(c->direction == isa::GdmaDirection::S2L && c->src.addr >= net.coeffAddr &&
                               c->src.addr < net.coeffAddr + net.coeff.size());
        Result<sim::GdmaAccess> a = sim::gdmaAccess(hw, *c);
        if (!a) return Status(a.status()).prefix(path);
        g.gdmaIds.push_back({c->cmdId, c->eng0SyncId});
        g.gdma.push_back(*a);
      }
      auto order = isa::programOrder(g.tiuIds, g.gdmaIds);
      if (!order) return Status(order.status()).prefix(path);
      g.order = std::move(*order);
      r.groups.push_back(std::move(g));
    }
  return r;
}

// Simulated ms per image of one row under `hw`.
double msPerImage(const Row &r, const isa::HwConfig &hw, Overlap overlap = Overlap::Compiled) {
  const double bw = timing::ddrBytesPerCycle(hw);
  double cycles = 0, tiuBusy = 0, gdmaBusy = 0, idle = 0;
  std::vector<timing::ScheduledCommand> tiu, gdma;
  auto busy = [](const std::vector<timing::ScheduledCommand> &q) {
    double s = 0;
    for (const auto &c : q) s += c.cycles;
    return s;
  };
  // A command's whole duration: its sync cost (timing::syncCost) and its own cycles.
  auto schedule = [&hw](const std::vector<isa::SyncIds> &ids, size_t i, double own) {
    const uint32_t w = ids[i].waitId;
    return timing::ScheduledCommand{w, timing::syncCost(w, i ? ids[i - 1].waitId : 0, hw) + own};
  };
  for (const Group &g : r.groups) {
    tiu.resize(g.tiuIds.size());
    gdma.resize(g.gdmaIds.size());
    if (!g.xTiu.empty() || !g.xDma.empty()) { // BM1684X: each command's cost from timing/bm1684x
      for (auto [work, ids, queue] : {std::tuple{&g.xTiu, &g.tiuIds, &tiu}, std::tuple{&g.xDma, &g.gdmaIds, &gdma}})
        for (size_t i = 0; i < work->size(); ++i) {
          const timing::bm1684x::CommandCost cost = timing::bm1684x::costOf((*work)[i], hw);
          (*queue)[i] = schedule(*ids, i, cost.latencyCycles + std::max(cost.dataCycles, double(cost.ddrBytes) / bw));
        }
    } else {
      for (size_t i = 0; i < g.tiu.size(); ++i) tiu[i] = schedule(g.tiuIds, i, double(timing::cycles(g.tiu[i], hw)));
      for (size_t i = 0; i < g.gdma.size(); ++i)
        gdma[i] = schedule(g.gdmaIds, i, timing::gdmaCost(g.gdma[i], hw).cycles(bw));
    }
    if (overlap == Overlap::Prefetch) // weights already loaded in the previous group's idle time
      for (size_t i = 0; i < g.weightLoad.size() && idle > 0; ++i)
        if (g.weightLoad[i]) {
          const double hidden = std::min(idle, gdma[i].cycles);
          gdma[i].cycles -= hidden, idle -= hidden;
        }
    const double t = busy(tiu), d = busy(gdma), span = timing::scheduleCycles(g.order, tiu, gdma);
    tiuBusy += t, gdmaBusy += d, idle = span - d;
    cycles += overlap == Overlap::Group ? std::max(t, d) : span;
  }
  if (overlap == Overlap::Program) cycles = std::max(tiuBusy, gdmaBusy);
  return cycles / hw.clockMhz / 1e3 / r.batch;
}

struct Fitter {
  nlohmann::json base; // the configuration the fitted values override
  std::vector<Param> params;
  std::vector<const Row *> rows;
  Overlap overlap = Overlap::Compiled;

  isa::HwConfig config(const std::vector<double> &x) const {
    nlohmann::json j = base;
    for (size_t i = 0; i < params.size(); ++i) {
      const bool integral = base.contains(params[i].name) && base[params[i].name].is_number_integer();
      if (integral) j[params[i].name] = (long long)std::llround(x[i]);
      else j[params[i].name] = x[i];
    }
    return *isa::HwConfig::fromJson(j.dump(), "fit");
  }
  std::vector<double> clamp(std::vector<double> x) const {
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::clamp(x[i], params[i].lo, params[i].hi);
    return x;
  }
  double objective(const std::vector<double> &x) const {
    isa::HwConfig hw = config(clamp(x));
    double s = 0;
    for (const Row *r : rows) {
      const double e = std::log(msPerImage(*r, hw, overlap) / r->publishedMs);
      s += e * e;
    }
    return s;
  }
  // Nelder-Mead from x0, initial steps a fifth of each box.
  std::vector<double> minimise(std::vector<double> x0, int maxEvals) const {
    const size_t n = x0.size();
    if (n == 0) return x0;
    std::vector<std::vector<double>> p(n + 1, x0);
    for (size_t i = 0; i < n; ++i) {
      const double step = (params[i].hi - params[i].lo) / 5;
      p[i + 1][i] = x0[i] + step <= params[i].hi ? x0[i] + step : x0[i] - step;
    }
    std::vector<double> f(n + 1);
    for (size_t i = 0; i <= n; ++i) f[i] = objective(p[i]);
    int evals = int(n + 1);
    while (evals < maxEvals) {
      std::vector<size_t> idx(n + 1);
      for (size_t i = 0; i <= n; ++i) idx[i] = i;
      std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
      const size_t best = idx[0], worst = idx[n], second = idx[n - 1];
      if (f[worst] - f[best] < 1e-9 * (1 + f[best])) break;
      std::vector<double> c(n, 0);
      for (size_t k = 0; k < n; ++k)
        for (size_t i : idx)
          if (i != worst) c[k] += p[i][k] / n;
      auto along = [&](double t) {
        std::vector<double> q(n);
        for (size_t k = 0; k < n; ++k) q[k] = c[k] + t * (p[worst][k] - c[k]);
        return clamp(q);
      };
      std::vector<double> r = along(-1);
      double fr = objective(r);
      ++evals;
      if (fr < f[best]) {
        std::vector<double> e = along(-2);
        double fe = objective(e);
        ++evals;
        if (fe < fr) p[worst] = e, f[worst] = fe;
        else p[worst] = r, f[worst] = fr;
      } else if (fr < f[second]) {
        p[worst] = r, f[worst] = fr;
      } else {
        std::vector<double> k = along(fr < f[worst] ? -0.5 : 0.5);
        double fk = objective(k);
        ++evals;
        if (fk < std::min(fr, f[worst])) {
          p[worst] = k, f[worst] = fk;
        } else { // shrink towards the best
          for (size_t i : idx) {
            if (i == best) continue;
            for (size_t d = 0; d < n; ++d) p[i][d] = p[best][d] + 0.5 * (p[i][d] - p[best][d]);
            f[i] = objective(p[i]);
            ++evals;
          }
        }
      }
    }
    size_t best = size_t(std::min_element(f.begin(), f.end()) - f.begin());
    return clamp(p[best]);
  }
};

} // namespace

int main(int argc, char **argv) {
  std::string manifest, configPath, fitSpec, overlapName = "compiled", chipName = "bm1684";
  bool loo = true;
  int maxEvals = 600;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--config") configPath = value();
    else if (a == "--chip")
      chipName = value();
    else if (a == "--fit") fitSpec = value();
    else if (a == "--no-loo") loo = false;
    else if (a == "--overlap") overlapName = value();
    else if (a == "--max-evals") {
      double v = 0;
      if (!parseNumber(value(), v) || v < 1 || v != std::floor(v)) return fail("--max-evals takes a positive integer");
      maxEvals = int(v);
    }
    else if (manifest.empty() && a[0] != '-') manifest = a;
    else return fail("unknown argument '" + a + "'");
  }
  if (manifest.empty())
    return fail(
        "usage: fit_timing manifest.tsv [--chip bm1684|bm1684x] [--config hw.json] [--fit name:lo:hi,...] [--no-loo] "
        "[--max-evals N] [--overlap compiled|prefetch|group|program]");
  auto chip = isa::parseChip(chipName);
  if (!chip) return fail("--chip: " + chip.message());
  isa::HwConfig hw = isa::chipInfo(*chip).hwConfig();
  if (!configPath.empty()) {
    auto c = isa::HwConfig::load(configPath, hw);
    if (!c) return fail(c.message());
    hw = *c;
  }
  Fitter fit;
  const std::pair<const char *, Overlap> overlaps[] = {
      {"compiled", Overlap::Compiled}, {"prefetch", Overlap::Prefetch}, {"group", Overlap::Group}, {"program", Overlap::Program}};
  auto named = std::find_if(std::begin(overlaps), std::end(overlaps), [&](auto &o) { return overlapName == o.first; });
  if (named == std::end(overlaps))
    return fail("--overlap '" + overlapName + "': expected compiled, prefetch, group or program");
  fit.overlap = named->second;
  fit.base = nlohmann::json::parse(hw.toJson());
  std::istringstream spec(fitSpec);
  for (std::string item; std::getline(spec, item, ',');) {
    Param p;
    std::istringstream is(item);
    std::string lo, hi;
    if (!std::getline(is, p.name, ':') || !std::getline(is, lo, ':') || !std::getline(is, hi))
      return fail("--fit '" + item + "': expected name:lo:hi");
    if (!fit.base.contains(p.name)) return fail("--fit: unknown hardware parameter '" + p.name + "'");
    if (!parseNumber(lo, p.lo) || !parseNumber(hi, p.hi)) return fail("--fit '" + item + "': lo and hi must be numbers");
    if (!(p.lo <= p.hi)) return fail("--fit '" + item + "': lo > hi");
    for (double end : {p.lo, p.hi}) { // every value in the box must make a valid configuration
      nlohmann::json j = fit.base;
      j[p.name] = fit.base[p.name].is_number_integer() ? nlohmann::json((long long)std::llround(end)) : nlohmann::json(end);
      auto c = isa::HwConfig::fromJson(j.dump(), "--fit '" + item + "'");
      if (!c) return fail(c.message());
    }
    fit.params.push_back(p);
  }
  if (fit.params.size() > 8) return fail("at most eight fitted parameters");
  if (*chip == isa::Chip::BM1684X && fit.overlap == Overlap::Prefetch)
    return fail("--overlap prefetch: BM1684X rows do not mark their weight loads");
  if (*chip == isa::Chip::BM1684X) // a BM1684X command's work is computed once, under the base configuration
    for (const Param &p : fit.params)
      for (const char *fixed : {"npuLanes", "euBytes", "cubePixels", "icParallelBytes", "divideCycles"})
        if (p.name == fixed)
          return fail("--fit " + p.name + ": the BM1684X rows' work depends on it, it cannot be fitted");

  std::ifstream in(manifest);
  if (!in) return fail(manifest + ": cannot open");
  std::vector<Row> rows;
  int lineNo = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNo;
    if (line.empty()) continue;
    auto r = loadRow(line, hw, *chip);
    if (!r) return fail(manifest + ":" + std::to_string(lineNo) + ": " + r.message());
    rows.push_back(std::move(*r));
  }
  for (const Row &r : rows) fit.rows.push_back(&r);
  std::vector<double> x0;
  for (const Param &p : fit.params) x0.push_back(std::clamp(fit.base[p.name].get<double>(), p.lo, p.hi));
  // Nelder-Mead restarted from its own optimum (a fresh simplex escapes the
  // collapsed one), and from the box centre: the better one is the fit.
  auto restarted = [&](const Fitter &f, std::vector<double> start, int evals) {
    for (int round = 0; round < 3; ++round) start = f.minimise(start, evals);
    return start;
  };
  // The point at `share` of each parameter's range.
  auto boxPoint = [&](double share) {
    std::vector<double> v;
    for (const Param &p : fit.params) v.push_back(p.lo + (p.hi - p.lo) * share);
    return v;
  };
  // The best optimum reached from these starts (the first on a tie).
  auto fitFromStarts = [&](const Fitter &f, const std::vector<std::vector<double>> &starts, int evals) {
    std::vector<double> best;
    double bestObjective = std::numeric_limits<double>::infinity();
    for (const auto &s : starts) {
      std::vector<double> x = restarted(f, s, evals);
      if (const double o = f.objective(x); o < bestObjective) best = std::move(x), bestObjective = o;
    }
    return best;
  };
  std::vector<double> x = fitFromStarts(fit, {x0, boxPoint(0.5)}, maxEvals);
  const isa::HwConfig fitted = fit.config(x);

  nlohmann::ordered_json out;
  for (size_t i = 0; i < fit.params.size(); ++i) out["fitted"][fit.params[i].name] = nlohmann::json::parse(fitted.toJson())[fit.params[i].name];
  out["objective"] = fit.objective(x);
  // Each row predicted by the fit on the rows whose key (model or family)
  // differs from its own; rows `skip` keeps out of it stay NaN.
  auto leftOut = [&](std::string Row::*key, auto skip) {
    std::vector<double> ms(rows.size(), std::nan(""));
    std::vector<std::string> keys;
    for (const Row &r : rows)
      if (!skip(r) && std::find(keys.begin(), keys.end(), r.*key) == keys.end()) keys.push_back(r.*key);
    for (const std::string &k : keys) {
      Fitter sub = fit;
      sub.rows.clear();
      for (const Row &r : rows)
        if (r.*key != k) sub.rows.push_back(&r);
      const isa::HwConfig without =
          sub.config(fitFromStarts(sub, {boxPoint(0.25), boxPoint(0.5), boxPoint(0.75)}, maxEvals));
      for (size_t i = 0; i < rows.size(); ++i)
        if (rows[i].*key == k) ms[i] = msPerImage(rows[i], without, fit.overlap);
    }
    return ms;
  };
  const bool refit = loo && !fit.params.empty();
  std::vector<double> looMs(rows.size(), std::nan("")), lofoMs = looMs;
  if (refit) {
    looMs = leftOut(&Row::model, [](const Row &) { return false; });
    // A family of one model is its model: its left-out fit is the model's.
    auto alone = [&](const Row &r) {
      return std::none_of(rows.begin(), rows.end(),
                          [&](const Row &o) { return o.family == r.family && o.model != r.model; });
    };
    lofoMs = leftOut(&Row::family, alone);
    for (size_t i = 0; i < rows.size(); ++i)
      if (alone(rows[i])) lofoMs[i] = looMs[i];
  }
  auto orSample = [](double leftOutMs, double ms) { return std::isnan(leftOutMs) ? ms : leftOutMs; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const double ms = msPerImage(rows[i], fitted, fit.overlap);
    nlohmann::ordered_json j{{"model", rows[i].model}, {"mode", rows[i].mode}, {"published_ms", rows[i].publishedMs},
                             {"simulated_ms", ms}};
    j["loo_ms"] = orSample(looMs[i], ms);
    j["lofo_ms"] = orSample(lofoMs[i], ms);
    out["rows"].push_back(j);
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}
