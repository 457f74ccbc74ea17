// The unchanged example application on TPU_BACKEND=device, with the
// libsophon stand-ins of tests/runtime/stub found through TPU_LIBSOPHON_DIR:
// the application's bmlib/bmrt calls reach the stub libraries as the
// expected sequence with the net's tensors marshalled, and the stub's output
// comes back into the application's output file.
#include "CApiSession.h"

#include <sys/wait.h>

#include <numeric>

using namespace capitest;

namespace {

std::vector<std::string> readLines(const std::string &path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

} // namespace

TEST(CApiDeviceStub, ExampleApplicationDrivesLibsophon) {
  const auto bmodel = convAddBmodel();
  ASSERT_FALSE(bmodel.empty());
  const std::string model = tempPath("conv_add.bmodel"), input = tempPath("in.bin"),
                    output = tempPath("out.bin"), log = tempPath("stub.log");
  writeAll(model, bmodel);
  auto x = randomFloats(kXFloats, 7), y = randomFloats(kYFloats, 8);
  std::vector<uint8_t> in(reinterpret_cast<const uint8_t *>(x.data()),
                          reinterpret_cast<const uint8_t *>(x.data() + x.size()));
  in.insert(in.end(), reinterpret_cast<const uint8_t *>(y.data()),
            reinterpret_cast<const uint8_t *>(y.data() + y.size()));
  writeAll(input, in);
  std::remove(log.c_str());

  const std::string cmd = "TPU_BACKEND=device TPU_LIBSOPHON_DIR=" STUB_LIBSOPHON_DIR " TPU_STUB_LOG=" +
                          log + " " BMRT_EXAMPLE " " + model + " " + input + " " + output + " > /dev/null";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << cmd;

  // The stub's "net" writes the byte sum of all inputs, then bytes k & 0xff.
  auto z = readAll(output);
  ASSERT_EQ(z.size(), kZFloats * 4);
  uint32_t sum = std::accumulate(in.begin(), in.end(), 0u), got;
  std::memcpy(&got, z.data(), 4);
  EXPECT_EQ(got, sum);
  for (size_t k = 4; k < z.size(); ++k) ASSERT_EQ(z[k], uint8_t(k)) << k;

  const std::vector<std::string> expected = {
      "bm_dev_request devid=0",
      "bmrt_create",
      "bmrt_load_bmodel_data size=" + std::to_string(bmodel.size()) + " magic=ff55aaee",
      "bm_malloc_device_byte size=3200",
      "bm_memcpy_s2d size=3200",
      "bm_malloc_device_byte size=4096",
      "bm_memcpy_s2d size=4096",
      "bm_malloc_device_byte size=4096",
      "bmrt_launch_tensor_ex net=conv_add inputs=2 outputs=1 user_mem=1 user_stmode=1",
      "  in 0 f32 1x8x10x10 1N 3200 bytes",
      "  in 1 f32 1x16x8x8 1N 4096 bytes",
      "  out 0 f32 1x16x8x8 1N 4096 bytes",
      "bm_thread_sync",
      "bm_memcpy_d2s size=4096",
      "bm_free_device size=3200",
      "bm_free_device size=4096",
      "bm_free_device size=4096",
      "bmrt_destroy",
      "bm_dev_free",
  };
  EXPECT_EQ(readLines(log), expected);
}
