// Resource limits (issue 8): files that claim absurd sizes are rejected with a
// clear message before anything of that size is allocated: bmodels with a
// 2^40-element tensor or 10^6 command groups, .npy/.npz with absurd shapes or
// member sizes; and the simulator stops at a simulated-cycle limit. A reader
// that allocated first would abort these tests with std::bad_alloc (or an
// ASan allocation-size error in the sanitizer run).
#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"
#include "isa/bmodel/bmodel_generated.h"
#include "runtime/RunFiles.h"
#include "runtime/Runtime.h"
#include "support/Npz.h"

#include <gtest/gtest.h>

#include <zip.h>

#include <cstring>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

using namespace tpu;
using namespace tpu::runtime;
namespace tb = tpu::bmodel; // ::bmodel is the FlatBuffers schema

namespace {

std::string tempDir() {
  static std::string d = [] {
    std::string p = ::testing::TempDir() + "limits_" + std::to_string(::getpid());
    ::mkdir(p.c_str(), 0755);
    return p + "/";
  }();
  return d;
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out) << path;
}

std::string loadError(const std::string &path) {
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Func);
  EXPECT_TRUE(rt) << rt.message();
  Status st = (*rt)->loadBmodel(path);
  EXPECT_FALSE(st) << path << " was accepted";
  return st.message();
}

// A one-net model with a single input tensor.
tb::Model modelWithInput(tb::DataType dtype, std::vector<uint64_t> shape, uint64_t addr,
                             uint64_t size) {
  tb::Model m;
  tb::Net net;
  net.name = "big";
  tb::Tensor t;
  t.name = "huge";
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.deviceAddr = addr;
  t.size = size;
  net.inputs.push_back(t);
  m.nets.push_back(net);
  return m;
}

// A .npy image whose header says `shape` of float32 and holds `dataBytes` bytes.
std::vector<uint8_t> npyWithShape(const std::string &shape, size_t dataBytes) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size() & 0xff),
                              uint8_t(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + dataBytes, 0);
  return out;
}

// An .npz (zip) holding `member`.npy with the given bytes, deflated or stored.
void writeZip(const std::string &path, const std::string &member, const std::vector<uint8_t> &bytes,
              bool deflate) {
  int err = 0;
  zip_t *z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr);
  zip_source_t *src = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
  ASSERT_NE(src, nullptr);
  zip_int64_t idx = zip_file_add(z, (member + ".npy").c_str(), src, ZIP_FL_ENC_UTF_8);
  ASSERT_GE(idx, 0);
  zip_set_file_compression(z, idx, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  ASSERT_EQ(zip_close(z), 0);
}

void putU32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}

} // namespace

TEST(ResourceLimits, BmodelTensorOf2To40Float32ElementsRejected) {
  const std::string path = tempDir() + "huge_fp32.bmodel";
  auto m = modelWithInput(tb::DataType::Float32, {1u << 20, 1u << 20}, 0x100000000ull, 1ull << 42);
  ASSERT_TRUE(tb::writeFile(m, path));
  std::string e = loadError(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("input tensor 0 'huge': shape exceeds the 2^40-byte address space"), std::string::npos) << e;
}

// 2^40 int8 elements fill the whole 40-bit address space, which the container
// allows; the runtime must refuse it against the device's 4 GiB of DDR
// without touching (or converting) the tensor.
TEST(ResourceLimits, BmodelTensorOf2To40Int8ElementsRejectedByTheRuntime) {
  const std::string path = tempDir() + "huge_int8.bmodel";
  auto m = modelWithInput(tb::DataType::Int8, {1u << 20, 1u << 20}, 0, 1ull << 40);
  ASSERT_TRUE(tb::writeFile(m, path));
  std::string e = loadError(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("huge"), std::string::npos) << e;
}

// 10^6 command groups, all sharing one (empty) table entry, so the file
// itself stays small: 4 MB of offsets.
TEST(ResourceLimits, BmodelWithAMillionCommandGroupsRejected) {
  flatbuffers::FlatBufferBuilder b;
  auto group = ::bmodel::CreateCmdGroup(b);
  std::vector<flatbuffers::Offset<::bmodel::CmdGroup>> groups(1000000, group);
  auto gv = b.CreateVector(groups);
  ::bmodel::NetParameterBuilder pb(b);
  pb.add_cmd_group(gv);
  std::vector<flatbuffers::Offset<::bmodel::NetParameter>> params{pb.Finish()};
  auto pv = b.CreateVector(params);
  std::vector<flatbuffers::Offset<::bmodel::Net>> nets{::bmodel::CreateNet(b, b.CreateString("big"), 0, 0, pv)};
  auto nv = b.CreateVector(nets);
  b.Finish(::bmodel::CreateModel(b, 0, 0, 0, b.CreateString("BM1684"), nv));
  std::vector<uint8_t> file(tb::kHeaderSize, 0);
  putU32(file, 0, tb::kMagic);
  putU32(file, 4, tb::kHeaderSize);
  putU32(file, 8, uint32_t(b.GetSize()));
  putU32(file, 12, 0);
  file.insert(file.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  const std::string path = tempDir() + "million_groups.bmodel";
  writeBytes(path, file);
  std::string e = loadError(path);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("1000000 command groups (limit 65536)"), std::string::npos) << e;
}

