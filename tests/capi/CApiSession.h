// What the C API tests share: the sample program tests/data/asm/conv_add.s as
// bmodel bytes, a device + runtime opened through the C API, and one launch of
// conv_add done the way an application does it (bmrt_tensor, bm_memcpy_s2d,
// bmrt_launch_tensor, bm_thread_sync, bm_memcpy_d2s, bm_free_device).
#pragma once

#include "bmruntime_interface.h"

#include "isa/Assembler.h"
#include "isa/bmodel/Bmodel.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace capitest {

// conv_add: x [1,8,10,10] and y [1,16,8,8] fp32 in, z [1,16,8,8] fp32 out.
constexpr size_t kXFloats = 8 * 10 * 10, kYFloats = 16 * 8 * 8, kZFloats = 16 * 8 * 8;

inline std::vector<uint8_t> convAddBmodel() {
  auto model = tpu::isa::assembleFile(std::string(TPU_TEST_DATA_DIR) + "/asm/conv_add.s");
  EXPECT_TRUE(model) << model.message();
  if (!model) return {};
  auto bytes = tpu::bmodel::serialize(*model);
  EXPECT_TRUE(bytes) << bytes.message();
  return bytes ? bytes.take() : std::vector<uint8_t>{};
}

inline std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "capi_" + std::to_string(::getpid()) + "_" + name;
}

inline std::vector<uint8_t> readAll(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

inline void writeAll(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
}

inline std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float &x : v) x = d(rng);
  return v;
}

inline bm_shape_t shape(std::initializer_list<int> dims) {
  bm_shape_t s{};
  for (int d : dims) s.dims[s.num_dims++] = d;
  return s;
}

// One bm_handle_t and one bmrt on the backend named (TPU_BACKEND is read
// by bm_dev_request, so sessions are opened on the main thread).
struct Session {
  bm_handle_t handle = nullptr;
  void *bmrt = nullptr;
  explicit Session(const char *backend) {
    setenv("TPU_BACKEND", backend, 1);
    EXPECT_EQ(bm_dev_request(&handle, 0), BM_SUCCESS) << backend;
    if (handle) bmrt = bmrt_create(handle);
    EXPECT_NE(bmrt, nullptr) << backend;
  }
  ~Session() {
    if (bmrt) bmrt_destroy(bmrt);
    if (handle) bm_dev_free(handle);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  bool ok() const { return bmrt != nullptr; }
};

// Runs conv_add once through the C API; false (and no output) on any
// failure. Device buffers are freed on every path.
inline bool runConvAdd(Session &s, const std::vector<float> &x, const std::vector<float> &y,
                       std::vector<float> &z) {
  bm_tensor_t in[2]{}, out{};
  bool ok = bmrt_tensor(&in[0], s.bmrt, BM_FLOAT32, shape({1, 8, 10, 10})) &&
            bmrt_tensor(&in[1], s.bmrt, BM_FLOAT32, shape({1, 16, 8, 8})) &&
            bm_memcpy_s2d(s.handle, in[0].device_mem, const_cast<float *>(x.data())) == BM_SUCCESS &&
            bm_memcpy_s2d(s.handle, in[1].device_mem, const_cast<float *>(y.data())) == BM_SUCCESS &&
            bmrt_launch_tensor(s.bmrt, "conv_add", in, 2, &out, 1);
  const bool launched = ok;
  ok = bm_thread_sync(s.handle) == BM_SUCCESS && ok;
  if (ok) {
    std::vector<float> result(bmrt_shape_count(&out.shape));
    ok = result.size() == kZFloats && bmrt_tensor_bytesize(&out) == kZFloats * 4 &&
         bm_memcpy_d2s(s.handle, result.data(), out.device_mem) == BM_SUCCESS;
    if (ok) z = std::move(result);
  }
  if (launched) bm_free_device(s.handle, out.device_mem);
  for (auto &t : in)
    if (t.device_mem.size) bm_free_device(s.handle, t.device_mem);
  return ok;
}

} // namespace capitest
