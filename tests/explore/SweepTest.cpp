#include "tools/explore/Sweep.h"
#include "isa/bmodel/Bmodel.h"
#include "tools/explore/Cluster.h"
#include "tools/explore/JobPool.h"
#include "tools/explore/Plot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace tpu::explore;

// A directory with model files: empty bmodels of each chip (parseSweep reads their chip) and a stand-in
// ONNX file (parseSweep only checks that it exists).
struct SweepDir : ::testing::Test {
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("sweep_test_" + std::to_string(::getpid()));
    fs::create_directories(dir / "cali");
    tpu::bmodel::Model m;
    ASSERT_TRUE(tpu::bmodel::writeFile(m, (dir / "m.bmodel").string()).isOk());
    m.chip = "BM1684X";
    ASSERT_TRUE(tpu::bmodel::writeFile(m, (dir / "x.bmodel").string()).isOk());
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

// The chip is a compile option of ONNX models; a ready bmodel runs on its own chip, and every point's
// config starts from its chip's preset (isa::ChipInfo::hwConfig).
TEST_F(SweepDir, ChipIsACompileOptionAndPointsStartFromTheChipPreset) {
  auto spec = parse(R"({"models": [{"bmodel": "x.bmodel"}, {"name": "net", "onnx": "net.onnx"}],
                        "hardware": {"ddrBandwidthGBs": [8]},
                        "compiler": {"chip": ["bm1684", "bm1684x"], "layer_group": [true, false]}})");
  ASSERT_TRUE(spec) << spec.message();
  EXPECT_EQ(spec->models[0].chip, "BM1684X");
  auto points = expandSweep(*spec);
  ASSERT_EQ(points.size(), 1u + 4u);
  EXPECT_EQ(points[0].compile.key(), "given_lg");
  EXPECT_EQ(points[1].compile.key(), "F32_lg_bm1684");
  EXPECT_EQ(points[2].compile.key(), "F32_nolg_bm1684");
  EXPECT_EQ(points[3].compile.key(), "F32_lg_bm1684x");
  EXPECT_EQ(pointChip(*spec, points[0]).bmodelName, "BM1684X");
  EXPECT_EQ(pointChip(*spec, points[1]).bmodelName, "BM1684");
  EXPECT_EQ(pointChip(*spec, points[4]).bmodelName, "BM1684X");
  const tpu::isa::ChipInfo &x = pointChip(*spec, points[0]);
  auto base = baseConfig("", x);
  ASSERT_TRUE(base) << base.message();
  auto cfg = pointConfig(*base, points[0].hardware, "p0");
  ASSERT_TRUE(cfg) << cfg.message();
  tpu::isa::HwConfig preset = x.hwConfig();
  EXPECT_EQ(cfg->ddrBandwidthGBs, 8);
  EXPECT_EQ(cfg->npuLanes, preset.npuLanes);
  EXPECT_EQ(cfg->clockMhz, preset.clockMhz);
  // Without compiler.chip an ONNX model compiles as tpuc deploy does by default, without --chip.
  auto plain = parse(R"({"models": [{"onnx": "net.onnx"}]})");
  ASSERT_TRUE(plain) << plain.message();
  EXPECT_EQ(expandSweep(*plain)[0].compile.key(), "F32_lg");
  EXPECT_EQ(expandSweep(*plain)[0].compile.chip, "");
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
            "s.json: compiler.batch: unknown compiler option 'batch' (known: quantize, layer_group, chip)");
  EXPECT_EQ(error("{" + m + R"(, "compiler": {"chip": ["bm1688"]}})"),
            "s.json: compiler.chip: unknown chip 'bm1688' (bm1684, bm1684x)");
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