TEST(ResourceLimits, NpyWithAbsurdShapeRejected) {
  const std::string path = tempDir() + "absurd.npy";
  writeBytes(path, npyWithShape("(1099511627776,)", 16)); // 2^40 float32 elements
  auto a = readNpy(path);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.message(), path + ": header: dimension in 'shape' is too large");
  // A product that overflows 64 bits is caught as well.
  writeBytes(path, npyWithShape("(4611686018427387904, 4611686018427387904)", 16));
  a = readNpy(path);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.message(), path + ": header: dimension in 'shape' is too large");
  // Dimensions each within the limit, their product not.
  writeBytes(path, npyWithShape("(1048576, 1048576)", 16));
  a = readNpy(path);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.message(), path + ": shape 1048576x1048576 is absurdly large");
}

TEST(ResourceLimits, NpzMemberWithAbsurdShapeRejectedNamingTheMember) {
  const std::string path = tempDir() + "absurd.npz";
  writeZip(path, "x", npyWithShape("(1048576, 1048576)", 64), true);
  auto z = readNpz(path);
  ASSERT_FALSE(z);
  EXPECT_EQ(z.message(), path + ": member 'x': shape 1048576x1048576 is absurdly large");
}

// A deflated member whose zip entries declare ~3.9 GB uncompressed (the
// compressed size is honest, so the archive opens): the reader must fail on
// the data actually there instead of allocating the declared size first.
TEST(ResourceLimits, NpzMemberDeclaringGigabytesRejectedWithoutAllocatingThem) {
  const std::string path = tempDir() + "liar.npz";
  writeZip(path, "x", npyWithShape("(4,)", 16), true);
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> zip((std::istreambuf_iterator<char>(in)), {});
  in.close();
  constexpr uint32_t kClaim = 0xF0000000u;
  // Uncompressed size: local header (PK\3\4) +22, central directory (PK\1\2) +24.
  int patched = 0;
  for (size_t i = 0; i + 30 < zip.size(); ++i) {
    if (std::memcmp(&zip[i], "PK\3\4", 4) == 0) {
      putU32(zip, i + 22, kClaim);
      ++patched;
    } else if (std::memcmp(&zip[i], "PK\1\2", 4) == 0) {
      putU32(zip, i + 24, kClaim);
      ++patched;
    }
  }
  ASSERT_EQ(patched, 2);
  writeBytes(path, zip);
  auto z = readNpz(path);
  ASSERT_FALSE(z);
  EXPECT_NE(z.message().find(path + ": member 'x': "), std::string::npos) << z.message();
}

// The runtime's file job reports an absurd input array as the input file's error.
TEST(ResourceLimits, RunWithAbsurdInputArrayRejected) {
  auto model = isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(model) << model.message();
  RunFilesRequest rq;
  rq.bmodelPath = tempDir() + "conv_add.bmodel";
  ASSERT_TRUE(tb::writeFile(*model, rq.bmodelPath));
  rq.inputPath = tempDir() + "absurd_in.npz";
  writeZip(rq.inputPath, "x", npyWithShape("(1048576, 1048576)", 64), true);
  rq.outputPath = tempDir() + "never.npz";
  rq.backend = BackendKind::Func;
  auto r = runBmodelFiles(rq);
  ASSERT_FALSE(r);
  EXPECT_NE(r.message().find("absurd_in.npz: member 'x': shape 1048576x1048576 is absurdly large"),
            std::string::npos)
      << r.message();
  struct stat st;
  EXPECT_NE(::stat(rq.outputPath.c_str(), &st), 0) << "an output was written";
}

// The simulated-cycle limit stops a run with an error instead of running on.
TEST(ResourceLimits, SimulatedCycleLimitStopsTheRun) {
  if (!backendAvailable(BackendKind::Sim)) GTEST_SKIP() << "built without the SystemC model";
  auto model = isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(model) << model.message();
  auto bytes = tb::serialize(*model);
  ASSERT_TRUE(bytes);
  auto rt = Runtime::create(isa::HwConfig(), BackendKind::Sim);
  ASSERT_TRUE(rt) << rt.message();
  ASSERT_TRUE((*rt)->loadBmodel(bytes->data(), bytes->size(), "conv_add"));
  NpzMap in{{"x", NpyArray::from({1, 8, 10, 10}, std::vector<float>(800, 0.5f))},
            {"y", NpyArray::from({1, 16, 8, 8}, std::vector<float>(1024, 0.25f))}};
  RunReport full;
  ASSERT_TRUE((*rt)->run("conv_add", in, RunOptions(), full));
  ASSERT_GT(full.totalCycles, 100);
  RunOptions limited;
  limited.maxCycles = 1; // checked as each command starts: the second one starts later
  RunReport report;
  auto out = (*rt)->run("conv_add", in, limited, report);
  ASSERT_FALSE(out);
  EXPECT_NE(out.message().find("cycle"), std::string::npos) << out.message();
}
