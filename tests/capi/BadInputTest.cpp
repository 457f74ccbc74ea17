// Bad input through the C API: corrupt or foreign bmodels, bad files, out of
// simulated device memory at launch, output buffers too small, device
// addresses that are not device memory, NULL arguments, and the device
// backend without libsophon. Each call fails with its status and one logged
// line, nothing crashes, and no output is handed over half-written.
#include "CApiSession.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>

using namespace capitest;

namespace {

size_t countLines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Loads `bytes` into a func device that holds no net yet (a fresh one after
// an image was accepted). A rejected image must leave one
// "bmrt_load_bmodel_data: error: " line and no net; an accepted one must
// launch (successfully or with one logged line) without crashing.
// Returns whether the image was rejected.
bool loadMutated(std::unique_ptr<Session> &session, const std::vector<uint8_t> &bytes,
                 const std::string &what) {
  if (!session) session = std::make_unique<Session>("func");
  Session &s = *session;
  ::testing::internal::CaptureStderr();
  const bool loaded = bmrt_load_bmodel_data(s.bmrt, bytes.data(), bytes.size());
  std::string log = ::testing::internal::GetCapturedStderr();
  if (!loaded) {
    EXPECT_EQ(countLines(log), 1u) << what << ": " << log;
    EXPECT_TRUE(startsWith(log, "bmrt_load_bmodel_data: error: ")) << what << ": " << log;
    EXPECT_EQ(bmrt_get_network_number(s.bmrt), 0) << what;
    return true;
  }
  std::unique_ptr<Session> used = std::move(session);
  EXPECT_EQ(log, "") << what;
  const char **names = nullptr;
  bmrt_get_network_names(s.bmrt, &names);
  EXPECT_NE(names, nullptr) << what;
  if (!names) return false;
  const bm_net_info_t *info = bmrt_get_network_info(s.bmrt, names[0]);
  std::free(names);
  EXPECT_NE(info, nullptr) << what;
  if (!info || info->input_num > 8 || info->output_num > 8) return false;
  bm_tensor_t in[8]{}, out[8]{};
  ::testing::internal::CaptureStderr();
  bool ok = true;
  for (int i = 0; i < info->input_num && ok; ++i)
    ok = bmrt_tensor(&in[i], s.bmrt, info->input_dtypes[i], info->stages[0].input_shapes[i]);
  if (ok && !bmrt_launch_tensor(s.bmrt, info->name, in, info->input_num, out, info->output_num)) {
    EXPECT_EQ(bm_thread_sync(s.handle), BM_ERR_FAILURE) << what;
    for (int i = 0; i < info->output_num; ++i) EXPECT_EQ(out[i].device_mem.size, 0u) << what;
  } else if (ok) {
    (void)bm_thread_sync(s.handle); // a queued run that fails logs its one line here
  }
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_LE(countLines(log), 1u) << what << ": " << log;
  return false;
}

} // namespace

TEST(CApiBadInput, TruncatedBmodelsAreRejected) {
  const auto good = convAddBmodel();
  ASSERT_GT(good.size(), 200u);
  std::vector<size_t> lengths = {0, 1, 4, 63, 64, 65};
  for (size_t n = 101; n < good.size(); n += 101) lengths.push_back(n);
  lengths.push_back(good.size() - 1);
  std::unique_ptr<Session> session;
  for (size_t n : lengths) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(n));
    if (cut.empty()) cut.reserve(1); // data() must not be NULL for an empty image
    EXPECT_TRUE(loadMutated(session, cut, "truncated to " + std::to_string(n))) << n;
  }
}

TEST(CApiBadInput, MutatedBmodelsNeverCrash) {
  const auto good = convAddBmodel();
  ASSERT_FALSE(good.empty());
  std::mt19937 rng(1684);
  std::unique_ptr<Session> session;
  int rejected = 0;
  const int kMutations = 300;
  for (int m = 0; m < kMutations; ++m) {
    std::vector<uint8_t> bad = good;
    const size_t pos = rng() % bad.size();
    bad[pos] ^= uint8_t(1 + rng() % 255);
    rejected += loadMutated(session, bad, "byte " + std::to_string(pos) + " changed (mutation " +
                                     std::to_string(m) + ")");
  }
  // The coefficients are covered by their sha256 and every other part is
  // validated: almost every change is caught at load.
  EXPECT_GT(rejected, kMutations / 2) << rejected;
  RecordProperty("rejected", rejected);
}

TEST(CApiBadInput, BadFilesNameThePath) {
  const std::string empty = tempPath("empty.bmodel"), text = tempPath("text.bmodel");
  writeAll(empty, {});
  writeAll(text, std::vector<uint8_t>(200, 'a'));
  Session s("func");
  for (const std::string &path : {std::string("/nonexistent/model.bmodel"), ::testing::TempDir(), empty, text}) {
    ::testing::internal::CaptureStderr();
    EXPECT_FALSE(bmrt_load_bmodel(s.bmrt, path.c_str())) << path;
    std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(countLines(log), 1u) << log;
    EXPECT_TRUE(startsWith(log, "bmrt_load_bmodel: error: ")) << log;
    EXPECT_NE(log.find(path), std::string::npos) << log;
  }
  EXPECT_EQ(bmrt_get_network_number(s.bmrt), 0);
}

