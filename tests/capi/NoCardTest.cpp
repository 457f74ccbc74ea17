// TPU_BACKEND=device on a host where libsophon is installed but no BM1684
// card is present (tests/capi/nocard: bm_dev_request fails as the real
// driver does). The application gets "no BM1684 device or libsophon found"
// through the C API, from the first call that needs the chip, as one line;
// no launch is reported as done and no output is written.
#include "CApiSession.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>

using namespace capitest;

namespace {

const char *kNoDevice = "no BM1684 device or libsophon found";

size_t countLines(const std::string &s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

} // namespace

TEST(CApiNoCard, ApiCallsFailWithTheClearError) {
  setenv("TPU_LIBSOPHON_DIR", NOCARD_LIBSOPHON_DIR, 1);
  setenv("TPU_BACKEND", "device", 1);
  const auto bmodel = convAddBmodel();
  ASSERT_FALSE(bmodel.empty());

  // The chip may be looked for at bm_dev_request or at the first launch:
  // either way the call that finds it missing is the one that fails.
  bm_handle_t handle = nullptr;
  ::testing::internal::CaptureStderr();
  const bm_status_t st = bm_dev_request(&handle, 0);
  std::string log = ::testing::internal::GetCapturedStderr();
  if (st != BM_SUCCESS) {
    EXPECT_EQ(handle, nullptr);
    EXPECT_EQ(countLines(log), 1u) << log;
    EXPECT_NE(log.find(kNoDevice), std::string::npos) << log;
    unsetenv("TPU_LIBSOPHON_DIR");
    return;
  }
  void *bmrt = bmrt_create(handle);
  ASSERT_NE(bmrt, nullptr);
  ASSERT_TRUE(bmrt_load_bmodel_data(bmrt, bmodel.data(), bmodel.size()));
  bm_tensor_t in[2]{}, out{};
  ASSERT_TRUE(bmrt_tensor(&in[0], bmrt, BM_FLOAT32, shape({1, 8, 10, 10})));
  ASSERT_TRUE(bmrt_tensor(&in[1], bmrt, BM_FLOAT32, shape({1, 16, 8, 8})));
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(bmrt_launch_tensor(bmrt, "conv_add", in, 2, &out, 1));
  EXPECT_EQ(bm_thread_sync(handle), BM_ERR_FAILURE);
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(countLines(log), 1u) << log;
  EXPECT_NE(log.find(kNoDevice), std::string::npos) << log;
  EXPECT_EQ(out.device_mem.size, 0u);
  bmrt_destroy(bmrt);
  bm_dev_free(handle);
  unsetenv("TPU_LIBSOPHON_DIR");
}

TEST(CApiNoCard, ExampleApplicationExitsWithTheClearError) {
  const std::string model = tempPath("nocard.bmodel"), input = tempPath("nocard_in.bin"),
                    output = tempPath("nocard_out.bin"), err = tempPath("nocard_err.txt");
  writeAll(model, convAddBmodel());
  writeAll(input, std::vector<uint8_t>((kXFloats + kYFloats) * 4, 0));
  const std::string cmd = "TPU_BACKEND=device TPU_LIBSOPHON_DIR=" NOCARD_LIBSOPHON_DIR " " BMRT_EXAMPLE
                          " " + model + " " + input + " " + output + " > /dev/null 2> " + err;
  int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << cmd;
  std::string log;
  for (uint8_t c : readAll(err)) log += char(c);
  EXPECT_NE(log.find(kNoDevice), std::string::npos) << log;
  EXPECT_LE(countLines(log), 2u) << log; // the API's line and the application's
  struct stat st;
  EXPECT_NE(::stat(output.c_str(), &st), 0) << "an output file was written";
}
