// Determinism (issue 8): the same bmodel and inputs give bit-identical output
// files, cycle counts, trace and stats files on every run, and the same output
// bytes on the functional (`func`) and timed (`sim`) backends. The programs are
// the project's assembler samples, assembled with the isa library; inputs are
// random with fixed seeds.
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"
#include "runtime/RunFiles.h"
#include "runtime/Runtime.h"
#include "support/Npz.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

using namespace tpu;
using namespace tpu::runtime;

namespace {

const std::string kRepo = std::string(TPU_TEST_DATA_DIR) + "/../..";
// conv, add and loads/stores in fp32 (TIU and GDMA overlapping); an int8 4N DDR copy.
const std::vector<std::string> kPrograms = {
    kRepo + "/tests/data/asm/conv_add.s",
    kRepo + "/tests/lit/runtime/Inputs/copy_int8_4n.s",
};

std::string tempDir() {
  static std::string d = [] {
    std::string p = ::testing::TempDir() + "determinism_" + std::to_string(::getpid());
    ::mkdir(p.c_str(), 0755);
    return p + "/";
  }();
  return d;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string stem(const std::string &path) {
  auto slash = path.find_last_of('/');
  auto name = path.substr(slash + 1);
  return name.substr(0, name.find('.'));
}

// Assembles `program` into <tmp>/<stem>.bmodel; returns the model.
bmodel::Model assembleTo(const std::string &program, const std::string &bmodelPath) {
  auto model = isa::assembleFile(program);
  EXPECT_TRUE(model) << model.message();
  if (!model) return {};
  EXPECT_TRUE(bmodel::writeFile(*model, bmodelPath));
  return *model;
}

// One float32 array per net input, in the input's shape, from a fixed seed.
NpzMap randomInputs(const bmodel::Net &net, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2, 2);
  NpzMap in;
  for (const auto &t : net.inputs) {
    std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<float> v(static_cast<size_t>(n));
    for (float &x : v) x = d(rng);
    in[t.name] = NpyArray::from(shape, v);
  }
  return in;
}

struct FileRun {
  RunReport report;
  std::string outputs, trace, stats; // file contents
};

FileRun runFiles(const std::string &bmodelPath, const std::string &inputPath, BackendKind backend,
                 const std::string &tag) {
  RunFilesRequest rq;
  rq.bmodelPath = bmodelPath;
  rq.inputPath = inputPath;
  rq.outputPath = tempDir() + tag + "_out.npz";
  rq.backend = backend;
  if (backend == BackendKind::Sim) {
    rq.tracePath = tempDir() + tag + "_trace.json";
    rq.statsPath = tempDir() + tag + "_stats.json";
  }
  FileRun r;
  auto report = runBmodelFiles(rq);
  EXPECT_TRUE(report) << report.message();
  if (!report) return r;
  r.report = *report;
  r.outputs = readBytes(rq.outputPath);
  if (backend == BackendKind::Sim) {
    r.trace = readBytes(rq.tracePath);
    r.stats = readBytes(rq.statsPath);
  }
  return r;
}

} // namespace

TEST(Determinism, AssemblingTwiceGivesIdenticalBmodelBytes) {
  for (const auto &program : kPrograms) {
    auto a = isa::assembleFile(program), b = isa::assembleFile(program);
    ASSERT_TRUE(a) << a.message();
    ASSERT_TRUE(b) << b.message();
    auto ba = bmodel::serialize(*a), bb = bmodel::serialize(*b);
    ASSERT_TRUE(ba && bb) << program;
    EXPECT_EQ(*ba, *bb) << program;
  }
}