// With the simulated DDR used up by application buffers, a launch cannot
// allocate its output: it fails, the output tensor is not touched, and once
// memory is freed the same launch works.
TEST(CApiBadInput, OutOfDeviceMemoryAtLaunch) {
  Session s("func");
  const auto bmodel = convAddBmodel();
  ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, bmodel.data(), bmodel.size()));
  auto x = randomFloats(kXFloats, 1), y = randomFloats(kYFloats, 2);
  bm_tensor_t in[2]{};
  ASSERT_TRUE(bmrt_tensor(&in[0], s.bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
  ASSERT_TRUE(bmrt_tensor(&in[1], s.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
  ASSERT_EQ(bm_memcpy_s2d(s.handle, in[0].device_mem, x.data()), BM_SUCCESS);
  ASSERT_EQ(bm_memcpy_s2d(s.handle, in[1].device_mem, y.data()), BM_SUCCESS);

  std::vector<bm_device_mem_t> hog;
  ::testing::internal::CaptureStderr();
  for (unsigned size = 1u << 31; size >= 512; size /= 2)
    for (bm_device_mem_t m; bm_malloc_device_byte(s.handle, &m, size) == BM_SUCCESS;) hog.push_back(m);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_GT(hog.size(), 2u);
  EXPECT_NE(log.find("bm_malloc_device_byte: error: out of simulated device memory"), std::string::npos);

  bm_tensor_t out;
  std::memset(&out, 0x5a, sizeof out);
  const bm_tensor_t untouched = out;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(s.bmrt, "conv_add", in, 2, &out, 1));
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 1u) << log;
  EXPECT_TRUE(startsWith(log, "bmrt_launch_tensor: error: net 'conv_add': output 0 'z': ")) << log;
  EXPECT_NE(log.find("out of simulated device memory"), std::string::npos) << log;
  EXPECT_EQ(std::memcmp(&out, &untouched, sizeof out), 0);
  EXPECT_EQ(bm_thread_sync(s.handle), BM_ERR_FAILURE);

  for (const auto &m : hog) bm_free_device(s.handle, m);
  std::vector<float> z;
  EXPECT_TRUE(runConvAdd(s, x, y, z));
  for (auto &t : in) bm_free_device(s.handle, t.device_mem);
}

// Caller-owned output memory that is too small: the launch fails and the
// buffer keeps its bytes.
TEST(CApiBadInput, UserOutputBufferTooSmallIsNotWritten) {
  Session s("func");
  const auto bmodel = convAddBmodel();
  ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, bmodel.data(), bmodel.size()));
  bm_tensor_t in[2]{}, out{};
  ASSERT_TRUE(bmrt_tensor(&in[0], s.bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
  ASSERT_TRUE(bmrt_tensor(&in[1], s.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
  ASSERT_EQ(bm_malloc_device_byte(s.handle, &out.device_mem, 4000), BM_SUCCESS); // z needs 4096
  std::vector<uint8_t> sentinel(4000, 0xa5), back(4000);
  ASSERT_EQ(bm_memcpy_s2d(s.handle, out.device_mem, sentinel.data()), BM_SUCCESS);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor_ex(s.bmrt, "conv_add", in, 2, &out, 1, true, false));
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 1u) << log;
  EXPECT_NE(log.find("4000 bytes holds less than the 4096"), std::string::npos) << log;
  ASSERT_EQ(bm_memcpy_d2s(s.handle, back.data(), out.device_mem), BM_SUCCESS);
  EXPECT_EQ(back, sentinel);
  EXPECT_EQ(bm_thread_sync(s.handle), BM_ERR_FAILURE);
}

// Device memory descriptors that do not describe simulated DDR.
TEST(CApiBadInput, AddressesOutsideDeviceMemory) {
  Session s("func");
  const auto bmodel = convAddBmodel();
  ASSERT_TRUE(bmrt_load_bmodel_data(s.bmrt, bmodel.data(), bmodel.size()));
  std::vector<uint8_t> host(768);
  const bm_device_mem_t low = bm_mem_from_device(0x10, 768);
  const bm_device_mem_t high = bm_mem_from_device(0xFFFFFFFFFF00ull, 768);
  ::testing::internal::CaptureStderr();
  EXPECT_NE(bm_memcpy_s2d(s.handle, low, host.data()), BM_SUCCESS);
  EXPECT_NE(bm_memcpy_d2s(s.handle, host.data(), high), BM_SUCCESS);
  EXPECT_NE(bm_memcpy_s2d_partial(s.handle, low, host.data(), 1000), BM_SUCCESS); // more than the buffer
  std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 3u) << log;

  bm_tensor_t in[2]{}, out{};
  in[0].dtype = in[1].dtype = BM_FLOAT32;
  in[0].shape = shape({1, 8, 10, 10});
  in[1].shape = shape({1, 16, 8, 8});
  in[0].device_mem = bm_mem_from_device(0x10, 3200);
  in[1].device_mem = bm_mem_from_device(0xFFFFFFFFFF00ull, 4096);
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(s.bmrt, "conv_add", in, 2, &out, 1));
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 1u) << log;
  EXPECT_TRUE(startsWith(log, "bmrt_launch_tensor: error: net 'conv_add': input 0 'x': ")) << log;
  EXPECT_EQ(out.device_mem.size, 0u);
}

