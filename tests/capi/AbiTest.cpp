// The C API headers against libsophon's declarations (bmlib_runtime.h,
// bmruntime_interface.h, LP64 Linux): the prototypes applications call, the
// enum values, and the layout of the structs that the device backend hands
// to the real libbmlib.so / libbmrt.so. A mismatch here would compile an
// application that misbehaves on the chip.
#include "bmruntime_interface.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

namespace {

template <typename Want, typename Got> constexpr bool same(Got) { return std::is_same_v<Want, Got>; }

// libsophon's prototypes, written out as it declares them.
static_assert(same<bm_status_t (*)(bm_handle_t *, int)>(&bm_dev_request));
static_assert(same<void (*)(bm_handle_t)>(&bm_dev_free));
static_assert(same<bm_status_t (*)(bm_handle_t, bm_device_mem_t *, unsigned int)>(&bm_malloc_device_byte));
static_assert(same<void (*)(bm_handle_t, bm_device_mem_t)>(&bm_free_device));
static_assert(same<bm_status_t (*)(bm_handle_t, bm_device_mem_t, void *)>(&bm_memcpy_s2d));
static_assert(same<bm_status_t (*)(bm_handle_t, void *, bm_device_mem_t)>(&bm_memcpy_d2s));
static_assert(same<bm_status_t (*)(bm_handle_t, bm_device_mem_t, void *, unsigned int)>(&bm_memcpy_s2d_partial));
static_assert(same<bm_status_t (*)(bm_handle_t, void *, bm_device_mem_t, unsigned int)>(&bm_memcpy_d2s_partial));
static_assert(same<bm_status_t (*)(bm_handle_t)>(&bm_thread_sync));
static_assert(same<unsigned long long (*)(bm_device_mem_t)>(&bm_mem_get_device_addr));
static_assert(same<void *(*)(bm_handle_t)>(&bmrt_create));
static_assert(same<void (*)(void *)>(&bmrt_destroy));
static_assert(same<bool (*)(void *, const char *)>(&bmrt_load_bmodel));
static_assert(same<bool (*)(void *, const void *, size_t)>(&bmrt_load_bmodel_data));
static_assert(same<int (*)(void *)>(&bmrt_get_network_number));
static_assert(same<void (*)(void *, const char ***)>(&bmrt_get_network_names));
static_assert(same<const bm_net_info_t *(*)(void *, const char *)>(&bmrt_get_network_info));
static_assert(same<bool (*)(void *, const char *, const bm_tensor_t *, int, bm_tensor_t *, int)>(
    &bmrt_launch_tensor));
static_assert(same<bool (*)(void *, const char *, const bm_tensor_t *, int, bm_tensor_t *, int, bool, bool)>(
    &bmrt_launch_tensor_ex));
static_assert(same<bool (*)(bm_tensor_t *, void *, bm_data_type_t, bm_shape_t)>(&bmrt_tensor));
static_assert(same<uint64_t (*)(const bm_shape_t *)>(&bmrt_shape_count));
static_assert(same<size_t (*)(const bm_tensor_t *)>(&bmrt_tensor_bytesize));
static_assert(same<int (*)(bm_data_type_t)>(&bmrt_data_type_size));

} // namespace

