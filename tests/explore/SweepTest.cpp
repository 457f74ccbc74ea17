#include "tools/explore/JobPool.h"
#include "tools/explore/Plot.h"
#include "tools/explore/Sweep.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace tpu::explore;

// A directory with a stand-in model file (parseSweep only checks that files exist).
struct SweepDir : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sweep_test_" + std::to_string(::getpid()));
    fs::create_directories(dir / "cali");
    std::ofstream(dir / "m.bmodel") << "x";
    std::ofstream(dir / "net.onnx") << "x";
  }
  void TearDown() override { fs::remove_all(dir); }
  tpu::Result<SweepSpec> parse(const std::string &text) { return parseSweep(text, "s.json", dir.string()); }
  std::string error(const std::string &text) {
    auto r = parse(text);
    return r ? "parsed" : r.message();
  }
};

TEST_F(SweepDir, ParsesGridAndExpandsInFixedOrder) {
  auto spec = parse(R"({"models": [{"bmodel": "m.bmodel"},
                                    {"name": "net", "onnx": "net.onnx", "input_shapes": [[1,3,8,8]], "calibration": "cali"}],
                        "hardware": {"npuLanes": [32, 64], "ddrBandwidthGBs": [8, 16, 32]},
                        "compiler": {"quantize": ["F32", "INT8"], "layer_group": [true, false]}})");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_EQ(spec->models[0].name, "m");
  EXPECT_EQ(spec->models[0].bmodel, (dir / "m.bmodel").string());
  EXPECT_EQ(spec->models[1].inputShapes, "[[1,3,8,8]]");
  auto points = expandSweep(*spec);
  // bmodel: one variant x 6 hardware points; onnx: 4 variants x 6.
  ASSERT_EQ(points.size(), 6u + 24u);
  EXPECT_EQ(points[0].compile.key(), "given_lg");
  // Keys in name order, the last (npuLanes) varying fastest.
  EXPECT_EQ(points[0].hardware.at("ddrBandwidthGBs"), 8);
  EXPECT_EQ(points[0].hardware.at("npuLanes"), 32);
  EXPECT_EQ(points[1].hardware.at("npuLanes"), 64);
  EXPECT_EQ(points[2].hardware.at("ddrBandwidthGBs"), 16);
  EXPECT_EQ(points[6].compile.key(), "F32_lg");
  EXPECT_EQ(points[12].compile.key(), "F32_nolg");
  EXPECT_EQ(points[18].compile.key(), "INT8_lg");
  EXPECT_EQ(points[29].id(), "p0029");
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].index, i);
}

