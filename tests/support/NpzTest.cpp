#include "support/Npz.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

using namespace tpu;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("npztest_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::string data(const std::string &name) { return std::string(TPU_SUPPORT_DATA_DIR) + "/" + name; }

void expectNumpyContents(const NpzMap &m) {
  ASSERT_EQ(m.size(), 10u);
  const NpyArray &f32 = m.at("f32");
  EXPECT_TRUE(f32.is<float>());
  EXPECT_EQ(f32.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f32.values<float>(), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(m.at("f64").values<double>(), (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(m.at("i8").values<int8_t>(), (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(m.at("u8").shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.at("u8").values<uint8_t>(), (std::vector<uint8_t>{255}));
  EXPECT_EQ(m.at("i16").values<int16_t>(), (std::vector<int16_t>{-300}));
  EXPECT_EQ(m.at("u16").values<uint16_t>(), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(m.at("i32").values<int32_t>(), (std::vector<int32_t>{-70000, 1}));
  EXPECT_EQ(m.at("i64").values<int64_t>(), (std::vector<int64_t>{1ll << 40}));
  EXPECT_EQ(m.at("b").dtype, "bool");
  EXPECT_EQ(m.at("b").toFloat(), (std::vector<float>{1, 0, 1}));
  EXPECT_TRUE(m.at("s").shape.empty());
  EXPECT_EQ(m.at("s").values<float>(), (std::vector<float>{3}));
}

} // namespace

TEST(Npz, ReadsNumpyStoredArchive) {
  auto m = readNpz(data("numpy_stored.npz"));
  ASSERT_TRUE(m) << m.message();
  expectNumpyContents(*m);
}

TEST(Npz, ReadsNumpyCompressedArchive) {
  auto m = readNpz(data("numpy_deflated.npz"));
  ASSERT_TRUE(m) << m.message();
  expectNumpyContents(*m);
}

TEST(Npz, RoundTripsAllDtypesStoredAndDeflated) {
  auto m = readNpz(data("numpy_stored.npz"));
  ASSERT_TRUE(m) << m.message();
  for (bool compress : {false, true}) {
    std::string path = tempPath(compress ? "rt_deflated.npz" : "rt_stored.npz");
    ASSERT_TRUE(writeNpz(path, *m, compress));
    auto back = readNpz(path);
    ASSERT_TRUE(back) << back.message();
    expectNumpyContents(*back);
    for (const auto &[name, arr] : *m) {
      EXPECT_EQ(back->at(name).dtype, arr.dtype) << name;
      EXPECT_EQ(back->at(name).data, arr.data) << name;
    }
    std::remove(path.c_str());
  }
}

// 16-bit floats: numpy's float16 ('<f2') and bfloat16 as raw 2-byte elements ('|V2', as ml_dtypes
// writes them), read back and widened exactly.
TEST(Npz, SixteenBitFloats) {
  const std::vector<uint16_t> f16{0x3c00, 0xc000, 0x0001, 0x7c00}, bf16{0x3f80, 0xc040, 0x0001, 0xff80};
  for (const auto &[dtype, descr, bits] :
       {std::tuple{"float16", "'<f2'", f16}, std::tuple{"bfloat16", "'|V2'", bf16}}) {
    NpyArray a = NpyArray::fromBytes(dtype, {2, 2}, bits.data(), bits.size() * 2);
    std::vector<uint8_t> bytes = serializeNpy(a);
    EXPECT_NE(std::string(bytes.begin(), bytes.end()).find(descr), std::string::npos) << dtype;
    auto back = parseNpy(bytes.data(), bytes.size(), dtype);
    ASSERT_TRUE(back) << back.message();
    EXPECT_EQ(back->dtype, dtype);
    const std::vector<float> v = back->toFloat();
    const float want16[4] = {1.0f, -2.0f, 5.9604645e-8f, INFINITY},
                wantBf[4] = {1.0f, -3.0f, std::ldexp(1.0f, -133), -INFINITY};
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(v[i], std::string(dtype) == "float16" ? want16[i] : wantBf[i]) << dtype << i;
  }
}

TEST(Npz, WritingIsDeterministic) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist;
  std::vector<float> v(1000);
  for (float &x : v) x = dist(rng);
  NpzMap m;
  m["zeta"] = NpyArray::from<float>({10, 100}, v);
  m["alpha"] = NpyArray::from<int32_t>({3}, {1, 2, 3});
  std::string a = tempPath("det_a.npz"), b = tempPath("det_b.npz");
  ASSERT_TRUE(writeNpz(a, m, true));
  ASSERT_TRUE(writeNpz(b, m, true));
  EXPECT_EQ(readBytes(a), readBytes(b));
  auto back = readNpz(a);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->begin()->first, "alpha");
  EXPECT_EQ(back->at("zeta").values<float>(), v);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST(Npz, EmptyArchiveAndEmptyArray) {
  std::string path = tempPath("empty.npz");
  ASSERT_TRUE(writeNpz(path, {}));
  auto back = readNpz(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_TRUE(back->empty());
  NpzMap m;
  m["z"] = NpyArray::from<float>({0, 4}, std::vector<float>{});
  ASSERT_TRUE(writeNpz(path, m));
  back = readNpz(path);
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->at("z").shape, (std::vector<int64_t>{0, 4}));
  std::remove(path.c_str());
}

TEST(Npy, RoundTripAndHeaderAlignment) {
  NpyArray a = NpyArray::from<int16_t>({2, 2}, {1, -2, 3, -4});
  std::vector<uint8_t> img = serializeNpy(a);
  EXPECT_EQ((img.size() - a.data.size()) % 64, 0u);
  auto back = parseNpy(img.data(), img.size(), "mem");
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(back->values<int16_t>(), (std::vector<int16_t>{1, -2, 3, -4}));
  std::string path = tempPath("a.npy");
  ASSERT_TRUE(writeNpy(path, a));
  auto f = readNpy(path);
  ASSERT_TRUE(f) << f.message();
  EXPECT_EQ(f->data, a.data);
  std::remove(path.c_str());
}

TEST(Npy, RejectsFortranOrderBigEndianAndComplex) {
  auto f = readNpy(data("fortran.npy"));
  ASSERT_FALSE(f);
  EXPECT_NE(f.message().find("fortran_order"), std::string::npos) << f.message();
  EXPECT_NE(f.message().find("fortran.npy"), std::string::npos) << f.message();
  auto b = readNpy(data("bigendian.npy"));
  ASSERT_FALSE(b);
  EXPECT_NE(b.message().find("big-endian"), std::string::npos) << b.message();
  auto c = readNpy(data("complex.npy"));
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find("unsupported dtype '<c8'"), std::string::npos) << c.message();
}

// Builds a v1 .npy image from a header text and a payload size.
static std::vector<uint8_t> rawNpy(const std::string &header, size_t payload) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.push_back(header.size() & 0xff);
  out.push_back(header.size() >> 8);
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + payload, 0);
  return out;
}

TEST(Npy, RejectsCorruptHeaders) {
  struct Case {
    std::vector<uint8_t> bytes;
    const char *expect;
  };
  std::vector<Case> cases = {
      {{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}, "bad magic"},
      {{0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0x00}, "exceeds the file size"},
      {{0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0}, "version 9"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 23), "needs 24"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 25), "needs 24"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", 0),
       "absurdly large"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0), "too large"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 0), "bad dimension"},
      {rawNpy("{'descr': '<f4', 'shape': (2,), }", 8), "lacks 'fortran_order'"},
      {rawNpy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8), "True/False"},
      {rawNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", 8), "unexpected key"},
      {rawNpy("{'descr': 'Q', 'fortran_order': False, 'shape': (2,), }", 8), "unrecognised dtype"},
      {rawNpy("[1, 2]", 8), "not a dict"},
  };
  for (const auto &c : cases) {
    auto r = parseNpy(c.bytes.data(), c.bytes.size(), "case.npy");
    ASSERT_FALSE(r) << c.expect;
    EXPECT_NE(r.message().find(c.expect), std::string::npos) << r.message();
    EXPECT_EQ(r.message().rfind("case.npy: ", 0), 0u) << r.message();
  }
}