TEST(CApiAbi, EnumValuesAreLibsophons) {
  EXPECT_EQ(BM_SUCCESS, 0);
  EXPECT_EQ(BM_ERR_DEVNOTREADY, 1);
  EXPECT_EQ(BM_ERR_FAILURE, 2);
  EXPECT_EQ(BM_ERR_TIMEOUT, 3);
  EXPECT_EQ(BM_ERR_PARAM, 4);
  EXPECT_EQ(BM_ERR_NOMEM, 5);
  EXPECT_EQ(BM_ERR_DATA, 6);
  EXPECT_EQ(BM_ERR_BUSY, 7);
  EXPECT_EQ(BM_ERR_NOFEATURE, 8);
  EXPECT_EQ(BM_NOT_SUPPORTED, 9);
  EXPECT_EQ(BM_FLOAT32, 0);
  EXPECT_EQ(BM_FLOAT16, 1);
  EXPECT_EQ(BM_INT8, 2);
  EXPECT_EQ(BM_UINT8, 3);
  EXPECT_EQ(BM_INT16, 4);
  EXPECT_EQ(BM_UINT16, 5);
  EXPECT_EQ(BM_INT32, 6);
  EXPECT_EQ(BM_UINT32, 7);
  EXPECT_EQ(BM_STORE_1N, 0);
  EXPECT_EQ(BM_STORE_2N, 1);
  EXPECT_EQ(BM_STORE_4N, 2);
  EXPECT_EQ(BM_MAX_DIMS_NUM, 8);
  EXPECT_EQ(sizeof(bm_status_t), 4u);
  EXPECT_EQ(sizeof(bm_data_type_t), 4u);
  EXPECT_EQ(sizeof(bm_store_mode_t), 4u);
}

// The structs crossing into the real libraries, laid out as libsophon's
// declarations are on LP64 (device_addr is an 8-byte integer there too).
TEST(CApiAbi, StructLayoutsAreLibsophons) {
  EXPECT_EQ(sizeof(bm_device_mem_t), 24u);
  EXPECT_EQ(offsetof(bm_device_mem_t, u.device.device_addr), 0u);
  EXPECT_EQ(sizeof(bm_device_mem_t{}.u.device.device_addr), 8u);
  EXPECT_EQ(offsetof(bm_device_mem_t, u.device.reserved), 8u);
  EXPECT_EQ(offsetof(bm_device_mem_t, u.device.dmabuf_fd), 12u);
  EXPECT_EQ(offsetof(bm_device_mem_t, flags), 16u);
  EXPECT_EQ(offsetof(bm_device_mem_t, size), 20u);
  EXPECT_EQ(sizeof(bm_mem_flags_t), 4u);

  EXPECT_EQ(sizeof(bm_shape_t), 36u);
  EXPECT_EQ(offsetof(bm_shape_t, dims), 4u);

  EXPECT_EQ(offsetof(bm_tensor_t, dtype), 0u);
  EXPECT_EQ(offsetof(bm_tensor_t, shape), 4u);
  EXPECT_EQ(offsetof(bm_tensor_t, device_mem), 40u);
  EXPECT_EQ(offsetof(bm_tensor_t, st_mode), 64u);
  EXPECT_EQ(sizeof(bm_tensor_t), 72u);

  // The prefix of bm_net_info_t that applications read (later libsophon
  // releases append fields after output_loc_devices).
  EXPECT_EQ(offsetof(bm_net_info_t, name), 0u);
  EXPECT_EQ(offsetof(bm_net_info_t, is_dynamic), 8u);
  EXPECT_EQ(offsetof(bm_net_info_t, input_num), 12u);
  EXPECT_EQ(offsetof(bm_net_info_t, input_names), 16u);
  EXPECT_EQ(offsetof(bm_net_info_t, input_dtypes), 24u);
  EXPECT_EQ(offsetof(bm_net_info_t, input_scales), 32u);
  EXPECT_EQ(offsetof(bm_net_info_t, output_num), 40u);
  EXPECT_EQ(offsetof(bm_net_info_t, output_names), 48u);
  EXPECT_EQ(offsetof(bm_net_info_t, stage_num), 72u);
  EXPECT_EQ(offsetof(bm_net_info_t, stages), 80u);
  EXPECT_EQ(offsetof(bm_net_info_t, max_input_bytes), 88u);
  EXPECT_EQ(offsetof(bm_net_info_t, input_zero_point), 104u);
  EXPECT_EQ(offsetof(bm_net_info_t, output_loc_devices), 128u);
  EXPECT_EQ(sizeof(bm_stage_info_t), 32u);
}