TEST(SweepPoints, ListsParseAndFormat) {
  EXPECT_EQ(*parsePointList("0-3,7", 8), (std::vector<size_t>{0, 1, 2, 3, 7}));
  EXPECT_EQ(*parsePointList("5", 8), (std::vector<size_t>{5}));
  EXPECT_EQ(formatPointList({0, 1, 2, 3, 7, 9, 10}), "0-3,7,9-10");
  EXPECT_EQ(formatPointList({4}), "4");
  EXPECT_EQ(parsePointList("2-9", 8).message(), "point 9 is out of range (the sweep has 8 points)");
  for (const char *bad : {"", "3-1", "a", "1,,2", "-2", "1-", "1 2"})
    EXPECT_EQ(parsePointList(bad, 8).message(), "'" + std::string(bad) + "' is not a list of point indices like 0-3,7")
        << bad;
  EXPECT_EQ(chunkPointLists({0, 1, 2, 3, 4, 5, 6}, 3), (std::vector<std::string>{"0-2", "3-5", "6"}));
  EXPECT_EQ(chunkPointLists({5, 10}, 0), (std::vector<std::string>{"5", "10"}));
}

TEST(SweepCluster, TaskLinesAndArrayScript) {
  SweepTasks spaced{"/opt/tpuc", "/shared/s.json", "/shared/out dir", {"0-2", "3-5"}};
  EXPECT_EQ(spaced.shellLine(1), "/opt/tpuc sweep /shared/s.json --out-dir '/shared/out dir' --points 3-5 --quiet > "
                                 "'/shared/out dir/tasks/points_3-5.log' 2>&1");
  EXPECT_EQ(submitSlurm(spaced, {}).message(),
            "--engine slurm: the out-dir '/shared/out dir' holds white space, which #SBATCH lines cannot");
  SweepTasks tasks{"/opt/tpuc", "/shared/s.json", "/shared/out", {"0-2", "3-5"}};
  std::string script = slurmArrayScript(tasks, 8, "cpu");
  EXPECT_EQ(script, "#!/bin/sh\n"
                    "# tpuc sweep --engine slurm: array task I runs the points of case I.\n"
                    "#SBATCH --job-name=tpuc-sweep\n"
                    "#SBATCH --array=0-1%8\n"
                    "#SBATCH --output=/shared/out/slurm/task_%A_%a.log\n"
                    "#SBATCH --cpus-per-task=1\n"
                    "#SBATCH --partition=cpu\n"
                    "case \"$SLURM_ARRAY_TASK_ID\" in\n"
                    "0) points=0-2 ;;\n"
                    "1) points=3-5 ;;\n"
                    "*) echo \"no points for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n"
                    "esac\n"
                    "exec /opt/tpuc sweep /shared/s.json --out-dir /shared/out --points \"$points\" --quiet\n");
  EXPECT_EQ(slurmArrayScript(tasks, 0, "").find("%8"), std::string::npos);
  EXPECT_EQ(*sbatchJobId("1234\n"), "1234");
  EXPECT_EQ(*sbatchJobId("sbatch: warning: x\n77;cluster2\n"), "77");
  EXPECT_EQ(sbatchJobId("sbatch: error: invalid partition specified: gpu\n").message(),
            "sbatch printed no job id: sbatch: error: invalid partition specified: gpu");
  EXPECT_EQ(findProgram("no-such-tool-here", "pkg").message(), "'no-such-tool-here' is not on PATH (Debian package pkg)");
  auto sh = findProgram("sh", "dash");
  ASSERT_TRUE(sh) << sh.message();
  EXPECT_EQ(fs::path(*sh).filename(), "sh");
  EXPECT_EQ(::access(sh->c_str(), X_OK), 0);
}

TEST(SweepCluster, EngineNames) {
  EXPECT_EQ(*parseEngine("slurm"), SweepEngine::Slurm);
  EXPECT_EQ(*parseEngine("parallel"), SweepEngine::Parallel);
  EXPECT_EQ(*parseEngine("local"), SweepEngine::Local);
  EXPECT_EQ(parseEngine("pbs").message(), "unknown engine 'pbs' (known: local, parallel, slurm)");
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

// A layer far below the roof (its y a thousandth of the roof's) must not
// leave the roof outside the axis range.
TEST(Plot, RoofFarAboveThePointsIsDrawn) {
  Plot p{"roof", "r", "x", "y", true, true, {{"layers", {{2, 0.05}}, false, {}}}, {{"DDR 25 GB/s", 25, 0}}};
  EXPECT_NE(renderSvg(p).find("class=\"roof\""), std::string::npos);
}

} // namespace