TEST(Npz, RejectsCorruptArchivesNamingFileAndMember) {
  auto missing = readNpz(tempPath("does_not_exist.npz"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot open"), std::string::npos) << missing.message();

  std::vector<uint8_t> good = readBytes(data("numpy_deflated.npz"));
  std::string path = tempPath("corrupt.npz");
  // Truncated archive: the central directory is gone.
  writeBytes(path, std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2));
  auto t = readNpz(path);
  ASSERT_FALSE(t);
  EXPECT_NE(t.message().find("not a valid .npz"), std::string::npos) << t.message();
  // Not a zip at all.
  writeBytes(path, {'h', 'e', 'l', 'l', 'o'});
  ASSERT_FALSE(readNpz(path));
  // Flipped bytes inside a deflated member: CRC or inflate error, named by member.
  std::vector<uint8_t> bad = good;
  for (size_t i = 60; i < 90; ++i) bad[i] ^= 0x5a;
  writeBytes(path, bad);
  auto c = readNpz(path);
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find(path), std::string::npos) << c.message();
  EXPECT_NE(c.message().find("member"), std::string::npos) << c.message();
  std::remove(path.c_str());
}

TEST(Npz, MemberWithBadNpyIsNamed) {
  NpzMap m;
  m["ok"] = NpyArray::from<float>({1}, {1.0f});
  NpyArray broken = NpyArray::from<float>({2}, {1.0f, 2.0f});
  broken.data.pop_back();
  m["broken"] = broken;
  std::string path = tempPath("bad.npz");
  Status s = writeNpz(path, m);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("member 'broken'"), std::string::npos) << s.message();
}

TEST(NpyArray, ToFloatConvertsEveryDtype) {
  EXPECT_EQ(NpyArray::from<int64_t>({2}, {-5, 7}).toFloat(), (std::vector<float>{-5, 7}));
  EXPECT_EQ(NpyArray::from<uint16_t>({1}, {65535}).toFloat(), (std::vector<float>{65535}));
  EXPECT_EQ(NpyArray::from<double>({1}, {0.25}).toFloat(), (std::vector<float>{0.25f}));
  EXPECT_EQ(shapeToString({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(shapeToString({}), "scalar");
}

// Random corruption (seeded): every variant either reads or fails with a
// message naming the file; none crashes (the sanitizer build checks memory).
TEST(Npz, RandomCorruptionNeverCrashes) {
  std::vector<uint8_t> good = readBytes(data("numpy_stored.npz"));
  std::vector<uint8_t> deflated = readBytes(data("numpy_deflated.npz"));
  std::string path = tempPath("fuzz.npz");
  std::mt19937 rng(1234);
  int failures = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<uint8_t> bytes = round % 2 ? good : deflated;
    int flips = 1 + round % 8;
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (round % 5 == 0) bytes.resize(rng() % bytes.size());
    writeBytes(path, bytes);
    auto r = readNpz(path);
    if (!r) {
      ++failures;
      EXPECT_EQ(r.message().rfind(path, 0), 0u) << r.message();
      EXPECT_EQ(r.message().find('\n'), std::string::npos) << r.message();
    }
  }
  EXPECT_GT(failures, 100); // most corruptions are detected (CRC, headers, sizes)
  std::remove(path.c_str());
}