// Three sim runs and two func runs of each program from files: every file
// written is byte-identical run to run, the cycle count is the same, and the
// output file of func equals the one of sim.
TEST(Determinism, RunsAndBackendsGiveIdenticalFiles) {
  for (const auto &program : kPrograms) {
    SCOPED_TRACE(program);
    const std::string name = stem(program), bmodelPath = tempDir() + name + ".bmodel";
    bmodel::Model model = assembleTo(program, bmodelPath);
    ASSERT_EQ(model.nets.size(), 1u);
    const std::string inputPath = tempDir() + name + "_in.npz";
    ASSERT_TRUE(writeNpz(inputPath, randomInputs(model.nets[0], 1684)));

    FileRun first = runFiles(bmodelPath, inputPath, BackendKind::Sim, name + "_sim0");
    ASSERT_FALSE(first.outputs.empty());
    EXPECT_GT(first.report.totalCycles, 0);
    EXPECT_FALSE(first.trace.empty());
    EXPECT_FALSE(first.stats.empty());
    for (int i = 1; i < 3; ++i) {
      FileRun again = runFiles(bmodelPath, inputPath, BackendKind::Sim, name + "_sim" + std::to_string(i));
      EXPECT_EQ(again.outputs, first.outputs);
      EXPECT_EQ(again.trace, first.trace);
      EXPECT_EQ(again.stats, first.stats);
      EXPECT_EQ(again.report.totalCycles, first.report.totalCycles);
      EXPECT_EQ(again.report.tiuCommands, first.report.tiuCommands);
      EXPECT_EQ(again.report.gdmaCommands, first.report.gdmaCommands);
    }
    for (int i = 0; i < 2; ++i) {
      FileRun func = runFiles(bmodelPath, inputPath, BackendKind::Func, name + "_func" + std::to_string(i));
      EXPECT_EQ(func.outputs, first.outputs) << "func and sim outputs differ";
    }
  }
}

// In one process, runtimes created one after the other (each with a fresh
// device) give identical outputs, cycles and trace JSON: no state leaks from
// one simulation into the next.
TEST(Determinism, RepeatedInProcessRunsAreIdentical) {
  auto model = isa::assembleFile(kPrograms[0]);
  ASSERT_TRUE(model) << model.message();
  auto bytes = bmodel::serialize(*model);
  ASSERT_TRUE(bytes);
  NpzMap inputs = randomInputs(model->nets[0], 7);
  std::vector<uint8_t> firstOut;
  RunReport firstReport;
  for (int i = 0; i < 3; ++i) {
    auto rt = Runtime::create(isa::HwConfig(), BackendKind::Sim);
    ASSERT_TRUE(rt) << rt.message();
    ASSERT_TRUE((*rt)->loadBmodel(bytes->data(), bytes->size(), "conv_add"));
    RunOptions opts;
    opts.recordTrace = true;
    RunReport report;
    auto out = (*rt)->run(model->nets[0].name, inputs, opts, report);
    ASSERT_TRUE(out) << out.message();
    std::vector<uint8_t> got = serializeNpy(out->begin()->second);
    if (i == 0) {
      firstOut = got;
      firstReport = report;
      continue;
    }
    EXPECT_EQ(got, firstOut);
    EXPECT_EQ(report.totalCycles, firstReport.totalCycles);
    EXPECT_EQ(report.traceJson, firstReport.traceJson);
    EXPECT_EQ(report.statsJson, firstReport.statsJson);
    EXPECT_EQ(report.tiuUtilization, firstReport.tiuUtilization);
  }
}

// Functional runtimes on separate threads (each owns its device) give the
// outputs of a single-threaded run.
TEST(Determinism, ConcurrentFuncRuntimesMatchSequentialRun) {
  auto model = isa::assembleFile(kPrograms[0]);
  ASSERT_TRUE(model) << model.message();
  auto bytes = bmodel::serialize(*model);
  ASSERT_TRUE(bytes);
  const std::string net = model->nets[0].name;
  auto runOnce = [&](unsigned seed) -> std::vector<uint8_t> {
    auto rt = Runtime::create(isa::HwConfig(), BackendKind::Func);
    if (!rt || !(*rt)->loadBmodel(bytes->data(), bytes->size(), "conv_add")) return {};
    RunReport report;
    auto out = (*rt)->run(net, randomInputs(model->nets[0], seed), RunOptions(), report);
    return out ? serializeNpy(out->begin()->second) : std::vector<uint8_t>{};
  };
  constexpr int kThreads = 4;
  std::vector<std::vector<uint8_t>> sequential(kThreads), concurrent(kThreads);
  for (int i = 0; i < kThreads; ++i) sequential[i] = runOnce(100 + i);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back([&, i] { concurrent[i] = runOnce(100 + i); });
  for (auto &t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_FALSE(sequential[i].empty());
    EXPECT_EQ(concurrent[i], sequential[i]) << "thread " << i;
  }
  EXPECT_NE(sequential[0], sequential[1]); // different inputs: the comparison has teeth
}
