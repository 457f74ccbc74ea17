#include "tools/explore/ProfileReport.h"

#include <gtest/gtest.h>

namespace {

using tpu::explore::renderProfileHtml;

const char *kStats = R"({
  "clock_mhz": 550, "total_cycles": 1100, "time_us": 2,
  "engines": {"tiu": {"commands": 2, "busy_cycles": 600, "waiting_cycles": 100, "idle_cycles": 400, "utilization": 0.545},
              "gdma": {"commands": 5, "busy_cycles": 800, "waiting_cycles": 0, "idle_cycles": 300, "utilization": 0.727}},
  "ddr": {"bytes": 4096, "payload_bytes": 4000, "average_gbs": 2.05},
  "groups": [{"index": 0, "start_cycle": 0, "end_cycle": 1100, "cycles": 1100, "tiu_commands": 2, "gdma_commands": 5,
              "tiu_busy_cycles": 600, "gdma_busy_cycles": 800}],
  "layers": [{"name": "conv<1>", "start_cycle": 0, "end_cycle": 300, "tiu_commands": 1, "gdma_commands": 3,
              "tiu_busy_cycles": 200, "gdma_busy_cycles": 280},
             {"name": "add1", "start_cycle": 300, "end_cycle": 1100, "tiu_commands": 1, "gdma_commands": 2,
              "tiu_busy_cycles": 400, "gdma_busy_cycles": 520}]
})";

TEST(ProfileReport, TablesTimelineAndSortedLayers) {
  auto html = renderProfileHtml(kStats, "", "run.stats.json");
  ASSERT_TRUE(html) << html.message();
  EXPECT_NE(html->find("<table id=\"layers\" class=\"sortable\">"), std::string::npos);
  EXPECT_NE(html->find("<svg id=\"timeline\""), std::string::npos);
  EXPECT_NE(html->find("<svg id=\"utilization\""), std::string::npos);
  // Layer names are escaped; the longest layer (add1, 800 cycles) comes first.
  auto conv = html->find("conv&lt;1&gt;"), add = html->find("<tr><td>add1</td>");
  ASSERT_NE(conv, std::string::npos);
  ASSERT_NE(add, std::string::npos);
  EXPECT_LT(add, html->find("<tr><td>conv&lt;1&gt;</td>"));
  // Span of add1: 800 cycles at 550 MHz.
  EXPECT_NE(html->find("<td data-v=\"1.455\">1.455</td>"), std::string::npos);
  // No network fetches.
  EXPECT_EQ(html->find("http://"), html->find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html->find("https://"), std::string::npos);
  EXPECT_EQ(html->find("src="), std::string::npos);
  EXPECT_NE(html->find("carry no LMEM"), std::string::npos);
}

TEST(ProfileReport, TraceAddsEngineRowsAndLmemShowsWhenPresent) {
  std::string stats = kStats;
  stats.replace(stats.find("\"cycles\": 1100"), 14, "\"cycles\": 1100, \"lmem_peak_bytes\": 65536");
  const char *trace = R"({"traceEvents": [
    {"name": "conv", "cat": "tiu", "ph": "X", "pid": 1, "tid": 1, "ts": 0.1, "dur": 0.5},
    {"name": "s2l", "cat": "gdma", "ph": "X", "pid": 1, "tid": 2, "ts": 0, "dur": 0.2},
    {"name": "DDR bandwidth", "ph": "C", "pid": 1, "ts": 0, "args": {"GB/s": 1}}]})";
  auto html = renderProfileHtml(stats, trace, "s.json");
  ASSERT_TRUE(html) << html.message();
  EXPECT_NE(html->find("data-lane=\"TIU\""), std::string::npos);
  EXPECT_NE(html->find("data-lane=\"GDMA\""), std::string::npos);
  EXPECT_NE(html->find("<svg id=\"lmem\""), std::string::npos);
  EXPECT_NE(html->find("<th>LMEM (KiB)</th>"), std::string::npos);
  EXPECT_NE(html->find("64.0 KiB"), std::string::npos);
}

TEST(ProfileReport, Deterministic) {
  auto a = renderProfileHtml(kStats, "", "x"), b = renderProfileHtml(kStats, "", "x");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, *b);
}

TEST(ProfileReport, BadInputsNameFileAndKey) {
  struct Case {
    std::string stats, message;
  } cases[] = {
      {"{", "s.json: not valid JSON"},
      {"[]", "s.json: the stats file must hold a JSON object"},
      {"{\"clock_mhz\": 550}", "s.json: missing key 'total_cycles'"},
      {std::string(kStats).replace(std::string(kStats).find("\"time_us\": 2"), 12, "\"time_us\": \"2\""),
       "s.json: key 'time_us' is not a number"},
      {std::string(kStats).replace(std::string(kStats).find("\"clock_mhz\": 550"), 16, "\"clock_mhz\": 0"),
       "s.json: clock_mhz must be positive"},
      {std::string(kStats).replace(std::string(kStats).find("\"name\": \"add1\""), 14, "\"name\": 7"),
       "s.json: key 'layers[1].name' is not a string"},
      {std::string(kStats).replace(std::string(kStats).find("\"utilization\": 0.727"), 20, "\"u\": 1"),
       "s.json: missing key 'engines.gdma.utilization'"},
  };
  for (const Case &c : cases) {
    auto html = renderProfileHtml(c.stats, "", "s.json");
    ASSERT_FALSE(html) << c.message;
    EXPECT_EQ(html.message(), c.message);
  }
  auto badTrace = renderProfileHtml(kStats, "{\"traceEvents\": 3}", "s.json");
  ASSERT_FALSE(badTrace);
  EXPECT_EQ(badTrace.message(), "s.json (trace): key 'traceEvents' is not an array");
  auto badEvent = renderProfileHtml(kStats, R"({"traceEvents": [{"cat": "tiu", "ph": "X", "ts": 1}]})", "s.json");
  ASSERT_FALSE(badEvent);
  EXPECT_EQ(badEvent.message(), "s.json (trace): missing key 'traceEvents[0].dur'");
}

TEST(ProfileReport, MissingFiles) {
  auto st = tpu::explore::writeProfileReport("/nonexistent/s.json", "", "/tmp/x.html");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "/nonexistent/s.json: cannot open");
}

} // namespace
