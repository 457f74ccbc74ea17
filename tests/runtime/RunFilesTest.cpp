// The file-to-file job behind `tpuc sim`: net selection, the files written,
// the printed report, and all-or-nothing output.
#include "runtime/RunFiles.h"

#include "TestNets.h"
#include "isa/bmodel/Bmodel.h"
#include "support/Npz.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

using namespace tpu;
using namespace tpu::runtime;
using namespace tpu::runtime::testnets;

namespace {

std::string dir() {
  static std::string d = [] {
    std::string p = ::testing::TempDir() + "runfiles_" + std::to_string(::getpid());
    ::mkdir(p.c_str(), 0755);
    return p + "/";
  }();
  return d;
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Two copies of conv_add, "a" and "b", with their coefficients apart.
std::string writeTwoNets() {
  ConvAddNet a(1), b(2);
  b.coeffAddr = kDdr + 0x80000;
  bmodel::Model m = a.model("a");
  m.nets.push_back(b.model("b").nets[0]);
  std::string path = dir() + "two.bmodel";
  EXPECT_TRUE(bmodel::writeFile(m, path));
  return path;
}

std::string writeInputs() {
  std::string path = dir() + "in.npz";
  NpzMap in{{"x", NpyArray::from({1, 3, 8, 8}, randomFloats(192, 1))},
            {"y", NpyArray::from({1, 4, 8, 8}, randomFloats(256, 2))}};
  EXPECT_TRUE(writeNpz(path, in));
  return path;
}

RunFilesRequest request(const std::string &out, BackendKind backend = BackendKind::Func) {
  RunFilesRequest rq;
  rq.bmodelPath = writeTwoNets();
  rq.inputPath = writeInputs();
  rq.outputPath = dir() + out;
  rq.backend = backend;
  return rq;
}

} // namespace

TEST(RunFiles, SeveralNetsNeedAChoice) {
  RunFilesRequest rq = request("none.npz");
  auto r = runBmodelFiles(rq);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("holds 2 nets ('a', 'b'): choose one with --net"), std::string::npos)
      << r.message();
  EXPECT_FALSE(exists(rq.outputPath));
  rq.netName = "b";
  auto ok = runBmodelFiles(rq);
  ASSERT_TRUE(ok) << ok.message();
  auto out = readNpz(rq.outputPath);
  ASSERT_TRUE(out);
  EXPECT_EQ(out->count("z"), 1u);
  EXPECT_NE(formatRunReport(*ok).find("backend func: 1 group(s), 2 TIU + 4 GDMA commands"),
            std::string::npos);
}

TEST(RunFiles, TimedRunWritesTraceStatsAndLayerLines) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  RunFilesRequest rq = request("sim.npz", BackendKind::Sim);
  rq.netName = "a";
  rq.tracePath = dir() + "trace.json";
  rq.statsPath = dir() + "stats.json";
  auto r = runBmodelFiles(rq);
  ASSERT_TRUE(r) << r.message();
  EXPECT_TRUE(exists(rq.outputPath) && exists(rq.tracePath) && exists(rq.statsPath));
  std::string text = formatRunReport(*r);
  EXPECT_NE(text.find("simulated: "), std::string::npos) << text;
  EXPECT_NE(text.find("layer conv1: TIU "), std::string::npos) << text;
  EXPECT_NE(text.find("layer add1: TIU "), std::string::npos) << text;
  ASSERT_EQ(r->layers.size(), 2u);
  EXPECT_GT(r->layers[0].tiuBusyCycles, 0);
  EXPECT_GT(r->layers[0].gdmaBusyCycles, 0);
}

// A file that cannot be written fails the run and none of the others appear.
TEST(RunFiles, OneUnwritableFileMeansNoFiles) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  RunFilesRequest rq = request("partial.npz", BackendKind::Sim);
  rq.netName = "a";
  rq.tracePath = dir() + "partial_trace.json";
  rq.statsPath = dir() + "no/such/dir/stats.json";
  auto r = runBmodelFiles(rq);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("no/such/dir/stats.json"), std::string::npos) << r.message();
  EXPECT_FALSE(exists(rq.outputPath));
  EXPECT_FALSE(exists(rq.tracePath));
  EXPECT_FALSE(exists(rq.outputPath + ".tmp" + std::to_string(::getpid())));
}

TEST(RunFiles, TraceNeedsTheTimedBackend) {
  RunFilesRequest rq = request("f.npz");
  rq.netName = "a";
  rq.statsPath = dir() + "s.json";
  auto r = runBmodelFiles(rq);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.message(), "--stats needs the timed backend (--backend sim)");
  EXPECT_FALSE(exists(rq.outputPath));
}
