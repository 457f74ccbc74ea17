#include "kernels/Compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace tpu::kernels {

CompareStats compareTensors(const float *a, const float *b, int64_t n) {
  CompareStats s;
  double dot = 0, na = 0, nb = 0, diff2 = 0, mid2 = 0;
  double sumA = 0, sumA2 = 0, sumD = 0, sumD2 = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    bool nx = std::isnan(x), ny = std::isnan(y);
    if (nx || ny) {
      // NaN in the same place on both sides agrees; anything else differs.
      if (nx != ny) ++s.nanMismatch;
      continue;
    }
    double d = x - y, m = (x + y) / 2;
    dot += x * y;
    na += x * x;
    nb += y * y;
    diff2 += d * d;
    mid2 += m * m;
    sumA += x;
    sumA2 += x * x;
    sumD += d;
    sumD2 += d * d;
    s.maxAbsDiff = std::max(s.maxAbsDiff, std::fabs(d));
    ++counted;
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (na == 0 && nb == 0)
    s.cosine = 1;
  else if (na == 0 || nb == 0)
    s.cosine = 0;
  else
    s.cosine = dot / (std::sqrt(na) * std::sqrt(nb));
  if (diff2 == 0)
    s.euclidean = 1;
  else if (mid2 == 0)
    s.euclidean = 0;
  else
    s.euclidean = 1 - std::sqrt(diff2) / std::sqrt(mid2);
  if (counted == 0) {
    s.sqnrDb = inf;
  } else {
    double varA = sumA2 / counted - (sumA / counted) * (sumA / counted);
    double varD = sumD2 / counted - (sumD / counted) * (sumD / counted);
    if (varD <= 0)
      s.sqnrDb = diff2 == 0 ? inf : 10 * std::log10(varA / (diff2 / counted));
    else
      s.sqnrDb = 10 * std::log10(std::max(varA, 0.0) / varD);
  }
  if (s.nanMismatch) {
    s.cosine = std::min(s.cosine, 0.0);
    s.euclidean = std::min(s.euclidean, 0.0);
  }
  return s;
}

} // namespace tpu::kernels

namespace tpu::kernels {

bool CompareReport::allPass() const {
  for (const auto &r : rows)
    if (!r.pass) return false;
  return true;
}

Result<CompareReport> compareArchives(const NpzMap &a, const NpzMap &b, const CompareOptions &options) {
  CompareReport report;
  std::set<std::string> skip(options.except.begin(), options.except.end());
  std::vector<std::string> selected;
  if (!options.names.empty()) {
    for (const std::string &name : options.names) {
      if (!a.count(name)) return makeError("tensor '", name, "' is not in the first file");
      if (!b.count(name)) return makeError("tensor '", name, "' is not in the second file");
      if (!skip.count(name)) selected.push_back(name);
    }
  } else {
    for (const auto &[name, arr] : a) {
      if (!b.count(name))
        report.onlyInA.push_back(name);
      else if (!skip.count(name))
        selected.push_back(name);
    }
    for (const auto &[name, arr] : b)
      if (!a.count(name)) report.onlyInB.push_back(name);
  }
  if (selected.empty()) return makeError("no common tensor to compare");
  for (const std::string &name : selected) {
    const NpyArray &x = a.at(name), &y = b.at(name);
    if (x.shape != y.shape)
      return makeError("tensor '", name, "' has shape ", shapeToString(x.shape), " in the first file but ",
                       shapeToString(y.shape), " in the second");
    std::vector<float> fx = x.toFloat(), fy = y.toFloat();
    CompareRow row;
    row.name = name;
    row.shape = x.shape;
    row.stats = compareTensors(fx.data(), fy.data(), static_cast<int64_t>(fx.size()));
    row.pass = row.stats.cosine >= options.minCosine && row.stats.euclidean >= options.minEuclidean &&
               row.stats.nanMismatch == 0;
    report.rows.push_back(std::move(row));
  }
  return report;
}

std::string formatReport(const CompareReport &report, const CompareOptions &options) {
  size_t width = 6;
  for (const auto &r : report.rows) width = std::max(width, r.name.size());
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-16s %10s %10s %9s %12s  %s\n", int(width), "tensor", "shape", "cosine",
                "euclid", "sqnr_db", "max_abs_diff", "result");
  out += line;
  size_t failed = 0;
  for (const auto &r : report.rows) {
    char sqnr[32];
    if (std::isinf(r.stats.sqnrDb))
      std::snprintf(sqnr, sizeof sqnr, "inf");
    else
      std::snprintf(sqnr, sizeof sqnr, "%.2f", r.stats.sqnrDb);
    std::snprintf(line, sizeof line, "%-*s  %-16s %10.6f %10.6f %9s %12.6g  %s\n", int(width), r.name.c_str(),
                  shapeToString(r.shape).c_str(), r.stats.cosine, r.stats.euclidean, sqnr, r.stats.maxAbsDiff,
                  r.pass ? "PASS" : (r.stats.nanMismatch ? "FAIL (NaN)" : "FAIL"));
    out += line;
    failed += !r.pass;
  }
  std::snprintf(line, sizeof line, "%zu compared, %zu passed, %zu failed (tolerance cosine %.6g, euclid %.6g)",
                report.rows.size(), report.rows.size() - failed, failed, options.minCosine, options.minEuclidean);
  out += line;
  if (!report.onlyInA.empty() || !report.onlyInB.empty())
    out += "; only in first: " + std::to_string(report.onlyInA.size()) +
           ", only in second: " + std::to_string(report.onlyInB.size());
  out += "\n";
  return out;
}

} // namespace tpu::kernels
