/* A stand-in for libsophon's libbmlib.so with the same exported symbols, for
 * testing the device backend without a chip: it records every call
 * ($TPU_STUB_LOG) and keeps "device memory" in host memory. */
#include "bmlib_runtime.h"

#include "StubLog.h"

#include <string.h>

struct bm_context {
  int devid;
};

bm_status_t bm_dev_request(bm_handle_t *handle, int devid) {
  stub_log("bm_dev_request devid=%d", devid);
  *handle = (bm_handle_t)calloc(1, sizeof(struct bm_context));
  (*handle)->devid = devid;
  return BM_SUCCESS;
}

void bm_dev_free(bm_handle_t handle) {
  stub_log("bm_dev_free");
  free(handle);
}

bm_status_t bm_malloc_device_byte(bm_handle_t handle, bm_device_mem_t *pmem, unsigned int size) {
  (void)handle;
  stub_log("bm_malloc_device_byte size=%u", size);
  memset(pmem, 0, sizeof(*pmem));
  pmem->u.device.device_addr = (unsigned long long)(uintptr_t)calloc(1, size ? size : 1);
  pmem->size = size;
  return BM_SUCCESS;
}

void bm_free_device(bm_handle_t handle, bm_device_mem_t mem) {
  (void)handle;
  stub_log("bm_free_device size=%u", mem.size);
  free((void *)(uintptr_t)mem.u.device.device_addr);
}

bm_status_t bm_memcpy_s2d(bm_handle_t handle, bm_device_mem_t dst, void *src) {
  (void)handle;
  stub_log("bm_memcpy_s2d size=%u", dst.size);
  memcpy((void *)(uintptr_t)dst.u.device.device_addr, src, dst.size);
  return BM_SUCCESS;
}

bm_status_t bm_memcpy_d2s(bm_handle_t handle, void *dst, bm_device_mem_t src) {
  (void)handle;
  stub_log("bm_memcpy_d2s size=%u", src.size);
  memcpy(dst, (void *)(uintptr_t)src.u.device.device_addr, src.size);
  return BM_SUCCESS;
}

bm_status_t bm_thread_sync(bm_handle_t handle) {
  (void)handle;
  stub_log("bm_thread_sync");
  return BM_SUCCESS;
}