TEST_F(SweepDir, BadSweepFilesNameTheKeyOrFile) {
  const std::string m = R"("models": [{"bmodel": "m.bmodel"}])";
  EXPECT_EQ(error("{"), "s.json: not valid JSON");
  EXPECT_EQ(error("{" + m + ", \"hardwre\": {}}"),
            "s.json: unknown key 'hardwre' (known: models, hardware, compiler, base_config)");
  EXPECT_EQ(error("{\"models\": []}"), "s.json: 'models' must be a non-empty list");
  EXPECT_EQ(error(R"({"models": [{"bmodel": "missing.bmodel"}]})"),
            "s.json: models[0]: model file '" + (dir / "missing.bmodel").string() + "' not found");
  EXPECT_EQ(error(R"({"models": [{"bmodel": "m.bmodel", "onnx": "net.onnx"}]})"),
            "s.json: models[0]: give exactly one of 'bmodel' and 'onnx'");
  EXPECT_EQ(error(R"({"models": [{"bmodel": "m.bmodel", "shape": "x"}]})"),
            "s.json: models[0]: unknown key 'shape' (known: name, bmodel, onnx, input_shapes, calibration, inputs)");
  EXPECT_EQ(error(R"({"models": [{"bmodel": "m.bmodel"}, {"bmodel": "m.bmodel"}]})"),
            "s.json: models[1]: model name 'm' is used twice");
  EXPECT_EQ(error("{" + m + R"(, "hardware": {"npuLane": [32]}})"),
            "s.json: hardware.npuLane: unknown HwConfig key 'npuLane'");
  EXPECT_EQ(error("{" + m + R"(, "hardware": {"npuLanes": ["64"]}})"),
            "s.json: hardware.npuLanes: value \"64\" is not a number");
  EXPECT_EQ(error("{" + m + R"(, "hardware": {"npuLanes": []}})"),
            "s.json: hardware.npuLanes: must be a number or a non-empty list of numbers");
  // HwConfig's own checks: an integer key given a fraction, a value out of range.
  std::string frac = error("{" + m + R"(, "hardware": {"npuLanes": [32.5]}})");
  EXPECT_EQ(frac.rfind("s.json: hardware.npuLanes = 32.500000: ", 0), 0u) << frac;
  EXPECT_NE(frac.find("npuLanes"), frac.rfind("npuLanes")) << frac; // HwConfig names the key too
  std::string zero = error("{" + m + R"(, "hardware": {"ddrBandwidthGBs": [0]}})");
  EXPECT_EQ(zero.rfind("s.json: hardware.ddrBandwidthGBs = 0.000000: ", 0), 0u) << zero;
  EXPECT_EQ(error("{" + m + R"(, "compiler": {"quantize": ["F16"]}})"),
            "s.json: compiler.quantize: value \"F16\" is not F32 or INT8");
  EXPECT_EQ(error("{" + m + R"(, "compiler": {"layer_group": ["yes"]}})"),
            "s.json: compiler.layer_group: value \"yes\" is not true or false");
  EXPECT_EQ(error("{" + m + R"(, "compiler": {"batch": [1]}})"),
            "s.json: compiler.batch: unknown compiler option 'batch' (known: quantize, layer_group)");
  EXPECT_EQ(error(R"({"models": [{"onnx": "net.onnx"}], "compiler": {"quantize": "INT8"}})"),
            "s.json: model 'net': INT8 needs a 'calibration' directory of .npz samples");
  std::string base = error("{" + m + R"(, "base_config": "nope.json"})");
  EXPECT_EQ(base.rfind("s.json: base_config: ", 0), 0u) << base;
}

TEST(JobPool, OutcomesInJobOrderWithExitCodesAndLogs) {
  fs::path dir = fs::temp_directory_path() / ("jobpool_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<Job> jobs;
  // Later jobs finish first; outcome i still belongs to job i.
  for (int i = 0; i < 4; ++i)
    jobs.push_back({{"/bin/sh", "-c", "sleep 0." + std::to_string(4 - i) + "; echo job" + std::to_string(i) +
                                          "; exit " + std::to_string(i)},
                    (dir / ("j" + std::to_string(i) + ".log")).string()});
  size_t lastDone = 0;
  auto out = runJobs(jobs, 3, [&](size_t done, size_t total) {
    EXPECT_EQ(total, 4u);
    EXPECT_GE(done, lastDone);
    lastDone = done;
  });
  ASSERT_TRUE(out) << out.message();
  EXPECT_EQ(lastDone, 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ((*out)[i].exitCode, i);
    EXPECT_EQ(lastLine(jobs[i].logPath), "job" + std::to_string(i));
  }
  auto bad = runJobs({{{"/nonexistent/tool"}, (dir / "x.log").string()}}, 1, nullptr);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.message().rfind("cannot start /nonexistent/tool: ", 0), 0u);
  fs::remove_all(dir);
}

TEST(JobPool, ShellQuoting) {
  EXPECT_EQ(shellQuote("a/b.json"), "a/b.json");
  EXPECT_EQ(shellQuote("[[1,3,224,224]]"), "'[[1,3,224,224]]'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(commandLine({"tpuc", "sim", "a b"}), "tpuc sim 'a b'");
}

TEST(Plot, SvgHasSeriesRoofAndEscapedLabels) {
  Plot p{"lat", "t<1>", "x", "y", true, true, {{"a&b", {{1, 10}, {10, 100}}, true, {}}}, {{"DDR 32 GB/s", 32, 0}}};
  std::string svg = renderSvg(p);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"lat\"", 0), 0u);
  EXPECT_NE(svg.find("t&lt;1&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a&amp;b"), std::string::npos);
  EXPECT_NE(svg.find("class=\"roof\""), std::string::npos);
  EXPECT_EQ(svg, renderSvg(p));
}

} // namespace