TEST(CApiBadInput, NullArgumentsAreErrors) {
  Session s("func");
  bm_tensor_t t{};
  bm_device_mem_t m{};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(bm_dev_request(nullptr, 0), BM_ERR_PARAM);
  EXPECT_EQ(bm_malloc_device_byte(nullptr, &m, 16), BM_ERR_PARAM);
  EXPECT_EQ(bm_malloc_device_byte(s.handle, nullptr, 16), BM_ERR_PARAM);
  EXPECT_EQ(bm_memcpy_s2d(s.handle, m, nullptr), BM_ERR_PARAM);
  EXPECT_EQ(bm_memcpy_d2s(nullptr, &t, m), BM_ERR_PARAM);
  EXPECT_NE(bm_thread_sync(nullptr), BM_SUCCESS);
  EXPECT_EQ(bmrt_create(nullptr), nullptr);
  EXPECT_FALSE(bmrt_load_bmodel(nullptr, "x.bmodel"));
  EXPECT_FALSE(bmrt_load_bmodel(s.bmrt, nullptr));
  EXPECT_FALSE(bmrt_load_bmodel_data(s.bmrt, nullptr, 10));
  EXPECT_EQ(bmrt_get_network_info(s.bmrt, nullptr), nullptr);
  EXPECT_FALSE(bmrt_launch_tensor(nullptr, "conv_add", &t, 1, &t, 1));
  EXPECT_FALSE(bmrt_launch_tensor(s.bmrt, nullptr, &t, 1, &t, 1));
  EXPECT_FALSE(bmrt_tensor(nullptr, s.bmrt, BM_FLOAT32, shape({1})));
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(bmrt_get_network_number(nullptr), 0);
  bmrt_get_network_names(nullptr, nullptr);
  EXPECT_EQ(bmrt_shape_count(nullptr), 0u);
  EXPECT_EQ(bmrt_tensor_bytesize(nullptr), 0u);
  bmrt_destroy(nullptr);
  bm_dev_free(nullptr);
}

// The unchanged example application on a foreign, a corrupt and a missing
// bmodel, and on the device backend without libsophon: exit 2, the reason on
// stderr, and no output file.
TEST(CApiBadInput, ExampleApplicationFailsCleanly) {
  auto model = tpu::isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  ASSERT_TRUE(model) << model.message();
  const std::string good = tempPath("good.bmodel"), foreign = tempPath("bm1688.bmodel"),
                    corrupt = tempPath("corrupt.bmodel"), input = tempPath("in.bin");
  ASSERT_TRUE(tpu::bmodel::writeFile(*model, good));
  model->chip = "BM1688";
  ASSERT_TRUE(tpu::bmodel::writeFile(*model, foreign));
  auto bytes = readAll(good);
  bytes.resize(bytes.size() / 2);
  writeAll(corrupt, bytes);
  writeAll(input, std::vector<uint8_t>((kXFloats + kYFloats) * 4, 0));

  struct Run {
    std::string env, bmodel, expected;
  };
  const std::vector<Run> runs = {
      {"TPU_BACKEND=func", foreign, "bmodel is for chip 'BM1688'"},
      {"TPU_BACKEND=func", corrupt, corrupt},
      {"TPU_BACKEND=func", "/nonexistent/m.bmodel", "/nonexistent/m.bmodel"},
      {"TPU_BACKEND=device TPU_LIBSOPHON_DIR=/nonexistent", good, "no BM1684 device or libsophon found"},
  };
  for (const Run &r : runs) {
    const std::string output = tempPath("never.bin"), err = tempPath("stderr.txt");
    std::string cmd = r.env + " " BMRT_EXAMPLE " " + r.bmodel + " " + input + " " + output +
                      " > /dev/null 2> " + err;
    int status = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << cmd;
    std::string log;
    for (uint8_t c : readAll(err)) log += char(c);
    EXPECT_NE(log.find(r.expected), std::string::npos) << cmd << "\n" << log;
    EXPECT_LE(countLines(log), 2u) << log; // the API's line and the application's
    EXPECT_FALSE(fileExists(output)) << cmd;
  }
}
